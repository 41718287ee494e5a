//! `/login` and `/logout`, as the reference's: the kind of login (a subscription or an API
//! key), the provider, then the browser login (the address, the loopback callback or a
//! pasted code) or a key typed in unseen. What is typed or fetched is written to `auth.json`
//! on a task of its own (the file's lock may take a moment); the session then reads the file
//! again, so the provider's models are offered at once, and a session without a model takes
//! the provider's. Escape stops every step, and nothing is written then.

use knightcode_ai::AuthStorage;
use knightcode_ai::Credential;
use knightcode_ai::ModelRegistry;
use knightcode_ai::ProcessEnv;
use knightcode_ai::login;
use knightcode_ai::login::BrowserLogin;
use knightcode_ai::login::LoginChoice;
use knightcode_ai::login::LoginKind;
use knightcode_runtime::Command;
use knightcode_runtime::agent_session::operations::ModelSwitch;
use serde_json::Map;
use serde_json::Value;
use tokio::sync::mpsc;

use super::actions::Pending;
use super::overlay::Overlay;
use super::sharing::JobDone;
use super::ui::Ui;
use crate::pickers::ConfirmPrompt;
use crate::pickers::LoginDialog;
use crate::pickers::ProviderPicker;
use crate::pickers::ProviderRow;
use crate::pickers::ProviderStatus;

mod copilot;
mod ext;

const SUBSCRIPTION: &str = "Use a subscription";
const API_KEY: &str = "Use an API key";
/// What the reference says while the code is exchanged.
const EXCHANGING: &str = "Exchanging authorization code for tokens...";

/// News of a login's task, tagged with the login it belongs to (a cancelled one's news is
/// dropped).
#[derive(Debug)]
pub struct LoginEvent {
    run: u64,
    news: LoginNews,
}

#[derive(Debug)]
enum LoginNews {
    /// The address to open, and whether the browser can come back by itself.
    Auth {
        url: String,
        has_callback: bool,
    },
    Progress(String),
    /// A question whose answer may be blank (GitHub Copilot's host).
    Ask {
        prompt: String,
        placeholder: String,
    },
    /// A device code to type in at `url` (GitHub Copilot); the login polls meanwhile.
    DeviceCode {
        url: String,
        code: String,
    },
    /// An extension's `onAuth`: the address and what to do there.
    ExtensionAuth {
        url: String,
        instructions: Option<String>,
    },
    /// An extension's `onPrompt` (or `onManualCodeInput`): the answer goes back to it.
    ExtensionAsk {
        message: String,
        placeholder: Option<String>,
        allow_empty: bool,
    },
    /// Written to `auth.json`.
    Saved,
    /// `/logout` removed the entry; it was a subscription login.
    Removed {
        oauth: bool,
    },
    Failed(String),
}

/// The login under way. Dropping it stops its task (the callback's port is let go).
pub struct LoginRun {
    id: u64,
    choice: LoginChoice,
    /// Where a pasted code goes (the browser login's task reads it).
    paste: Option<mpsc::UnboundedSender<String>>,
    task: Option<tokio::task::JoinHandle<()>>,
    /// A `/logout`, not a login.
    logout: bool,
    /// The question asked takes a blank answer.
    allow_empty: bool,
    /// An extension's login: cancelled (rather than its task dropped) so that its
    /// `signal` aborts on the JS thread.
    cancel: Option<tokio_util::sync::CancellationToken>,
}

impl Drop for LoginRun {
    fn drop(&mut self) {
        if let Some(cancel) = &self.cancel {
            cancel.cancel();
        }
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// What to say once the session has read `auth.json` again.
#[derive(Debug, Clone, PartialEq)]
pub enum AfterCredentials {
    /// `Logged in to X` or `Saved API key for X`; `had_model`: the session had one before.
    LoggedIn {
        label: String,
        had_model: bool,
    },
    LoggedOut(String),
}

impl Ui {
    fn auth_path(&self) -> std::path::PathBuf {
        self.places.agent_dir().join("auth.json")
    }

    fn next_login_id(&self) -> u64 {
        self.login.as_ref().map_or(1, |run| run.id + 1)
    }

    /// The built-in logins and the extensions' OAuth logins (by their `oauth.name`); an
    /// extension's login of a built-in provider replaces it, as pi's registration does.
    fn login_choices(&self) -> Vec<LoginChoice> {
        let mut choices = login::login_choices(&ModelRegistry::load(self.places.agent_dir()));
        let extensions = self
            .link
            .extension_logins()
            .map(|logins| logins.providers())
            .unwrap_or_default();
        choices.retain(|c| {
            c.kind != LoginKind::Subscription
                || !extensions.iter().any(|e| e.provider == c.provider)
        });
        choices.extend(extensions.into_iter().map(|e| LoginChoice {
            provider: e.provider,
            name: e.name,
            kind: LoginKind::Subscription,
        }));
        choices
    }

    /// `/login [provider]`.
    pub fn open_login(&mut self, provider: Option<&str>) {
        let Some(provider) = provider else {
            self.open_login_method();
            return;
        };
        if let Some(why) = login::login_unavailable(provider) {
            self.info(why);
            return;
        }
        let choices = self.login_choices();
        let found = choices
            .iter()
            .find(|c| c.provider == provider && c.kind == LoginKind::Subscription)
            .or_else(|| choices.iter().find(|c| c.provider == provider))
            .cloned();
        match found {
            Some(choice) => self.start_login(choice),
            None => self.error(&format!(
                "Unknown provider \"{provider}\". Use /login to pick one."
            )),
        }
    }

    fn open_login_method(&mut self) {
        let prompt = ConfirmPrompt::new(
            "Select authentication method:",
            "",
            vec![SUBSCRIPTION.to_owned(), API_KEY.to_owned()],
            self.screen.theme.clone(),
            self.prefs.bindings(),
        );
        self.show_overlay(Overlay::LoginMethod(prompt));
    }

    pub fn login_method_picked(&mut self, kind: Option<LoginKind>) {
        let Some(kind) = kind else {
            self.mark_urgent();
            return;
        };
        let choices: Vec<LoginChoice> = self
            .login_choices()
            .into_iter()
            .filter(|c| c.kind == kind)
            .collect();
        let stored = AuthStorage::load(self.places.agent_dir()).ok();
        let rows = choices
            .iter()
            .map(|choice| ProviderRow {
                id: choice.provider.clone(),
                name: choice.name.clone(),
                kind: kind_text(choice.kind).to_owned(),
                status: login_status(choice, stored.as_ref()),
            })
            .collect();
        let picker = ProviderPicker::new(
            "Select provider to configure:",
            "No providers available",
            rows,
            self.screen.theme.clone(),
            self.prefs.bindings(),
        );
        self.show_overlay(Overlay::LoginProviders(picker, choices));
    }

    /// A provider was picked; `None`: escape, back to the kinds of login.
    pub fn login_provider_picked(&mut self, choice: Option<LoginChoice>) {
        match choice {
            Some(choice) => self.start_login(choice),
            None => self.open_login_method(),
        }
    }

    fn start_login(&mut self, choice: LoginChoice) {
        if let Some(why) = login::login_unavailable(&choice.provider) {
            self.info(why);
            return;
        }
        let mut dialog = LoginDialog::new(
            &choice.name,
            self.screen.theme.clone(),
            self.prefs.bindings(),
        );
        let id = self.next_login_id();
        let mut run = LoginRun {
            id,
            choice: choice.clone(),
            paste: None,
            task: None,
            logout: false,
            allow_empty: false,
            cancel: None,
        };
        match choice.kind {
            LoginKind::ApiKey => dialog.ask("Enter API key:", true),
            LoginKind::Subscription if self.extension_login(&choice.provider).is_some() => {
                let logins = self.extension_login(&choice.provider);
                let (paste_tx, paste_rx) = mpsc::unbounded_channel();
                let tx = self.jobs.reporter();
                let cancel = tokio_util::sync::CancellationToken::new();
                run.paste = Some(paste_tx);
                run.cancel = Some(cancel.clone());
                let agent_dir = self.places.agent_dir().to_path_buf();
                let provider = choice.provider.clone();
                let report = move |news| {
                    let _ = tx.send(JobDone::Login(LoginEvent { run: id, news }));
                };
                if let Some(logins) = logins {
                    // Not kept as the run's task: dropping the run cancels it instead, and it
                    // ends by itself once the JS side has stopped.
                    tokio::spawn(ext::run(
                        logins, provider, agent_dir, paste_rx, cancel, report,
                    ));
                }
            }
            LoginKind::Subscription => {
                let (paste_tx, paste_rx) = mpsc::unbounded_channel();
                let tx = self.jobs.reporter();
                run.paste = Some(paste_tx);
                let agent_dir = self.places.agent_dir().to_path_buf();
                run.task = Some(tokio::spawn(async move {
                    let report = |news| {
                        let _ = tx.send(JobDone::Login(LoginEvent { run: id, news }));
                    };
                    let login = async {
                        match choice.provider.as_str() {
                            knightcode_ai::copilot::PROVIDER => {
                                copilot::device_login(paste_rx, &report).await
                            }
                            _ => browser_login(&choice.provider, paste_rx, &report).await,
                        }
                    };
                    let news = match login.await {
                        Ok(entry) => save(&agent_dir, &choice.provider, entry).await,
                        Err(message) => LoginNews::Failed(message),
                    };
                    report(news);
                }));
            }
        }
        self.login = Some(run);
        self.show_overlay(Overlay::Login(dialog));
    }

    /// The session's extensions, when one of them registers `provider`'s OAuth login.
    fn extension_login(
        &self,
        provider: &str,
    ) -> Option<knightcode_runtime::extensions::login::ExtensionLogins> {
        self.link
            .extension_logins()
            .filter(|logins| logins.find(provider).is_some())
    }

    /// Enter in the login dialog: a key, or a pasted code or address.
    pub fn login_input(&mut self, text: String) {
        let Some(run) = &self.login else {
            return;
        };
        let (id, choice) = (run.id, run.choice.clone());
        if let Some(paste) = &run.paste {
            if text.trim().is_empty() && !run.allow_empty {
                return;
            }
            let _ = paste.send(text);
            if let Some(run) = &mut self.login {
                run.allow_empty = false;
            }
            if let Some(Overlay::Login(dialog)) = &mut self.screen.overlay {
                dialog.stop_asking();
            }
            self.mark_urgent();
            return;
        }
        let key = text.trim().to_owned();
        if key.is_empty() {
            self.close_login();
            self.error(&format!(
                "Failed to save API key for {}: API key cannot be empty.",
                choice.name
            ));
            return;
        }
        let Credential::ApiKey { raw, .. } = Credential::api_key(key) else {
            return;
        };
        if let Some(Overlay::Login(dialog)) = &mut self.screen.overlay {
            dialog.stop_asking();
            dialog.show_progress("Saving the key...");
        }
        let tx = self.jobs.reporter();
        let agent_dir = self.places.agent_dir().to_path_buf();
        let task = tokio::spawn(async move {
            let news = save(&agent_dir, &choice.provider, raw).await;
            let _ = tx.send(JobDone::Login(LoginEvent { run: id, news }));
        });
        if let Some(run) = &mut self.login {
            run.task = Some(task);
        }
        self.mark_urgent();
    }

    /// Escape in the login dialog: the login stops and nothing is written.
    pub fn login_cancelled(&mut self) {
        self.login = None;
        self.status("Login cancelled; nothing was saved.");
    }

    fn close_login(&mut self) {
        self.login = None;
        if matches!(self.screen.overlay, Some(Overlay::Login(_))) {
            self.screen.overlay = None;
        }
        self.mark_urgent();
    }

    pub fn on_login_event(&mut self, event: LoginEvent) {
        let Some(run) = self.login.as_ref().filter(|run| run.id == event.run) else {
            return;
        };
        let (choice, logout) = (run.choice.clone(), run.logout);
        let dialog = match &mut self.screen.overlay {
            Some(Overlay::Login(dialog)) => Some(dialog),
            _ => None,
        };
        match event.news {
            LoginNews::Auth { url, has_callback } => {
                login::open_browser(&url);
                if let Some(dialog) = dialog {
                    let instructions = has_callback.then_some(
                        "Complete login in your browser. If the browser is on another machine, paste the final redirect URL here.",
                    );
                    dialog.show_auth(&url, instructions);
                    let prompt = if has_callback {
                        "Paste redirect URL below, or complete login in browser:"
                    } else {
                        "Paste the authorization code or full redirect URL:"
                    };
                    dialog.ask(prompt, false);
                }
            }
            LoginNews::Ask {
                prompt,
                placeholder,
            } => {
                if let Some(dialog) = dialog {
                    dialog.show_progress(&format!("e.g., {placeholder}"));
                    dialog.ask(&prompt, false);
                }
                if let Some(run) = &mut self.login {
                    run.allow_empty = true;
                }
            }
            LoginNews::ExtensionAuth { url, instructions } => {
                login::open_browser(&url);
                if let Some(dialog) = dialog {
                    dialog.show_auth(&url, instructions.as_deref());
                }
            }
            LoginNews::ExtensionAsk {
                message,
                placeholder,
                allow_empty,
            } => {
                if let Some(dialog) = dialog {
                    if let Some(example) = placeholder {
                        dialog.show_progress(&format!("e.g., {example}"));
                    }
                    dialog.ask(&message, false);
                }
                if let Some(run) = &mut self.login {
                    run.allow_empty = allow_empty;
                }
            }
            LoginNews::DeviceCode { url, code } => {
                login::open_browser(&url);
                if let Some(dialog) = dialog {
                    dialog.show_auth(&url, Some(&format!("Enter code: {code}")));
                    dialog.show_progress(copilot::WAITING);
                }
            }
            LoginNews::Progress(text) => {
                if let Some(dialog) = dialog {
                    dialog.stop_asking();
                    dialog.show_progress(&text);
                }
            }
            LoginNews::Saved => {
                self.close_login();
                let label = match choice.kind {
                    LoginKind::Subscription => format!("Logged in to {}", choice.name),
                    LoginKind::ApiKey => format!("Saved API key for {}", choice.name),
                };
                let had_model = self.session.current_model().is_some();
                self.send(
                    Command::ReloadCredentials {
                        provider: Some(choice.provider),
                    },
                    Pending::Credentials(AfterCredentials::LoggedIn { label, had_model }),
                );
            }
            LoginNews::Removed { oauth } => {
                self.login = None;
                let name = login::provider_display_name(&choice.provider).to_owned();
                let message = if oauth {
                    format!("Logged out of {name}")
                } else {
                    format!(
                        "Removed stored API key for {name}. Environment variables and models.json config are unchanged."
                    )
                };
                self.send(
                    Command::ReloadCredentials { provider: None },
                    Pending::Credentials(AfterCredentials::LoggedOut(message)),
                );
            }
            LoginNews::Failed(message) => {
                self.close_login();
                let text = if logout {
                    format!("Logout failed: {message}")
                } else if choice.kind == LoginKind::ApiKey {
                    format!("Failed to save API key for {}: {message}", choice.name)
                } else {
                    format!("Failed to login to {}: {message}", choice.name)
                };
                self.error(&text);
            }
        }
        self.mark_urgent();
    }

    /// The session read `auth.json` again: what happened is said once the screen has the
    /// new model list (a `/model` typed right after finds the provider's models).
    pub fn credentials_reloaded(&mut self, after: AfterCredentials, switch: Option<ModelSwitch>) {
        let saved = format!("Credentials saved to {}", self.auth_path().display());
        let (status, error) = match after {
            AfterCredentials::LoggedIn { label, .. } if switch.is_some() => {
                let id = switch.map(|s| s.model.id).unwrap_or_default();
                (format!("{label}. Selected {id}. {saved}"), None)
            }
            AfterCredentials::LoggedIn { label, had_model } => (
                format!("{label}. {saved}"),
                (!had_model).then(|| {
                    format!(
                        "{label}, but no models are available for that provider. Use /model to select a model."
                    )
                }),
            ),
            AfterCredentials::LoggedOut(message) => (message, None),
        };
        self.send(
            Command::Snapshot,
            Pending::SnapshotThenSay { status, error },
        );
    }

    /// `/logout [provider]`.
    pub fn open_logout(&mut self, provider: Option<&str>) {
        let stored = match AuthStorage::load(self.places.agent_dir()) {
            Ok(stored) => stored,
            Err(error) => {
                self.error(&format!("Logout failed: {error}"));
                return;
            }
        };
        if let Some(provider) = provider {
            if stored.get(provider).is_none() {
                self.error(&format!(
                    "No stored credentials for \"{provider}\" in {}.",
                    self.auth_path().display()
                ));
                return;
            }
            self.logout(provider.to_owned());
            return;
        }
        let mut providers: Vec<String> = stored.providers().map(str::to_owned).collect();
        if providers.is_empty() {
            self.status(
                "No stored credentials to remove. /logout only removes credentials saved by /login; environment variables and models.json config are unchanged.",
            );
            return;
        }
        providers.sort_by_key(|p| login::provider_display_name(p).to_lowercase());
        let rows = providers
            .iter()
            .map(|id| {
                let oauth = matches!(stored.get(id), Some(Credential::OAuth { .. }));
                ProviderRow {
                    id: id.clone(),
                    name: login::provider_display_name(id).to_owned(),
                    kind: if oauth { "subscription" } else { "API key" }.to_owned(),
                    status: ProviderStatus::Configured("configured".to_owned()),
                }
            })
            .collect();
        let picker = ProviderPicker::new(
            "Select provider to logout:",
            "No providers logged in. Use /login first.",
            rows,
            self.screen.theme.clone(),
            self.prefs.bindings(),
        );
        self.show_overlay(Overlay::LogoutProviders(picker, providers));
    }

    /// Removes `provider`'s entry from `auth.json` (on a task: the file's lock).
    pub fn logout(&mut self, provider: String) {
        let id = self.next_login_id();
        let tx = self.jobs.reporter();
        let agent_dir = self.places.agent_dir().to_path_buf();
        let name = login::provider_display_name(&provider).to_owned();
        let task_provider = provider.clone();
        let task = tokio::spawn(async move {
            let news = match forget(&agent_dir, &task_provider).await {
                Ok(oauth) => LoginNews::Removed { oauth },
                Err(message) => LoginNews::Failed(message),
            };
            let _ = tx.send(JobDone::Login(LoginEvent { run: id, news }));
        });
        self.login = Some(LoginRun {
            id,
            choice: LoginChoice {
                provider,
                name,
                kind: LoginKind::ApiKey,
            },
            paste: None,
            task: Some(task),
            logout: true,
            allow_empty: false,
            cancel: None,
        });
        self.mark_urgent();
    }
}

fn kind_text(kind: LoginKind) -> &'static str {
    match kind {
        LoginKind::Subscription => "subscription",
        LoginKind::ApiKey => "API key",
    }
}

/// How `choice`'s provider is configured now, as the reference's selector says it.
fn login_status(choice: &LoginChoice, stored: Option<&AuthStorage>) -> ProviderStatus {
    let credential = stored.and_then(|s| s.get(&choice.provider));
    let oauth = matches!(credential, Some(Credential::OAuth { .. }));
    match (credential, choice.kind) {
        (Some(_), LoginKind::Subscription) if oauth => {
            ProviderStatus::Configured("configured".to_owned())
        }
        (Some(_), LoginKind::ApiKey) if !oauth => {
            ProviderStatus::Configured("configured".to_owned())
        }
        (Some(_), _) if oauth => ProviderStatus::Other("subscription configured".to_owned()),
        (Some(_), _) => ProviderStatus::Other("API key configured".to_owned()),
        (None, LoginKind::Subscription) => ProviderStatus::Unconfigured,
        (None, LoginKind::ApiKey) => knightcode_ai::auth::provider_env_vars(&choice.provider)
            .iter()
            .find(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
            .map_or(ProviderStatus::Unconfigured, |name| {
                ProviderStatus::Configured(format!("env: {name}"))
            }),
    }
}

/// The browser login: the address goes to the dialog, then the browser's callback or a
/// pasted code (whichever comes first) is exchanged for tokens.
async fn browser_login(
    provider: &str,
    mut paste: mpsc::UnboundedReceiver<String>,
    report: &impl Fn(LoginNews),
) -> Result<Map<String, Value>, String> {
    let flow = BrowserLogin::start(provider, &ProcessEnv)
        .await
        .map_err(|e| e.to_string())?;
    report(LoginNews::Auth {
        url: flow.url(),
        has_callback: flow.has_callback(),
    });
    let code = tokio::select! {
        code = flow.callback() => code,
        pasted = paste.recv() => match pasted {
            Some(text) => flow.parse_pasted(&text).map_err(|e| e.to_string())?,
            None => return Err("Login cancelled".to_owned()),
        },
    };
    report(LoginNews::Progress(EXCHANGING.to_owned()));
    flow.exchange(&code).await.map_err(|e| e.to_string())
}

/// Writes `entry` as `provider`'s login.
async fn save(agent_dir: &std::path::Path, provider: &str, entry: Map<String, Value>) -> LoginNews {
    let stored = async {
        let mut storage = AuthStorage::load(agent_dir)?;
        storage.store(provider, entry).await
    };
    match stored.await {
        Ok(()) => LoginNews::Saved,
        Err(error) => LoginNews::Failed(error.to_string()),
    }
}

/// Removes `provider`'s entry; whether it was a subscription login.
async fn forget(agent_dir: &std::path::Path, provider: &str) -> Result<bool, String> {
    let mut storage = AuthStorage::load(agent_dir).map_err(|e| e.to_string())?;
    let oauth = matches!(storage.get(provider), Some(Credential::OAuth { .. }));
    match storage.forget(provider).await {
        Ok(true) => Ok(oauth),
        Ok(false) => Err(format!(
            "no stored credentials for \"{provider}\" in {}",
            storage.path().display()
        )),
        Err(error) => Err(error.to_string()),
    }
}
