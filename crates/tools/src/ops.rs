//! The I/O seam: every tool reaches files and processes through these traits, so an
//! extension can run the same tools against another machine (SSH, a sandbox) by supplying
//! its own implementation. [`LocalFileOps`] and [`crate::exec::LocalExecOps`] are the
//! local-disk defaults.

use std::ffi::OsString;
use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use crate::error::ToolsError;
use crate::lines::LineSlice;
use crate::lines::LineWindow;
use crate::lines::slice_lines;

/// A boxed, sendable future (the traits stay object-safe).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What [`FileOps::access`] checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Exists,
    Read,
    ReadWrite,
}

/// The few facts tools need about a path (symlinks followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileStat {
    pub is_dir: bool,
    pub is_file: bool,
    pub size: u64,
}

/// A glob search for the `find` tool.
#[derive(Debug, Clone)]
pub struct GlobRequest {
    /// The model's glob pattern.
    pub pattern: String,
    /// Absolute directory to search.
    pub dir: PathBuf,
    /// Stop after this many results.
    pub limit: usize,
    /// Globs to leave out, for backends without gitignore support (the local walk applies
    /// `.gitignore` rules instead and always skips `.git`).
    pub ignore: Vec<String>,
    pub cancel: CancellationToken,
}

/// What [`FileOps::glob`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GlobOutput {
    /// Matching paths, absolute or relative to the searched directory, directories with a
    /// trailing `/`, in the order to show them.
    pub paths: Vec<String>,
    /// Notes for the model about the search itself (say, paths that could not be read),
    /// shown after the results' notices.
    pub notes: Vec<String>,
}

impl From<Vec<String>> for GlobOutput {
    fn from(paths: Vec<String>) -> Self {
        Self {
            paths,
            notes: Vec::new(),
        }
    }
}

/// File-system operations used by read, write, edit, grep, find and ls.
///
/// Errors are `io::Error`s; OS errors keep their errno so tools can report Node-style codes
/// (`ENOENT`), other errors are shown by their text.
pub trait FileOps: Send + Sync {
    fn read_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<u8>>>;

    /// Writes `data` exactly, creating or truncating the file.
    fn write_file<'a>(&'a self, path: &'a Path, data: &'a [u8]) -> BoxFuture<'a, io::Result<()>>;

    fn access<'a>(&'a self, path: &'a Path, access: Access) -> BoxFuture<'a, io::Result<()>>;

    fn stat<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<FileStat>>;

    /// `mkdir -p`.
    fn create_dir_all<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>>;

    /// Entry names of a directory (not `.`/`..`), in no particular order.
    fn read_dir<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<String>>>;

    /// The first `max` bytes of a file (used to sniff image types). The default reads the
    /// whole file; implementations that can read less should.
    fn read_prefix<'a>(&'a self, path: &'a Path, max: usize) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        Box::pin(async move {
            let mut data = self.read_file(path).await?;
            data.truncate(max);
            Ok(data)
        })
    }

    /// A window of a text file's lines and its line count ([`crate::lines`]). The default
    /// reads the whole file; implementations that can stream it should, so memory stays
    /// bounded however large the file.
    fn read_lines<'a>(
        &'a self,
        path: &'a Path,
        window: LineWindow,
    ) -> BoxFuture<'a, io::Result<LineSlice>> {
        Box::pin(async move {
            let data = self.read_file(path).await?;
            slice_lines(data.as_slice(), window)
        })
    }

    /// Paths under `request.dir` matching the glob, at most `request.limit`.
    fn glob<'a>(&'a self, request: GlobRequest) -> BoxFuture<'a, Result<GlobOutput, ToolsError>>;
}

/// The local disk.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalFileOps;

impl FileOps for LocalFileOps {
    fn read_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        Box::pin(tokio::fs::read(path))
    }

    fn write_file<'a>(&'a self, path: &'a Path, data: &'a [u8]) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(tokio::fs::write(path, data))
    }

    fn access<'a>(&'a self, path: &'a Path, access: Access) -> BoxFuture<'a, io::Result<()>> {
        use nix::unistd::AccessFlags;
        let flags = match access {
            Access::Exists => AccessFlags::F_OK,
            Access::Read => AccessFlags::R_OK,
            Access::ReadWrite => AccessFlags::R_OK | AccessFlags::W_OK,
        };
        let result = nix::unistd::access(path, flags)
            .map_err(|errno| io::Error::from_raw_os_error(errno as i32));
        Box::pin(async move { result })
    }

    fn stat<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<FileStat>> {
        Box::pin(async move {
            let metadata = tokio::fs::metadata(path).await?;
            Ok(FileStat {
                is_dir: metadata.is_dir(),
                is_file: metadata.is_file(),
                size: metadata.len(),
            })
        })
    }

    fn create_dir_all<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(tokio::fs::create_dir_all(path))
    }

    fn read_dir<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<String>>> {
        Box::pin(async move {
            let mut entries = tokio::fs::read_dir(path).await?;
            let mut names = Vec::new();
            while let Some(entry) = entries.next_entry().await? {
                names.push(entry.file_name().to_string_lossy().into_owned());
            }
            Ok(names)
        })
    }

    fn read_prefix<'a>(&'a self, path: &'a Path, max: usize) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        Box::pin(async move {
            let file = tokio::fs::File::open(path).await?;
            let mut data = Vec::with_capacity(max);
            file.take(max as u64).read_to_end(&mut data).await?;
            Ok(data)
        })
    }

    fn read_lines<'a>(
        &'a self,
        path: &'a Path,
        window: LineWindow,
    ) -> BoxFuture<'a, io::Result<LineSlice>> {
        let path = path.to_path_buf();
        Box::pin(async move {
            // One pass over the file on a blocking thread: a multi-gigabyte file takes a
            // while, and the runtime's workers stay free meanwhile.
            tokio::task::spawn_blocking(move || slice_lines(std::fs::File::open(&path)?, window))
                .await
                .map_err(io::Error::other)?
        })
    }

    fn glob<'a>(&'a self, request: GlobRequest) -> BoxFuture<'a, Result<GlobOutput, ToolsError>> {
        Box::pin(crate::walk::local_glob(request))
    }
}

/// Receives a command's output bytes.
pub type DataSink = Box<dyn FnMut(&[u8]) + Send>;

/// One command for [`ExecOps::exec`].
pub struct ExecRequest {
    pub command: String,
    pub cwd: PathBuf,
    /// The complete environment of the command.
    pub env: Vec<(OsString, OsString)>,
    /// Kill the command (and everything it started) after this long.
    pub timeout: Option<Duration>,
    /// Kill the command (and everything it started) when cancelled.
    pub cancel: CancellationToken,
    /// Receives stdout and stderr, merged in arrival order, as raw bytes.
    pub on_data: DataSink,
}

impl std::fmt::Debug for ExecRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecRequest")
            .field("command", &self.command)
            .field("cwd", &self.cwd)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecStatus {
    /// `None` when the process was ended by a signal.
    pub exit_code: Option<i32>,
}

/// Runs shell commands for the bash tool.
///
/// Returns [`ToolsError::Aborted`] when cancelled and [`ToolsError::TimedOut`] after the timeout
/// (having killed the command's whole process tree in both cases); other errors carry a
/// message for the model.
pub trait ExecOps: Send + Sync {
    fn exec(&self, request: ExecRequest) -> BoxFuture<'_, Result<ExecStatus, ToolsError>>;
}
