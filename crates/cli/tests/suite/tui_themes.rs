//! Themes in a real pseudo-terminal: a theme file in pi's format picked by the `theme`
//! setting or `--theme` + `--use-theme` colours the screen, and an unknown name falls back
//! to dark with a warning listing the themes there are; an extension's `resources_discover`
//! adds themes too.

use crate::tui_common;

/// The built-in dark theme (pi's own file) renamed, with `thinkingOff` (the editor's border
/// for a model without reasoning) set to `#123456`.
fn ocean() -> String {
    let dark =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../resources/themes/dark.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dark).unwrap()).unwrap();
    json["name"] = "ocean".into();
    json["vars"]["deep"] = "#123456".into();
    json["colors"]["thinkingOff"] = "deep".into();
    serde_json::to_string_pretty(&json).unwrap()
}

const OCEAN: vt100::Color = vt100::Color::Rgb(0x12, 0x34, 0x56);

fn border(tui: &tui_common::Tui) -> Option<vt100::Color> {
    tui.color_of(&"─".repeat(100))
}

#[test]
fn the_theme_setting_picks_a_discovered_theme() {
    let sandbox = tui_common::sandbox(vec![]);
    std::fs::create_dir_all(sandbox.agent.join("themes")).unwrap();
    std::fs::write(sandbox.agent.join("themes/ocean.json"), ocean()).unwrap();
    std::fs::write(sandbox.agent.join("settings.json"), r#"{"theme": "ocean"}"#).unwrap();
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    assert_eq!(border(&tui), Some(OCEAN), "{}", tui.screen());
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn use_theme_picks_a_theme_file_from_the_command_line() {
    let sandbox = tui_common::sandbox(vec![]);
    let file = sandbox.root.path().join("ocean.json");
    std::fs::write(&file, ocean()).unwrap();
    let mut tui = sandbox.spawn(
        &[
            "--no-themes",
            "--theme",
            file.to_str().unwrap(),
            "--use-theme",
            "ocean",
        ],
        100,
        30,
    );
    tui.wait_for_text("mock-model");
    assert_eq!(border(&tui), Some(OCEAN), "{}", tui.screen());
    let screen = tui.screen();
    assert!(!screen.contains("not available"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn a_theme_an_extension_discovers_can_be_used() {
    let sandbox = tui_common::sandbox(vec![]);
    let file = sandbox.root.path().join("ocean.json");
    std::fs::write(&file, ocean()).unwrap();
    let extension = sandbox.root.path().join("themed.ts");
    std::fs::write(
        &extension,
        format!(
            "export default function (pi) {{ pi.on(\"resources_discover\", () => ({{ themePaths: [{:?}] }})); }}\n",
            file.to_str().unwrap()
        ),
    )
    .unwrap();
    let mut tui = sandbox.spawn(
        &["-e", extension.to_str().unwrap(), "--use-theme", "ocean"],
        100,
        30,
    );
    tui.wait_for_text("mock-model");
    assert_eq!(border(&tui), Some(OCEAN), "{}", tui.screen());
    let screen = tui.screen();
    assert!(!screen.contains("not available"), "{screen}");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn an_unknown_theme_warns_and_keeps_dark() {
    let sandbox = tui_common::sandbox(vec![]);
    std::fs::create_dir_all(sandbox.agent.join("themes")).unwrap();
    std::fs::write(sandbox.agent.join("themes/ocean.json"), ocean()).unwrap();
    std::fs::write(
        sandbox.agent.join("themes/broken.json"),
        r#"{"name": "broken", "colors": {}}"#,
    )
    .unwrap();
    let mut tui = sandbox.spawn(&["--use-theme", "nope"], 200, 40);
    tui.wait_for_text("Available themes: dark, light, ocean");
    let screen = tui.wait_for_text("Theme \"nope\" not found; using dark.");
    // The broken file's error (the reference's words) scrolled up with its long list.
    let history = tui.history().join("\n");
    assert!(
        history.contains("Missing required color tokens:") && history.contains("  - accent"),
        "{history}"
    );
    // The built-in dark theme's border (thinkingOff).
    assert_eq!(
        tui.color_of(&"─".repeat(200)),
        Some(vt100::Color::Idx(240)),
        "{screen}"
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn the_html_export_uses_the_themes_export_colours() {
    let sandbox = tui_common::sandbox(vec![knightcode_testkit::ScriptedReply::text(
        "Light answer.",
    )]);
    let mut tui = sandbox.spawn(&["--use-theme", "light"], 160, 40);
    tui.wait_for_text("mock-model");
    tui.submit("Question");
    tui.wait_for_text("Light answer.");
    tui.submit("/export page.html");
    tui.wait_for_text("Session exported to:");
    let page = std::fs::read_to_string(sandbox.project.join("page.html")).unwrap();
    // light.json's `export` section and its accent (`teal`, a variable).
    assert!(page.contains("--page-bg: #f8f8f8;"), "no page colour");
    assert!(page.contains("--card-bg: #ffffff;"), "no card colour");
    assert!(page.contains("--info-bg: #fffae6;"), "no info colour");
    assert!(page.contains("--accent: #5a8080;"), "no accent");
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn reload_reads_an_edited_theme_file_again() {
    let sandbox = tui_common::sandbox(vec![]);
    std::fs::create_dir_all(sandbox.agent.join("themes")).unwrap();
    let file = sandbox.agent.join("themes/ocean.json");
    std::fs::write(&file, ocean()).unwrap();
    let mut tui = sandbox.spawn(&["--use-theme", "ocean"], 100, 30);
    tui.wait_for_text("mock-model");
    assert_eq!(border(&tui), Some(OCEAN), "{}", tui.screen());
    std::fs::write(&file, ocean().replace("#123456", "#654321")).unwrap();
    tui.submit("/reload");
    tui.wait_for_text("Reloaded keybindings");
    assert_eq!(
        border(&tui),
        Some(vt100::Color::Rgb(0x65, 0x43, 0x21)),
        "{}",
        tui.screen()
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn editing_the_active_theme_file_redraws_in_its_new_colours() {
    let sandbox = tui_common::sandbox(vec![]);
    std::fs::create_dir_all(sandbox.agent.join("themes")).unwrap();
    let file = sandbox.agent.join("themes/ocean.json");
    std::fs::write(&file, ocean()).unwrap();
    std::fs::write(sandbox.agent.join("settings.json"), r#"{"theme": "ocean"}"#).unwrap();
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    assert_eq!(border(&tui), Some(OCEAN), "{}", tui.screen());
    // Longer, so the change shows even within the file system's timestamp granularity.
    std::fs::write(&file, ocean().replace("#123456", "#654321") + "\n").unwrap();
    tui.wait_for_color(&"─".repeat(100), vt100::Color::Rgb(0x65, 0x43, 0x21));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

#[test]
fn without_truecolor_theme_colours_use_the_256_colour_palette() {
    let sandbox = tui_common::sandbox(vec![]);
    std::fs::create_dir_all(sandbox.agent.join("themes")).unwrap();
    std::fs::write(sandbox.agent.join("themes/ocean.json"), ocean()).unwrap();
    std::fs::write(sandbox.agent.join("settings.json"), r#"{"theme": "ocean"}"#).unwrap();
    let mut tui = sandbox.spawn_with_env(
        &[],
        &[("COLORTERM", ""), ("TERM", "screen-256color")],
        100,
        30,
    );
    tui.wait_for_text("mock-model");
    // #123456's nearest palette entry.
    assert_eq!(
        border(&tui),
        Some(vt100::Color::Idx(23)),
        "{}",
        tui.screen()
    );
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}

/// Context switches of every thread of `pid` so far.
fn context_switches(pid: u32) -> u64 {
    let mut total = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let status =
            std::fs::read_to_string(task.unwrap().path().join("status")).unwrap_or_default();
        for line in status.lines() {
            if let Some(value) = line
                .strip_prefix("voluntary_ctxt_switches:")
                .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
            {
                total += value.trim().parse::<u64>().unwrap_or(0);
            }
        }
    }
    total
}

#[test]
fn a_watched_theme_file_wakes_nothing_while_idle() {
    let sandbox = tui_common::sandbox(vec![]);
    std::fs::create_dir_all(sandbox.agent.join("themes")).unwrap();
    let file = sandbox.agent.join("themes/ocean.json");
    std::fs::write(&file, ocean()).unwrap();
    std::fs::write(sandbox.agent.join("settings.json"), r#"{"theme": "ocean"}"#).unwrap();
    let mut tui = sandbox.spawn(&[], 100, 30);
    tui.wait_for_text("mock-model");
    assert_eq!(border(&tui), Some(OCEAN), "{}", tui.screen());
    let pid = tui.pid();
    // Start-up work (grammars, the first frames) settles within a few windows.
    let window = std::time::Duration::from_millis(1000);
    let mut woke = u64::MAX;
    for _ in 0..10 {
        let before = context_switches(pid);
        // A measuring window, not a synchronisation: a poll of the file (4 a second, as
        // before inotify) would wake the process within it.
        std::thread::sleep(window);
        woke = context_switches(pid) - before;
        if woke == 0 {
            break;
        }
    }
    assert_eq!(woke, 0, "wake-ups in an idle second");
    // The watch still works after the quiet: an edit redraws.
    std::fs::write(&file, ocean().replace("#123456", "#654321") + "\n").unwrap();
    tui.wait_for_color(&"─".repeat(100), vt100::Color::Rgb(0x65, 0x43, 0x21));
    tui.send("\x04");
    assert_eq!(tui.wait_exit(), 0);
}
