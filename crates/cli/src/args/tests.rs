use super::*;

fn argv(tokens: &[&str]) -> Vec<String> {
    tokens.iter().map(|s| (*s).to_owned()).collect()
}

fn parsed(tokens: &[&str]) -> Parsed {
    parse(&argv(tokens))
}

/// Parses tokens that must produce no diagnostics.
fn ok(tokens: &[&str]) -> Args {
    let p = parsed(tokens);
    assert!(p.diagnostics.is_empty(), "{tokens:?}: {:?}", p.diagnostics);
    p.args
}

fn errors(tokens: &[&str]) -> Vec<String> {
    parsed(tokens)
        .diagnostics
        .into_iter()
        .filter(Diagnostic::is_error)
        .map(|d| d.message)
        .collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    argv(items)
}

#[test]
fn empty_command_line_is_all_defaults() {
    assert_eq!(ok(&[]), Args::default());
}

#[test]
fn help_and_version_long_and_short() {
    assert!(ok(&["--help"]).help);
    assert!(ok(&["-h"]).help);
    assert!(ok(&["--version"]).version);
    assert!(ok(&["-v"]).version);
    let both = ok(&["-h", "-v"]);
    assert!(both.help && both.version);
}

#[test]
fn mode_values_and_invalid_modes_ignored_with_a_warning() {
    assert_eq!(ok(&["--mode", "text"]).mode, Some(OutputMode::Text));
    assert_eq!(ok(&["--mode", "json"]).mode, Some(OutputMode::Json));
    assert_eq!(ok(&["--mode", "rpc"]).mode, Some(OutputMode::Rpc));
    // Invalid value: consumed and ignored as the reference does, but said out loud.
    let invalid = parsed(&["--mode", "yaml", "hello"]);
    assert_eq!(invalid.args.mode, None);
    assert_eq!(invalid.args.messages, strings(&["hello"]));
    assert_eq!(
        invalid.diagnostics,
        [Diagnostic::warning(
            "Invalid --mode \"yaml\" (valid values: text, json, rpc); ignoring it"
        )]
    );
    // Case matters.
    let upper = parsed(&["--mode", "JSON"]);
    assert_eq!(upper.args.mode, None);
    assert!(!upper.diagnostics[0].is_error());
    // Last one wins.
    assert_eq!(
        ok(&["--mode", "json", "--mode", "rpc"]).mode,
        Some(OutputMode::Rpc)
    );
}

#[test]
fn value_options_take_the_next_token_whatever_it_is() {
    let a = ok(&["--model", "--print"]);
    assert_eq!(a.model.as_deref(), Some("--print"));
    assert!(!a.print);
    assert_eq!(ok(&["--provider", "@x"]).provider.as_deref(), Some("@x"));
    assert_eq!(ok(&["--session", "-"]).session.as_deref(), Some("-"));
    let mode = parsed(&["--mode", "--help"]);
    assert_eq!(mode.args.mode, None);
    assert!(!mode.args.help);
}

#[test]
fn every_single_value_option() {
    let a = ok(&[
        "--provider",
        "openai",
        "--model",
        "gpt-5:high",
        "--api-key",
        "sk-1",
        "--system-prompt",
        "Be brief",
        "--session",
        "abc",
        "--session-dir",
        "/tmp/s",
        "--export",
        "in.jsonl",
        "--use-theme",
        "light/dark",
        "--session-id",
        "my-id",
        "--fork",
        "f.jsonl",
    ]);
    assert_eq!(a.provider.as_deref(), Some("openai"));
    assert_eq!(a.model.as_deref(), Some("gpt-5:high"));
    assert_eq!(a.api_key.as_deref(), Some("sk-1"));
    assert_eq!(a.system_prompt.as_deref(), Some("Be brief"));
    assert_eq!(a.session.as_deref(), Some("abc"));
    assert_eq!(a.session_dir.as_deref(), Some("/tmp/s"));
    assert_eq!(a.export.as_deref(), Some("in.jsonl"));
    assert_eq!(a.use_theme.as_deref(), Some("light/dark"));
    assert_eq!(a.session_id.as_deref(), Some("my-id"));
    assert_eq!(a.fork.as_deref(), Some("f.jsonl"));
    assert!(a.messages.is_empty());
}

#[test]
fn single_value_options_keep_the_last_occurrence() {
    let a = ok(&[
        "--model",
        "a",
        "--model",
        "b",
        "--provider",
        "x",
        "--provider",
        "y",
    ]);
    assert_eq!(a.model.as_deref(), Some("b"));
    assert_eq!(a.provider.as_deref(), Some("y"));
}

#[test]
fn repeatable_options_collect_in_order() {
    let a = ok(&[
        "-e",
        "one.ts",
        "--extension",
        "builtin:plan",
        "--skill",
        "s1",
        "--skill",
        "s2",
        "--prompt-template",
        "p1",
        "--prompt-template",
        "p2",
        "--theme",
        "t1",
        "--theme",
        "t2",
        "--append-system-prompt",
        "first",
        "--append-system-prompt",
        "second",
    ]);
    assert_eq!(a.extensions, strings(&["one.ts", "builtin:plan"]));
    assert_eq!(a.skills, strings(&["s1", "s2"]));
    assert_eq!(a.prompt_templates, strings(&["p1", "p2"]));
    assert_eq!(a.themes, strings(&["t1", "t2"]));
    assert_eq!(a.append_system_prompt, strings(&["first", "second"]));
}

#[test]
fn boolean_flags_and_their_short_aliases() {
    let long = ok(&[
        "--continue",
        "--resume",
        "--no-session",
        "--no-tools",
        "--no-builtin-tools",
        "--no-extensions",
        "--no-mcp",
        "--no-skills",
        "--no-prompt-templates",
        "--no-themes",
        "--no-context-files",
        "--verbose",
        "--offline",
        "--print",
    ]);
    let short = ok(&["-c", "-r", "-nt", "-nbt", "-ne", "-ns", "-np", "-nc", "-p"]);
    for a in [&long, &short] {
        assert!(a.continue_session && a.resume && a.no_tools && a.no_builtin_tools);
        assert!(a.no_extensions && a.no_skills && a.no_prompt_templates && a.no_context_files);
        assert!(a.print);
    }
    assert!(long.no_session && long.no_mcp && long.no_themes && long.verbose && long.offline);
}

#[test]
fn approve_and_no_approve_last_wins() {
    assert_eq!(ok(&["--approve"]).project_trust, Some(true));
    assert_eq!(ok(&["-a"]).project_trust, Some(true));
    assert_eq!(ok(&["--no-approve"]).project_trust, Some(false));
    assert_eq!(ok(&["-na"]).project_trust, Some(false));
    assert_eq!(ok(&["-a", "-na"]).project_trust, Some(false));
    assert_eq!(ok(&["-na", "--approve"]).project_trust, Some(true));
    assert_eq!(ok(&[]).project_trust, None);
}

#[test]
fn print_swallows_a_plain_next_token() {
    let a = ok(&["-p", "hello", "world"]);
    assert!(a.print);
    assert_eq!(a.messages, strings(&["hello", "world"]));
    let a = ok(&["--print", "hi"]);
    assert_eq!(a.messages, strings(&["hi"]));
}

#[test]
fn print_leaves_options_and_files_alone() {
    let a = ok(&["-p", "--model", "m", "msg"]);
    assert!(a.print);
    assert_eq!(a.model.as_deref(), Some("m"));
    assert_eq!(a.messages, strings(&["msg"]));

    let a = ok(&["-p", "@file.md", "msg"]);
    assert_eq!(a.file_args, strings(&["file.md"]));
    assert_eq!(a.messages, strings(&["msg"]));

    // A single-dash token after -p is not taken either (and is then an unknown option).
    assert_eq!(errors(&["-p", "-x"]), ["Unknown option: -x"]);
    // `--` after -p still ends options.
    let a = ok(&["-p", "--", "-x"]);
    assert_eq!(a.messages, strings(&["-x"]));
}

#[test]
fn print_takes_triple_dash_messages() {
    let a = ok(&["-p", "---- a markdown rule", "next"]);
    assert_eq!(a.messages, strings(&["---- a markdown rule", "next"]));
    let a = ok(&["-p", "---"]);
    assert_eq!(a.messages, strings(&["---"]));
}

#[test]
fn print_at_the_end_and_with_empty_message() {
    let a = ok(&["hello", "-p"]);
    assert!(a.print);
    assert_eq!(a.messages, strings(&["hello"]));
    let a = ok(&["-p", ""]);
    assert_eq!(a.messages, strings(&[""]));
}

#[test]
fn double_dash_ends_options_but_not_file_args() {
    let a = ok(&[
        "--model",
        "m",
        "--",
        "--help",
        "-x",
        "@notes.md",
        "plain",
        "--",
        "@",
    ]);
    assert!(!a.help);
    assert_eq!(a.model.as_deref(), Some("m"));
    assert_eq!(a.messages, strings(&["--help", "-x", "plain", "--"]));
    assert_eq!(a.file_args, strings(&["notes.md", ""]));
    assert!(a.extension_flags.is_empty());
}

#[test]
fn at_tokens_are_file_args_anywhere() {
    let a = ok(&["@a.txt", "msg", "@b.png", "-c", "@dir/c d.md"]);
    assert_eq!(a.file_args, strings(&["a.txt", "b.png", "dir/c d.md"]));
    assert_eq!(a.messages, strings(&["msg"]));
    assert!(a.continue_session);
    // Only the first `@` is removed.
    assert_eq!(ok(&["@@x"]).file_args, strings(&["@x"]));
}

#[test]
fn messages_keep_order_and_content() {
    let a = ok(&["first", "second message", "", "tail with -dash"]);
    assert_eq!(
        a.messages,
        strings(&["first", "second message", "", "tail with -dash"])
    );
}

#[test]
fn unknown_long_flags_become_extension_flags() {
    let a = ok(&[
        "--review",
        "--depth=3",
        "--target",
        "prod",
        "--flag-before-option",
        "--verbose",
        "--before-file",
        "@f",
        "--empty=",
        "--eq=a=b",
        "--last",
    ]);
    assert_eq!(
        a.extension_flags,
        vec![
            ("review".to_owned(), FlagValue::Present),
            ("depth".to_owned(), FlagValue::Value("3".into())),
            ("target".to_owned(), FlagValue::Value("prod".into())),
            ("flag-before-option".to_owned(), FlagValue::Present),
            ("before-file".to_owned(), FlagValue::Present),
            ("empty".to_owned(), FlagValue::Value(String::new())),
            ("eq".to_owned(), FlagValue::Value("a=b".into())),
            ("last".to_owned(), FlagValue::Present),
        ]
    );
    assert!(a.verbose);
    assert_eq!(a.file_args, strings(&["f"]));
    assert!(a.messages.is_empty());
}

#[test]
fn extension_flag_value_not_taken_from_single_dash_tokens() {
    let p = parsed(&["--review", "-c"]);
    assert_eq!(
        p.args.extension_flags,
        vec![("review".to_owned(), FlagValue::Present)]
    );
    assert!(p.args.continue_session);
}

#[test]
fn repeated_extension_flag_keeps_position_last_value_wins() {
    let a = ok(&["--a", "1", "--b", "--a=2"]);
    assert_eq!(
        a.extension_flags,
        vec![
            ("a".to_owned(), FlagValue::Value("2".into())),
            ("b".to_owned(), FlagValue::Present),
        ]
    );
}

#[test]
fn known_flags_written_with_equals_are_extension_flags() {
    // The reference matches whole tokens, so `--model=x` is not `--model x`.
    let a = ok(&["--model=gpt-5"]);
    assert_eq!(a.model, None);
    assert_eq!(
        a.extension_flags,
        vec![("model".to_owned(), FlagValue::Value("gpt-5".into()))]
    );
}

#[test]
fn unknown_short_options_are_errors_and_parsing_continues() {
    assert_eq!(errors(&["-x"]), ["Unknown option: -x"]);
    assert_eq!(errors(&["-"]), ["Unknown option: -"]);
    // Short flags do not combine.
    assert_eq!(errors(&["-cp"]), ["Unknown option: -cp"]);
    assert_eq!(errors(&["-P"]), ["Unknown option: -P"]);
    let p = parsed(&["-q", "hello", "-z", "-c"]);
    assert_eq!(
        p.diagnostics,
        vec![
            Diagnostic::error("Unknown option: -q"),
            Diagnostic::error("Unknown option: -z"),
        ]
    );
    assert_eq!(p.args.messages, strings(&["hello"]));
    assert!(p.args.continue_session);
}

#[test]
fn long_value_option_without_value_is_ignored() {
    for flag in [
        "--provider",
        "--model",
        "--api-key",
        "--system-prompt",
        "--append-system-prompt",
        "--session",
        "--session-id",
        "--fork",
        "--session-dir",
        "--models",
        "--tools",
        "--exclude-tools",
        "--thinking",
        "--export",
        "--extension",
        "--skill",
        "--prompt-template",
        "--theme",
        "--mode",
    ] {
        let p = parsed(&["msg", flag]);
        assert!(p.diagnostics.is_empty(), "{flag}: {:?}", p.diagnostics);
        let mut expected = Args {
            messages: strings(&["msg"]),
            ..Args::default()
        };
        // Falls through like any unknown long flag, as in the reference.
        expected
            .extension_flags
            .push((flag[2..].to_owned(), FlagValue::Present));
        assert_eq!(p.args, expected, "{flag}");
    }
}

#[test]
fn short_value_alias_without_value_is_an_unknown_option() {
    for flag in ["-t", "-xt", "-e"] {
        assert_eq!(errors(&[flag]), [format!("Unknown option: {flag}")]);
    }
}

#[test]
fn name_is_trimmed_and_must_not_be_empty() {
    assert_eq!(
        ok(&["--name", "  Refactor auth \n"]).name.as_deref(),
        Some("Refactor auth")
    );
    assert_eq!(ok(&["-n", "x"]).name.as_deref(), Some("x"));
    // Takes the next token even when it looks like an option.
    assert_eq!(ok(&["-n", "--weird"]).name.as_deref(), Some("--weird"));
    assert_eq!(
        errors(&["--name", ""]),
        ["--name requires a non-empty value"]
    );
    assert_eq!(
        errors(&["-n", "   "]),
        ["--name requires a non-empty value"]
    );
    assert_eq!(errors(&["--name"]), ["--name requires a value"]);
    assert_eq!(errors(&["-n"]), ["--name requires a value"]);
    assert_eq!(parsed(&["--name", ""]).args.name, None);
    // Only the last name counts.
    assert_eq!(
        ok(&["--name", "", "--name", "ok"]).name.as_deref(),
        Some("ok")
    );
    assert_eq!(
        errors(&["--name", "ok", "--name", " "]),
        ["--name requires a non-empty value"]
    );
}

#[test]
fn use_theme_needs_a_name_and_leaves_the_next_option() {
    assert_eq!(
        ok(&["--use-theme", "nord"]).use_theme.as_deref(),
        Some("nord")
    );
    assert_eq!(
        errors(&["--use-theme"]),
        ["--use-theme requires a theme name"]
    );
    let p = parsed(&["--use-theme", "--print", "hi"]);
    assert_eq!(
        p.diagnostics,
        vec![Diagnostic::error("--use-theme requires a theme name")]
    );
    assert!(p.args.print);
    assert_eq!(p.args.messages, strings(&["hi"]));
    assert_eq!(p.args.use_theme, None);
    // `@` is a fine theme name start; only `-` is refused.
    assert_eq!(ok(&["--use-theme", "@t"]).use_theme.as_deref(), Some("@t"));
}

#[test]
fn tui_mode_values_and_errors() {
    assert_eq!(
        ok(&["--tui-mode", "regular"]).tui_mode,
        Some(TuiMode::Regular)
    );
    assert_eq!(
        ok(&["--tui-mode", "fullscreen"]).tui_mode,
        Some(TuiMode::Fullscreen)
    );
    assert_eq!(
        errors(&["--tui-mode"]),
        ["--tui-mode requires regular or fullscreen"]
    );
    let p = parsed(&["--tui-mode", "-c"]);
    assert_eq!(
        p.diagnostics,
        vec![Diagnostic::error(
            "--tui-mode requires regular or fullscreen"
        )]
    );
    assert!(p.args.continue_session, "the next option still applies");
    let p = parsed(&["--tui-mode", "wide", "msg"]);
    assert_eq!(
        p.diagnostics,
        vec![Diagnostic::error(
            "Invalid TUI mode \"wide\". Valid values: regular, fullscreen"
        )]
    );
    assert_eq!(
        p.args.messages,
        strings(&["msg"]),
        "the bad value is consumed"
    );
    assert_eq!(p.args.tui_mode, None);
}

#[test]
fn thinking_levels_valid_and_invalid() {
    for level in ThinkingLevel::ALL {
        assert_eq!(ok(&["--thinking", level.as_str()]).thinking, Some(level));
    }
    let p = parsed(&["--thinking", "extreme", "go"]);
    assert_eq!(
        p.diagnostics,
        vec![Diagnostic::warning(
            "Invalid thinking level \"extreme\". Valid values: off, minimal, low, medium, high, xhigh, max"
        )]
    );
    assert_eq!(p.args.thinking, None);
    assert_eq!(p.args.messages, strings(&["go"]));
    assert!(!p.diagnostics[0].is_error());
    // An invalid later value keeps the earlier valid one.
    let p = parsed(&["--thinking", "high", "--thinking", "HIGH"]);
    assert_eq!(p.args.thinking, Some(ThinkingLevel::High));
    assert_eq!(p.diagnostics.len(), 1);
}

#[test]
fn models_list_is_split_and_trimmed_keeping_empties() {
    assert_eq!(
        ok(&["--models", " sonnet:high , gpt-5,,anthropic/* "]).models,
        Some(strings(&["sonnet:high", "gpt-5", "", "anthropic/*"]))
    );
    assert_eq!(ok(&["--models", ""]).models, Some(strings(&[""])));
}

#[test]
fn tool_lists_are_split_trimmed_and_drop_empties() {
    let a = ok(&["--tools", " read, bash ,,grep*, ", "-xt", "write,,edit "]);
    assert_eq!(a.tools, Some(strings(&["read", "bash", "grep*"])));
    assert_eq!(a.exclude_tools, Some(strings(&["write", "edit"])));
    assert_eq!(
        ok(&["-t", "mcp__github__*"]).tools,
        Some(strings(&["mcp__github__*"]))
    );
    assert_eq!(
        ok(&["--exclude-tools", "bash"]).exclude_tools,
        Some(strings(&["bash"]))
    );
    // An empty list is an empty selection, not an absent one.
    assert_eq!(ok(&["--tools", ", ,"]).tools, Some(Vec::new()));
}

#[test]
fn tool_lists_refuse_plus_and_minus_entries() {
    assert_eq!(
        errors(&["--tools", "+grep,-bash"]),
        [
            "--tools takes tool names, not +name or -name entries (\"+grep\", \"-bash\"); write the names alone, e.g. --tools read,bash"
        ]
    );
    assert_eq!(
        errors(&["-t", "read,+grep"]),
        ["--tools: tool names cannot be mixed with +name or -name entries (\"+grep\")"]
    );
    // The value is taken even though it starts with a dash.
    assert_eq!(
        errors(&["--exclude-tools", "-bash"]),
        [
            "--exclude-tools takes tool names, not +name or -name entries (\"-bash\"); write the names alone, e.g. --exclude-tools read,bash"
        ]
    );
    assert_eq!(
        errors(&["-xt", "read, +grep"]),
        [
            "--exclude-tools takes tool names, not +name or -name entries (\"+grep\"); write the names alone, e.g. --exclude-tools read,bash"
        ]
    );
    let p = parsed(&["--tools", "+grep"]);
    assert_eq!(p.args.tools, None);
}

#[test]
fn list_models_optional_search() {
    assert_eq!(ok(&["--list-models"]).list_models, Some(ListModels::All));
    assert_eq!(
        ok(&["--list-models", "sonnet"]).list_models,
        Some(ListModels::Search("sonnet".into()))
    );
    let a = ok(&["--list-models", "-c"]);
    assert_eq!(a.list_models, Some(ListModels::All));
    assert!(a.continue_session);
    let a = ok(&["--list-models", "@f"]);
    assert_eq!(a.list_models, Some(ListModels::All));
    assert_eq!(a.file_args, strings(&["f"]));
    let a = ok(&["--list-models", "--", "x"]);
    assert_eq!(a.list_models, Some(ListModels::All));
    assert_eq!(a.messages, strings(&["x"]));
    assert_eq!(ListModels::Search("q".into()).search(), Some("q"));
    assert_eq!(ListModels::All.search(), None);
}

#[test]
fn export_input_and_optional_output() {
    let a = ok(&["--export", "in.jsonl", "out.html"]);
    assert_eq!(a.export.as_deref(), Some("in.jsonl"));
    assert_eq!(a.export_output(), Some("out.html"));
    assert_eq!(ok(&["--export", "in.jsonl"]).export_output(), None);
}

#[test]
fn diagnostics_display_with_severity_prefix() {
    assert_eq!(Diagnostic::error("boom").to_string(), "Error: boom");
    assert_eq!(Diagnostic::warning("hmm").to_string(), "Warning: hmm");
}

#[test]
fn diagnostics_keep_command_line_order() {
    let p = parsed(&["--thinking", "x", "-q", "--use-theme"]);
    let text: Vec<String> = p.diagnostics.iter().map(ToString::to_string).collect();
    assert_eq!(
        text,
        [
            "Warning: Invalid thinking level \"x\". Valid values: off, minimal, low, medium, high, xhigh, max",
            "Error: Unknown option: -q",
            "Error: --use-theme requires a theme name",
        ]
    );
}

fn conflicts(tokens: &[&str]) -> Vec<String> {
    check_conflicts(&ok(tokens))
        .into_iter()
        .map(|d| {
            assert!(d.is_error());
            d.message
        })
        .collect()
}

#[test]
fn fork_conflicts() {
    assert!(conflicts(&["--fork", "abc"]).is_empty());
    assert_eq!(
        conflicts(&["--fork", "abc", "--session", "x"]),
        ["--fork cannot be combined with --session"]
    );
    assert_eq!(
        conflicts(&["--no-session", "-r", "--fork", "a", "-c", "--session", "s"]),
        ["--fork cannot be combined with --session, --continue, --resume, --no-session"]
    );
    // An empty fork argument does not count as given.
    assert!(conflicts(&["--fork", "", "-c"]).is_empty());
    // --fork with --session-id names the new session: allowed.
    assert!(conflicts(&["--fork", "a", "--session-id", "new-id"]).is_empty());
}

#[test]
fn session_id_conflicts_and_syntax() {
    assert!(conflicts(&["--session-id", "abc-1.2_x"]).is_empty());
    assert!(conflicts(&["--session-id", "a", "--no-session"]).is_empty());
    assert_eq!(
        conflicts(&["--session-id", "a", "-c", "-r", "--session", "s"]),
        ["--session-id cannot be combined with --session, --continue, --resume"]
    );
    let invalid = "Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character";
    for id in ["", "-a", "a-", "a b", "a/b", "é"] {
        assert_eq!(conflicts(&["--session-id", id]), [invalid], "{id:?}");
    }
}

#[test]
fn provider_requires_model() {
    let got = conflicts(&["--provider", "openai"]);
    assert_eq!(got.len(), 1);
    assert!(got[0].starts_with("--provider requires --model"), "{got:?}");
    assert!(conflicts(&["--provider", "openai", "--model", "gpt-5"]).is_empty());
    assert!(conflicts(&["--model", "openai/gpt-5"]).is_empty());
    // `--model=x` is an extension flag, so it does not satisfy --provider.
    assert_eq!(conflicts(&["--provider", "p", "--model=x"]).len(), 1);
}

#[test]
fn all_conflicts_reported_together() {
    assert_eq!(
        conflicts(&["--fork", "a", "-c", "--session-id", "b", "--provider", "p"]).len(),
        3
    );
}

#[test]
fn mode_resolution_first_match_wins() {
    let with = |tokens: &[&str]| ok(tokens);
    let all_tty = [(true, true), (false, true), (true, false), (false, false)];
    for (stdin, stdout) in all_tty {
        assert_eq!(
            resolve_mode(&with(&["--mode", "rpc", "-p"]), stdin, stdout),
            AppMode::Rpc
        );
        assert_eq!(
            resolve_mode(&with(&["--mode", "json", "-p"]), stdin, stdout),
            AppMode::Json
        );
        assert_eq!(resolve_mode(&with(&["-p"]), stdin, stdout), AppMode::Print);
    }
    let plain = with(&[]);
    assert_eq!(resolve_mode(&plain, true, true), AppMode::Interactive);
    assert_eq!(resolve_mode(&plain, false, true), AppMode::Print);
    assert_eq!(resolve_mode(&plain, true, false), AppMode::Print);
    assert_eq!(resolve_mode(&plain, false, false), AppMode::Print);
    // `--mode text` forces nothing; an invalid mode is as if absent.
    let text = with(&["--mode", "text"]);
    assert_eq!(resolve_mode(&text, true, true), AppMode::Interactive);
    assert_eq!(resolve_mode(&text, false, true), AppMode::Print);
    assert_eq!(
        resolve_mode(&parsed(&["--mode", "bogus"]).args, true, true),
        AppMode::Interactive
    );
}

#[test]
fn subcommands_by_first_token_only() {
    for name in SUBCOMMANDS {
        assert_eq!(subcommand(&argv(&[name, "x"])), Some(name));
    }
    assert_eq!(subcommand(&argv(&["-p", "list"])), None);
    assert_eq!(subcommand(&argv(&["List"])), None);
    assert_eq!(subcommand(&argv(&["server"])), None);
    assert_eq!(subcommand(&[]), None);
}

#[test]
fn plan_is_a_flag_of_its_own_and_takes_no_value() {
    let p = parsed(&["--plan", "Investigate the bug"]);
    assert!(p.args.plan);
    assert!(p.args.extension_flags.is_empty());
    assert_eq!(p.args.messages, vec!["Investigate the bug".to_owned()]);
    // Remembered for a replacing extension's string `--plan`, which takes it.
    assert_eq!(p.args.plan_argument, Some(0));
    assert_eq!(p.args.messages_without_plan_argument(), Some(Vec::new()));
    let p = parsed(&["first", "--plan", "second", "third"]);
    assert_eq!(p.args.plan_argument, Some(1));
    assert_eq!(
        p.args.messages_without_plan_argument(),
        Some(strings(&["first", "third"]))
    );
    for argv in [
        &["--plan", "-c"][..],
        &["--plan", "@notes.txt"],
        &["--plan"],
    ] {
        assert_eq!(parsed(argv).args.plan_argument, None, "{argv:?}");
    }
}
