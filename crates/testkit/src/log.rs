//! JSONL request log for the `knightcode-mock-provider` binary and scripted benchmarks.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use crate::error::TestkitError;
use crate::server::RecordedRequest;

/// Appends one JSON line per request and flushes it, so a crashed run still leaves a log.
pub(crate) struct RequestLog {
    path: PathBuf,
    file: Mutex<File>,
}

impl RequestLog {
    pub fn create(path: PathBuf) -> Result<RequestLog, TestkitError> {
        let file = File::create(&path).map_err(|source| TestkitError::RequestLog {
            path: path.clone(),
            source,
        })?;
        Ok(RequestLog {
            path,
            file: Mutex::new(file),
        })
    }

    pub fn append(&self, request: &RecordedRequest) -> Result<(), TestkitError> {
        let mut line = serde_json::to_string(request).map_err(|e| TestkitError::RequestLog {
            path: self.path.clone(),
            source: e.into(),
        })?;
        line.push('\n');
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        file.write_all(line.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|source| TestkitError::RequestLog {
                path: self.path.clone(),
                source,
            })
    }
}
