//! `SessionStore`: opens, creates, forks and lists sessions. Holds what is shared by every
//! session of one process: the clock and the ownership registry.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use knightcode_protocol::AgentMessage;
use knightcode_protocol::CURRENT_SESSION_VERSION;
use knightcode_protocol::LabelEntry;
use knightcode_protocol::SessionEntry;
use knightcode_protocol::SessionHeader;

use crate::error::Result;
use crate::error::SessionError;
use crate::ids::Clock;
use crate::ids::SystemClock;
use crate::ids::iso_timestamp;
use crate::ids::new_entry_id;
use crate::ids::new_session_id;
use crate::ids::validate_session_id;
use crate::load::LoadedFile;
use crate::load::load_file;
use crate::lock::LockOptions;
use crate::lock::Ownership;
use crate::manager::SessionManager;
use crate::migrate::migrate;
use crate::paths::session_file_name;
use crate::storage::FileWriter;
use crate::storage::Storage;
use crate::tree::SessionTree;

/// Options for a new session.
#[derive(Debug, Clone, Default)]
pub struct NewSession {
    /// A caller-chosen id (`--session-id`); validated. Default: a fresh UUIDv7.
    pub session_id: Option<String>,
    /// The session this one was forked or cloned from.
    pub parent_session: Option<String>,
}

/// Factory for sessions of one process.
#[derive(Debug, Clone)]
pub struct SessionStore {
    clock: Arc<dyn Clock>,
    ownership: Ownership,
}

impl Default for SessionStore {
    fn default() -> Self {
        Self::new(Arc::new(SystemClock::new()), LockOptions::default())
    }
}

impl SessionStore {
    pub fn new(clock: Arc<dyn Clock>, lock_options: LockOptions) -> Self {
        Self {
            clock,
            ownership: Ownership::new(lock_options),
        }
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// A session that never touches disk.
    pub fn in_memory(&self, cwd: &Path) -> SessionManager {
        SessionManager::in_memory(cwd, None, Arc::clone(&self.clock))
    }

    fn new_header(&self, cwd: &Path, options: &NewSession) -> Result<SessionHeader> {
        let id = match &options.session_id {
            Some(id) => {
                validate_session_id(id)?;
                id.clone()
            }
            None => new_session_id(),
        };
        Ok(SessionHeader {
            version: Some(CURRENT_SESSION_VERSION),
            id,
            timestamp: iso_timestamp(crate::ids::now(self.clock.as_ref())),
            cwd: cwd.to_string_lossy().into_owned(),
            parent_session: options.parent_session.clone(),
            ..SessionHeader::default()
        })
    }

    /// A new owned session in `dir`, written on its first message.
    pub fn create(&self, dir: &Path, cwd: &Path, options: NewSession) -> Result<SessionManager> {
        let header = self.new_header(cwd, &options)?;
        let path = dir.join(session_file_name(&header.timestamp, &header.id));
        std::fs::create_dir_all(dir).map_err(SessionError::io("create directory", dir))?;
        self.create_at(path, header)
    }

    fn create_at(&self, path: PathBuf, header: SessionHeader) -> Result<SessionManager> {
        let lock = self.ownership.acquire(&path)?;
        Ok(SessionManager::new_parts(
            header,
            SessionTree::default(),
            Storage::File(FileWriter::pending(path, lock)),
            Arc::clone(&self.clock),
            Vec::new(),
        ))
    }

    /// Opens a session as its owner: repairs a torn tail, migrates old formats, then appends.
    /// A missing file becomes a new session at that path; an empty file is initialised.
    pub fn open(&self, path: &Path, cwd: &Path) -> Result<SessionManager> {
        let lock = self.ownership.acquire(path)?;
        let Some(loaded) = load_existing(path)? else {
            let header = self.new_header(cwd, &NewSession::default())?;
            let mut manager = SessionManager::new_parts(
                header,
                SessionTree::default(),
                Storage::File(FileWriter::pending(path.to_owned(), lock)),
                Arc::clone(&self.clock),
                Vec::new(),
            );
            if path.exists() {
                // An existing empty file is initialised with a header right away.
                if let Storage::File(writer) = &mut manager.storage {
                    writer.create(&manager.header, &[])?;
                }
            }
            return Ok(manager);
        };
        let LoadedFile {
            mut header,
            mut entries,
            mut warnings,
            torn_tail,
            missing_final_newline,
            len,
        } = loaded;
        // Appending entries of our format to a newer one could corrupt it for the build
        // that wrote it; reading it (listing, export) stays possible.
        let version = header.format_version();
        if version > knightcode_protocol::CURRENT_SESSION_VERSION {
            return Err(SessionError::NewerVersion {
                path: path.to_owned(),
                version,
                supported: knightcode_protocol::CURRENT_SESSION_VERSION,
            });
        }
        let mut len = len;
        if let Some(torn) = torn_tail {
            set_aside(path, &torn.bytes)?;
            let file = OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(SessionError::io("open", path))?;
            file.set_len(torn.offset)
                .map_err(SessionError::io("repair", path))?;
            len = torn.offset;
        } else if missing_final_newline {
            let mut file = OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(SessionError::io("open", path))?;
            file.write_all(b"\n")
                .map_err(SessionError::io("repair", path))?;
            len += 1;
        }
        if migrate(&mut header, &mut entries) {
            len = rewrite(path, &header, &entries)?;
        }
        let tree = SessionTree::from_entries(entries, &mut warnings);
        let writer = FileWriter::existing(path.to_owned(), lock, len)?;
        Ok(SessionManager::new_parts(
            header,
            tree,
            Storage::File(writer),
            Arc::clone(&self.clock),
            warnings,
        ))
    }

    /// Opens without ownership, for listing, export, history and fork sources. Never
    /// modifies the file; old formats are migrated in memory only.
    pub fn open_read_only(&self, path: &Path) -> Result<SessionManager> {
        let Some(loaded) = load_existing(path)? else {
            return Err(SessionError::NotASession {
                path: path.to_owned(),
            });
        };
        let LoadedFile {
            mut header,
            mut entries,
            mut warnings,
            ..
        } = loaded;
        migrate(&mut header, &mut entries);
        let tree = SessionTree::from_entries(entries, &mut warnings);
        Ok(SessionManager::new_parts(
            header,
            tree,
            Storage::ReadOnly {
                path: path.to_owned(),
            },
            Arc::clone(&self.clock),
            warnings,
        ))
    }

    /// A new session in `dir` for `cwd` containing every entry of `source` verbatim (all
    /// branches, same ids), with `parentSession` pointing at the source (`--fork`).
    pub fn fork_from(
        &self,
        source: &Path,
        dir: &Path,
        cwd: &Path,
        session_id: Option<String>,
    ) -> Result<SessionManager> {
        let invalid = || SessionError::InvalidForkSource {
            path: source.to_owned(),
        };
        let source_session = match self.open_read_only(source) {
            Ok(session) => session,
            Err(SessionError::NotASession { .. }) => return Err(invalid()),
            Err(other) => return Err(other),
        };
        let options = NewSession {
            session_id,
            parent_session: Some(source.to_string_lossy().into_owned()),
        };
        let header = self.new_header(cwd, &options)?;
        let path = dir.join(session_file_name(&header.timestamp, &header.id));
        std::fs::create_dir_all(dir).map_err(SessionError::io("create directory", dir))?;
        let entries = source_session.tree.into_entries();
        let lock = self.ownership.acquire(&path)?;
        let mut writer = FileWriter::pending(path, lock);
        writer.create(&header, &entries)?;
        let mut warnings = Vec::new();
        let tree = SessionTree::from_entries(entries, &mut warnings);
        Ok(SessionManager::new_parts(
            header,
            tree,
            Storage::File(writer),
            Arc::clone(&self.clock),
            warnings,
        ))
    }

    /// A new session holding the root-to-`leaf_id` path of `source` (`/fork`, `/clone`):
    /// entry ids are kept, label entries are dropped from the chain and re-added at the end
    /// for labelled entries that survive. `leaf_id = None` gives an empty session.
    pub fn create_branched(
        &self,
        source: &SessionManager,
        leaf_id: Option<&str>,
    ) -> Result<SessionManager> {
        let leaf = match leaf_id {
            Some(id) => Some(
                source
                    .tree
                    .index_of(id)
                    .ok_or_else(|| SessionError::EntryNotFound { id: id.to_owned() })?,
            ),
            None => None,
        };
        let parent_session = source
            .session_file()
            .map(|p| p.to_string_lossy().into_owned());
        let options = NewSession {
            session_id: None,
            parent_session,
        };
        let header = self.new_header(Path::new(&source.header.cwd), &options)?;
        let entries = branched_entries(source, leaf, &header.timestamp);
        let mut warnings = Vec::new();
        let tree = SessionTree::from_entries(entries, &mut warnings);
        let storage = match source.session_file() {
            None => Storage::Memory,
            Some(source_path) => {
                if !source.is_persisted() {
                    return Err(SessionError::NotPersisted);
                }
                let dir = source_path.parent().unwrap_or(Path::new("."));
                let path = dir.join(session_file_name(&header.timestamp, &header.id));
                let lock = self.ownership.acquire(&path)?;
                Storage::File(FileWriter::pending(path, lock))
            }
        };
        let mut manager =
            SessionManager::new_parts(header, tree, storage, Arc::clone(&self.clock), warnings);
        if manager.has_conversation
            && let Storage::File(writer) = &mut manager.storage
        {
            writer.create(&manager.header, manager.tree.entries())?;
        }
        Ok(manager)
    }
}

fn load_existing(path: &Path) -> Result<Option<LoadedFile>> {
    if !path.exists() {
        return Ok(None);
    }
    load_file(path)
}

/// Keeps bytes that repair removes, beside the session, so nothing is ever lost.
fn set_aside(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".torn");
    let aside = path.with_file_name(name);
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&aside)
        .map_err(SessionError::io("save the cut-off line to", &aside))?;
    file.write_all(bytes)
        .and_then(|()| file.write_all(b"\n"))
        .map_err(SessionError::io("save the cut-off line to", &aside))
}

/// Writes a migrated file to a temporary name and renames it over the original. Returns the
/// new length. The original is kept as `<name>.v<N>.bak` so a migration never loses data.
fn rewrite(path: &Path, header: &SessionHeader, entries: &[SessionEntry]) -> Result<u64> {
    let mut text = header.to_json_line()?;
    text.push('\n');
    for entry in entries {
        text.push_str(&entry.to_json_line()?);
        text.push('\n');
    }
    let file_name = path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let backup = path.with_file_name(format!("{file_name}.pre-v{CURRENT_SESSION_VERSION}.bak"));
    std::fs::copy(path, &backup).map_err(SessionError::io("back up", path))?;
    // Temp file, fsync, rename, fsync of the folder: a crash leaves the old file or the
    // migrated one (and the backup), never half of either.
    let mut file =
        atomic_write_file::AtomicWriteFile::open(path).map_err(SessionError::io("write", path))?;
    std::io::Write::write_all(&mut file, text.as_bytes())
        .and_then(|()| file.commit())
        .map_err(SessionError::io("replace", path))?;
    Ok(text.len() as u64)
}

/// The entries of a branched session: the path, labels moved to the end.
fn branched_entries(source: &SessionManager, leaf: Option<u32>, now: &str) -> Vec<SessionEntry> {
    let mut kept: Vec<SessionEntry> = Vec::new();
    // A compaction that kept from a dropped label keeps from the next surviving entry.
    let mut label_successor: HashMap<String, String> = HashMap::new();
    let mut pending_labels: Vec<String> = Vec::new();
    let mut previous: Option<String> = None;
    for index in source.tree.path_to(leaf) {
        let entry = source.tree.entry(index);
        if matches!(entry, SessionEntry::Label(_)) {
            pending_labels.push(entry.id().to_owned());
            continue;
        }
        for label in pending_labels.drain(..) {
            label_successor.insert(label, entry.id().to_owned());
        }
        let mut entry = entry.clone();
        entry.set_parent_id(previous.take().as_deref());
        if let SessionEntry::Compaction(compaction) = &mut entry
            && let Some(successor) = label_successor.get(&compaction.first_kept_entry_id)
        {
            compaction.first_kept_entry_id = successor.clone();
        }
        previous = Some(entry.id().to_owned());
        kept.push(entry);
    }
    let mut taken: HashMap<String, ()> = kept.iter().map(|e| (e.id().to_owned(), ())).collect();
    let mut labels = Vec::new();
    for entry in &kept {
        let id = entry.id();
        if let (Some(label), Some(timestamp)) =
            (source.tree.label(id), source.tree.label_timestamp(id))
        {
            let label_id = new_entry_id(&taken);
            taken.insert(label_id.clone(), ());
            labels.push(SessionEntry::Label(LabelEntry {
                id: label_id.as_str().into(),
                parent_id: previous.replace(label_id).as_deref().map(Into::into),
                timestamp: if timestamp.is_empty() {
                    now.into()
                } else {
                    timestamp.into()
                },
                target_id: id.to_owned(),
                label: Some(label.to_owned()),
                extra: Default::default(),
            }));
        }
    }
    kept.extend(labels);
    kept
}

/// Where a fork from a user message continues (before the message and the turn marker that
/// precedes it) and the message's text (`/fork`, `/tree`): the entry must be a user message.
pub fn fork_point(source: &SessionManager, entry_id: &str) -> Result<(Option<String>, String)> {
    let entry = source
        .entry(entry_id)
        .ok_or_else(|| SessionError::InvalidForkEntry {
            id: entry_id.to_owned(),
        })?;
    let Some(AgentMessage::User(user)) = entry.message() else {
        return Err(SessionError::InvalidForkEntry {
            id: entry_id.to_owned(),
        });
    };
    // The turn the message opened goes too: a marker left behind would read as an
    // interrupted turn on the new branch.
    let parent = match entry.parent_id().and_then(|id| source.entry(id)) {
        Some(marker) if crate::turns::is_turn_marker(marker) => marker.parent_id(),
        _ => entry.parent_id(),
    };
    Ok((parent.map(str::to_owned), user.content.text()))
}
