//! A profile's `credential_process`: a command that prints keys, as the AWS SDK runs it (through
//! the shell, `sh -c` or `cmd /C`, with the agent's environment). Its standard output is JSON,
//! `{"Version": 1, "AccessKeyId", "SecretAccessKey", "SessionToken", "Expiration"}`; a
//! non-zero exit, another version or missing keys is an error that shows what the command
//! said. Keys with an `Expiration` are kept until shortly before it, keys without one for
//! the session. The command reads no input (it runs beside a terminal interface); a request
//! that is aborted kills it.

use serde::Deserialize;

use super::credentials::AwsCredentials;
use super::credentials::CredentialError;
use super::remote::Fetched;

/// The command a profile names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CredentialProcess {
    pub(crate) profile: String,
    pub(crate) command: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Output {
    version: Option<serde_json::Value>,
    access_key_id: Option<String>,
    secret_access_key: Option<String>,
    session_token: Option<String>,
    expiration: Option<String>,
}

/// The last line of what the command wrote to stderr, for the error.
fn last_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("")
        .to_owned()
}

impl CredentialProcess {
    fn failed(&self, why: String) -> CredentialError {
        CredentialError::Process {
            profile: self.profile.clone(),
            command: self.command.clone(),
            why,
        }
    }

    /// Runs the command and reads its keys.
    pub(crate) async fn fetch(&self) -> Result<Fetched, CredentialError> {
        let mut command = if cfg!(windows) {
            let mut command = tokio::process::Command::new("cmd");
            command.arg("/C").arg(&self.command);
            command
        } else {
            let mut command = tokio::process::Command::new("sh");
            command.arg("-c").arg(&self.command);
            command
        };
        let output = command
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true)
            .output()
            .await
            .map_err(|e| self.failed(format!("it could not be started ({e})")))?;
        if !output.status.success() {
            let said = last_line(&output.stderr);
            return Err(self.failed(match output.status.code() {
                Some(code) if said.is_empty() => format!("it exited with status {code}"),
                Some(code) => format!("it exited with status {code}: {said}"),
                None => "it was killed by a signal".to_owned(),
            }));
        }
        let parsed: Output = serde_json::from_slice(&output.stdout).map_err(|e| {
            self.failed(format!(
                "its output is not the JSON credentials the AWS CLI expects ({e})"
            ))
        })?;
        if parsed.version != Some(serde_json::Value::from(1)) {
            return Err(self.failed(format!(
                "its output has \"Version\": {} where 1 is expected",
                parsed
                    .version
                    .map_or_else(|| "nothing".to_owned(), |v| v.to_string())
            )));
        }
        let (Some(access_key_id), Some(secret_access_key)) = (
            parsed.access_key_id.filter(|v| !v.is_empty()),
            parsed.secret_access_key.filter(|v| !v.is_empty()),
        ) else {
            return Err(self.failed("its output has no AccessKeyId and SecretAccessKey".to_owned()));
        };
        let expires_at_ms = match parsed.expiration.as_deref() {
            None => None,
            Some(text) => Some(super::remote::parse_expiration(text).ok_or_else(|| {
                self.failed(format!("its Expiration \"{text}\" is not an ISO 8601 time"))
            })?),
        };
        Ok(Fetched {
            credentials: AwsCredentials {
                access_key_id,
                secret_access_key,
                session_token: parsed.session_token.filter(|t| !t.is_empty()),
            },
            expires_at_ms,
        })
    }
}
