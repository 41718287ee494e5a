use std::path::PathBuf;

/// Errors of the runtime layer. Messages reach users verbatim.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("could not {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("Failed to read trust store {path}: {message}")]
    TrustStoreUnreadable { path: PathBuf, message: String },

    #[error("Invalid trust store {path}: {message}")]
    TrustStoreInvalid { path: PathBuf, message: String },

    #[error("Project is not trusted; refusing to write project settings")]
    ProjectNotTrusted,

    /// The OS sandbox chosen cannot be enforced, or refused a write.
    #[error("{0}")]
    Sandbox(#[from] knightcode_sandbox::SandboxError),

    /// Start-up could not pick a model or credentials; the text says what to do.
    #[error("{0}")]
    Setup(String),

    /// Plan mode cannot be enforced on this branch (malformed state, tool settings that
    /// cannot plan): requests are refused rather than made without its restrictions.
    #[error("{0}")]
    PlanModeRefused(String),

    /// A session operation was refused (unknown model, bad entry id, empty name, ...); the
    /// text is what RPC clients and users see.
    #[error("{0}")]
    Rejected(String),

    /// An extension's `session_before_tree` cancelled a navigation.
    #[error("{}", crate::actor::NAVIGATION_CANCELLED)]
    NavigationCancelled,

    /// `--model`/`--provider` cannot be resolved: no models at all, an unknown provider, a
    /// bare id several providers serve, or a model that is nowhere.
    #[error("No models available. Check your installation or add models to models.json.")]
    NoModels,

    #[error("Unknown provider \"{name}\". Use --list-models to see available providers/models.")]
    UnknownProvider { name: String },

    /// `candidates` are `provider/id`, sorted; `several_authenticated` says whether the
    /// ambiguity is among providers with credentials or among providers without any.
    #[error(
        "Model \"{pattern}\" is ambiguous across providers: {}. {} Use --provider or provider/model.",
        .candidates.join(", "),
        crate::model_select::ambiguity_hint(*.several_authenticated)
    )]
    AmbiguousModel {
        pattern: String,
        candidates: Vec<String>,
        several_authenticated: bool,
    },

    /// `model` as it was asked for (`provider/id` when the provider was given).
    #[error("Model \"{model}\" not found. Use --list-models to see available models.")]
    ModelNotFound { model: String },

    /// `tools.json` could not be written; the change applies to the running session only.
    #[error("could not save {path} ({source}); the change holds for this session only")]
    WebToolsNotSaved {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(transparent)]
    Session(#[from] knightcode_session::SessionError),

    #[error(transparent)]
    Agent(#[from] knightcode_agent::AgentError),

    #[error("could not encode {what}: {source}")]
    Encode {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },

    /// Another process holds the global settings file's lock (a `.lock` directory beside it)
    /// for longer than a save waits.
    #[error(
        "could not save settings: {lock} is locked by another process; remove it if no knightcode is running"
    )]
    SettingsLocked { lock: PathBuf },

    #[error("could not lock {lock} to save settings: {source}")]
    SettingsLock {
        lock: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The global settings file holds something a save would destroy: it is left as it is.
    #[error("not saving settings: {path} does not hold a JSON object")]
    SettingsNotAnObject { path: PathBuf },

    #[error("not saving settings: {path} is not valid JSON ({source})")]
    SettingsInvalidJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

impl RuntimeError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }
}

pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;
