//! `knightcode auth`: the reference's `check`, `print-api-key` and `print-bearer-token`
//! (cli.md §6: their words, JSON and exit codes), and `login`/`logout`, which the reference
//! offers only as `/login` and `/logout` inside its interface.

mod login;

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use knightcode_ai::AuthContext;
use knightcode_ai::AuthStorage;
use knightcode_ai::Credential;
use knightcode_ai::ModelRegistry;
use knightcode_ai::ProcessEnv;
use knightcode_ai::models::ProviderConfig;
use serde_json::json;

const HELP: &str = "Usage:
  knightcode auth login [<provider>] [--api-key] [-e <extension>]... [--no-extensions]
  knightcode auth logout [<provider>]
  knightcode auth print-api-key [--provider <provider>] [--model <model>]
  knightcode auth print-bearer-token [--provider <provider>] [--model <model>] [--min-expiry <duration>]
  knightcode auth check [--provider <provider>] [--model <model>] [--json] [--credentials] [--no-refresh]

login stores a subscription login (Anthropic Claude Pro/Max through the browser; GitHub Copilot with a code typed in at GitHub, github.com or GitHub Enterprise) or an API key in auth.json; --api-key types a key for a provider that also has a subscription. A provider an extension registers with an OAuth login (-e, the user's extensions, the project's when trusted) logs in through the extension. logout removes what login stored. Auth commands other than login and logout require at least one of --provider or --model. Checks refresh expired OAuth credentials by default; --no-refresh prevents this. --credentials emits the credential, or includes it in JSON output.
";

/// How long resolving a credential may take (a `!command` key, an OAuth refresh).
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(15);
/// `print-bearer-token` refreshes a token that lapses sooner than this, as the reference does.
const DEFAULT_MIN_EXPIRY_MS: f64 = 30.0 * 60_000.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Check,
    ApiKey,
    BearerToken,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Self::Check => "auth check",
            Self::ApiKey => "auth print-api-key",
            Self::BearerToken => "auth print-bearer-token",
        }
    }
}

/// A misuse of the command or a credential that cannot be given: `Error: <text>`.
#[derive(Debug)]
struct Failure(String);

impl<T: Into<String>> From<T> for Failure {
    fn from(text: T) -> Self {
        Self(text.into())
    }
}

#[derive(Debug, Default)]
struct Options {
    provider: Option<String>,
    model: Option<String>,
    json: bool,
    credentials: bool,
    no_refresh: bool,
    min_expiry_ms: Option<f64>,
}

/// Runs `knightcode auth …` (`argv` starts after `auth`); the exit code.
pub fn run(argv: &[String], agent_dir: &Path, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let first = argv.first().map(String::as_str).filter(|f| *f != "help");
    let Some(first) = first.filter(|_| !argv.iter().any(|a| a == "--help" || a == "-h")) else {
        let _ = out.write_all(HELP.as_bytes());
        return 0;
    };
    let kind = match first {
        "login" => return login::login(&argv[1..], agent_dir, out, err),
        "logout" => return login::logout(&argv[1..], agent_dir, out, err),
        "check" => Kind::Check,
        "print-api-key" => Kind::ApiKey,
        "print-bearer-token" => Kind::BearerToken,
        other => {
            let _ = writeln!(
                err,
                "Error: Unknown auth command \"{other}\". Use \"knightcode auth login\", \"knightcode auth logout\", \"knightcode auth print-api-key\", \"knightcode auth print-bearer-token\", or \"knightcode auth check\"."
            );
            return 1;
        }
    };
    let failed = |err: &mut dyn Write, message: &str| {
        let _ = writeln!(err, "Error: {message}");
        if kind == Kind::Check { 2 } else { 1 }
    };
    let options = match parse(kind, &argv[1..]) {
        Ok(options) => options,
        Err(Failure(message)) => return failed(err, &message),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return failed(err, &format!("cannot start: {e}")),
    };
    let work = async {
        match kind {
            Kind::Check => check(&options, agent_dir).await,
            _ => print_credential(kind, &options, agent_dir).await,
        }
    };
    let result = runtime.block_on(async {
        tokio::time::timeout(RESOLVE_TIMEOUT, work)
            .await
            .unwrap_or_else(|_| Err("resolving the credential took longer than 15 s".into()))
    });
    match result {
        Ok((text, code)) => {
            let _ = writeln!(out, "{text}");
            code
        }
        Err(Failure(message)) => failed(err, &message),
    }
}

fn parse(kind: Kind, argv: &[String]) -> Result<Options, Failure> {
    let mut options = Options::default();
    let mut i = 0;
    while i < argv.len() {
        let arg = argv[i].as_str();
        let mut value = || {
            i += 1;
            argv.get(i).cloned()
        };
        match arg {
            "--provider" => options.provider = value().filter(|v| !v.trim().is_empty()),
            "--model" => options.model = value().filter(|v| !v.trim().is_empty()),
            "--min-expiry" if kind == Kind::BearerToken => {
                options.min_expiry_ms = Some(
                    value()
                        .as_deref()
                        .and_then(parse_duration_ms)
                        .ok_or("--min-expiry must use a duration such as 30m or 1h")?,
                );
            }
            "--min-expiry" => {
                return Err("--min-expiry is only supported by print-bearer-token".into());
            }
            "--json" | "--credentials" | "--no-refresh" if kind != Kind::Check => {
                return Err(format!("{arg} is only supported by auth check").into());
            }
            "--json" => options.json = true,
            "--credentials" => options.credentials = true,
            "--no-refresh" => options.no_refresh = true,
            flag if flag.starts_with("--") => {
                return Err(format!(
                    "Unknown option {flag} for \"{}\". Use \"knightcode auth --help\".",
                    kind.name()
                )
                .into());
            }
            _ => return Err("Auth commands only accept --provider and --model".into()),
        }
        i += 1;
    }
    if options.provider.is_none() && options.model.is_none() {
        return Err(match kind {
            Kind::Check => "Auth checks require --provider <provider> or --model <model>",
            _ => "Credential printing requires --provider <provider> or --model <model>",
        }
        .into());
    }
    Ok(options)
}

/// `30m`, `1h`, `45s`, `500ms`.
fn parse_duration_ms(text: &str) -> Option<f64> {
    let lower = text.to_ascii_lowercase();
    let split = lower.find(|c: char| !c.is_ascii_digit())?;
    let (amount, unit) = lower.split_at(split);
    let amount: f64 = amount.parse().ok()?;
    let scale = match unit {
        "ms" => 1.0,
        "s" => 1_000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return None,
    };
    Some(amount * scale)
}

/// What the commands read: the models (for `--model` and known providers) and `auth.json`.
struct Setup {
    registry: ModelRegistry,
    storage: AuthStorage,
}

impl Setup {
    fn load(agent_dir: &Path) -> Result<Self, Failure> {
        Ok(Self {
            registry: ModelRegistry::load(agent_dir),
            storage: AuthStorage::load(agent_dir).map_err(|e| e.to_string())?,
        })
    }

    fn knows(&self, provider: &str) -> bool {
        self.registry.provider_config(provider).is_some()
            || self
                .registry
                .models()
                .iter()
                .any(|m| m.provider == provider)
    }

    fn models_json_key(&self, provider: &str) -> Option<&str> {
        self.registry
            .provider_config(provider)
            .and_then(ProviderConfig::api_key)
    }

    /// The provider `--provider`/`--model` name. A model id without a provider is looked up
    /// among every provider's models, preferring those with credentials.
    fn provider(&self, options: &Options, context: &AuthContext<'_>) -> Result<String, Failure> {
        let Some(model) = options.model.as_deref() else {
            return Ok(options.provider.clone().unwrap_or_default());
        };
        if let Some(provider) = &options.provider {
            if self.registry.find(provider, model).is_none() {
                return Err(not_found(model));
            }
            return Ok(provider.clone());
        }
        if let Some((provider, id)) = model.split_once('/')
            && self.registry.find(provider, id).is_some()
        {
            return Ok(provider.to_owned());
        }
        let mut matches: Vec<&str> = self
            .registry
            .models()
            .iter()
            .filter(|m| m.id == model)
            .map(|m| m.provider.as_str())
            .collect();
        matches.dedup();
        let configured = matches
            .iter()
            .find(|p| context.has_auth(p, self.models_json_key(p)));
        configured
            .or(matches.first())
            .map(|p| (*p).to_owned())
            .ok_or_else(|| not_found(model))
    }
}

fn not_found(model: &str) -> Failure {
    format!("Model \"{model}\" not found. Use --list-models to see available models.").into()
}

/// `auth check`: `ready`, `not_ready` or `invalid` (or the JSON result, or the credential).
async fn check(options: &Options, agent_dir: &Path) -> Result<(String, u8), Failure> {
    let requested = options
        .provider
        .clone()
        .or(options.model.clone())
        .unwrap_or_default();
    let Ok(setup) = Setup::load(agent_dir) else {
        return Ok(check_output(options, &requested, Check::invalid(), None));
    };
    let env = ProcessEnv;
    let runtime_keys = HashMap::new();
    let context = AuthContext {
        storage: &setup.storage,
        env: &env,
        runtime_keys: &runtime_keys,
    };
    let provider = setup.provider(options, &context)?;
    if setup.registry.error().is_some() {
        return Ok(check_output(options, &provider, Check::invalid(), None));
    }
    if !setup.knows(&provider) {
        return Ok(check_output(
            options,
            &provider,
            Check::not_ready("provider_not_found"),
            None,
        ));
    }
    let models_key = setup.models_json_key(&provider);
    if !context.has_auth(&provider, models_key) {
        let result = Check::not_ready("credentials_not_configured");
        return Ok(check_output(options, &provider, result, None));
    }
    let auth_type = match setup.storage.get(&provider) {
        Some(Credential::OAuth { .. }) => "oauth",
        _ => "api_key",
    };
    let ready = Check {
        status: "ready",
        reason: None,
        auth_type: Some(auth_type),
    };
    if options.no_refresh && !options.credentials {
        return Ok(check_output(options, &provider, ready, None));
    }
    let credential = if options.no_refresh {
        match setup.storage.get(&provider) {
            Some(Credential::OAuth { access, .. }) => Some(access),
            _ => resolve(&context, &provider, models_key).await,
        }
    } else {
        match context.resolve_key(&provider, models_key).await {
            Ok(key) => key.map(|(key, _, _)| key),
            Err(error) => {
                // The words are the contract on stdout; why goes to stderr.
                let _ = writeln!(std::io::stderr(), "{error}");
                return Ok(check_output(options, &provider, Check::invalid(), None));
            }
        }
    };
    let credential = credential.filter(|c| !c.is_empty());
    match (credential, options.credentials) {
        (None, _) => {
            let result = if options.credentials {
                Check::not_ready("credential_not_available")
            } else {
                Check::not_ready("credentials_not_configured")
            };
            Ok(check_output(options, &provider, result, None))
        }
        (Some(credential), true) => Ok(check_output(options, &provider, ready, Some(credential))),
        (Some(_), false) => Ok(check_output(options, &provider, ready, None)),
    }
}

async fn resolve(
    context: &AuthContext<'_>,
    provider: &str,
    models_key: Option<&str>,
) -> Option<String> {
    context
        .resolve_key(provider, models_key)
        .await
        .ok()
        .flatten()
        .map(|(key, _, _)| key)
}

struct Check {
    status: &'static str,
    reason: Option<&'static str>,
    auth_type: Option<&'static str>,
}

impl Check {
    fn invalid() -> Self {
        Self {
            status: "invalid",
            reason: Some("invalid_state"),
            auth_type: None,
        }
    }

    fn not_ready(reason: &'static str) -> Self {
        Self {
            status: "not_ready",
            reason: Some(reason),
            auth_type: None,
        }
    }
}

fn check_output(
    options: &Options,
    provider: &str,
    result: Check,
    credential: Option<String>,
) -> (String, u8) {
    let code = match result.status {
        "ready" => 0,
        "not_ready" => 1,
        _ => 2,
    };
    let text = if options.json {
        let mut object = serde_json::Map::new();
        object.insert("status".into(), json!(result.status));
        object.insert("provider".into(), json!(provider));
        if let Some(reason) = result.reason {
            object.insert("reason".into(), json!(reason));
        }
        if let Some(auth_type) = result.auth_type {
            object.insert("authType".into(), json!(auth_type));
        }
        if let Some(credential) = &credential {
            object.insert("credentials".into(), json!(credential));
        }
        serde_json::Value::Object(object).to_string()
    } else {
        credential.unwrap_or_else(|| result.status.to_owned())
    };
    (text, code)
}

/// `auth print-api-key` / `print-bearer-token`: the one credential, on stdout.
async fn print_credential(
    kind: Kind,
    options: &Options,
    agent_dir: &Path,
) -> Result<(String, u8), Failure> {
    let setup = Setup::load(agent_dir)?;
    let env = ProcessEnv;
    let runtime_keys = HashMap::new();
    let context = AuthContext {
        storage: &setup.storage,
        env: &env,
        runtime_keys: &runtime_keys,
    };
    if let Some(provider) = &options.provider
        && !setup.knows(provider)
    {
        return Err(format!(
            "Unknown provider \"{provider}\". Use --list-models to see available providers."
        )
        .into());
    }
    let provider = setup.provider(options, &context)?;
    let stored_oauth = matches!(setup.storage.get(&provider), Some(Credential::OAuth { .. }));
    let value = match kind {
        Kind::ApiKey if stored_oauth => {
            return Err(format!(
                "Provider \"{provider}\" is configured with OAuth, not an API key"
            )
            .into());
        }
        Kind::ApiKey => resolve(&context, &provider, setup.models_json_key(&provider)).await,
        _ if !stored_oauth => {
            return Err(format!(
                "Provider \"{provider}\" is not configured with an OAuth bearer token"
            )
            .into());
        }
        _ => {
            let min = options.min_expiry_ms.unwrap_or(DEFAULT_MIN_EXPIRY_MS);
            match setup.storage.bearer_token(&provider, &env, min).await {
                Some(Ok(token)) => Some(token),
                Some(Err(error)) => return Err(error.to_string().into()),
                None => None,
            }
        }
    };
    match value.filter(|v| !v.is_empty()) {
        Some(value) => Ok((value, 0)),
        None => Err(match kind {
            Kind::ApiKey => "No usable API key is configured",
            _ => "No usable OAuth bearer token is configured",
        }
        .into()),
    }
}
