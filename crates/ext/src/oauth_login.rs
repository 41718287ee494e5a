//! The interactive login of an extension's provider (`registerProvider({ oauth })`): its
//! `oauth.login(callbacks)` run on the JS thread with the callbacks pi passes (`onAuth`,
//! `onPrompt`, `onProgress`, `onManualCodeInput`, `signal`). What the callbacks say goes to
//! the front end as [`LoginNews`]; a question waits for its answer there. The credentials
//! the login returns are the caller's to store (`{ "type": "oauth", ...credentials }`).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use rquickjs::Ctx;
use rquickjs::Function;
use rquickjs::Object;
use rquickjs::Promise;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;
use tokio::sync::mpsc;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::CallError;
use crate::ExtensionHost;

/// What the message of a cancelled login is, as pi words it (its `/login` says nothing more
/// for it).
pub const LOGIN_CANCELLED: &str = "Login cancelled";

/// An extension provider that can log in: its id and the `oauth.name` people pick it by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthLoginProvider {
    pub provider: String,
    pub name: String,
}

/// What a login's callbacks tell the person logging in.
#[derive(Debug)]
pub enum LoginNews {
    /// `onAuth({ url, instructions })`: the address to open.
    Auth {
        url: String,
        instructions: Option<String>,
    },
    /// `onProgress(message)`.
    Progress(String),
    /// `onPrompt({ message, placeholder, allowEmpty })` or `onManualCodeInput()`: the
    /// answer goes back through `answer`; dropping it cancels the login's question.
    Prompt {
        message: String,
        placeholder: Option<String>,
        allow_empty: bool,
        answer: oneshot::Sender<String>,
    },
}

/// The logins under way, by id: where their news goes.
#[derive(Default)]
pub(crate) struct Logins {
    next_id: AtomicU64,
    news: Mutex<HashMap<u64, mpsc::UnboundedSender<LoginNews>>>,
}

impl Logins {
    fn sender(&self, id: u64) -> Option<mpsc::UnboundedSender<LoginNews>> {
        self.news
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .cloned()
    }

    fn forget(&self, id: u64) {
        self.news
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
    }
}

/// `kc.loginNews(id, json)` and `kc.loginPrompt(id, json)` for `js/providers.js`.
pub(crate) fn install<'js>(
    ctx: &Ctx<'js>,
    kc: &Object<'js>,
    logins: &Arc<Logins>,
) -> rquickjs::Result<()> {
    let l = Arc::clone(logins);
    kc.set(
        "loginNews",
        Function::new(ctx.clone(), move |id: f64, news: String| {
            let news: Value = serde_json::from_str(&news).unwrap_or(Value::Null);
            let text = |key: &str| news.get(key).and_then(Value::as_str).map(str::to_owned);
            let news = match news.get("type").and_then(Value::as_str) {
                Some("auth") => LoginNews::Auth {
                    url: text("url").unwrap_or_default(),
                    instructions: text("instructions").filter(|i| !i.is_empty()),
                },
                _ => LoginNews::Progress(text("message").unwrap_or_default()),
            };
            if let Some(sender) = l.sender(id as u64) {
                let _ = sender.send(news);
            }
        })?,
    )?;
    let l = Arc::clone(logins);
    kc.set(
        "loginPrompt",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, id: f64, prompt: String| -> rquickjs::Result<Promise<'js>> {
                let prompt: Value = serde_json::from_str(&prompt).unwrap_or(Value::Null);
                let text = |key: &str| prompt.get(key).and_then(Value::as_str).map(str::to_owned);
                let (answer, answered) = oneshot::channel();
                let asked = l.sender(id as u64).is_some_and(|sender| {
                    sender
                        .send(LoginNews::Prompt {
                            message: text("message").unwrap_or_default(),
                            placeholder: text("placeholder").filter(|p| !p.is_empty()),
                            allow_empty: prompt.get("allowEmpty") == Some(&Value::Bool(true)),
                            answer,
                        })
                        .is_ok()
                });
                crate::providers_ops::async_op(&ctx, async move {
                    let answer = if asked { answered.await.ok() } else { None };
                    match answer {
                        Some(text) => json!({ "ok": text }),
                        None => json!({ "error": LOGIN_CANCELLED }),
                    }
                    .to_string()
                })
            },
        )?,
    )?;
    Ok(())
}

impl ExtensionHost {
    /// The providers whose registration has an `oauth` with a `login`, in registration
    /// order (what `/login` lists beside the built-in subscriptions).
    pub fn oauth_login_providers(&self) -> Vec<OAuthLoginProvider> {
        self.registry()
            .providers
            .iter()
            .filter_map(|p| {
                let oauth = p.config.get("oauth")?.as_object()?;
                let name = oauth.get("name").and_then(Value::as_str).unwrap_or(&p.name);
                Some(OAuthLoginProvider {
                    provider: p.name.clone(),
                    name: name.to_owned(),
                })
            })
            .collect()
    }

    /// Runs `provider`'s `oauth.login(callbacks)`: its news goes to `news`, a cancelled
    /// `cancel` aborts its `signal` and ends the wait with [`LOGIN_CANCELLED`]. The
    /// credentials it returned.
    pub async fn oauth_login(
        &self,
        provider: &str,
        news: mpsc::UnboundedSender<LoginNews>,
        cancel: CancellationToken,
    ) -> Result<Map<String, Value>, CallError> {
        let logins = Arc::clone(&self.ops.logins);
        let id = logins.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        logins
            .news
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, news);
        let payload = json!({ "provider": provider, "login": id as f64 });
        let login = self.engine.call("oauthLogin", &payload);
        let answer = tokio::select! {
            answer = login => answer,
            () = cancel.cancelled() => {
                // The questions it waits on are answered "cancelled" as their senders go.
                logins.forget(id);
                let _ = self.engine.call("oauthLoginAbort", &json!({ "login": id as f64 })).await;
                return Err(CallError::Threw(LOGIN_CANCELLED.to_owned()));
            }
        };
        logins.forget(id);
        match answer? {
            Value::Object(credentials) => Ok(credentials),
            other => Err(CallError::Threw(format!(
                "login returned no credentials (it returned {other})"
            ))),
        }
    }
}
