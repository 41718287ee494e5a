//! Diagnostics: problems worth telling the user that are not the answer to anything (a
//! settings file that could not be written, a shell result that could not be saved; later
//! MCP servers' stderr and extension errors). They travel in the session's event stream;
//! the terminal shows them in the transcript, the headless modes on stderr.

/// How bad it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiagnosticLevel {
    Info,
    Warning,
    Error,
}

/// One diagnostic: its level, where it comes from and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub level: DiagnosticLevel,
    /// What reported it: `settings`, `session`, later an MCP server or an extension.
    pub source: String,
    /// A sentence for the user: what happened and what to do.
    pub message: String,
}

impl Diagnostic {
    pub fn warning(source: &str, message: impl Into<String>) -> Self {
        Self {
            level: DiagnosticLevel::Warning,
            source: source.to_owned(),
            message: message.into(),
        }
    }

    pub fn error(source: &str, message: impl Into<String>) -> Self {
        Self {
            level: DiagnosticLevel::Error,
            source: source.to_owned(),
            message: message.into(),
        }
    }
}

/// The line the headless modes print: `Warning: …`, `Error: …`.
impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let prefix = match self.level {
            DiagnosticLevel::Info => "",
            DiagnosticLevel::Warning => "Warning: ",
            DiagnosticLevel::Error => "Error: ",
        };
        write!(f, "{prefix}{}", self.message)
    }
}
