//! `/login` for a provider an extension registers with an `oauth`: its `oauth.login` runs on
//! the JS thread (through the session's extension host) while this task relays what its
//! callbacks say to the dialog and the answers typed there back to `onPrompt`. Escape
//! cancels the token: the login's `signal` aborts, its question is rejected ("Login
//! cancelled") and nothing is written.

use std::path::PathBuf;

use knightcode_runtime::extensions::login::ExtensionLoginError;
use knightcode_runtime::extensions::login::ExtensionLogins;
use knightcode_runtime::extensions::login::LoginNews as ExtNews;
use tokio::sync::mpsc;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::LoginNews;

/// Runs `provider`'s login; everything it says goes to `report`, and its end too (saved,
/// failed, or nothing once cancelled: the run is gone then).
pub(super) async fn run(
    logins: ExtensionLogins,
    provider: String,
    agent_dir: PathBuf,
    mut paste: mpsc::UnboundedReceiver<String>,
    cancel: CancellationToken,
    report: impl Fn(LoginNews),
) {
    let (news_tx, mut news) = mpsc::unbounded_channel();
    let login = logins.login(&provider, &agent_dir, news_tx, cancel);
    tokio::pin!(login);
    // The question waiting for what is typed.
    let mut asking: Option<oneshot::Sender<String>> = None;
    let done = loop {
        tokio::select! {
            done = &mut login => break done,
            Some(item) = news.recv() => match item {
                ExtNews::Auth { url, instructions } => {
                    report(LoginNews::ExtensionAuth { url, instructions });
                }
                ExtNews::Progress(message) => report(LoginNews::Progress(message)),
                ExtNews::Prompt { message, placeholder, allow_empty, answer } => {
                    asking = Some(answer);
                    report(LoginNews::ExtensionAsk { message, placeholder, allow_empty });
                }
            },
            Some(text) = paste.recv() => {
                if let Some(answer) = asking.take() {
                    let _ = answer.send(text);
                }
            }
        }
    };
    report(match done {
        Ok(()) => LoginNews::Saved,
        Err(ExtensionLoginError::Cancelled) => return,
        Err(failure) => LoginNews::Failed(failure.to_string()),
    });
}
