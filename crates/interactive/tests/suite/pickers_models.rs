//! The model and thinking-level pickers driven by keys.

use crate::common;

use common::*;
use knightcode_ai::Api;
use knightcode_ai::Model;
use knightcode_ai::ThinkingLevel;
use knightcode_interactive::pickers::ModelChoice;
use knightcode_interactive::pickers::ModelPicker;
use knightcode_interactive::pickers::PickerOutcome;
use knightcode_interactive::pickers::ThinkingChoice;
use knightcode_interactive::pickers::ThinkingPicker;
use knightcode_tui::KeyCode;
use knightcode_tui::Theme;
use knightcode_tui::keybindings::Keybindings;

fn model(provider: &str, id: &str, name: &str, context: u64, reasoning: bool) -> Model {
    let mut model = Model::new(provider, id, Api::AnthropicMessages, "http://127.0.0.1:1");
    model.name = name.to_owned();
    model.context_window = context;
    model.reasoning = reasoning;
    model
}

fn models() -> Vec<Model> {
    let mut opus = model(
        "anthropic",
        "claude-opus-4-5",
        "Claude Opus 4.5",
        200_000,
        true,
    );
    opus.input = vec!["text".to_owned(), "image".to_owned()];
    vec![
        model("openai", "gpt-5", "GPT-5", 400_000, true),
        opus,
        model(
            "anthropic",
            "claude-sonnet-4-5",
            "Claude Sonnet 4.5",
            1_000_000,
            true,
        ),
        model("ollama", "qwen3-coder", "Qwen3 Coder", 32_768, false),
    ]
}

fn picker() -> ModelPicker {
    ModelPicker::new(
        models(),
        Some(("anthropic", "claude-sonnet-4-5")),
        Theme::plain(),
        &Keybindings::defaults(),
    )
}

fn press(picker: &mut ModelPicker, keys: &[knightcode_tui::Key]) -> PickerOutcome<ModelChoice> {
    let bindings = Keybindings::defaults();
    let mut outcome = PickerOutcome::Pending;
    for key in keys {
        outcome = picker.handle_key(key, &bindings);
    }
    outcome
}

fn ids(picker: &ModelPicker) -> Vec<&'static str> {
    let all = [
        "gpt-5",
        "claude-opus-4-5",
        "claude-sonnet-4-5",
        "qwen3-coder",
    ];
    picker.listed().iter().map(|&i| all[i]).collect()
}

#[test]
fn renders_the_models_with_the_current_one_first_and_marked() {
    let mut picker = picker();
    insta::assert_snapshot!(render(&mut picker, 80));
}

#[test]
fn renders_at_a_narrow_width() {
    let mut picker = picker();
    insta::assert_snapshot!(render(&mut picker, 40));
}

#[test]
fn current_first_then_by_provider() {
    let picker = picker();
    assert_eq!(
        ids(&picker),
        [
            "claude-sonnet-4-5",
            "claude-opus-4-5",
            "qwen3-coder",
            "gpt-5"
        ]
    );
    assert_eq!(picker.selected_model().unwrap().id, "claude-sonnet-4-5");
}

#[test]
fn typing_filters_fuzzily_and_enter_picks() {
    let mut picker = picker();
    press(&mut picker, &typing("opus"));
    // Best match first (the letters also appear scattered in Sonnet's key).
    assert_eq!(ids(&picker)[0], "claude-opus-4-5");
    assert!(!ids(&picker).contains(&"gpt-5"));
    assert_eq!(
        press(&mut picker, &[plain(KeyCode::Enter)]),
        PickerOutcome::Done(ModelChoice {
            index: 1,
            provider: "anthropic".to_owned(),
            id: "claude-opus-4-5".to_owned(),
            save_default: false,
        })
    );

    // provider/id works too.
    let mut picker = self::picker();
    press(&mut picker, &typing("ollama/q"));
    assert_eq!(ids(&picker), ["qwen3-coder"]);
}

#[test]
fn the_save_key_picks_and_saves_the_default() {
    let mut picker = picker();
    press(&mut picker, &[plain(KeyCode::Down)]);
    assert_eq!(
        press(&mut picker, &[ctrl('s')]),
        PickerOutcome::Done(ModelChoice {
            index: 1,
            provider: "anthropic".to_owned(),
            id: "claude-opus-4-5".to_owned(),
            save_default: true,
        })
    );
}

#[test]
fn up_wraps_and_one_escape_cancels_even_with_a_filter() {
    let mut picker = picker();
    press(&mut picker, &[plain(KeyCode::Up)]);
    assert_eq!(picker.selected_model().unwrap().id, "gpt-5");
    press(&mut picker, &typing("zzz"));
    assert!(ids(&picker).is_empty());
    assert!(render(&mut picker, 80).contains("No matching models"));
    assert_eq!(
        press(&mut picker, &[plain(KeyCode::Enter)]),
        PickerOutcome::Pending
    );
    // The hint says "escape cancel": one press closes, as in pi (it used to clear the
    // filter first).
    assert_eq!(
        press(&mut picker, &[plain(KeyCode::Escape)]),
        PickerOutcome::Cancel
    );
}

#[test]
fn scoped_models_come_first_and_tab_shows_all() {
    let mut picker = picker();
    picker.set_scoped(&[("openai", "gpt-5"), ("anthropic", "claude-sonnet-4-5")]);
    assert_eq!(ids(&picker), ["gpt-5", "claude-sonnet-4-5"]);
    assert_eq!(picker.selected_model().unwrap().id, "claude-sonnet-4-5");
    let screen = render(&mut picker, 80);
    assert!(screen.contains("Scope: all | scoped"), "{screen}");
    assert!(screen.contains("tab scope"), "{screen}");
    assert!(!screen.contains("Only showing models"), "{screen}");
    press(&mut picker, &[plain(KeyCode::Tab)]);
    assert_eq!(ids(&picker).len(), 4);
    press(&mut picker, &[plain(KeyCode::Tab)]);
    assert_eq!(ids(&picker).len(), 2);
}

#[test]
fn an_initial_search_and_a_load_error() {
    let mut picker = picker();
    picker.set_search("gpt");
    assert_eq!(ids(&picker), ["gpt-5"]);
    picker.set_error("models.json: line 3: expected a string");
    let screen = render(&mut picker, 80);
    assert!(screen.contains("> gpt"), "{screen}");
    assert!(
        screen.contains("models.json: line 3: expected a string"),
        "{screen}"
    );
}

#[test]
fn a_long_list_scrolls() {
    let many: Vec<Model> = (0..30)
        .map(|i| model("local", &format!("model-{i:02}"), "Local", 8_192, false))
        .collect();
    let mut picker = ModelPicker::new(many, None, Theme::plain(), &Keybindings::defaults());
    picker.set_max_rows(5);
    press(
        &mut picker,
        &[plain(KeyCode::PageDown), plain(KeyCode::PageDown)],
    );
    let screen = render(&mut picker, 60);
    assert!(screen.contains("→ model-10"), "{screen}");
    assert!(screen.contains("(11/30)"), "{screen}");
    assert!(!screen.contains("model-00"), "{screen}");
}

fn thinking() -> ThinkingPicker {
    ThinkingPicker::new(
        vec![
            ThinkingLevel::Off,
            ThinkingLevel::Minimal,
            ThinkingLevel::Low,
            ThinkingLevel::Medium,
            ThinkingLevel::High,
        ],
        ThinkingLevel::Medium,
        Theme::plain(),
        &Keybindings::defaults(),
    )
}

#[test]
fn renders_the_thinking_levels() {
    let mut picker = thinking();
    insta::assert_snapshot!("thinking_levels", render(&mut picker, 80));
    // Too narrow for descriptions: levels only.
    insta::assert_snapshot!("thinking_levels_narrow", render(&mut picker, 30));
}

#[test]
fn thinking_starts_on_the_current_level_and_wraps() {
    let mut picker = thinking();
    let bindings = Keybindings::defaults();
    assert_eq!(picker.selected_level(), Some(ThinkingLevel::Medium));
    picker.handle_key(&plain(KeyCode::Down), &bindings);
    picker.handle_key(&plain(KeyCode::Down), &bindings);
    assert_eq!(picker.selected_level(), Some(ThinkingLevel::Off));
    assert_eq!(
        picker.handle_key(&plain(KeyCode::Enter), &bindings),
        PickerOutcome::Done(ThinkingChoice {
            level: ThinkingLevel::Off,
            save_default: false
        })
    );
    picker.handle_key(&plain(KeyCode::Up), &bindings);
    assert_eq!(
        picker.handle_key(&ctrl('d'), &bindings),
        PickerOutcome::Done(ThinkingChoice {
            level: ThinkingLevel::High,
            save_default: true
        })
    );
    assert_eq!(
        picker.handle_key(&plain(KeyCode::Escape), &bindings),
        PickerOutcome::Cancel
    );
}

fn scope_picker(enabled: &[(&str, &str)]) -> knightcode_interactive::pickers::ScopePicker {
    let enabled: Vec<(String, String)> = enabled
        .iter()
        .map(|(p, i)| ((*p).to_owned(), (*i).to_owned()))
        .collect();
    knightcode_interactive::pickers::ScopePicker::new(
        models(),
        &enabled,
        Theme::plain(),
        &Keybindings::defaults(),
    )
}

fn press_scope(
    picker: &mut knightcode_interactive::pickers::ScopePicker,
    keys: &[knightcode_tui::Key],
) -> PickerOutcome<knightcode_interactive::pickers::ScopeChoice> {
    let bindings = Keybindings::defaults();
    let mut outcome = PickerOutcome::Pending;
    for key in keys {
        outcome = picker.handle_key(key, &bindings);
    }
    outcome
}

fn scoped(
    outcome: PickerOutcome<knightcode_interactive::pickers::ScopeChoice>,
) -> (Vec<String>, bool) {
    match outcome {
        PickerOutcome::Done(choice) => (
            choice
                .models
                .iter()
                .map(|(p, i)| format!("{p}/{i}"))
                .collect(),
            choice.save,
        ),
        other => panic!("expected a choice, got {other:?}"),
    }
}

#[test]
fn the_scope_picker_toggles_orders_and_saves() {
    let mut picker = scope_picker(&[("anthropic", "claude-sonnet-4-5")]);
    insta::assert_snapshot!("scope_picker", render(&mut picker, 60));
    // Escape without a change closes without a choice.
    assert_eq!(
        press_scope(&mut picker, &[plain(KeyCode::Escape)]),
        PickerOutcome::Cancel
    );

    // Enabled first: sonnet; then gpt-5 (row 2) is enabled and moved above it.
    let mut picker = scope_picker(&[("anthropic", "claude-sonnet-4-5")]);
    press_scope(&mut picker, &[plain(KeyCode::Down), plain(KeyCode::Enter)]);
    let alt_up = with(KeyCode::Up, knightcode_tui::Modifiers::ALT);
    press_scope(&mut picker, &[alt_up]);
    assert_eq!(
        scoped(press_scope(&mut picker, &[plain(KeyCode::Escape)])),
        (
            vec![
                "openai/gpt-5".to_owned(),
                "anthropic/claude-sonnet-4-5".to_owned()
            ],
            false
        )
    );

    // Ctrl+P toggles the whole provider; a search narrows ctrl+a / ctrl+x.
    let mut picker = scope_picker(&[]);
    press_scope(&mut picker, &typing("qwen"));
    press_scope(&mut picker, &[ctrl('a')]);
    for _ in 0.."qwen".len() {
        press_scope(&mut picker, &[plain(KeyCode::Backspace)]);
    }
    press_scope(&mut picker, &typing("opus"));
    press_scope(&mut picker, &[ctrl('p')]);
    assert_eq!(
        scoped(press_scope(&mut picker, &[ctrl('s')])),
        (
            vec![
                "ollama/qwen3-coder".to_owned(),
                "anthropic/claude-opus-4-5".to_owned(),
                "anthropic/claude-sonnet-4-5".to_owned()
            ],
            true
        )
    );

    // Ctrl+X clears: no scope.
    let mut picker = scope_picker(&[("openai", "gpt-5")]);
    press_scope(&mut picker, &[ctrl('x')]);
    assert_eq!(
        scoped(press_scope(&mut picker, &[ctrl('s')])),
        (Vec::new(), true)
    );
}
