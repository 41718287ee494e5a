//! KnightCode's session store: append-only JSONL files holding a tree of entries.
//!
//! * [`SessionStore`] opens, creates, forks and lists sessions; it owns the clock and the
//!   per-process ownership registry ([`lock`]).
//! * [`SessionManager`] is one open session: tree navigation, appends (lazy first write,
//!   then one flushed line per entry) and context building ([`context`]).
//! * Reading tolerates torn tails, malformed lines, orphans and cycles ([`load`]); repairs
//!   and migrations ([`migrate`]) happen only when an owner opens the file.

pub mod context;
mod error;
pub mod ids;
pub mod list;
pub mod load;
pub mod lock;
mod manager;
pub mod migrate;
pub mod paths;
pub mod plan_mode;
mod storage;
mod store;
pub mod tree;
pub mod turns;

pub use context::MessageRef;
pub use context::ModelRef;
pub use context::ProjectedMessage;
pub use context::SessionContext;
pub use context::SystemState;
pub use error::Result;
pub use error::SessionError;
pub use ids::Clock;
pub use ids::SystemClock;
pub use list::SessionInfo;
pub use load::LoadWarning;
pub use lock::LockOptions;
pub use manager::NewCompaction;
pub use manager::SessionManager;
pub use store::NewSession;
pub use store::SessionStore;
pub use store::fork_point;
pub use turns::Turn;
