//! The entry points of the fuzz targets in `fuzz/` (cargo-fuzz, nightly), kept in the
//! workspace so that `tests/all.rs` replays every committed seed and crash reproducer through
//! exactly the same code on stable.
//!
//! Each target is a [`Target`]; [`Harness::run`] feeds it one input. A panic is a finding:
//! the parsers must answer any input with a value or an error. Some targets also check a
//! property (feeding a stream in pieces must give what feeding it whole gives; a session
//! that opened must open again after its repair).

mod config;
mod resources;
mod rpc;
mod session;
mod streams;
mod tools;

use std::path::Path;
use std::path::PathBuf;

/// Every fuzz target, by the name of its binary in `fuzz/fuzz_targets/` and of its folders
/// under `fuzz/seeds/` and `fuzz/regressions/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    SessionLoad,
    Rpc,
    Sse,
    StreamAnthropic,
    StreamOpenAiCompletions,
    StreamOpenAiResponses,
    StreamGoogle,
    StreamMistral,
    StreamBedrock,
    ModelsJson,
    Settings,
    Keybindings,
    Theme,
    Frontmatter,
    ToolArgs,
    EditMatch,
}

impl Target {
    pub const ALL: [Target; 16] = [
        Self::SessionLoad,
        Self::Rpc,
        Self::Sse,
        Self::StreamAnthropic,
        Self::StreamOpenAiCompletions,
        Self::StreamOpenAiResponses,
        Self::StreamGoogle,
        Self::StreamMistral,
        Self::StreamBedrock,
        Self::ModelsJson,
        Self::Settings,
        Self::Keybindings,
        Self::Theme,
        Self::Frontmatter,
        Self::ToolArgs,
        Self::EditMatch,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::SessionLoad => "session_load",
            Self::Rpc => "rpc",
            Self::Sse => "sse",
            Self::StreamAnthropic => "stream_anthropic",
            Self::StreamOpenAiCompletions => "stream_openai_completions",
            Self::StreamOpenAiResponses => "stream_openai_responses",
            Self::StreamGoogle => "stream_google",
            Self::StreamMistral => "stream_mistral",
            Self::StreamBedrock => "stream_bedrock",
            Self::ModelsJson => "models_json",
            Self::Settings => "settings",
            Self::Keybindings => "keybindings",
            Self::Theme => "theme",
            Self::Frontmatter => "frontmatter",
            Self::ToolArgs => "tool_args",
            Self::EditMatch => "edit_match",
        }
    }
}

/// What the targets share across inputs: a scratch folder for those that read files, a
/// runtime for the async RPC reader, and the built-in tools with their compiled schemas.
/// Built once per fuzzing process (compiling schemas per input would measure the compiler).
pub struct Harness {
    scratch: tempfile::TempDir,
    runtime: tokio::runtime::Runtime,
    tools: tools::ToolSet,
}

impl Harness {
    /// # Panics
    /// When no scratch folder or runtime can be made: nothing can be fuzzed then.
    #[allow(clippy::expect_used)]
    pub fn new() -> Self {
        // In `KC_FUZZ_SCRATCH` when given (`scripts/fuzz/run.sh` passes a folder it removes
        // at the end: libFuzzer exits without dropping this one), else memory-backed when
        // the machine has it (the file targets write every input).
        let shm = Path::new("/dev/shm");
        let given = std::env::var_os("KC_FUZZ_SCRATCH").map(PathBuf::from);
        let mut builder = tempfile::Builder::new();
        builder.prefix("kc-fuzz-");
        let scratch = match given {
            Some(dir) => builder.tempdir_in(dir),
            None if shm.is_dir() => builder.tempdir_in(shm),
            None => builder.tempdir(),
        }
        .expect("a scratch folder for the fuzz targets");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a tokio runtime for the RPC target");
        Self {
            scratch,
            runtime,
            tools: tools::ToolSet::new(),
        }
    }

    fn scratch(&self) -> PathBuf {
        self.scratch.path().to_path_buf()
    }

    /// Feeds one input to `target`.
    pub fn run(&mut self, target: Target, data: &[u8]) {
        match target {
            Target::SessionLoad => session::run(&self.scratch(), data),
            Target::Rpc => rpc::run(&self.runtime, data),
            Target::Sse => streams::sse(data),
            Target::StreamAnthropic => {
                streams::provider(knightcode_ai::Api::AnthropicMessages, data)
            }
            Target::StreamOpenAiCompletions => {
                streams::provider(knightcode_ai::Api::OpenAiCompletions, data);
            }
            Target::StreamOpenAiResponses => {
                streams::provider(knightcode_ai::Api::OpenAiResponses, data);
            }
            Target::StreamGoogle => streams::provider(knightcode_ai::Api::GoogleGenerativeAi, data),
            Target::StreamMistral => {
                streams::provider(knightcode_ai::Api::MistralConversations, data);
            }
            // AWS event-stream frames, then the Converse events.
            Target::StreamBedrock => {
                streams::provider(knightcode_ai::Api::BedrockConverseStream, data);
            }
            Target::ModelsJson => config::models_json(data),
            Target::Settings => config::settings(data),
            Target::Keybindings => config::keybindings(data),
            Target::Theme => config::theme(data),
            Target::Frontmatter => resources::frontmatter(&self.scratch(), data),
            Target::ToolArgs => self.tools.validate(data),
            Target::EditMatch => tools::edit_match(data),
        }
    }
}

impl Default for Harness {
    fn default() -> Self {
        Self::new()
    }
}

/// Splits `data` at each NUL byte into (lossy) UTF-8 texts: how targets that take several
/// texts read one input.
pub(crate) fn texts(data: &[u8]) -> Vec<String> {
    data.split(|&byte| byte == 0)
        .map(|part| String::from_utf8_lossy(part).into_owned())
        .collect()
}

/// Cuts `data` into pieces of `step` bytes (the last may be shorter); `step` 0 means whole.
pub(crate) fn pieces(data: &[u8], step: usize) -> Vec<&[u8]> {
    if step == 0 || data.is_empty() {
        return vec![data];
    }
    data.chunks(step).collect()
}
