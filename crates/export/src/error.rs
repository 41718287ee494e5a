use std::path::PathBuf;

/// What can go wrong writing an export.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("could not encode the session for export: {0}")]
    Encode(#[from] serde_json::Error),
    #[error("could not write {path}: {source}; check that the folder exists and is writable")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

pub type Result<T> = std::result::Result<T, ExportError>;
