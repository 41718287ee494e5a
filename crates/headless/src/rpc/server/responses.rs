//! RPC commands to session commands, and session replies to RPC responses (`spec/rpc.md` §2
//! for every data shape).

use std::collections::HashMap;
use std::path::PathBuf;

use knightcode_ai::ThinkingLevel;
use knightcode_protocol::ContentBlock;
use knightcode_protocol::rpc::CancelledResult;
use knightcode_protocol::rpc::CommandsResult;
use knightcode_protocol::rpc::CycleModelResult;
use knightcode_protocol::rpc::ExportHtmlResult;
use knightcode_protocol::rpc::ForkMessagesResult;
use knightcode_protocol::rpc::ForkResult;
use knightcode_protocol::rpc::LastAssistantTextResult;
use knightcode_protocol::rpc::MessagesResult;
use knightcode_protocol::rpc::ModelsResult;
use knightcode_protocol::rpc::PromptResult;
use knightcode_protocol::rpc::QueueContents;
use knightcode_protocol::rpc::RpcCommand;
use knightcode_protocol::rpc::RpcCommandBody as Cmd;
use knightcode_protocol::rpc::RpcOutcome;
use knightcode_protocol::rpc::RpcResponse;
use knightcode_protocol::rpc::StreamingBehavior;
use knightcode_protocol::rpc::ThinkingLevelResult;
use knightcode_protocol::rpc::ThinkingLevelsResult;
use knightcode_runtime::Command;
use knightcode_runtime::Reply;
use knightcode_runtime::actor::Queueing;
use knightcode_runtime::agent_session::operations::model_info;
use knightcode_runtime::hooks::InputSource;
use serde::Serialize;

/// Commands waiting for their reply, by tag.
#[derive(Default)]
pub(super) struct Pending {
    next_tag: u64,
    waiting: HashMap<u64, PendingReply>,
}

/// How to write the reply of one command.
pub(super) struct PendingReply {
    id: Option<String>,
    command: String,
    /// Answered without the session (a line that is not a valid command); the session's
    /// `Done` for the `Ping` only places it in the stream.
    answered: Option<RpcResponse>,
}

impl Pending {
    fn tag(&mut self, reply: PendingReply) -> u64 {
        let tag = self.next_tag;
        self.next_tag += 1;
        self.waiting.insert(tag, reply);
        tag
    }

    /// The session command for `command`, and the tag its reply will carry.
    pub(super) fn insert(&mut self, command: RpcCommand) -> (Command, u64) {
        let id = command.id.clone();
        let name = command.command_type().to_owned();
        let (translated, answered) = match translate(command) {
            Ok(translated) => (translated, None),
            Err(response) => (Command::Ping, Some(response)),
        };
        let tag = self.tag(PendingReply {
            id,
            command: name,
            answered,
        });
        (translated, tag)
    }

    /// A response already made (to a line that is not a command), placed in order.
    pub(super) fn insert_answered(&mut self, response: RpcResponse) -> u64 {
        self.tag(PendingReply {
            id: response.id.clone(),
            command: response.command.clone(),
            answered: Some(response),
        })
    }

    pub(super) fn take(&mut self, tag: u64) -> Option<PendingReply> {
        self.waiting.remove(&tag)
    }
}

fn images(body: &Cmd) -> Vec<ContentBlock> {
    body.images()
        .map(|image| ContentBlock::Image(image.clone()))
        .collect()
}

fn parse_level(level: &str) -> Result<ThinkingLevel, String> {
    ThinkingLevel::parse(level).ok_or_else(|| {
        format!(
            "Invalid thinking level: {level}. Use one of off, minimal, low, medium, high, xhigh, max."
        )
    })
}

/// The session command for an RPC command; `Err` is the response for one answered here.
fn translate(command: RpcCommand) -> Result<Command, RpcResponse> {
    let (id, name) = (command.id.clone(), command.command_type());
    let fail = |message: String| RpcResponse::error(id.clone(), name, message);
    let images = images(&command.body);
    Ok(match command.body {
        Cmd::Prompt {
            message,
            streaming_behavior,
            ..
        } => Command::Prompt {
            text: message,
            images,
            queueing: streaming_behavior.map(|b| match b {
                StreamingBehavior::Steer => Queueing::Steer,
                StreamingBehavior::FollowUp => Queueing::FollowUp,
            }),
            source: InputSource::Rpc,
        },
        Cmd::Steer { message, .. } => Command::Steer {
            text: message,
            images,
        },
        Cmd::FollowUp { message, .. } => Command::FollowUp {
            text: message,
            images,
        },
        Cmd::Abort => Command::Abort,
        Cmd::ClearQueue => Command::ClearQueue,
        Cmd::NewSession { parent_session } => Command::NewSession { parent_session },
        Cmd::GetState => Command::GetState,
        Cmd::GetMessages => Command::GetMessages,
        Cmd::SetModel { provider, model_id } => Command::SetModel { provider, model_id },
        Cmd::CycleModel => Command::CycleModel { forward: true },
        Cmd::GetAvailableModels => Command::GetAvailableModels,
        Cmd::SetThinkingLevel { level } => match parse_level(&level) {
            Ok(level) => Command::SetThinkingLevel(level),
            Err(message) => return Err(fail(message)),
        },
        Cmd::CycleThinkingLevel => Command::CycleThinkingLevel,
        Cmd::GetAvailableThinkingLevels => Command::GetAvailableThinkingLevels,
        Cmd::SetSteeringMode { mode } => Command::SetSteeringMode(mode),
        Cmd::SetFollowUpMode { mode } => Command::SetFollowUpMode(mode),
        Cmd::Compact {
            custom_instructions,
        } => Command::Compact {
            custom_instructions,
        },
        Cmd::SetAutoCompaction { enabled } => Command::SetAutoCompaction(enabled),
        Cmd::SetAutoRetry { enabled } => Command::SetAutoRetry(enabled),
        Cmd::AbortRetry => Command::AbortRetry,
        Cmd::Bash {
            command: line,
            exclude_from_context,
        } => Command::Bash {
            command: line,
            exclude_from_context: exclude_from_context.unwrap_or(false),
            id: id.clone(),
        },
        Cmd::AbortBash => Command::AbortBash,
        Cmd::GetSessionStats => Command::GetSessionStats,
        Cmd::ExportHtml { output_path } => Command::ExportHtml {
            output: output_path.as_ref().map(std::path::PathBuf::from),
            colors: None,
        },
        Cmd::SwitchSession { session_path } => Command::SwitchSession(PathBuf::from(session_path)),
        Cmd::Fork { entry_id } => Command::Fork(entry_id),
        Cmd::Clone => Command::Clone,
        Cmd::GetForkMessages => Command::GetForkMessages,
        Cmd::GetEntries { since } => Command::GetEntries { since },
        Cmd::GetTree => Command::GetTree,
        Cmd::GetLastAssistantText => Command::GetLastAssistantText,
        Cmd::SetSessionName { name } => Command::SetSessionName(name),
        Cmd::GetCommands => Command::GetCommands,
    })
}

/// A success response with `data`; a value that cannot be encoded becomes a failure.
fn data<T: Serialize + ?Sized>(id: Option<String>, command: &str, value: &T) -> RpcResponse {
    RpcResponse::with_data(id.clone(), command, value).unwrap_or_else(|error| {
        RpcResponse::error(id, command, format!("could not encode the result: {error}"))
    })
}

impl PendingReply {
    /// The RPC response for the session's reply.
    pub(super) fn response(self, reply: Reply) -> RpcResponse {
        if let Some(answered) = self.answered {
            return answered;
        }
        let Self { id, command, .. } = self;
        let data = |value: &dyn erased::Data| value.response(id.clone(), &command);
        match reply {
            // Navigation, snapshots, `/tools` and `/reload` are the terminal's; no RPC command
            // asks for them.
            Reply::Done
            | Reply::Navigated { .. }
            | Reply::Snapshot(_)
            | Reply::WebTools(_)
            | Reply::Reloaded(_)
            | Reply::CredentialsReloaded(_) => RpcResponse::ok(id, &command),
            Reply::Failed(error) => RpcResponse::error(id, &command, error.to_string()),
            Reply::Prompt(disposition) => data(&PromptResult {
                disposition: Some(disposition),
                ..PromptResult::default()
            }),
            Reply::Cleared(cleared) => data(&QueueContents {
                steering: cleared.steering_texts(),
                follow_up: cleared.follow_up_texts(),
                ..QueueContents::default()
            }),
            Reply::ModelSet(switch) => data(&model_info(&switch.model)),
            Reply::ModelCycled(Some(switch)) => data(&CycleModelResult {
                model: model_info(&switch.model),
                thinking_level: switch.thinking.as_str().to_owned(),
                is_scoped: switch.scoped,
                ..CycleModelResult::default()
            }),
            Reply::ModelCycled(None) | Reply::ThinkingCycled(None) => data(&()),
            Reply::ThinkingCycled(Some(change)) => data(&ThinkingLevelResult {
                level: change.level.as_str().to_owned(),
                ..ThinkingLevelResult::default()
            }),
            Reply::SessionReplaced { cancelled } => data(&CancelledResult {
                cancelled,
                ..CancelledResult::default()
            }),
            Reply::Forked { text } => data(&ForkResult {
                text: Some(text),
                cancelled: false,
                ..ForkResult::default()
            }),
            Reply::Bash(result) => data(&result),
            Reply::State(state) => data(&state),
            Reply::Messages(messages) => data(&MessagesResult {
                messages,
                ..MessagesResult::default()
            }),
            Reply::Models(models) => data(&ModelsResult {
                models,
                ..ModelsResult::default()
            }),
            Reply::ThinkingLevels(levels) => data(&ThinkingLevelsResult {
                levels: levels.iter().map(|l| l.as_str().to_owned()).collect(),
                ..ThinkingLevelsResult::default()
            }),
            Reply::Stats(stats) => data(&stats),
            Reply::Entries(entries) => data(&entries),
            Reply::Tree(json) => match serde_json::value::RawValue::from_string(json) {
                Ok(raw) => RpcResponse {
                    id,
                    command,
                    outcome: RpcOutcome::Success(Some(raw)),
                    extra: Vec::new(),
                },
                Err(error) => RpcResponse::error(id, &command, error.to_string()),
            },
            Reply::ForkMessages(messages) => data(&ForkMessagesResult {
                messages,
                ..ForkMessagesResult::default()
            }),
            Reply::LastAssistantText(text) => data(&LastAssistantTextResult {
                text,
                ..LastAssistantTextResult::default()
            }),
            Reply::Compacted(result) => data(&result),
            Reply::Exported(path) => data(&ExportHtmlResult {
                path: path.to_string_lossy().into_owned(),
                ..ExportHtmlResult::default()
            }),
            Reply::Commands(commands) => data(&CommandsResult {
                commands,
                ..CommandsResult::default()
            }),
        }
    }
}

/// A serializable value as a trait object, so one closure builds every data response.
mod erased {
    use knightcode_protocol::rpc::RpcResponse;
    use serde::Serialize;

    pub(super) trait Data {
        fn response(&self, id: Option<String>, command: &str) -> RpcResponse;
    }

    impl<T: Serialize> Data for T {
        fn response(&self, id: Option<String>, command: &str) -> RpcResponse {
            super::data(id, command, self)
        }
    }
}
