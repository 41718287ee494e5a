//! `<agentDir>/mcp-auth.json`: each signed-in server's client and tokens, keyed by its
//! normalized address, written whole and owner-only; and the cross-process refresh lock
//! `<agentDir>/mcp-auth-refresh-<sha256(url)[..16]>`, held across a refresh and its save
//! because servers rotate refresh tokens (two refreshes at once would lose the grant).

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use std::time::SystemTime;

use rmcp::transport::auth::AuthError;
use rmcp::transport::auth::CredentialRefreshGuard;
use rmcp::transport::auth::CredentialStore;
use rmcp::transport::auth::StoredCredentials;
use serde_json::Map;
use serde_json::Value;
use sha2::Digest as _;

use crate::error::McpError;

/// A lock left behind by a process that died is taken over after this long.
const LOCK_STALE: Duration = Duration::from_secs(20);
/// How long a refresh waits for another process's refresh before giving up.
const LOCK_WAIT: Duration = Duration::from_secs(25);
/// How often a waiting refresh looks at the lock again.
const LOCK_POLL: Duration = Duration::from_millis(100);
/// The key of an entry's wanted scope (a step-up), beside rmcp's credential fields.
const STEP_UP_KEY: &str = "stepUpScope";

/// The tokens file of one agent folder. Writes within a process go one at a time (two
/// servers refreshing at once must not drop each other's entry).
#[derive(Debug)]
pub struct AuthStore {
    dir: PathBuf,
    write: std::sync::Mutex<()>,
}

impl AuthStore {
    pub fn new(agent_dir: &Path) -> Self {
        Self {
            dir: agent_dir.to_path_buf(),
            write: std::sync::Mutex::new(()),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join("mcp-auth.json")
    }

    fn read(&self) -> Result<Map<String, Value>, McpError> {
        let path = self.path();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
            Err(e) => {
                return Err(McpError::File {
                    path,
                    reason: e.to_string(),
                });
            }
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) | Err(_) if text.trim().is_empty() => Ok(Map::new()),
            Ok(_) => Err(McpError::File {
                path,
                reason: "expected an object of server addresses".to_owned(),
            }),
            Err(e) => Err(McpError::File {
                path,
                reason: e.to_string(),
            }),
        }
    }

    /// The stored entry of `url` as JSON text (to notice another process's sign-in).
    pub fn entry_text(&self, url: &str) -> Option<String> {
        let key = super::normalize_url(url);
        self.read().ok()?.get(&key).map(Value::to_string)
    }

    pub fn load(&self, url: &str) -> Result<Option<StoredCredentials>, McpError> {
        let key = super::normalize_url(url);
        let Some(entry) = self.read()?.remove(&key) else {
            return Ok(None);
        };
        // An entry this build cannot read is as good as none: the server asks for a sign-in.
        Ok(serde_json::from_value(entry).ok())
    }

    pub fn save(&self, url: &str, credentials: &StoredCredentials) -> Result<(), McpError> {
        let mut entry = serde_json::to_value(credentials).map_err(|e| McpError::File {
            path: self.path(),
            reason: e.to_string(),
        })?;
        let key = super::normalize_url(url);
        self.change(|map| {
            // A scope the server asked for stays wanted until a grant covers it: a refresh
            // keeps the old grant, so only the sign-in that asked for it clears it.
            let wanted = map
                .get(&key)
                .and_then(|old| old.get(STEP_UP_KEY))
                .and_then(Value::as_str)
                .filter(|wanted| {
                    wanted
                        .split_whitespace()
                        .any(|s| !credentials.granted_scopes.iter().any(|g| g == s))
                })
                .map(str::to_owned);
            if let (Some(wanted), Some(entry)) = (wanted, entry.as_object_mut()) {
                entry.insert(STEP_UP_KEY.to_owned(), Value::String(wanted));
            }
            map.insert(key, entry);
            true
        })
        .map(|_| ())
    }

    /// Notes that the server asked for `scope` (a 403 `insufficient_scope`), so the next
    /// sign-in, in this process or another (`knightcode mcp login`), asks for it on top of
    /// what was granted.
    pub fn want_scope(&self, url: &str, scope: &str) -> Result<(), McpError> {
        let key = super::normalize_url(url);
        self.change(|map| {
            let entry = map.entry(key).or_insert_with(|| Value::Object(Map::new()));
            let Some(entry) = entry.as_object_mut() else {
                return false;
            };
            let old = entry.get(STEP_UP_KEY).and_then(Value::as_str).unwrap_or("");
            let wanted = super::union_scopes([old, scope]).join(" ");
            if wanted == old {
                return false;
            }
            entry.insert(STEP_UP_KEY.to_owned(), Value::String(wanted));
            true
        })
        .map(|_| ())
    }

    /// The scope the server asked for beyond the grant, if it did.
    pub fn step_up_scope(&self, url: &str) -> Option<String> {
        let key = super::normalize_url(url);
        self.read()
            .ok()?
            .get(&key)?
            .get(STEP_UP_KEY)?
            .as_str()
            .map(str::to_owned)
    }

    /// Forgets the tokens of `url`; whether there were any.
    pub fn remove(&self, url: &str) -> Result<bool, McpError> {
        let key = super::normalize_url(url);
        self.change(|map| map.shift_remove(&key).is_some())
    }

    fn change(&self, edit: impl FnOnce(&mut Map<String, Value>) -> bool) -> Result<bool, McpError> {
        let _writing = self
            .write
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut map = self.read()?;
        if !edit(&mut map) {
            return Ok(false);
        }
        let text = serde_json::to_string_pretty(&Value::Object(map)).unwrap_or_default();
        write_private(&self.path(), text.as_bytes()).map_err(|e| McpError::File {
            path: self.path(),
            reason: e.to_string(),
        })?;
        Ok(true)
    }

    /// The refresh lock's file for `url`.
    pub fn refresh_lock_path(&self, url: &str) -> PathBuf {
        let digest = sha2::Sha256::digest(super::normalize_url(url).as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("mcp-auth-refresh-{}", &hex[..16]))
    }

    /// Takes the refresh lock of `url`: `<file>.lock`, a folder (created atomically, as the
    /// reference's lock library does), taken over when older than [`LOCK_STALE`], waited for
    /// at most [`LOCK_WAIT`].
    pub async fn lock_refresh(&self, url: &str) -> Result<RefreshLock, McpError> {
        let file = self.refresh_lock_path(url);
        let failed = |e: std::io::Error| McpError::File {
            path: file.clone(),
            reason: e.to_string(),
        };
        std::fs::create_dir_all(&self.dir).map_err(failed)?;
        if !file.exists() {
            std::fs::write(&file, b"").map_err(failed)?;
        }
        let mut dir = file.clone().into_os_string();
        dir.push(".lock");
        let dir = PathBuf::from(dir);
        let deadline = tokio::time::Instant::now() + LOCK_WAIT;
        loop {
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(RefreshLock { dir }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let stale = std::fs::metadata(&dir)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| SystemTime::now().duration_since(t).ok())
                        .is_some_and(|age| age > LOCK_STALE);
                    if stale {
                        let _ = std::fs::remove_dir(&dir);
                        continue;
                    }
                }
                Err(e) => return Err(failed(e)),
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(McpError::File {
                    path: dir,
                    reason: "another process is refreshing this server's tokens; try again"
                        .to_owned(),
                });
            }
            tokio::time::sleep(LOCK_POLL).await;
        }
    }
}

/// A held refresh lock; released when dropped.
#[derive(Debug)]
pub struct RefreshLock {
    dir: PathBuf,
}

impl Drop for RefreshLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Replaces `path` with `bytes`, readable by the owner only (see `knightcode_files::replace`),
/// making its folder first.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    knightcode_files::replace(path, bytes, Some(0o600))
}

/// One server's tokens as rmcp's credential store: read from the file on every use, so a
/// sign-in or refresh by another process is picked up.
pub(crate) struct FileCredentials {
    pub store: Arc<AuthStore>,
    pub url: String,
}

fn store_error(error: McpError) -> AuthError {
    AuthError::CredentialStoreError(error.to_string())
}

#[async_trait::async_trait]
impl CredentialStore for FileCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.store.load(&self.url).map_err(store_error)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.store
            .save(&self.url, &credentials)
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.store
            .remove(&self.url)
            .map(|_| ())
            .map_err(store_error)
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let lock = self
            .store
            .lock_refresh(&self.url)
            .await
            .map_err(store_error)?;
        Ok(Some(CredentialRefreshGuard::new(lock)))
    }
}
