//! The `bash` tool.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use knightcode_agent::tool::{
    ExecutionMode, Tool, ToolContext, ToolDefinition, ToolError, ToolFuture, ToolOutput,
};
use knightcode_protocol::ContentBlock;
use knightcode_protocol::wire::format_js_number;
use knightcode_sandbox::{SandboxLauncher, SandboxMode};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::error::ToolsError;
use crate::exec::LocalExecOps;
use crate::ops::{ExecOps, ExecRequest};
use crate::output::{OutputAccumulator, OutputSnapshot};
use crate::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size};
use crate::util::parse_args;

/// Minimum time between partial-output updates (the reference renderer's throttle).
const UPDATE_THROTTLE: Duration = Duration::from_millis(100);

/// Largest timeout, in seconds (what a JavaScript timer can hold).
const MAX_TIMEOUT_SECONDS: f64 = 2_147_483.647;

/// The session variables exported to every command the model runs.
const SESSION_VARIABLES: [&str; 5] = [
    "KNIGHTCODE_SESSION_ID",
    "KNIGHTCODE_SESSION_FILE",
    "KNIGHTCODE_PROVIDER",
    "KNIGHTCODE_MODEL",
    "KNIGHTCODE_REASONING_LEVEL",
];

/// Current session facts for the `KNIGHTCODE_*` variables; unset fields are not exported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionEnv {
    pub session_id: Option<String>,
    /// Only for sessions saved to disk.
    pub session_file: Option<PathBuf>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub reasoning_level: Option<String>,
}

/// Asked at the start of every command, so a model or session switch shows up at once.
pub type SessionEnvSource = Arc<dyn Fn() -> SessionEnv + Send + Sync>;

/// What a command will run as; a [`SpawnHook`] may rewrite any of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnContext {
    pub command: String,
    pub cwd: PathBuf,
    pub env: Vec<(OsString, OsString)>,
}

/// Adjusts command, cwd or environment just before a command starts.
pub type SpawnHook = Arc<dyn Fn(SpawnContext) -> SpawnContext + Send + Sync>;

/// Settings of the bash tool.
#[derive(Clone)]
pub struct BashConfig {
    /// Runs the commands; `None` means the local shell ([`LocalExecOps`]).
    pub ops: Option<Arc<dyn ExecOps>>,
    /// The `shellPath` setting (used by the local shell only).
    pub shell_path: Option<PathBuf>,
    /// The `shellCommandPrefix` setting, run before every command.
    pub command_prefix: Option<String>,
    /// Export `KNIGHTCODE_*` session variables (and tell the model about them).
    pub expose_session_environment: bool,
    pub session_env: Option<SessionEnvSource>,
    pub spawn_hook: Option<SpawnHook>,
    /// Where full output of truncated commands is saved; default: the OS temp directory.
    pub output_dir: Option<PathBuf>,
    /// Starts the local shell's commands in the OS sandbox (`--sandbox`); not applied to
    /// custom `ops`, which run commands their own way.
    pub sandbox: Option<SandboxLauncher>,
}

impl Default for BashConfig {
    fn default() -> Self {
        Self {
            ops: None,
            shell_path: None,
            command_prefix: None,
            expose_session_environment: true,
            session_env: None,
            spawn_hook: None,
            output_dir: None,
            sandbox: None,
        }
    }
}

impl std::fmt::Debug for BashConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BashConfig")
            .field("shell_path", &self.shell_path)
            .field("command_prefix", &self.command_prefix)
            .field(
                "expose_session_environment",
                &self.expose_session_environment,
            )
            .field("output_dir", &self.output_dir)
            .field("sandbox", &self.sandbox)
            .finish_non_exhaustive()
    }
}

/// What tells the `bash` and `powershell` tools apart; everything else is shared.
#[derive(Debug, Clone, Copy)]
struct ShellFlavour {
    name: &'static str,
    shell_name: &'static str,
    snippet: &'static str,
    temp_prefix: &'static str,
}

const BASH: ShellFlavour = ShellFlavour {
    name: "bash",
    shell_name: "bash",
    snippet: "Execute bash commands (ls, grep, find, etc.)",
    temp_prefix: "knightcode-bash",
};

const POWERSHELL: ShellFlavour = ShellFlavour {
    name: "powershell",
    shell_name: "PowerShell",
    snippet: "Execute PowerShell commands",
    temp_prefix: "knightcode-powershell",
};

/// Runs shell commands for the model: `bash` ([`BashTool::new`]) or `powershell`
/// ([`BashTool::powershell`]), with the same arguments, limits and notices.
pub struct BashTool {
    definition: ToolDefinition,
    config: BashConfig,
    ops: Arc<dyn ExecOps>,
    flavour: ShellFlavour,
}

#[derive(Deserialize)]
struct BashArgs {
    command: String,
    timeout: Option<f64>,
}

fn definition(flavour: ShellFlavour, expose_session_environment: bool) -> ToolDefinition {
    let guidelines = if expose_session_environment {
        vec![
            "KNIGHTCODE_* environment variables describe the current model and session; \
             inspect them when you need those details."
                .to_owned(),
        ]
    } else {
        Vec::new()
    };
    ToolDefinition {
        name: flavour.name.to_owned(),
        label: flavour.name.to_owned(),
        description: format!(
            "Run a command with {} in the current working directory and get back its \
             stdout and stderr together. Only the last {DEFAULT_MAX_LINES} lines or {}KB of \
             output are returned, whichever limit is reached first; when output is cut, the \
             complete output is saved to a temporary file. A timeout in seconds may be given.",
            flavour.shell_name,
            DEFAULT_MAX_BYTES / 1024
        ),
        parameters: json!({
            "type": "object",
            "required": ["command"],
            "properties": {
                "command": {"type": "string", "description": "Shell command to run"},
                "timeout": {
                    "type": "number",
                    "description": "Timeout in seconds (optional; commands have no timeout by default)"
                }
            }
        }),
        prompt_snippet: Some(flavour.snippet.to_owned()),
        prompt_guidelines: guidelines,
        execution: ExecutionMode::Parallel,
    }
}

/// Checks the timeout argument (seconds) the way the reference agent does.
fn resolve_timeout(timeout: Option<f64>) -> Result<Option<Duration>, ToolError> {
    let Some(seconds) = timeout else {
        return Ok(None);
    };
    if !seconds.is_finite() || seconds <= 0.0 {
        return Err(ToolError::failed(
            "Invalid timeout: must be a finite number of seconds",
        ));
    }
    if seconds > MAX_TIMEOUT_SECONDS {
        return Err(ToolError::failed(format!(
            "Invalid timeout: maximum is {} seconds",
            format_js_number(MAX_TIMEOUT_SECONDS)
        )));
    }
    Ok(Some(Duration::from_secs_f64(seconds)))
}

fn snapshot_details(snapshot: &OutputSnapshot) -> Value {
    let mut details = Map::new();
    if snapshot.truncation.truncated {
        details.insert("truncation".to_owned(), json!(snapshot.truncation));
    }
    if let Some(path) = &snapshot.full_output_path {
        details.insert("fullOutputPath".to_owned(), json!(path.to_string_lossy()));
    }
    Value::Object(details)
}

/// The text for the model (with a truncation notice naming the full-output file) and the
/// details, from the final snapshot.
fn format_output(
    snapshot: &OutputSnapshot,
    output: &OutputAccumulator,
    empty_text: &str,
) -> (String, Option<Value>) {
    let truncation = &snapshot.truncation;
    let mut text = if snapshot.content.is_empty() {
        empty_text.to_owned()
    } else {
        snapshot.content.clone()
    };
    if !truncation.truncated {
        return (text, None);
    }
    let full = match (&snapshot.full_output_path, output.spill_failure()) {
        (_, Some(reason)) => format!("unavailable ({reason})"),
        (Some(path), None) => path.display().to_string(),
        (None, None) => "unavailable".to_owned(),
    };
    let end = truncation.total_lines;
    let start = end + 1 - truncation.output_lines.min(end);
    if truncation.last_line_partial {
        text.push_str(&format!(
            "\n\n[Showing last {} of line {end} (line is {}). Full output: {full}]",
            format_size(truncation.output_bytes as u64),
            format_size(output.last_line_bytes() as u64),
        ));
    } else if truncation.truncated_by == Some(crate::truncate::TruncatedBy::Lines) {
        text.push_str(&format!(
            "\n\n[Showing lines {start}-{end} of {end}. Full output: {full}]"
        ));
    } else {
        text.push_str(&format!(
            "\n\n[Showing lines {start}-{end} of {end} ({} limit). Full output: {full}]",
            format_size(DEFAULT_MAX_BYTES as u64)
        ));
    }
    (text, Some(snapshot_details(snapshot)))
}

/// Output up to this size reaches scripts whole; beyond it, its first and last halves.
const SCRIPT_OUTPUT_LIMIT: u64 = 1024 * 1024;

/// What scripts get of a finished command ([`output_schema`]): the output (all of it up to
/// 1 MiB, not just the tail the model sees; beyond that its first and last 512 KiB),
/// whether some was left out, the file holding all of it, the exit code and the wall time.
fn structured_result(
    output: &OutputAccumulator,
    snapshot: &OutputSnapshot,
    exit_code: Option<i32>,
    started: Instant,
) -> Value {
    let (text, truncated) = output.whole(snapshot, SCRIPT_OUTPUT_LIMIT);
    let mut result = json!({
        "output": text,
        "truncated": truncated,
        "exit_code": exit_code,
        "wall_time_seconds": started.elapsed().as_secs_f64(),
    });
    if let Some(path) = &snapshot.full_output_path {
        result["full_output_path"] = json!(path.to_string_lossy());
    }
    result
}

/// The JSON Schema of [`structured_result`].
fn output_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "output": {"type": "string"},
            "truncated": {"type": "boolean"},
            "full_output_path": {"type": "string"},
            "exit_code": {"type": ["number", "null"]},
            "wall_time_seconds": {"type": "number"},
        },
        "required": ["output", "truncated", "exit_code", "wall_time_seconds"],
    })
}

fn append_status(text: &str, status: &str) -> String {
    if text.is_empty() {
        status.to_owned()
    } else {
        format!("{text}\n\n{status}")
    }
}

impl BashTool {
    pub fn new(config: BashConfig) -> Self {
        let ops = config.ops.clone().unwrap_or_else(|| {
            Arc::new(
                LocalExecOps::new(config.shell_path.clone()).with_sandbox(config.sandbox.clone()),
            ) as Arc<dyn ExecOps>
        });
        Self {
            definition: definition(BASH, config.expose_session_environment),
            config,
            ops,
            flavour: BASH,
        }
    }

    /// The `powershell` tool: PowerShell from `PATH` (`shellPath` and
    /// `shellCommandPrefix` are bash's and do not apply).
    pub fn powershell(mut config: BashConfig) -> Self {
        config.shell_path = None;
        config.command_prefix = None;
        let ops = config.ops.clone().unwrap_or_else(|| {
            Arc::new(LocalExecOps::powershell().with_sandbox(config.sandbox.clone()))
                as Arc<dyn ExecOps>
        });
        Self {
            definition: definition(POWERSHELL, config.expose_session_environment),
            config,
            ops,
            flavour: POWERSHELL,
        }
    }

    /// The inherited environment with the session variables replaced by current ones.
    fn environment(&self) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
            .filter(|(key, _)| !SESSION_VARIABLES.iter().any(|name| key == name))
            .collect();
        if !self.config.expose_session_environment {
            return env;
        }
        let Some(source) = &self.config.session_env else {
            return env;
        };
        let session = source();
        let values = [
            (SESSION_VARIABLES[0], session.session_id.map(OsString::from)),
            (
                SESSION_VARIABLES[1],
                session.session_file.map(PathBuf::into_os_string),
            ),
            (SESSION_VARIABLES[2], session.provider.map(OsString::from)),
            (SESSION_VARIABLES[3], session.model.map(OsString::from)),
            (
                SESSION_VARIABLES[4],
                session.reasoning_level.map(OsString::from),
            ),
        ];
        for (name, value) in values {
            if let Some(value) = value {
                env.push((OsString::from(name), value));
            }
        }
        env
    }

    async fn run(&self, arguments: Value, context: ToolContext) -> Result<ToolOutput, ToolError> {
        let args: BashArgs = parse_args(arguments)?;
        let timeout = resolve_timeout(args.timeout)?;
        let command = match &self.config.command_prefix {
            Some(prefix) => format!("{prefix}\n{}", args.command),
            None => args.command,
        };
        let mut spawn = SpawnContext {
            command,
            cwd: context.cwd.clone(),
            env: self.environment(),
        };
        if let Some(hook) = &self.config.spawn_hook {
            spawn = hook(spawn);
        }
        let dir = self
            .config
            .output_dir
            .clone()
            .unwrap_or_else(std::env::temp_dir);
        let mut output = OutputAccumulator::new(self.flavour.temp_prefix, &dir);
        let started = Instant::now();
        context.update(ToolOutput::default());

        let (sender, mut chunks) = mpsc::unbounded_channel::<Vec<u8>>();
        let request = ExecRequest {
            command: spawn.command,
            cwd: spawn.cwd,
            env: spawn.env,
            timeout,
            cancel: context.cancel.clone(),
            on_data: Box::new(move |data: &[u8]| {
                // The receiver lives until output has been drained.
                let _ = sender.send(data.to_vec());
            }),
        };
        let exec = self.ops.exec(request);
        tokio::pin!(exec);
        let mut last_update: Option<Instant> = None;
        let mut pending_update: Option<Instant> = None;
        let emit = |output: &mut OutputAccumulator, last: &mut Option<Instant>| {
            *last = Some(Instant::now());
            let snapshot = output.snapshot(true);
            context.update(ToolOutput {
                content: vec![ContentBlock::text(snapshot.content.clone())],
                details: Some(snapshot_details(&snapshot)),
                ..ToolOutput::default()
            });
        };
        let result = loop {
            tokio::select! {
                biased;
                Some(chunk) = chunks.recv() => {
                    output.append(&chunk);
                    let due = last_update.map_or(Instant::now(), |at| at + UPDATE_THROTTLE);
                    if due <= Instant::now() {
                        pending_update = None;
                        emit(&mut output, &mut last_update);
                    } else if pending_update.is_none() {
                        pending_update = Some(due);
                    }
                }
                () = sleep_until_opt(pending_update), if pending_update.is_some() => {
                    pending_update = None;
                    emit(&mut output, &mut last_update);
                }
                result = &mut exec => break result,
            }
        };
        let mut dirty = pending_update.is_some();
        while let Ok(chunk) = chunks.try_recv() {
            output.append(&chunk);
            dirty = true;
        }
        output.finish();
        if dirty {
            emit(&mut output, &mut last_update);
        }
        let snapshot = output.snapshot(true);
        output.close();

        match result {
            Ok(status) => {
                let (text, details) = format_output(&snapshot, &output, "(no output)");
                let structured = structured_result(&output, &snapshot, status.exit_code, started);
                match status.exit_code {
                    Some(code) if code != 0 => {
                        let mut status = format!("Command exited with code {code}");
                        if let Some(note) = self.sandbox_note(&text) {
                            status.push('\n');
                            status.push_str(&note);
                        }
                        // The error result the loop makes of a failure (`details: {}`), with
                        // the exit code for scripts, which resolve to it rather than reject.
                        Ok(ToolOutput {
                            content: vec![ContentBlock::text(append_status(&text, &status))],
                            details: Some(Value::Object(Map::new())),
                            structured_content: Some(structured),
                            is_error: true,
                            ..ToolOutput::default()
                        })
                    }
                    _ => Ok(ToolOutput {
                        content: vec![ContentBlock::text(text)],
                        details,
                        structured_content: Some(structured),
                        ..ToolOutput::default()
                    }),
                }
            }
            Err(ToolsError::Aborted) => {
                let (text, _) = format_output(&snapshot, &output, "");
                Err(ToolError::Aborted(append_status(&text, "Command aborted")))
            }
            Err(ToolsError::TimedOut) => {
                let (text, _) = format_output(&snapshot, &output, "");
                let seconds = args.timeout.map(format_js_number).unwrap_or_default();
                Err(ToolError::failed(append_status(
                    &text,
                    &format!("Command timed out after {seconds} seconds"),
                )))
            }
            Err(other) => Err(other.into()),
        }
    }
}

impl BashTool {
    /// For a failed command that ran sandboxed and printed a refusal: which sandbox refused
    /// it and how to allow it. The shell's own message is the only sign a refusal left (the
    /// kernel answers EACCES or EPERM, which commands word their own way), so it is found by
    /// the texts the C library gives those errors.
    fn sandbox_note(&self, output: &str) -> Option<String> {
        let launcher = self.config.sandbox.as_ref()?;
        const REFUSALS: [&str; 3] = [
            "Permission denied",
            "Operation not permitted",
            "Read-only file system",
        ];
        if !REFUSALS.iter().any(|refusal| output.contains(refusal)) {
            return None;
        }
        Some(match launcher.policy.mode {
            SandboxMode::ReadOnly => "The command ran in the read-only sandbox, which allows no \
                 writes (and no network); the user can run with --sandbox workspace-write or off."
                .to_owned(),
            mode => format!(
                "The command ran in the {mode} sandbox: writes are allowed only in the project, \
                 the temp folders and the sandbox.writableRoots setting{}.",
                if launcher.policy.network {
                    ""
                } else {
                    ", and the network is off"
                }
            ),
        })
    }
}

async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

impl Tool for BashTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn execute(&self, arguments: Value, context: ToolContext) -> ToolFuture<'_> {
        Box::pin(self.run(arguments, context))
    }

    /// Scripts get the output, exit code and wall time as an object.
    fn output_schema(&self) -> Option<Value> {
        Some(output_schema())
    }
}
