//! `knightcode --list-models [search]`: the models whose provider has credentials.

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::Context as _;
use knightcode_ai::AuthContext;
use knightcode_ai::AuthStorage;
use knightcode_ai::ModelRegistry;
use knightcode_ai::ProcessEnv;

const AGENT_DIR_VAR: &str = "KNIGHTCODE_CODING_AGENT_DIR";
const PACKAGE_DIR_VAR: &str = "KNIGHTCODE_PACKAGE_DIR";

/// What the command prints: the table (or "no models" text) for stdout, and warnings about
/// unreadable configuration for stderr.
pub struct Listing {
    pub stdout: String,
    pub warnings: Vec<String>,
}

/// `~` and `~/…` expand to the home directory, as the reference expands its directory
/// variables; anything else is used as given.
fn expand_tilde(path: &str) -> anyhow::Result<PathBuf> {
    let rest = match path {
        "~" => "",
        _ => match path.strip_prefix("~/") {
            Some(rest) => rest,
            None => return Ok(PathBuf::from(path)),
        },
    };
    Ok(home_dir()?.join(rest))
}

fn home_dir() -> anyhow::Result<PathBuf> {
    std::env::home_dir().context(
        "could not find your home directory; set KNIGHTCODE_CODING_AGENT_DIR to the folder that holds models.json and auth.json",
    )
}

/// A variable that is unset or empty counts as unset (the reference tests it for truthiness).
fn dir_from_env(name: &str) -> anyhow::Result<Option<PathBuf>> {
    match std::env::var(name) {
        Ok(value) if !value.is_empty() => expand_tilde(&value).map(Some),
        _ => Ok(None),
    }
}

/// `$KNIGHTCODE_CODING_AGENT_DIR`, else `~/.knightcode/agent`.
pub fn agent_dir() -> anyhow::Result<PathBuf> {
    match dir_from_env(AGENT_DIR_VAR)? {
        Some(dir) => Ok(dir),
        None => Ok(home_dir()?.join(".knightcode").join("agent")),
    }
}

/// Where the documentation the "no models" message points to lives: `docs/` in
/// `$KNIGHTCODE_PACKAGE_DIR`, else beside the executable (as for the reference's
/// single-file binary builds).
fn docs_dir() -> anyhow::Result<PathBuf> {
    let package = match dir_from_env(PACKAGE_DIR_VAR)? {
        Some(dir) => dir,
        None => std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(PathBuf::from))
            .unwrap_or_default(),
    };
    Ok(package.join("docs"))
}

/// Loads models.json and auth.json from the agent directory and renders the list. Broken
/// configuration files are warnings, not failures: the built-in catalogue still lists.
pub fn run(search: Option<&str>) -> anyhow::Result<Listing> {
    let agent_dir = agent_dir()?;
    let mut warnings = Vec::new();
    let registry = ModelRegistry::load(&agent_dir);
    if let Some(error) = registry.error() {
        warnings.push(format!("Warning: errors loading models.json:\n{error}"));
    }
    let storage = AuthStorage::load(&agent_dir).unwrap_or_else(|error| {
        warnings.push(format!("Warning: ignoring stored credentials: {error}"));
        AuthStorage::empty(&agent_dir)
    });
    let runtime_keys = HashMap::new();
    let auth = AuthContext {
        storage: &storage,
        env: &ProcessEnv,
        runtime_keys: &runtime_keys,
    };
    let available = registry.available(&auth);
    let stdout = knightcode_ai::render_model_list(&available, search, &docs_dir()?);
    Ok(Listing { stdout, warnings })
}
