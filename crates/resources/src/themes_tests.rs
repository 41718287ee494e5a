#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

const DARK: &str = include_str!("../themes/dark.json");

/// The built-in dark theme with its name changed and `edit` applied to its JSON.
fn variant(name: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut json: Value = serde_json::from_str(DARK).unwrap();
    json["name"] = Value::String(name.to_owned());
    edit(&mut json);
    serde_json::to_string_pretty(&json).unwrap()
}

fn write(dir: &Path, file: &str, text: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn builtins_are_dark_and_light_with_every_role() {
    let themes = builtin();
    let names: Vec<&str> = themes.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["dark", "light"]);
    for theme in &themes {
        for role in COLOR_ROLES {
            assert!(
                theme.colors.contains_key(*role),
                "{} lacks {role}",
                theme.name
            );
        }
    }
    let dark = &themes[0];
    // `"accent": "accent"` goes through `vars`; `""` is the terminal's colour.
    assert_eq!(dark.color("accent"), ThemeColor::Rgb(0x8a, 0xbe, 0xb7));
    assert_eq!(dark.color("text"), ThemeColor::Default);
    assert_eq!(dark.export["pageBg"], ThemeColor::Rgb(0x18, 0x18, 0x1e));
}

#[test]
fn vars_chain_and_indexes_resolve() {
    let text = variant("chain", |json| {
        json["vars"]["base"] = Value::from(33);
        json["vars"]["alias"] = Value::from("base");
        json["vars"]["alias2"] = Value::from("alias");
        json["colors"]["accent"] = Value::from("alias2");
        json["colors"]["border"] = Value::from(200);
        json["colors"]["error"] = Value::from("#FF0010");
    });
    let theme = parse(&text, None).unwrap();
    assert_eq!(theme.color("accent"), ThemeColor::Index(33));
    assert_eq!(theme.color("border"), ThemeColor::Index(200));
    assert_eq!(theme.color("error"), ThemeColor::Rgb(255, 0, 16));
}

#[test]
fn missing_roles_are_named_sorted() {
    let text = variant("holes", |json| {
        let colors = json["colors"].as_object_mut().unwrap();
        colors.remove("mdLink");
        colors.remove("accent");
    });
    let error = parse(&text, Some(Path::new("/t/holes.json"))).unwrap_err();
    assert_eq!(
        error,
        "Invalid theme \"/t/holes.json\":\n\nMissing required color tokens:\n  - accent\n  - mdLink\n\n\
         Please add these colors to your theme's \"colors\" object.\n\
         See the built-in themes (dark.json, light.json) for reference values."
    );
}

#[test]
fn each_kind_of_bad_value_is_an_error_naming_where() {
    let cases: Vec<(String, &str)> = vec![
        ("{ not json".to_owned(), "Failed to parse theme x.json"),
        ("[]".to_owned(), "/: must be object"),
        (
            variant("n", |j| {
                j.as_object_mut().unwrap().remove("name");
            }),
            "must have required property 'name'",
        ),
        (variant("a/b", |_| {}), "/name: must not contain '/'"),
        (
            variant("n", |j| {
                j.as_object_mut().unwrap().remove("colors");
            }),
            "must have required property 'colors'",
        ),
        (
            variant("n", |j| j["colors"]["accent"] = Value::from(256)),
            "/colors/accent: must be string or integer 0-255",
        ),
        (
            variant("n", |j| j["colors"]["accent"] = Value::from(true)),
            "/colors/accent: must be string or integer 0-255",
        ),
        (
            variant("n", |j| j["vars"]["cyan"] = Value::from(-1)),
            "/vars/cyan: must be string or integer 0-255",
        ),
        (
            variant("n", |j| j["export"]["pageBg"] = Value::Null),
            "/export/pageBg: must be string or integer 0-255",
        ),
        (
            variant("n", |j| j["colors"]["accent"] = Value::from("nosuchvar")),
            "Variable reference not found: nosuchvar",
        ),
        (
            variant("n", |j| {
                j["vars"]["a"] = Value::from("b");
                j["vars"]["b"] = Value::from("a");
                j["colors"]["accent"] = Value::from("a");
            }),
            "Circular variable reference detected: a",
        ),
        (
            variant("n", |j| j["colors"]["accent"] = Value::from("#12345")),
            "Invalid hex color: #12345",
        ),
    ];
    for (text, expected) in cases {
        let error = parse(&text, Some(Path::new("x.json"))).unwrap_err();
        assert!(error.contains(expected), "{expected:?} not in {error:?}");
    }
}

fn config(root: &Path) -> ThemeConfig {
    ThemeConfig {
        cwd: root.join("project"),
        agent_dir: root.join("agent"),
        home: Some(root.to_path_buf()),
        trusted: true,
        ..ThemeConfig::default()
    }
}

#[test]
fn discovery_order_collisions_and_trust() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    write(
        &root.join("agent/themes"),
        "ocean.json",
        &variant("ocean", |_| {}),
    );
    write(&root.join("agent/themes"), "notes.txt", "not a theme");
    let project = write(
        &root.join("project/.knightcode/themes"),
        "ocean.json",
        &variant("ocean", |j| j["colors"]["accent"] = Value::from(1)),
    );
    write(
        &root.join("project/.knightcode/themes"),
        "forest.json",
        &variant("forest", |_| {}),
    );
    let cli = write(&root.join("cli"), "mine.json", &variant("mine", |_| {}));
    write(
        &root.join("agent/extra"),
        "dusk.json",
        &variant("dusk", |_| {}),
    );
    write(&root.join("agent/themes"), "bad.json", "{");
    let dark_again = write(&root.join("cli2"), "dark.json", &variant("dark", |_| {}));

    let mut cfg = config(root);
    cfg.cli = vec![
        cli.to_string_lossy().into_owned(),
        dark_again.to_string_lossy().into_owned(),
        root.join("missing.json").to_string_lossy().into_owned(),
    ];
    cfg.user_settings = vec!["extra".to_owned()];
    let themes = Themes::load(&cfg);
    assert_eq!(
        themes.names(),
        ["dark", "dusk", "forest", "light", "mine", "ocean"]
    );
    // The project's ocean came first.
    assert_eq!(
        themes.get("ocean").unwrap().path.as_deref(),
        Some(project.as_path())
    );
    assert_eq!(
        themes.get("ocean").unwrap().color("accent"),
        ThemeColor::Index(1)
    );
    let kinds: Vec<String> = themes
        .diagnostics
        .iter()
        .map(|d| match &d.kind {
            DiagnosticKind::Collision { name, .. } => format!("collision {name}"),
            DiagnosticKind::Warning => format!("warning {}", d.message),
            DiagnosticKind::Error => {
                format!("error {}", d.message.lines().next().unwrap_or(""))
            }
        })
        .collect();
    assert_eq!(kinds.len(), 4, "{kinds:?}");
    assert!(kinds.contains(&"collision dark".to_owned()), "{kinds:?}");
    assert!(kinds.contains(&"collision ocean".to_owned()), "{kinds:?}");
    assert!(
        kinds.contains(&"warning theme path does not exist".to_owned()),
        "{kinds:?}"
    );
    assert!(
        kinds
            .iter()
            .any(|k| k.starts_with("error Failed to parse theme")),
        "{kinds:?}"
    );

    // An untrusted project's themes do not load.
    let mut untrusted = config(root);
    untrusted.trusted = false;
    let themes = Themes::load(&untrusted);
    assert!(themes.get("forest").is_none());
    assert!(
        themes
            .get("ocean")
            .unwrap()
            .path
            .as_ref()
            .unwrap()
            .starts_with(root.join("agent"))
    );

    // `--no-themes` keeps the `--theme` paths only.
    let mut none = config(root);
    none.no_themes = true;
    none.cli = vec![root.join("cli").to_string_lossy().into_owned()];
    let themes = Themes::load(&none);
    assert_eq!(themes.names(), ["dark", "light", "mine"]);
}

#[test]
fn pi_theme_files_load_unchanged() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("themes");
    std::fs::create_dir_all(&dir).unwrap();
    let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../scripts/pi/node_modules/@mariozechner/pi-coding-agent/dist/modes/interactive/theme",
    );
    for file in ["dark.json", "light.json"] {
        // The reference's install is not in every checkout; our copies are its files.
        let vendored = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("themes")
            .join(file);
        let text = std::fs::read_to_string(reference.join(file))
            .or_else(|_| std::fs::read_to_string(vendored))
            .unwrap();
        let renamed = text.replacen(
            &format!("\"name\": \"{}\"", file.trim_end_matches(".json")),
            &format!("\"name\": \"pi-{}\"", file.trim_end_matches(".json")),
            1,
        );
        std::fs::write(dir.join(file), renamed).unwrap();
    }
    let mut cfg = config(root.path());
    cfg.cli = vec![dir.to_string_lossy().into_owned()];
    let themes = Themes::load(&cfg);
    assert!(themes.diagnostics.is_empty(), "{:?}", themes.diagnostics);
    assert!(themes.get("pi-dark").is_some(), "{:?}", themes.names());
}

#[test]
fn selection_follows_the_request_and_falls_back_to_dark() {
    let themes = Themes {
        themes: builtin(),
        diagnostics: Vec::new(),
    };
    let pick = |name: Option<&str>, appearance| themes.select(name, appearance);
    assert_eq!(pick(Some("light"), Appearance::Dark).0.name, "light");
    assert_eq!(pick(None, Appearance::Light).0.name, "light");
    assert_eq!(pick(Some("system"), Appearance::Dark).0.name, "dark");
    assert_eq!(pick(Some("light/dark"), Appearance::Light).0.name, "light");
    assert_eq!(pick(Some("light/dark"), Appearance::Dark).0.name, "dark");
    let (theme, warning) = pick(Some("nope"), Appearance::Light);
    assert_eq!(theme.name, "dark");
    assert_eq!(
        warning.as_deref(),
        Some("Theme \"nope\" not found; using dark. Available themes: dark, light")
    );
    assert_eq!(Appearance::from_colorfgbg(Some("0;15")), Appearance::Light);
    assert_eq!(Appearance::from_colorfgbg(Some("15;0")), Appearance::Dark);
    assert_eq!(Appearance::from_colorfgbg(Some("junk")), Appearance::Dark);
    assert_eq!(Appearance::from_colorfgbg(None), Appearance::Dark);
}

#[test]
fn settings_overrides_switch_discovered_and_listed_themes_off_and_on() {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    write(&agent.join("themes"), "a.json", &variant("auto-a", |_| {}));
    let extra = write(
        &root.path().join("more"),
        "b.json",
        &variant("listed-b", |_| {}),
    );
    let names = |user: &[&str], project: &[&str]| -> Vec<String> {
        let mut c = config(root.path());
        c.user_settings = user.iter().map(|s| (*s).to_owned()).collect();
        c.project_settings = project.iter().map(|s| (*s).to_owned()).collect();
        Themes::load(&c)
            .themes
            .into_iter()
            .skip(2)
            .map(|t| t.name)
            .collect()
    };
    let b = extra.to_string_lossy().into_owned();
    assert_eq!(names(&[&b], &[]), ["listed-b", "auto-a"]);
    assert_eq!(
        names(&[&b, "-themes/a.json", &format!("-{b}")], &[]),
        Vec::<String>::new()
    );
    assert_eq!(names(&["!*.json", "+themes/a.json"], &[]), ["auto-a"]);
    // A project's `-/abs/path` for a user theme wins: the project is looked at first.
    let a = agent.join("themes/a.json").to_string_lossy().into_owned();
    assert_eq!(names(&[], &[&a, &format!("-{a}")]), Vec::<String>::new());
}

#[test]
fn package_themes_come_first_and_extension_themes_last_even_with_no_themes() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let user = write(
        &root.join("agent/themes"),
        "ocean.json",
        &variant("ocean", |_| {}),
    );
    let package = root.join("pkg/themes");
    write(&package, "dusk.json", &variant("dusk", |_| {}));
    let from_ext = write(&root.join("ext"), "ocean.json", &variant("ocean", |_| {}));
    let own = write(&root.join("ext"), "mine.json", &variant("mine", |_| {}));
    let mut cfg = config(root);
    cfg.packages = vec![package];
    cfg.extensions = vec![from_ext.clone(), own];
    let themes = Themes::load(&cfg);
    assert_eq!(themes.names(), ["dark", "dusk", "light", "mine", "ocean"]);
    assert_eq!(
        themes.get("ocean").unwrap().path.as_deref(),
        Some(user.as_path())
    );
    assert_eq!(themes.diagnostics.len(), 1, "{:?}", themes.diagnostics);
    cfg.no_themes = true;
    let themes = Themes::load(&cfg);
    assert_eq!(themes.names(), ["dark", "dusk", "light", "mine", "ocean"]);
    assert_eq!(
        themes.get("ocean").unwrap().path.as_deref(),
        Some(from_ext.as_path())
    );
}
