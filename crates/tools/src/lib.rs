//! KnightCode's built-in tools: `read`, `bash`, `powershell`, `edit`, `write`, `grep`,
//! `find`, `ls`, and the web tools `webfetch` and `websearch`.
//!
//! Each tool implements [`knightcode_agent::tool::Tool`] and reaches files and processes
//! only through [`FileOps`] and [`ExecOps`], whose local implementations are the defaults;
//! extensions can supply their own to run the same tools elsewhere. Names, argument schemas,
//! limits, notices and error texts follow the reference agent so models see the same tools.

pub mod bash;
pub mod diff;
pub mod edit;
pub mod error;
pub mod exec;
pub mod find;
pub mod grep;
pub mod image;
pub mod lines;
mod listing;
pub mod ls;
pub mod ops;
mod output;
pub mod path;
pub mod queue;
pub mod read;
mod sandboxed;
pub mod truncate;
mod util;
mod walk;
pub mod web;
pub mod write;

use std::sync::Arc;

use knightcode_agent::tool::Tool;

pub use bash::{BashConfig, BashTool, SessionEnv, SessionEnvSource, SpawnContext, SpawnHook};
pub use edit::EditTool;
pub use error::ToolsError;
pub use exec::{LocalExecOps, ShellKind};
pub use find::FindTool;
pub use grep::GrepTool;
pub use image::{FittedImage, ImagePolicy, ImagePolicySource, ResizeLimits, fit_image};
pub use ls::LsTool;
pub use ops::{
    Access, BoxFuture, DataSink, ExecOps, ExecRequest, ExecStatus, FileOps, FileStat, GlobOutput,
    GlobRequest, LocalFileOps,
};
pub use output::UserShellOutput;
pub use queue::FileMutationQueue;
pub use read::ReadTool;
pub use sandboxed::SandboxedFileOps;
pub use truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, GREP_MAX_LINE_LENGTH, TruncatedBy, TruncationOptions,
    TruncationResult, format_size, truncate_head, truncate_line, truncate_tail,
};
pub use web::{SearchProvider, SearchSettings, WebConfig, WebFetchTool, WebSearchTool};
pub use write::WriteTool;

/// Every built-in tool name, in registration order.
pub const BUILTIN_TOOL_NAMES: [&str; 10] = [
    "read",
    "bash",
    "powershell",
    "edit",
    "write",
    "grep",
    "find",
    "ls",
    "webfetch",
    "websearch",
];

/// The tools active when settings and flags say nothing (`defaultTools`).
pub const DEFAULT_ACTIVE_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];

/// Whether a built-in tool is active by default.
pub fn is_default_active(name: &str) -> bool {
    DEFAULT_ACTIVE_TOOLS.contains(&name)
}

/// What the built-in tools run on.
#[derive(Clone)]
pub struct ToolsConfig {
    /// File access for read, write, edit, grep, find and ls.
    pub file_ops: Arc<dyn FileOps>,
    /// Serialises edit and write on the same file; share it with anything else that
    /// mutates files during a session.
    pub mutation_queue: FileMutationQueue,
    pub bash: BashConfig,
    /// How `read` treats images; `None`: auto-resize to the default limits, vision unknown.
    pub images: Option<ImagePolicySource>,
    pub web: WebConfig,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        Self {
            file_ops: Arc::new(LocalFileOps),
            mutation_queue: FileMutationQueue::new(),
            bash: BashConfig::default(),
            images: None,
            web: WebConfig::default(),
        }
    }
}

impl std::fmt::Debug for ToolsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolsConfig")
            .field("bash", &self.bash)
            .finish_non_exhaustive()
    }
}

/// All built-in tools, in [`BUILTIN_TOOL_NAMES`] order.
pub fn builtin_tools(config: ToolsConfig) -> Vec<Arc<dyn Tool>> {
    let files = config.file_ops;
    let queue = config.mutation_queue;
    let mut read = ReadTool::new(files.clone());
    if let Some(images) = config.images {
        read = read.with_image_policy(images);
    }
    vec![
        Arc::new(read),
        Arc::new(BashTool::new(config.bash.clone())),
        Arc::new(BashTool::powershell(config.bash)),
        Arc::new(EditTool::new(files.clone(), queue.clone())),
        Arc::new(WriteTool::new(files.clone(), queue)),
        Arc::new(GrepTool::new(files.clone())),
        Arc::new(FindTool::new(files.clone())),
        Arc::new(LsTool::new(files)),
        Arc::new(WebFetchTool::new(config.web.clone())),
        Arc::new(WebSearchTool::new(config.web)),
    ]
}
