//! KnightCode's agent loop and the tool interface it drives.
//!
//! No filesystem, terminal or persistence here: the loop talks to a provider
//! ([`knightcode_ai::Provider`]), to tools ([`Tool`]), to a persistence hook
//! ([`MessageStore`]) and to an event consumer ([`EventReceiver`]) through traits and
//! channels, so it is testable in milliseconds.
//!
//! ```text
//! let (events, mut rx) = event_channel(DEFAULT_EVENT_CAPACITY);
//! let mut agent = Agent::new(provider, AgentConfig::new(model), events)
//!     .with_messages(context)
//!     .with_store(Box::new(session_appender));
//! let handle = agent.handle();          // steer / follow_up / clear_queue / abort from elsewhere
//! let outcome = agent.prompt(vec![user_message]).await?;
//! ```

mod agent;
mod assistant_turn;
pub mod clock;
mod error;
mod events;
pub mod hooks;
pub mod nested;
mod persist;
mod queue;
mod run;
pub mod tool;
mod tool_batch;
mod validate;

pub use agent::Agent;
pub use agent::AgentConfig;
pub use agent::AgentHandle;
pub use agent::RunOutcome;
pub use clock::Clock;
pub use clock::SystemClock;
pub use error::AgentError;
pub use error::PersistError;
pub use events::DEFAULT_EVENT_CAPACITY;
pub use events::EventObserver;
pub use events::EventReceiver;
pub use events::EventSender;
pub use events::TryRecvError;
pub use events::event_channel;
pub use hooks::AgentHooks;
pub use hooks::BoundaryAction;
pub use hooks::FinishedResult;
pub use hooks::HookFuture;
pub use hooks::NoHooks;
pub use hooks::OverflowRecovery;
pub use hooks::PendingToolCall;
pub use hooks::ToolCallVerdict;
pub use hooks::ToolResultPatch;
pub use hooks::TurnSummary;
pub use nested::NestedCallOptions;
pub use nested::NestedOutcome;
pub use persist::MessageStore;
pub use persist::NoStore;
pub use queue::QueueMode;
pub use queue::QueuedMessages;
pub use run::RETRY_CANCELLED;
pub use tool::ExecutionMode;
pub use tool::Loadout;
pub use tool::Tool;
pub use tool::ToolContext;
pub use tool::ToolDefinition;
pub use tool::ToolError;
pub use tool::ToolExposure;
pub use tool::ToolFuture;
pub use tool::ToolListing;
pub use tool::ToolNamespace;
pub use tool::ToolOutput;
pub use tool::ToolRegistry;
pub use tool::UpdateSink;
pub use tool_batch::OPERATION_ABORTED;
pub use validate::SchemaCache;
