//! `knightcode auth login` and `logout`: what the reference's `/login` and `/logout` do, on
//! the command line. A key is read from the terminal without echo, or as one line from stdin
//! when stdin is not a terminal (`echo $KEY | knightcode auth login openai`).

use std::io::BufRead as _;
use std::io::IsTerminal as _;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use knightcode_ai::AuthStorage;
use knightcode_ai::Credential;
use knightcode_ai::ModelRegistry;
use knightcode_ai::ProcessEnv;
use knightcode_ai::login;
use knightcode_ai::login::BrowserLogin;
use knightcode_ai::login::LoginChoice;
use knightcode_ai::login::LoginKind;
use serde_json::Map;
use serde_json::Value;
use tokio::sync::mpsc;

mod copilot;
mod ext;

/// How long a browser login may take before the command gives up: longer than anyone takes
/// to log in, shorter than forever.
const LOGIN_WAIT: Duration = Duration::from_secs(15 * 60);

/// Lines of stdin, read on a thread of their own so a login can wait for a pasted code and
/// the browser's callback at once. `None` is the end of input.
struct Lines {
    rx: mpsc::UnboundedReceiver<Option<String>>,
    terminal: bool,
}

impl Lines {
    fn spawn() -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            let mut line = String::new();
            loop {
                line.clear();
                match stdin.lock().read_line(&mut line) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(None);
                        return;
                    }
                    Ok(_) => {
                        if tx.send(Some(line.trim().to_owned())).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Self {
            rx,
            terminal: std::io::stdin().is_terminal(),
        }
    }

    /// The next line; `None` at the end of input. After the end, always `None`.
    async fn next(&mut self) -> Option<String> {
        self.rx.recv().await.flatten()
    }

    /// The next line typed with the terminal's echo off (a key on screen could be read over a
    /// shoulder or in a recording). Ctrl+C restores the echo before the process ends.
    async fn next_hidden(&mut self, out: &mut dyn Write) -> Option<String> {
        let echo = self.terminal.then(EchoOff::new).flatten();
        let line = tokio::select! {
            line = self.next() => line,
            _ = tokio::signal::ctrl_c() => None,
        };
        if echo.is_some() || !self.terminal {
            // The Enter that ended the line was not echoed (or came from a pipe).
            let _ = writeln!(out);
        }
        drop(echo);
        line
    }
}

/// The terminal's echo, off while this lives.
struct EchoOff {
    saved: rustix::termios::Termios,
}

impl EchoOff {
    fn new() -> Option<Self> {
        let stdin = std::io::stdin();
        let saved = rustix::termios::tcgetattr(&stdin).ok()?;
        let mut quiet = saved.clone();
        quiet.local_modes.remove(rustix::termios::LocalModes::ECHO);
        rustix::termios::tcsetattr(&stdin, rustix::termios::OptionalActions::Now, &quiet).ok()?;
        Some(Self { saved })
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        let stdin = std::io::stdin();
        let _ =
            rustix::termios::tcsetattr(&stdin, rustix::termios::OptionalActions::Now, &self.saved);
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start: {e}"))
}

/// Reports an outcome: `Ok` text on stdout (exit 0), `Err` as `Error: …` (exit 1).
fn finish(result: Result<String, String>, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    match result {
        Ok(text) => {
            let _ = writeln!(out, "{text}");
            0
        }
        Err(message) => {
            let _ = writeln!(err, "Error: {message}");
            1
        }
    }
}

/// `knightcode auth login [<provider>] [--api-key]`.
pub(super) fn login(
    argv: &[String],
    agent_dir: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let mut provider = None;
    let mut api_key = false;
    let mut extensions = ext::ExtensionArgs::default();
    let mut args = argv.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--api-key" => api_key = true,
            "--extension" | "-e" => match args.next() {
                Some(path) => extensions.paths.push(path.clone()),
                None => {
                    return finish(Err(format!("{arg} needs a path")), out, err);
                }
            },
            "--no-extensions" | "-ne" => extensions.none = true,
            flag if flag.starts_with('-') => {
                return finish(
                    Err(format!(
                        "Unknown option {flag} for \"auth login\". Use \"knightcode auth --help\"."
                    )),
                    out,
                    err,
                );
            }
            _ if provider.is_some() => {
                return finish(Err("auth login takes one provider".into()), out, err);
            }
            name => provider = Some(name.to_owned()),
        }
    }
    let result = runtime().and_then(|rt| {
        rt.block_on(async {
            let mut lines = Lines::spawn();
            let provider = match provider {
                Some(provider) if !api_key && !login::has_subscription_login(&provider) => {
                    // An extension's OAuth login of that name goes first, as in pi.
                    if let Some(logins) = ext::load(&extensions, agent_dir).await?
                        && let Some(found) = logins.find(&provider)
                    {
                        return ext::login(&logins, &found, agent_dir, &mut lines, out).await;
                    }
                    Some(provider)
                }
                None if lines.terminal => match ext::load(&extensions, agent_dir).await? {
                    Some(logins) => {
                        return pick_with_extensions(&logins, agent_dir, &mut lines, out).await;
                    }
                    None => None,
                },
                other => other,
            };
            run_login(provider, api_key, agent_dir, &mut lines, out).await
        })
    });
    finish(result, out, err)
}

async fn run_login(
    provider: Option<String>,
    api_key: bool,
    agent_dir: &Path,
    lines: &mut Lines,
    out: &mut dyn Write,
) -> Result<String, String> {
    let registry = ModelRegistry::load(agent_dir);
    let choices = login::login_choices(&registry);
    let choice = match provider {
        Some(provider) => {
            if let Some(why) = login::login_unavailable(&provider) {
                return Err(why.to_owned());
            }
            let kind = if login::has_subscription_login(&provider) && !api_key {
                LoginKind::Subscription
            } else {
                LoginKind::ApiKey
            };
            choices
                .iter()
                .find(|c| c.provider == provider && c.kind == kind)
                .cloned()
                .ok_or_else(|| {
                    format!(
                        "Unknown provider \"{provider}\". Use --list-models to see available providers, or run \"knightcode auth login\" on a terminal to pick one."
                    )
                })?
        }
        None => pick(&choices, lines, out).await?,
    };
    if let Some(why) = login::login_unavailable(&choice.provider) {
        return Err(why.to_owned());
    }
    let mut storage = AuthStorage::load(agent_dir).map_err(|e| e.to_string())?;
    let path = storage.path().display().to_string();
    match choice.kind {
        LoginKind::Subscription => {
            let entry = match choice.provider.as_str() {
                knightcode_ai::copilot::PROVIDER => {
                    copilot::device_login(&choice.name, lines, out).await?
                }
                _ => subscription_login(&choice, lines, out).await?,
            };
            storage
                .store(&choice.provider, entry)
                .await
                .map_err(|e| e.to_string())?;
            Ok(format!(
                "Logged in to {}. Credentials saved to {path}",
                choice.name
            ))
        }
        LoginKind::ApiKey => {
            let _ = write!(out, "Enter API key for {}: ", choice.name);
            let _ = out.flush();
            let key = lines.next_hidden(out).await.unwrap_or_default();
            let key = key.trim();
            if key.is_empty() {
                return Err(format!(
                    "Failed to save API key for {}: API key cannot be empty.",
                    choice.name
                ));
            }
            let Credential::ApiKey { raw, .. } = Credential::api_key(key) else {
                return Err("an API key credential is always an api_key entry".into());
            };
            storage
                .store(&choice.provider, raw)
                .await
                .map_err(|e| e.to_string())?;
            Ok(format!(
                "Saved API key for {}. Credentials saved to {path}",
                choice.name
            ))
        }
    }
}

/// The list on a terminal with the extensions' OAuth logins after the built-in ones (a
/// provider with a built-in subscription login keeps that one here).
async fn pick_with_extensions(
    logins: &ext::ExtensionLogins,
    agent_dir: &Path,
    lines: &mut Lines,
    out: &mut dyn Write,
) -> Result<String, String> {
    let extra: Vec<_> = logins
        .providers()
        .into_iter()
        .filter(|e| !login::has_subscription_login(&e.provider))
        .collect();
    let mut choices = login::login_choices(&ModelRegistry::load(agent_dir));
    choices.retain(|c| !extra.iter().any(|e| e.provider == c.provider));
    choices.extend(extra.iter().map(|e| LoginChoice {
        provider: e.provider.clone(),
        name: e.name.clone(),
        kind: LoginKind::Subscription,
    }));
    let choice = pick(&choices, lines, out).await?;
    match extra.iter().find(|e| e.provider == choice.provider) {
        Some(found) => ext::login(logins, found, agent_dir, lines, out).await,
        None => {
            let api_key = choice.kind == LoginKind::ApiKey;
            run_login(Some(choice.provider), api_key, agent_dir, lines, out).await
        }
    }
}

/// A numbered list to choose from on a terminal.
async fn pick(
    choices: &[LoginChoice],
    lines: &mut Lines,
    out: &mut dyn Write,
) -> Result<LoginChoice, String> {
    if !lines.terminal {
        return Err("Name the provider: knightcode auth login <provider> (knightcode auth login on a terminal lists them).".into());
    }
    let _ = writeln!(out, "Log in to:");
    for (n, choice) in choices.iter().enumerate() {
        let how = match choice.kind {
            LoginKind::Subscription => "subscription",
            LoginKind::ApiKey => "API key",
        };
        let _ = writeln!(out, "{:>3}. {} ({how})", n + 1, choice.name);
    }
    let _ = write!(out, "Number or provider id: ");
    let _ = out.flush();
    let answer = lines.next().await.unwrap_or_default();
    let found = match answer.parse::<usize>() {
        Ok(n) if n >= 1 => choices.get(n - 1),
        _ => choices.iter().find(|c| c.provider == answer),
    };
    found.cloned().ok_or_else(|| "Login cancelled".to_owned())
}

/// The browser login: the address, then a pasted code or the browser's callback.
async fn subscription_login(
    choice: &LoginChoice,
    lines: &mut Lines,
    out: &mut dyn Write,
) -> Result<Map<String, Value>, String> {
    let flow = BrowserLogin::start(&choice.provider, &ProcessEnv)
        .await
        .map_err(|e| e.to_string())?;
    let url = flow.url();
    let _ = writeln!(out, "Log in to {} in your browser:\n\n{url}\n", choice.name);
    if std::io::stdout().is_terminal() {
        login::open_browser(&url);
    }
    if flow.has_callback() {
        let _ = writeln!(
            out,
            "Complete login in your browser. If the browser is on another machine, paste the final redirect URL here."
        );
    }
    let _ = write!(out, "Paste the authorization code or full redirect URL: ");
    let _ = out.flush();
    let wait = async {
        let mut input_open = true;
        loop {
            tokio::select! {
                code = flow.callback() => return Ok(code),
                line = lines.next(), if input_open => match line {
                    Some(text) if text.is_empty() => {}
                    Some(text) => return flow.parse_pasted(&text).map_err(|e| e.to_string()),
                    // Without a callback nothing else can bring the code.
                    None if !flow.has_callback() => return Err("Login cancelled".to_owned()),
                    None => input_open = false,
                },
                _ = tokio::signal::ctrl_c() => return Err("Login cancelled".to_owned()),
            }
        }
    };
    let code = tokio::time::timeout(LOGIN_WAIT, wait)
        .await
        .map_err(|_| "The login timed out; run it again.".to_owned())??;
    let _ = writeln!(out, "\nExchanging authorization code for tokens...");
    flow.exchange(&code)
        .await
        .map_err(|e| format!("Failed to login to {}: {e}", choice.name))
}

/// `knightcode auth logout [<provider>]`: removes what `login` stored.
pub(super) fn logout(
    argv: &[String],
    agent_dir: &Path,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    if let Some(flag) = argv.iter().find(|a| a.starts_with('-')) {
        return finish(
            Err(format!(
                "Unknown option {flag} for \"auth logout\". Use \"knightcode auth --help\"."
            )),
            out,
            err,
        );
    }
    if argv.len() > 1 {
        return finish(Err("auth logout takes one provider".into()), out, err);
    }
    let result = runtime().and_then(|rt| {
        rt.block_on(async {
            let mut lines = Lines::spawn();
            run_logout(argv.first().cloned(), agent_dir, &mut lines, out).await
        })
    });
    finish(result, out, err)
}

async fn run_logout(
    provider: Option<String>,
    agent_dir: &Path,
    lines: &mut Lines,
    out: &mut dyn Write,
) -> Result<String, String> {
    let mut storage = AuthStorage::load(agent_dir).map_err(|e| e.to_string())?;
    let stored: Vec<String> = storage.providers().map(str::to_owned).collect();
    let provider = match provider {
        Some(provider) => provider,
        None if stored.is_empty() => {
            return Ok("No stored credentials to remove. logout only removes credentials saved by login; environment variables and models.json config are unchanged.".into());
        }
        None if !lines.terminal => {
            return Err(format!(
                "Name the provider: knightcode auth logout <provider> (stored: {}).",
                stored.join(", ")
            ));
        }
        None => {
            let _ = writeln!(out, "Log out of:");
            for (n, id) in stored.iter().enumerate() {
                let _ = writeln!(out, "{:>3}. {}", n + 1, login::provider_display_name(id));
            }
            let _ = write!(out, "Number or provider id: ");
            let _ = out.flush();
            let answer = lines.next().await.unwrap_or_default();
            let found = match answer.parse::<usize>() {
                Ok(n) if n >= 1 => stored.get(n - 1),
                _ => stored.iter().find(|id| **id == answer),
            };
            found
                .cloned()
                .ok_or_else(|| "Logout cancelled".to_owned())?
        }
    };
    let oauth = matches!(storage.get(&provider), Some(Credential::OAuth { .. }));
    let path = storage.path().display().to_string();
    if !storage.forget(&provider).await.map_err(|e| e.to_string())? {
        return Err(format!(
            "No stored credentials for \"{provider}\" in {path}."
        ));
    }
    let subscription = login::SUBSCRIPTION_LOGINS
        .iter()
        .find(|(id, _)| oauth && *id == provider)
        .map(|(_, name)| *name);
    let name = subscription.unwrap_or_else(|| login::provider_display_name(&provider));
    Ok(if oauth {
        format!("Logged out of {name}")
    } else {
        format!(
            "Removed stored API key for {name}. Environment variables and models.json config are unchanged."
        )
    })
}
