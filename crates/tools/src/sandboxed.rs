//! The file tools under the OS sandbox's policy: `write` and `edit` refuse what a sandboxed
//! command could not write, with the sandbox's own message, before touching the disk.

use std::io;
use std::path::Path;
use std::sync::Arc;

use knightcode_sandbox::SandboxPolicy;

use crate::error::ToolsError;
use crate::lines::{LineSlice, LineWindow};
use crate::ops::{Access, BoxFuture, FileOps, FileStat, GlobOutput, GlobRequest};

/// Another [`FileOps`] whose writes are checked against a sandbox policy; reads pass through.
pub struct SandboxedFileOps {
    inner: Arc<dyn FileOps>,
    policy: SandboxPolicy,
}

impl SandboxedFileOps {
    pub fn new(inner: Arc<dyn FileOps>, policy: SandboxPolicy) -> Self {
        Self { inner, policy }
    }

    fn check(&self, path: &Path) -> io::Result<()> {
        self.policy
            .check_write(path)
            .map_err(|refusal| io::Error::new(io::ErrorKind::PermissionDenied, refusal))
    }
}

impl FileOps for SandboxedFileOps {
    fn read_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        self.inner.read_file(path)
    }

    fn write_file<'a>(&'a self, path: &'a Path, data: &'a [u8]) -> BoxFuture<'a, io::Result<()>> {
        match self.check(path) {
            Ok(()) => self.inner.write_file(path, data),
            Err(refusal) => Box::pin(async move { Err(refusal) }),
        }
    }

    fn access<'a>(&'a self, path: &'a Path, access: Access) -> BoxFuture<'a, io::Result<()>> {
        self.inner.access(path, access)
    }

    fn stat<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<FileStat>> {
        self.inner.stat(path)
    }

    fn create_dir_all<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>> {
        // A folder that exists is not written to; refusing it would name the folder rather
        // than the file the write that follows is refused for.
        if path.is_dir() {
            return self.inner.create_dir_all(path);
        }
        match self.check(path) {
            Ok(()) => self.inner.create_dir_all(path),
            Err(refusal) => Box::pin(async move { Err(refusal) }),
        }
    }

    fn read_dir<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<String>>> {
        self.inner.read_dir(path)
    }

    fn read_prefix<'a>(&'a self, path: &'a Path, max: usize) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        self.inner.read_prefix(path, max)
    }

    fn read_lines<'a>(
        &'a self,
        path: &'a Path,
        window: LineWindow,
    ) -> BoxFuture<'a, io::Result<LineSlice>> {
        self.inner.read_lines(path, window)
    }

    fn glob<'a>(&'a self, request: GlobRequest) -> BoxFuture<'a, Result<GlobOutput, ToolsError>> {
        self.inner.glob(request)
    }
}
