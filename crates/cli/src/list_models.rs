//! `knightcode --list-models [search]`: the models whose provider has credentials.

use std::collections::HashMap;
use std::path::PathBuf;

use knightcode_ai::AuthContext;
use knightcode_ai::AuthStorage;
use knightcode_ai::ModelRegistry;
use knightcode_ai::ProcessEnv;

/// What the command prints: the table (or "no models" text) for stdout, and warnings about
/// unreadable configuration for stderr.
pub struct Listing {
    pub stdout: String,
    pub warnings: Vec<String>,
}

/// `$KNIGHTCODE_CODING_AGENT_DIR`, else `~/.knightcode/agent` (the runtime's rule).
pub fn agent_dir() -> anyhow::Result<PathBuf> {
    Ok(knightcode_runtime::paths::agent_dir(
        &ProcessEnv,
        std::env::home_dir(),
    )?)
}

/// Where the documentation the "no models" message points to lives: `docs/` in
/// `$KNIGHTCODE_PACKAGE_DIR`, else beside the executable (as for the reference's
/// single-file binary builds).
fn docs_dir() -> anyhow::Result<PathBuf> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(PathBuf::from))
        .unwrap_or_default();
    let package =
        knightcode_runtime::paths::package_dir(&ProcessEnv, std::env::home_dir(), beside)?;
    Ok(package.join("docs"))
}

/// Loads models.json and auth.json from the agent directory and renders the list. Broken
/// configuration files are warnings, not failures: the built-in catalogue still lists.
///
/// The models of providers the `-e` and user-level extensions register are listed too (the
/// extensions are loaded for it, as the reference does), as their `oauth.modifyModels`
/// leaves them when their login is stored.
pub fn run(
    search: Option<&str>,
    extensions: &knightcode_runtime::ExtensionSources,
) -> anyhow::Result<Listing> {
    let agent_dir = agent_dir()?;
    let mut warnings = Vec::new();
    let mut registry = ModelRegistry::load(&agent_dir);
    if let Some(error) = registry.error() {
        warnings.push(format!("Warning: errors loading models.json:\n{error}"));
    }
    let storage = AuthStorage::load(&agent_dir).unwrap_or_else(|error| {
        warnings.push(format!("Warning: ignoring stored credentials: {error}"));
        AuthStorage::empty(&agent_dir)
    });
    let cwd = std::env::current_dir()?;
    let paths = knightcode_runtime::extensions::models::list_models_paths(
        extensions,
        &cwd,
        &agent_dir,
        std::env::home_dir().as_deref(),
    );
    if !paths.is_empty() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?;
        let notices = runtime.block_on(
            knightcode_runtime::extensions::models::add_extension_models(
                paths,
                extensions,
                &cwd,
                &mut registry,
                &storage,
            ),
        )?;
        warnings.extend(notices);
    }
    // What local model servers serve is listed too (the session would use it).
    let settings = knightcode_runtime::settings::Settings::load(&agent_dir, &cwd, false);
    let servers = &settings.values().local_models;
    if !servers.is_empty() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        registry
            .add_local_models(runtime.block_on(knightcode_ai::local::probe_local_servers(servers)));
    }
    let runtime_keys = HashMap::new();
    let auth = AuthContext {
        storage: &storage,
        env: &ProcessEnv,
        runtime_keys: &runtime_keys,
    };
    let available = registry.available(&auth);
    let models_json = agent_dir.join("models.json");
    let stdout = knightcode_ai::render_model_list(&available, search, (&models_json, &docs_dir()?));
    Ok(Listing { stdout, warnings })
}
