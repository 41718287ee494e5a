//! Values resolved when a server starts: `${NAME}` from the environment, a value that is
//! entirely `!command` from that command's output, and a leading `~/` as the home folder.

use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use crate::error::McpError;

/// Looks up an environment variable (the process's, or a test's).
pub type EnvLookup = std::sync::Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// How long a `!command` value may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) struct Resolver<'a> {
    pub env: &'a EnvLookup,
    pub home: Option<&'a Path>,
    pub cwd: &'a Path,
}

impl Resolver<'_> {
    /// An `env`, `headers` or secret value.
    pub async fn value(&self, server: &str, key: &str, raw: &str) -> Result<String, McpError> {
        match raw.strip_prefix('!') {
            Some(command) => self.run(server, key, command).await,
            None => Ok(self.substitute(raw)),
        }
    }

    /// `${NAME}` replaced by the variable's value (empty when unset).
    fn substitute(&self, raw: &str) -> String {
        let mut out = String::with_capacity(raw.len());
        let mut rest = raw;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            match rest[start + 2..].find('}') {
                Some(end) => {
                    let name = &rest[start + 2..start + 2 + end];
                    out.push_str(&(self.env)(name).unwrap_or_default());
                    rest = &rest[start + 3 + end..];
                }
                None => {
                    out.push_str(&rest[start..]);
                    rest = "";
                }
            }
        }
        out.push_str(rest);
        out
    }

    async fn run(&self, server: &str, key: &str, command: &str) -> Result<String, McpError> {
        let fail = |reason: String| McpError::Value {
            server: server.to_owned(),
            reason: format!("the command for \"{key}\" ({command}) {reason}"),
        };
        let child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(self.cwd)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output();
        let output = match tokio::time::timeout(COMMAND_TIMEOUT, child).await {
            Ok(Ok(output)) => output,
            Ok(Err(e)) => return Err(fail(format!("could not start: {e}"))),
            Err(_) => {
                return Err(fail(format!(
                    "took longer than {} s",
                    COMMAND_TIMEOUT.as_secs()
                )));
            }
        };
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(fail(format!(
                "failed ({}): {}",
                output.status,
                stderr.trim()
            )));
        }
        let text = String::from_utf8_lossy(&output.stdout);
        Ok(text.trim_end_matches(['\n', '\r']).to_owned())
    }

    /// A leading `~` or `~/` as the home folder.
    pub fn home_path(&self, raw: &str) -> String {
        match (self.home, raw) {
            (Some(home), "~") => home.display().to_string(),
            (Some(home), _) if raw.starts_with("~/") => home.join(&raw[2..]).display().to_string(),
            _ => raw.to_owned(),
        }
    }

    /// A server's `cwd`: home-expanded, relative to the session's folder.
    pub fn dir(&self, raw: &str) -> PathBuf {
        self.cwd.join(self.home_path(raw))
    }
}
