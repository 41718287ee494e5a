//! [`SessionMirror`]: what the app knows of the session, as the session's task last
//! reported it (snapshots, replies and events). The session itself runs in that task; this
//! copy is only read, and replaced whole when a new snapshot comes, so the screen never
//! shows half of one state and half of another.

use std::collections::HashMap;
use std::sync::Arc;

use knightcode_ai::Model;
use knightcode_ai::ThinkingLevel;
use knightcode_runtime::AgentSession;
use knightcode_runtime::actor::SessionSnapshot;
use knightcode_runtime::agent_session::operations::SessionView;
use knightcode_runtime::resources::Resources;
use knightcode_runtime::sessions::SessionLibrary;

#[derive(Default)]
pub struct SessionMirror {
    view: Option<SessionView>,
    /// Models with credentials (the model picker and Ctrl+P), refreshed when idle.
    models: Vec<Model>,
    current_model: Option<Model>,
    thinking_levels: Vec<ThinkingLevel>,
    /// The `--models` scope as (provider, id): the model picker starts on these.
    scoped_models: Vec<(String, String)>,
    /// `branchSummary.skipPrompt`, as of the last snapshot.
    skip_branch_summary_prompt: bool,
    /// Session files and the open session's tree, labels and name, through the runtime
    /// (valid across /new, /resume, /fork: the open session is swapped inside it).
    library: Option<SessionLibrary>,
    /// Whether this session loaded the project's protected resources.
    trusted: bool,
    /// Whether the built-in plan mode answers `/plan` (completion offers it then).
    builtin_plan_mode: bool,
    /// The session's resources as last loaded (completion is rebuilt from them).
    resources: Option<Arc<Resources>>,
    /// A prompt runs (from the moment it is sent until the run settles or is refused).
    running: bool,
    /// A compaction's or a left branch's summary is being written (esc cancels it).
    compacting: bool,
    /// `!` commands running, by the id their output events carry: the card they fill.
    bash_cards: HashMap<String, usize>,
}

impl SessionMirror {
    /// What a started session says before it moves into its task.
    pub fn attach(&mut self, session: &AgentSession) {
        self.library = Some(session.library());
        self.trusted = session.trust().trusted;
        self.builtin_plan_mode = session.builtin_plan_mode();
        self.resources = Some(Arc::clone(session.resources()));
    }

    /// Takes up a snapshot whole; returns its thinking level.
    pub fn apply(&mut self, snapshot: SessionSnapshot) -> ThinkingLevel {
        let SessionSnapshot {
            view,
            models,
            scoped_models,
            model,
            thinking,
            thinking_levels,
            skip_branch_summary_prompt,
        } = snapshot;
        self.skip_branch_summary_prompt = skip_branch_summary_prompt;
        self.models = models;
        self.scoped_models = scoped_models;
        self.current_model = (!model.is_unselected()).then_some(model);
        self.thinking_levels = thinking_levels;
        self.view = Some(view);
        thinking
    }

    /// `/reload` loaded the session's resources again.
    pub fn set_resources(&mut self, resources: &Arc<Resources>) {
        self.resources = Some(Arc::clone(resources));
    }

    pub fn view(&self) -> Option<&SessionView> {
        self.view.as_ref()
    }

    pub fn models(&self) -> &[Model] {
        &self.models
    }

    pub fn current_model(&self) -> Option<&Model> {
        self.current_model.as_ref()
    }

    pub fn thinking_levels(&self) -> &[ThinkingLevel] {
        &self.thinking_levels
    }

    pub fn scoped_models(&self) -> &[(String, String)] {
        &self.scoped_models
    }

    pub fn skip_branch_summary_prompt(&self) -> bool {
        self.skip_branch_summary_prompt
    }

    pub fn library(&self) -> Option<&SessionLibrary> {
        self.library.as_ref()
    }

    pub fn trusted(&self) -> bool {
        self.trusted
    }

    pub fn builtin_plan_mode(&self) -> bool {
        self.builtin_plan_mode
    }

    pub fn resources(&self) -> Option<&Arc<Resources>> {
        self.resources.as_ref()
    }

    pub fn running(&self) -> bool {
        self.running
    }

    /// A prompt was sent (a second Enter before the session answers steers it), or the
    /// run ended: settled, refused, handled without one, or the task is gone.
    pub fn set_running(&mut self, running: bool) {
        self.running = running;
    }

    pub fn compacting(&self) -> bool {
        self.compacting
    }

    /// A compaction or a branch summary started or ended.
    pub fn set_compacting(&mut self, compacting: bool) {
        self.compacting = compacting;
    }

    /// A `!` command started, filling `card`.
    pub fn bash_started(&mut self, id: String, card: usize) {
        self.bash_cards.insert(id, card);
    }

    /// The card the `!` command `id` fills, while it runs.
    pub fn bash_card(&self, id: &str) -> Option<usize> {
        self.bash_cards.get(id).copied()
    }

    pub fn bash_ended(&mut self, id: &str) {
        self.bash_cards.remove(id);
    }

    /// Whether a `!` command runs.
    pub fn bash_running(&self) -> bool {
        !self.bash_cards.is_empty()
    }
}
