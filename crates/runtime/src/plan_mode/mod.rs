//! Plan mode, the built-in (`mcp-codemode-virtual.md` §6): `/plan` and `--plan`, the
//! planning gate on tool calls, `ask_user` and `submit_plan`, and the `plan-mode` snapshots
//! and messages of `session-format.md`.
//!
//! It sits in the session's hook stack after the extensions (so their handlers see calls
//! first, as in the reference) and stands aside entirely when an extension registers
//! `/plan`, `--plan`, `ask_user` or `submit_plan`: then that extension is plan mode.
//!
//! The state is never held apart from the session file: every decision reads the latest
//! snapshot on the current branch ([`PlanStateCache`] makes that cheap), so resume, fork,
//! `/tree` and compaction need nothing of their own.

mod command;
mod gate;
mod review;
mod text;
mod tools;

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

use knightcode_protocol::Content;
use knightcode_protocol::plan;
use knightcode_protocol::plan::MalformedPlanState;
use knightcode_protocol::plan::PLAN_MODE;
use knightcode_protocol::plan::PlanMessageKind;
use knightcode_protocol::plan::PlanState;
use knightcode_session::SessionManager;
use knightcode_session::plan_mode::PlanStateCache;

pub(crate) use self::command::parse_command;
pub(crate) use self::gate::PlanGate;
pub(crate) use self::tools::planning_tools;
use crate::agent_session::ToolSelection;
use crate::dialogs::Dialogs;
use crate::dialogs::NoDialogs;
use crate::dialogs::NoticeKind;

pub(crate) const ASK_USER: &str = "ask_user";
pub(crate) const SUBMIT_PLAN: &str = "submit_plan";

/// What the model may call while planning; everything else is blocked, nested calls too.
pub(crate) const ALLOWED_WHILE_PLANNING: [&str; 10] = [
    "read",
    "grep",
    "find",
    "ls",
    "webfetch",
    "websearch",
    "bash",
    "powershell",
    ASK_USER,
    SUBMIT_PLAN,
];

/// What entering planning activates (when registered), besides the web tools.
const PLANNING_LOADOUT: [&str; 6] = [ASK_USER, SUBMIT_PLAN, "read", "grep", "find", "ls"];

/// The built-in's shared state: the session it reads and writes, whether it is in charge,
/// and what the current run has done.
pub(crate) struct PlanMode {
    session: Arc<Mutex<SessionManager>>,
    /// Off when an extension replaced the built-in.
    enabled: AtomicBool,
    cache: Mutex<PlanStateCache>,
    /// Who `ask_user` and `/plan` ask and tell (set with the session's dialogs).
    dialogs: Mutex<Arc<dyn Dialogs>>,
    /// A plan was submitted in the current turn: later calls are blocked and the run ends.
    submitted: AtomicBool,
    /// The other calls of a response that also calls `submit_plan`: a submission ends the
    /// run with the whole batch, so none of them runs, before or after it.
    siblings: Mutex<Vec<String>>,
    /// Why the tool settings cannot plan (`--no-tools`, a `--tools` list without the
    /// planning tools, …), decided at start.
    incompatible: Option<String>,
    /// `codemode` is active with `codemode.mode: "only"`, which hides the direct read tools
    /// from the model: entering planning is refused (kept current by the session).
    codemode_only: AtomicBool,
    /// `--tools`, `--exclude-tools`: what planning may activate.
    selection: ToolSelection,
    /// Notices for front ends without dialogs (print mode's stderr).
    notices: Mutex<Vec<(NoticeKind, String)>>,
    /// Planning was entered for the prompt about to run: its instructions are fresh, so it
    /// gets no reminder.
    just_entered: AtomicBool,
    /// A replacing extension's string `--plan` took the argument after it.
    argument_taken: AtomicBool,
    /// The allowed tools the session has, for the instructions.
    tools: Mutex<Vec<String>>,
    /// The latest compaction's recovery message, frozen: each request carries it at its
    /// tail until the request's own context holds the saved copy, as the reference's
    /// overflow retries do (so a save that failed, or a `context` handler that dropped it,
    /// does not send the retry without the planning rules).
    recovery: Mutex<Option<Arc<knightcode_protocol::AgentMessage>>>,
    /// The way to the session's queue (`/plan approve fresh` starts a new session and the
    /// implementation there), set once the session's actions exist.
    actions: std::sync::OnceLock<Arc<crate::extensions::ExtensionActions>>,
}

impl std::fmt::Debug for PlanMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlanMode")
            .field("enabled", &self.enabled)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl PlanMode {
    pub(crate) fn new(session: Arc<Mutex<SessionManager>>, selection: &ToolSelection) -> Arc<Self> {
        Arc::new(Self {
            session,
            enabled: AtomicBool::new(true),
            cache: Mutex::new(PlanStateCache::default()),
            dialogs: Mutex::new(Arc::new(NoDialogs)),
            submitted: AtomicBool::new(false),
            siblings: Mutex::new(Vec::new()),
            incompatible: incompatibility(selection),
            codemode_only: AtomicBool::new(false),
            selection: selection.clone(),
            notices: Mutex::new(Vec::new()),
            just_entered: AtomicBool::new(false),
            argument_taken: AtomicBool::new(false),
            tools: Mutex::new(Vec::new()),
            recovery: Mutex::new(None),
            actions: std::sync::OnceLock::new(),
        })
    }

    pub(crate) fn set_actions(&self, actions: &Arc<crate::extensions::ExtensionActions>) {
        let _ = self.actions.set(Arc::clone(actions));
    }

    /// An extension registered `/plan`, `--plan`, `ask_user` or `submit_plan`: the
    /// built-in stands aside.
    pub(crate) fn disable(&self) {
        self.enabled.store(false, Ordering::Relaxed);
    }

    pub(crate) fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// The replacing extension's string `--plan` took the argument after it.
    pub(crate) fn note_argument_taken(&self) {
        self.argument_taken.store(true, Ordering::Relaxed);
    }

    pub(crate) fn argument_taken(&self) -> bool {
        self.argument_taken.load(Ordering::Relaxed)
    }

    /// Whether `codemode` is active with `codemode.mode: "only"` (see [`Self::entry_refusal`]).
    pub(crate) fn note_codemode_only(&self, only: bool) {
        self.codemode_only.store(only, Ordering::Relaxed);
    }

    /// Why planning cannot be entered now: tool settings that leave out the planning
    /// tools, or codemode's `only` mode hiding the read tools.
    fn entry_refusal(&self) -> Option<String> {
        if let Some(why) = &self.incompatible {
            return Some(why.clone());
        }
        self.codemode_only.load(Ordering::Relaxed).then(|| {
            "codemode is active with codemode.mode \"only\", which hides the read tools (set codemode.mode to \"on\" to plan)".to_owned()
        })
    }

    /// The session's registered tools: the instructions name the allowed ones it has.
    pub(crate) fn note_tools<'a>(&self, registered: impl IntoIterator<Item = &'a str>) {
        let registered: Vec<&str> = registered.into_iter().collect();
        *lock(&self.tools) = ALLOWED_WHILE_PLANNING
            .iter()
            .filter(|name| registered.contains(name))
            .map(|name| (*name).to_owned())
            .collect();
    }

    fn tool_names(&self) -> Vec<String> {
        lock(&self.tools).clone()
    }

    pub(crate) fn set_dialogs(&self, dialogs: Arc<dyn Dialogs>) {
        *lock(&self.dialogs) = dialogs;
    }

    fn dialogs(&self) -> Arc<dyn Dialogs> {
        Arc::clone(&lock(&self.dialogs))
    }

    /// The state on the current branch (`Ok(None)`: plan mode never used here).
    pub(crate) fn state(&self) -> Result<Option<PlanState>, MalformedPlanState> {
        let session = crate::agent_session::lock(&self.session);
        lock(&self.cache).read(&session)
    }

    /// Whether the next requests must be refused: the stored state cannot be restored, or
    /// it plans with tool settings that cannot. Fails closed: the message says what to do.
    pub(crate) fn check_restorable(&self) -> crate::Result<()> {
        if !self.enabled() {
            return Ok(());
        }
        match self.state() {
            Err(error) => Err(crate::RuntimeError::PlanModeRefused(format!(
                "Plan mode cannot restore this branch's state ({error}), so no request is sent rather than dropping its restrictions. Move to another entry with /tree, or fix the session file."
            ))),
            Ok(Some(state)) if state.planning() => match &self.incompatible {
                Some(why) => Err(crate::RuntimeError::PlanModeRefused(format!(
                    "This session is planning, but {why}, so planning cannot be enforced and no request is sent. Start again without that option, or leave planning with /plan off."
                ))),
                None => Ok(()),
            },
            Ok(_) => Ok(()),
        }
    }

    /// Why `/tree` must not move to `leaf` (checked before anything changes): the state
    /// there cannot be restored, or it plans under settings that cannot. `session` is the
    /// caller's locked session.
    pub(crate) fn tree_target_refusal(
        &self,
        session: &SessionManager,
        leaf: Option<&str>,
    ) -> Option<String> {
        if !self.enabled() {
            return None;
        }
        match session.plan_state_at(leaf) {
            Err(error) => Some(format!(
                "That entry's plan-mode state cannot be restored ({error}), so the move was cancelled. Pick another entry."
            )),
            Ok(Some(state)) if state.planning() => self.entry_refusal().map(|why| {
                format!(
                    "That entry is planning, but {why}, so the move was cancelled. Start without that option to go there."
                )
            }),
            Ok(_) => None,
        }
    }

    /// The planning tools and read tools to activate: every registered one of them once
    /// plan mode was used on the branch (the loadout is kept after planning ends).
    pub(crate) fn loadout(&self) -> Vec<&'static str> {
        if !self.enabled() || !matches!(self.state(), Ok(Some(_))) {
            return Vec::new();
        }
        PLANNING_LOADOUT
            .iter()
            .chain(crate::web_tools::WEB_TOOL_NAMES.iter())
            .copied()
            .filter(|name| crate::tool_selection::tool_permitted(&self.selection, name))
            .collect()
    }

    /// `--plan`: planning from the start (also when opening a saved session that is not
    /// planning). Tool settings that cannot plan stop the start.
    pub(crate) fn enter_at_startup(
        &self,
        setup: &crate::agent_session::SessionSetup,
    ) -> crate::Result<()> {
        if !self.enabled() || !setup.extensions.flags.contains_key("plan") {
            return Ok(());
        }
        if let Some(why) = self.entry_refusal() {
            return Err(crate::RuntimeError::Setup(format!(
                "--plan cannot be used here: {why}. Start without that option."
            )));
        }
        let state = self.state().map_err(|error| {
            crate::RuntimeError::Setup(format!(
                "--plan: this session's plan-mode state cannot be restored ({error})."
            ))
        })?;
        let state = state.unwrap_or_default();
        if state.planning() {
            return Ok(());
        }
        self.save(&PlanState {
            mode: knightcode_protocol::plan::PlanMode::Planning,
            draft: state.draft,
            approved: None,
        })?;
        self.append_message(
            PlanMessageKind::Instructions,
            text::instructions(&self.tool_names()),
        )?;
        self.just_entered.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Writes a full snapshot at the leaf.
    fn save(&self, state: &PlanState) -> crate::Result<()> {
        crate::agent_session::lock(&self.session).append_plan_state(state)?;
        Ok(())
    }

    /// Appends a hidden plan-mode message (in context from the next request on).
    fn append_message(&self, kind: PlanMessageKind, text: String) -> crate::Result<()> {
        crate::agent_session::lock(&self.session).append_custom_message(
            PLAN_MODE,
            Content::Text(text),
            false,
            Some(plan::message_details(kind, None)),
        )?;
        Ok(())
    }

    /// Tells the user: through the front end's dialogs when it has them, else on stderr
    /// (print mode).
    async fn notify(&self, message: String, kind: NoticeKind) {
        let dialogs = self.dialogs();
        if dialogs.has_ui() {
            dialogs.notify(&message, kind).await;
        } else {
            lock(&self.notices).push((kind, message));
        }
    }

    /// What to tell a front end without dialogs.
    pub(crate) fn take_notices(&self) -> Vec<(NoticeKind, String)> {
        std::mem::take(&mut lock(&self.notices))
    }

    /// Whether a plan was submitted in the current turn (and forgets it).
    fn take_submitted(&self) -> bool {
        self.submitted.swap(false, Ordering::Relaxed)
    }
}

/// Why `selection` cannot plan: both planning tools must be allowed.
fn incompatibility(selection: &ToolSelection) -> Option<String> {
    if selection.no_tools {
        return Some("--no-tools turns every tool off".to_owned());
    }
    let missing: Vec<&str> = [ASK_USER, SUBMIT_PLAN]
        .into_iter()
        .filter(|name| !crate::tool_selection::tool_permitted(selection, name))
        .collect();
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "the tool settings (--tools / --exclude-tools) leave out {}",
        missing.join(" and ")
    ))
}
