//! Before and around the first frame: the header, the project-trust prompt, the `--resume`
//! picker, and the session-file chores pickers ask for.

use std::path::Path;

use knightcode_runtime::AgentSession;
use knightcode_runtime::SessionSetup;
use knightcode_runtime::SessionTarget;
use knightcode_runtime::Settings;
use knightcode_runtime::TrustStore;
use knightcode_runtime::trust;
use knightcode_runtime::trust::TrustResolution;
use knightcode_tui::Theme;

use super::input::Action;
use super::overlay::Overlay;
use super::overlay::OverlayResult;
use super::ui::Ui;
use crate::error::InteractiveError;
use crate::pickers::SavedTrust;
use crate::pickers::TrustChoice;
use crate::pickers::TrustPrompt;

/// The lines above the transcript: name, version, the main keys, what was loaded.
/// `quietStartup: true` leaves it all out, `"header"` only the name and keys (`--verbose`
/// shows everything either way).
pub fn header(theme: &Theme, session: &AgentSession, verbose: bool) -> Vec<String> {
    let quiet = session.settings().get("quietStartup");
    let quiet_header = !verbose && matches!(quiet, Some(serde_json::Value::Bool(true)));
    if quiet_header {
        return Vec::new();
    }
    let keys_hidden = !verbose && quiet.and_then(serde_json::Value::as_str) == Some("header");
    let mut lines = vec![
        format!(
            "{} {}",
            theme.accent.bold().paint("knightcode"),
            theme.dim.paint(&format!("v{}", env!("CARGO_PKG_VERSION")))
        ),
        theme.dim.paint("esc interrupt · ctrl+c clear · ctrl+c twice / ctrl+d exit · / commands · ! shell · @ files"),
        theme.dim.paint("ctrl+l model · ctrl+p next model · shift+tab thinking · ctrl+o tool output · ctrl+t thinking blocks · ctrl+g editor"),
    ];
    if keys_hidden {
        lines.clear();
    }
    let files = session.context_files();
    if !files.is_empty() {
        let names: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
        lines.push(
            theme
                .dim
                .paint(&format!("Loaded context: {}", names.join(", "))),
        );
    }
    let resources = session.resources();
    let templates: Vec<String> = resources
        .templates
        .iter()
        .map(|t| format!("/{}", t.name))
        .collect();
    if !templates.is_empty() {
        lines.push(
            theme
                .dim
                .paint(&format!("Prompt templates: {}", templates.join(", "))),
        );
    }
    let skills: Vec<&str> = resources.skills.iter().map(|s| s.name.as_str()).collect();
    if !skills.is_empty() {
        lines.push(theme.dim.paint(&format!("Skills: {}", skills.join(", "))));
    }
    let scope = session.scoped_models();
    if !scope.is_empty() {
        let names: Vec<String> = scope
            .iter()
            .map(|s| match s.thinking {
                Some(level) => format!("{}:{}", s.model.id, level.as_str()),
                None => s.model.id.clone(),
            })
            .collect();
        lines.push(theme.dim.paint(&format!(
            "Scoped models (ctrl+p cycles): {}",
            names.join(", ")
        )));
    }
    lines
}

/// Runs the loop with a picker in front until it closes; `None` when it was cancelled or
/// the user quit.
async fn run_modal(ui: &mut Ui, overlay: Overlay) -> Option<OverlayResult> {
    ui.screen.overlay = Some(overlay);
    ui.mark_urgent();
    ui.draw();
    loop {
        let wake = ui.wait().await;
        let actions = ui.on_wake(wake);
        for action in actions {
            match action {
                Action::Picked(OverlayResult::Request(request)) => ui.overlay_request(request),
                Action::Picked(result) => return Some(result),
                Action::Quit | Action::Abort if ui.quitting() => return None,
                _ => {}
            }
        }
        if ui.quitting() {
            return None;
        }
        ui.screen.overlay.as_ref()?;
        ui.draw_if_due();
    }
}

/// The startup trust prompt (`spec/trust-security.md` §2-3): only when the runtime's check
/// order ends in a question (protected resources, nothing decided it yet and
/// `defaultProjectTrust` is "ask"). Returns the setup with the decision, or `None` when the
/// user quit.
pub async fn resolve_trust(
    ui: &mut Ui,
    mut setup: SessionSetup,
) -> Result<Option<SessionSetup>, InteractiveError> {
    let store = TrustStore::load(&setup.agent_dir).unwrap_or_default();
    let global = Settings::load(&setup.agent_dir, &setup.cwd, false);
    // A decision is left to the session start, which makes the same one.
    let TrustResolution::Ask { protected } = trust::resolve(
        &setup.cwd,
        setup.home.as_deref(),
        setup.approve,
        &store,
        global.values().default_project_trust,
    ) else {
        return Ok(Some(setup));
    };
    // The user's own and `-e` extensions hear `project_trust` before anybody is asked; the
    // session keeps the host they loaded in.
    let ahead =
        knightcode_runtime::extensions::ask_extensions_about_trust(&setup, protected.clone())
            .await?;
    if let Some(trusted) = ahead.decided() {
        setup.approve = Some(trusted);
        setup.first_pass = Some(ahead);
        return Ok(Some(setup));
    }
    setup.first_pass = Some(ahead);
    let prompt = TrustPrompt::startup(
        &setup.cwd,
        protected,
        ui.screen.theme.clone(),
        ui.prefs.bindings(),
    );
    let Some(OverlayResult::Trust(choice)) = run_modal(ui, Overlay::Trust(prompt)).await else {
        if ui.quitting() {
            return Ok(None);
        }
        // Escape: nothing is saved and nothing protected loads.
        setup.approve = Some(false);
        return Ok(Some(setup));
    };
    let mut store = store;
    let trusted = apply_trust_choice(&mut store, &setup.cwd, choice);
    setup.approve = Some(trusted);
    Ok(Some(setup))
}

/// Saves (or not) a trust choice; returns whether this session trusts the folder.
fn apply_trust_choice(store: &mut TrustStore, cwd: &Path, choice: TrustChoice) -> bool {
    let save = |store: &mut TrustStore, dir: &Path, value: Option<bool>| {
        // A trust.json that cannot be written only loses the memory of the choice.
        let _ = store.set(dir, value);
    };
    match choice {
        TrustChoice::Trust => {
            save(store, cwd, Some(true));
            true
        }
        TrustChoice::TrustParent(parent) => {
            save(store, &parent, Some(true));
            save(store, cwd, None);
            true
        }
        TrustChoice::TrustSessionOnly => true,
        TrustChoice::DoNotTrust => {
            save(store, cwd, Some(false));
            false
        }
        TrustChoice::DoNotTrustSessionOnly => false,
    }
}

/// The `/trust` selector for the current folder.
pub fn trust_selector(ui: &Ui) -> TrustPrompt {
    let store = TrustStore::load(ui.places.agent_dir()).unwrap_or_default();
    let saved = match store.lookup(ui.places.cwd()) {
        Some((trusted, path)) => SavedTrust::Saved { trusted, path },
        None => SavedTrust::None,
    };
    TrustPrompt::command(
        ui.places.cwd(),
        saved,
        ui.session.trusted(),
        ui.screen.theme.clone(),
        ui.prefs.bindings(),
    )
}

impl Ui {
    /// `/trust`: writes the decision for future runs; this session keeps its state.
    pub fn save_trust(&mut self, choice: TrustChoice) {
        let mut store = match TrustStore::load(self.places.agent_dir()) {
            Ok(store) => store,
            Err(error) => {
                self.error(&format!("Could not read trust.json: {error}"));
                return;
            }
        };
        let cwd = self.places.cwd().to_path_buf();
        let trusted = apply_trust_choice(&mut store, &cwd, choice);
        self.info(&format!(
            "Saved: {} is {}. The decision applies from the next start of knightcode.",
            cwd.display(),
            if trusted { "trusted" } else { "not trusted" }
        ));
    }
}

/// `--continue` / `--session` on a session another process has open: offer to continue in
/// a fork (the seed's "Session ownership"); declining starts a new session in the same
/// folder. Returns the setup and what to say once the session shows, or `None` when the
/// user quit.
pub async fn resolve_owned_session(
    ui: &mut Ui,
    mut setup: SessionSetup,
) -> Result<Option<(SessionSetup, Option<String>)>, InteractiveError> {
    let SessionTarget::Open(path) = &setup.target else {
        return Ok(Some((setup, None)));
    };
    let Some(owner) = knightcode_runtime::sessions::session_owner(path) else {
        return Ok(Some((setup, None)));
    };
    let path = path.clone();
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let overlay = ui.fork_busy_overlay(&path, &owner, "Start a new session instead");
    let (target, notice) = match run_modal(ui, overlay).await {
        Some(OverlayResult::ForkSessionFile(source)) => {
            let notice = format!(
                "Continued {} in a fork: a new session file (the other process keeps the original).",
                source.display()
            );
            let target = SessionTarget::Fork {
                source,
                dir,
                session_id: None,
            };
            (target, notice)
        }
        _ if ui.quitting() => return Ok(None),
        _ => {
            let target = SessionTarget::New {
                dir,
                session_id: None,
            };
            (target, "Started a new session.".to_owned())
        }
    };
    setup.target = target;
    Ok(Some((setup, Some(notice))))
}

/// `--resume`: the picker before anything else; false when the user left without picking.
pub async fn pick_session_at_start(
    ui: &mut Ui,
    session: &mut AgentSession,
) -> Result<bool, InteractiveError> {
    ui.open_session_picker();
    let Some(overlay) = ui.screen.overlay.take() else {
        return Ok(false);
    };
    let Some(OverlayResult::Session(path)) = run_modal(ui, overlay).await else {
        return Ok(false);
    };
    // Owned by another process: offer a fork; declining starts with a new session.
    let opened = match ui.fork_busy_prompt(&path, "Start a new session instead") {
        Some(prompt) => match run_modal(ui, prompt).await {
            Some(OverlayResult::ForkSessionFile(path)) => session
                .fork_session_file(&path)
                .await
                .map(|_| format!("Continued {} in a fork: a new session file (the other process keeps the original).", path.display())),
            _ if ui.quitting() => return Ok(false),
            _ => {
                ui.info("Started a new session.");
                return Ok(true);
            }
        },
        None => session.switch_session(&path).await.map(|_| String::new()),
    };
    match opened {
        Ok(notice) => {
            ui.apply_snapshot(session.snapshot());
            ui.reload_transcript();
            if !notice.is_empty() {
                ui.info(&notice);
            }
        }
        // Taken by another process since the picker looked, say: go on with a new session
        // rather than exit.
        Err(error) => ui.error(&format!("{error}. Started a new session instead.")),
    }
    Ok(true)
}
