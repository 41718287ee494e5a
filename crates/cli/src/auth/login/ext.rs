//! `knightcode auth login <provider>` for a provider an extension registers with an
//! `oauth` (`-e`, the user's extensions, and the project's when it is trusted, as print mode
//! loads them): its `oauth.login` runs, `onAuth` prints the address (and opens the browser
//! on a terminal), `onProgress` prints its message, and `onPrompt` reads a line.

use std::io::IsTerminal as _;
use std::io::Write;
use std::path::Path;

use knightcode_ai::login;
use knightcode_runtime::extensions::login::ExtensionLoginError;
pub(super) use knightcode_runtime::extensions::login::ExtensionLogins;
use knightcode_runtime::extensions::login::LoginNews;
use knightcode_runtime::extensions::login::OAuthLoginProvider;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::LOGIN_WAIT;
use super::Lines;

/// Which extensions `auth login` loads: `-e <path>` (repeatable) and `--no-extensions`.
#[derive(Debug, Default)]
pub(super) struct ExtensionArgs {
    pub(super) paths: Vec<String>,
    pub(super) none: bool,
}

/// Loads the configured extensions; `None` when there are none.
pub(super) async fn load(
    args: &ExtensionArgs,
    agent_dir: &Path,
) -> Result<Option<ExtensionLogins>, String> {
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current folder: {e}"))?;
    let home = std::env::home_dir();
    let layout = crate::mcp::Layout {
        agent_dir: agent_dir.to_path_buf(),
        cwd: cwd.clone(),
        home: home.clone(),
    };
    let sources = knightcode_runtime::ExtensionSources {
        cli: args.paths.clone(),
        no_extensions: args.none,
        mode: "print".to_owned(),
        ..Default::default()
    };
    let trusted = crate::mcp::project_trusted(&layout);
    ExtensionLogins::load(&sources, &cwd, agent_dir, home.as_deref(), trusted)
        .await
        .map_err(|e| e.to_string())
}

/// Runs `provider`'s login and stores it; the line to print on success.
pub(super) async fn login(
    logins: &ExtensionLogins,
    provider: &OAuthLoginProvider,
    agent_dir: &Path,
    lines: &mut Lines,
    out: &mut dyn Write,
) -> Result<String, String> {
    let (news_tx, mut news) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let run = logins.login(&provider.provider, agent_dir, news_tx, cancel.clone());
    tokio::pin!(run);
    let name = &provider.name;
    let wait = async {
        loop {
            tokio::select! {
                done = &mut run => return done,
                Some(item) = news.recv() => show(item, name, lines, out, &cancel).await,
                _ = tokio::signal::ctrl_c() => cancel.cancel(),
            }
        }
    };
    let outcome = tokio::time::timeout(LOGIN_WAIT, wait)
        .await
        .map_err(|_| "The login timed out; run it again.".to_owned())?;
    match outcome {
        Ok(()) => Ok(format!(
            "Logged in to {name}. Credentials saved to {}",
            agent_dir.join("auth.json").display()
        )),
        Err(ExtensionLoginError::Cancelled) => {
            Err(knightcode_runtime::extensions::login::LOGIN_CANCELLED.to_owned())
        }
        Err(failure) => Err(format!("Failed to login to {name}: {failure}")),
    }
}

/// What one callback said: printed, or a question answered with a line of input (the end
/// of input or Ctrl+C cancels it).
async fn show(
    news: LoginNews,
    name: &str,
    lines: &mut Lines,
    out: &mut dyn Write,
    cancel: &CancellationToken,
) {
    match news {
        LoginNews::Auth { url, instructions } => {
            let _ = writeln!(out, "Log in to {name} in your browser:\n\n{url}\n");
            if let Some(instructions) = instructions {
                let _ = writeln!(out, "{instructions}");
            }
            if std::io::stdout().is_terminal() {
                login::open_browser(&url);
            }
        }
        LoginNews::Progress(message) => {
            let _ = writeln!(out, "{message}");
        }
        LoginNews::Prompt {
            message,
            placeholder,
            allow_empty,
            answer,
        } => loop {
            match &placeholder {
                Some(example) => {
                    let _ = write!(out, "{message} (e.g., {example}) ");
                }
                None => {
                    let _ = write!(out, "{message} ");
                }
            }
            let _ = out.flush();
            let line = tokio::select! {
                line = lines.next() => line,
                _ = tokio::signal::ctrl_c() => None,
            };
            if !lines.terminal {
                let _ = writeln!(out);
            }
            match line {
                Some(text) if text.is_empty() && !allow_empty => {}
                Some(text) => {
                    let _ = answer.send(text);
                    return;
                }
                None => {
                    // Dropping the answer rejects the question; the login then ends.
                    cancel.cancel();
                    return;
                }
            }
        },
    }
}
