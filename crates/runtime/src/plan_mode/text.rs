//! What plan mode tells the model and the user. Our own wording of the rules in
//! `mcp-codemode-virtual.md` §6; the model reads the instructions inside `<plan_mode>` tags.

/// The rules, naming only the tools the session has.
pub(super) fn instructions(tools: &[String]) -> String {
    format!(
        "<plan_mode>\nYou are planning, not implementing. Investigate the task and the code, then submit a complete plan with submit_plan.\n\
- Use only these tools: {}. Every other tool is blocked while planning.\n\
- Run only shell commands that inspect (list, read, search, build or test without changing files).\n\
- When a trade-off needs the user's decision, ask with ask_user: two to four choices, recommended first.\n\
- The plan is Markdown with: the goal; the specific changes, with file paths; the commands that verify them; and an Assumptions section with every decision you made without asking.\n\
- Each submit_plan replaces the whole draft. Do not start implementing: the user approves the plan first.\n</plan_mode>",
        tools.join(", ")
    )
}

/// The per-run reminder while planning.
pub(super) fn reminder(revision: Option<u64>) -> String {
    match revision {
        Some(revision) => format!(
            "<plan_mode>\nStill planning (draft revision {revision} submitted). Treat this message as feedback on the plan: investigate as needed, then submit the complete revised plan with submit_plan. Do not edit files.\n</plan_mode>"
        ),
        None => "<plan_mode>\nStill planning. Investigate with the read-only tools, then submit the complete plan with submit_plan. Do not edit files.\n</plan_mode>".to_owned(),
    }
}

/// Planning ended without approval.
pub(super) fn exit() -> String {
    "<plan_mode>\nPlanning has ended. The planning restrictions no longer apply; follow the user's next instructions.\n</plan_mode>".to_owned()
}

/// Planning ended with an approved revision.
pub(super) fn approved(revision: u64) -> String {
    format!(
        "<plan_mode>\nThe user approved plan revision {revision}. The planning restrictions no longer apply: implement the approved plan.\n</plan_mode>"
    )
}

/// The prompt that starts implementing an approved plan.
pub(super) fn implement(revision: u64, markdown: &str, note: Option<&str>) -> String {
    let mut text = format!(
        "Implement the approved plan (revision {revision}).\n\n<approved_plan>\n{markdown}\n</approved_plan>"
    );
    if let Some(note) = note.filter(|n| !n.trim().is_empty()) {
        text.push_str("\n\nNote from the user: ");
        text.push_str(note.trim());
    }
    text
}

/// After a compaction: what the summary may have lost, frozen when appended.
pub(super) fn recovery_planning(tools: &[String], draft: Option<(u64, &str)>) -> String {
    let mut text = instructions(tools);
    if let Some((revision, markdown)) = draft {
        text.push_str(&format!(
            "\n<plan_mode>\nThe current draft (revision {revision}):\n\n{markdown}\n</plan_mode>"
        ));
    }
    text
}

/// After a compaction: the approved plan, pinned.
pub(super) fn recovery_approved(revision: u64, markdown: &str) -> String {
    format!(
        "<plan_mode>\nThe user approved plan revision {revision}; it is being implemented:\n\n{markdown}\n</plan_mode>"
    )
}

/// A `/plan` command while a run goes on or messages wait (the reference's text).
pub(super) const BUSY: &str = "Finish or interrupt the current turn first.";
pub(super) const NO_DRAFT: &str = "No plan submitted yet; send a task to continue planning.";
pub(super) const NOTHING_TO_APPROVE: &str = "No plan to approve.";
pub(super) const ENTERED: &str = "Plan mode on: the model investigates and submits a plan; edits and other tools are blocked. /plan off leaves it.";
pub(super) const LEFT: &str = "Plan mode off; the draft is kept (/plan approve implements it).";
pub(super) const NOT_PLANNING: &str = "Plan mode is already off.";
