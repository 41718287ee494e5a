//! Plan mode's session data (`session-format.md`, "Plan mode snapshots" and
//! CustomMessageEntry): full snapshots in `plan-mode` custom entries, and the hidden
//! `plan-mode` custom messages (instructions, reminders, exit, compaction recovery).
//! Custom entries and messages only, so no new session version.

/// `customType` of the snapshots and of the messages.
pub const PLAN_MODE: &str = "plan-mode";

/// Whether the session is planning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlanMode {
    #[default]
    Off,
    Planning,
}

impl PlanMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Planning => "planning",
        }
    }
}

/// The latest submitted plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanDraft {
    /// 1 for the first submission on a branch; each submission adds one.
    pub revision: u64,
    pub markdown: String,
}

/// One snapshot: the whole state, so the latest on the branch is all a reader needs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PlanState {
    pub mode: PlanMode,
    pub draft: Option<PlanDraft>,
    /// The approved revision: equal to the draft's, and only while off.
    pub approved: Option<u64>,
}

/// Why a stored snapshot cannot be restored. Restoring it anyway would mean guessing, and a
/// wrong guess could drop the planning restrictions, so the session refuses instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MalformedPlanState {
    NotAnObject,
    Mode,
    Draft,
    Approved,
    ApprovedNotDraft { approved: u64, draft: Option<u64> },
    ApprovedWhilePlanning,
}

impl std::fmt::Display for MalformedPlanState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotAnObject => write!(f, "the plan-mode snapshot has no data object"),
            Self::Mode => write!(
                f,
                "the plan-mode snapshot's mode is not \"off\" or \"planning\""
            ),
            Self::Draft => write!(
                f,
                "the plan-mode snapshot's draft needs a positive whole revision and markdown text"
            ),
            Self::Approved => write!(
                f,
                "the plan-mode snapshot's approved revision is not a positive whole number"
            ),
            Self::ApprovedNotDraft { approved, draft } => match draft {
                Some(draft) => write!(
                    f,
                    "the plan-mode snapshot approves revision {approved} but its draft is revision {draft}"
                ),
                None => write!(
                    f,
                    "the plan-mode snapshot approves revision {approved} but has no draft"
                ),
            },
            Self::ApprovedWhilePlanning => {
                write!(
                    f,
                    "the plan-mode snapshot approves a plan while still planning"
                )
            }
        }
    }
}

impl std::error::Error for MalformedPlanState {}

impl PlanState {
    /// The entry's `data`, keys in the seed's order (`mode`, `draft`, `approved`).
    pub fn to_data(&self) -> serde_json::Value {
        let mut data = serde_json::Map::new();
        data.insert("mode".into(), self.mode.as_str().into());
        if let Some(draft) = &self.draft {
            let mut object = serde_json::Map::new();
            object.insert("revision".into(), draft.revision.into());
            object.insert("markdown".into(), draft.markdown.clone().into());
            data.insert("draft".into(), object.into());
        }
        if let Some(approved) = self.approved {
            data.insert("approved".into(), approved.into());
        }
        data.into()
    }

    /// Reads an entry's `data`, checking the seed's rules: an approved revision equals the
    /// draft's and exists only while off.
    pub fn from_data(data: Option<&serde_json::Value>) -> Result<Self, MalformedPlanState> {
        let data = data
            .and_then(serde_json::Value::as_object)
            .ok_or(MalformedPlanState::NotAnObject)?;
        let mode = match data.get("mode").and_then(serde_json::Value::as_str) {
            Some("off") => PlanMode::Off,
            Some("planning") => PlanMode::Planning,
            _ => return Err(MalformedPlanState::Mode),
        };
        let draft = match data.get("draft") {
            None | Some(serde_json::Value::Null) => None,
            Some(draft) => {
                let revision = draft
                    .get("revision")
                    .and_then(serde_json::Value::as_u64)
                    .filter(|r| *r > 0);
                let markdown = draft.get("markdown").and_then(serde_json::Value::as_str);
                match (revision, markdown) {
                    (Some(revision), Some(markdown)) => Some(PlanDraft {
                        revision,
                        markdown: markdown.to_owned(),
                    }),
                    _ => return Err(MalformedPlanState::Draft),
                }
            }
        };
        let approved = match data.get("approved") {
            None | Some(serde_json::Value::Null) => None,
            Some(value) => Some(
                value
                    .as_u64()
                    .filter(|r| *r > 0)
                    .ok_or(MalformedPlanState::Approved)?,
            ),
        };
        if let Some(approved) = approved {
            let draft_revision = draft.as_ref().map(|d| d.revision);
            if draft_revision != Some(approved) {
                return Err(MalformedPlanState::ApprovedNotDraft {
                    approved,
                    draft: draft_revision,
                });
            }
            if mode == PlanMode::Planning {
                return Err(MalformedPlanState::ApprovedWhilePlanning);
            }
        }
        Ok(Self {
            mode,
            draft,
            approved,
        })
    }

    pub fn planning(&self) -> bool {
        self.mode == PlanMode::Planning
    }

    /// The draft's revision, if there is one.
    pub fn revision(&self) -> Option<u64> {
        self.draft.as_ref().map(|d| d.revision)
    }
}

/// `details.kind` of a plan-mode message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanMessageKind {
    /// The planning rules, when planning starts.
    Instructions,
    /// The per-run reminder while planning.
    Reminder,
    /// Planning ended (off or approved).
    Exit,
    /// After a compaction: the rules and draft, or the approved plan, frozen.
    Recovery,
}

impl PlanMessageKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Instructions => "instructions",
            Self::Reminder => "reminder",
            Self::Exit => "exit",
            Self::Recovery => "recovery",
        }
    }
}

/// What a recovery message stands for (`details.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryStatus {
    Planning,
    Approved,
}

impl RecoveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Planning => "planning",
            Self::Approved => "approved",
        }
    }
}

/// A plan-mode message's `details`: `{kind}`, and for a recovery `{kind, id, revision?,
/// status}` with `id` the compaction entry's.
pub fn message_details(
    kind: PlanMessageKind,
    recovery: Option<(&str, Option<u64>, RecoveryStatus)>,
) -> serde_json::Value {
    let mut details = serde_json::Map::new();
    details.insert("kind".into(), kind.as_str().into());
    if let Some((id, revision, status)) = recovery {
        details.insert("id".into(), id.into());
        if let Some(revision) = revision {
            details.insert("revision".into(), revision.into());
        }
        details.insert("status".into(), status.as_str().into());
    }
    details.into()
}
