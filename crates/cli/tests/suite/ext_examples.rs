#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The compatibility corpus: every example extension of the reference package
//! (`@mariozechner/pi-coding-agent`, `examples/extensions`), judged by what it does without
//! the interactive terminal (tool results, files, processes, requests to the model, session
//! entries, RPC dialogs), by the probes in `tests/suite/ext_examples/probes/<example>.json`.
//!
//! Each probe runs twice: on the example as shipped and on a copy whose imports name our
//! packages (`@knightcodeai/cli`, `@knightcode/ai|agent|tui`). A probe that fails is either
//! a bug or listed with `known_failure` (its reason); a known failure that passes fails the
//! test, so the table is kept true.
//!
//! - `KC_WRITE_COMPAT=1` regenerates `docs/extensions-compat.md` from the results.
//! - `KC_EXAMPLES_REFERENCE=<pi binary>` runs the probes against the reference agent instead:
//!   every probe must pass there (that is what makes it a probe).
//! - `KC_EXAMPLES_ONLY=a.ts,b` runs only those examples; `KC_EXAMPLES_DUMP=1` adds the whole
//!   output and the model requests of a failing run to its report.
//! - `KC_EXAMPLES_AGENT=<knightcode binary>` runs that copy of ours instead of the one cargo
//!   built (another checkout sharing the target folder may rebuild it during a long run).
//!
//! The corpus comes from `npm pack` into `~/.cache/knightcode-rs/npm` (kept); npm is
//! required, and its absence fails the test.

pub(crate) mod check;
pub(crate) mod corpus;
pub(crate) mod doc;
pub(crate) mod npm;
pub(crate) mod probe;

use std::path::Path;
use std::path::PathBuf;
use std::sync::Mutex;

use probe::Agent;
use serde_json::Value;

/// The two columns: the example as shipped, and rewritten to our package names.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Original,
    Rewritten,
}

/// One example's probe file.
pub struct Example {
    pub name: String,
    pub spec: Value,
}

impl Example {
    pub fn probes(&self) -> &[Value] {
        self.spec["probes"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Why this probe is expected to fail in this column, if it is.
    pub fn known_failure(probe: &Value, column: Column) -> Option<String> {
        let field = match column {
            Column::Rewritten if probe.get("known_failure_rewritten").is_some() => {
                &probe["known_failure_rewritten"]
            }
            _ => &probe["known_failure"],
        };
        field.as_str().filter(|s| !s.is_empty()).map(str::to_owned)
    }
}

/// The verdict of one probe in one column.
pub struct Outcome {
    pub example: usize,
    pub probe: usize,
    pub column: Column,
    pub failures: Vec<String>,
}

/// The folder of a corpus's probe files, `tests/suite/<subject>/probes`.
pub fn probes_dir(subject: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/suite/{subject}/probes"))
}

/// The probe files of `names` in `dir` (a `/` in a name is `+` in its file name), and the
/// names without one.
pub fn load_examples(dir: &Path, names: &[String]) -> (Vec<Example>, Vec<String>) {
    let mut missing = Vec::new();
    let examples = names
        .iter()
        .filter_map(|name| {
            let path = dir.join(format!("{}.json", name.replace('/', "+")));
            let Ok(text) = std::fs::read_to_string(&path) else {
                missing.push(name.clone());
                return None;
            };
            let spec =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            Some(Example {
                name: name.clone(),
                spec,
            })
        })
        .collect();
    (examples, missing)
}

fn judge(agent: &Agent, ext: &Path, probe: &Value) -> Vec<String> {
    // A program the example runs (`"needs": ["rg"]`): without it the probe's failure
    // would only say that an expected text is missing.
    let missing: Vec<&str> = probe["needs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|program| !on_path(program))
        .collect();
    if !missing.is_empty() {
        return vec![format!(
            "the example runs {} and it is not on PATH (.ci/run installs it as root)",
            missing.join(", ")
        )];
    }
    let observed = probe::run(agent, ext, probe);
    let mut failures = Vec::new();
    if let Some(broken) = &observed.broken {
        failures.push(broken.clone());
    }
    let checks = probe["checks"].as_array().cloned().unwrap_or_default();
    // A handler that throws is a failure even when the rest looks right (the JSON and RPC
    // streams say so; print mode has no such event).
    if (probe["mode"] == "json" || probe["mode"] == "rpc")
        && let Err(e) = check::check(
            &observed,
            &serde_json::json!({"no_event": "extension_error"}),
        )
    {
        failures.push(e);
    }
    if !checks.iter().any(|c| c.get("exit").is_some())
        && let Err(e) = check::check(&observed, &serde_json::json!({"exit": 0}))
    {
        failures.push(format!("{e}; stderr: {}", check::clip(&observed.stderr)));
    }
    for c in &checks {
        if let Err(e) = check::check(&observed, c) {
            failures.push(e);
        }
    }
    if !failures.is_empty() && std::env::var_os("KC_EXAMPLES_DUMP").is_some() {
        failures.push(format!(
            "stdout:\n{}\nstderr:\n{}\nrequests: {}",
            observed.stdout,
            observed.stderr,
            serde_json::to_string_pretty(&observed.requests).unwrap()
        ));
    }
    failures
}

fn jobs() -> usize {
    std::env::var("KC_EXAMPLES_JOBS")
        .ok()
        .and_then(|j| j.parse().ok())
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get() * 2)
                .unwrap_or(4)
                .min(8)
        })
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// `KC_EXAMPLES_ONLY`: the entries to run, if not all.
pub fn only() -> Option<Vec<String>> {
    std::env::var("KC_EXAMPLES_ONLY")
        .ok()
        .map(|s| s.split(',').map(str::to_owned).collect())
}

/// `KC_EXAMPLES_REFERENCE`: the reference agent to run instead of ours.
pub fn reference() -> Option<PathBuf> {
    std::env::var_os("KC_EXAMPLES_REFERENCE").map(PathBuf::from)
}

/// Runs every probe of `examples` (those `only` names) in each of `columns`, `locate`
/// naming the extension to load, on parallel workers; the outcomes are sorted.
pub fn run_probes(
    agent: &Agent,
    examples: &[Example],
    columns: &[Column],
    only: Option<&[String]>,
    locate: &(dyn Fn(&Example, Column) -> PathBuf + Sync),
) -> Vec<Outcome> {
    let mut queue = Vec::new();
    for (e, example) in examples.iter().enumerate() {
        if only.is_some_and(|o| !o.contains(&example.name)) {
            continue;
        }
        for p in 0..example.probes().len() {
            for &column in columns {
                queue.push((e, p, column));
            }
        }
    }
    let queue = Mutex::new(queue);
    let outcomes = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs() {
            scope.spawn(|| {
                loop {
                    let Some((e, p, column)) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let example = &examples[e];
                    let failures = judge(agent, &locate(example, column), &example.probes()[p]);
                    outcomes.lock().unwrap().push(Outcome {
                        example: e,
                        probe: p,
                        column,
                        failures,
                    });
                }
            });
        }
    });
    let mut outcomes = outcomes.into_inner().unwrap();
    outcomes.sort_by_key(|o| (o.example, o.probe, o.column == Column::Rewritten));
    outcomes
}

/// What is wrong with the outcomes: a probe that fails (with the reference, any; with ours,
/// one not listed as a known failure) or a known failure that passes. Failures are also
/// printed, with a count (what `--nocapture` shows of a run whose failures are all known).
#[allow(clippy::print_stderr)]
pub fn problems(examples: &[Example], outcomes: &[Outcome], reference: bool) -> Vec<String> {
    let mut problems = Vec::new();
    for o in outcomes {
        let example = &examples[o.example];
        let probe = &example.probes()[o.probe];
        let label = format!(
            "{} probe {:?}{}",
            example.name,
            probe["name"].as_str().unwrap_or("?"),
            if o.column == Column::Rewritten {
                " (rewritten imports)"
            } else {
                ""
            }
        );
        let known = Example::known_failure(probe, o.column);
        match (reference, known, o.failures.is_empty()) {
            (true, _, false) | (false, None, false) => {
                problems.push(format!("{label} fails:\n    {}", o.failures.join("\n    ")));
            }
            (false, Some(reason), true) => problems.push(format!(
                "{label} passes but is listed as a known failure ({reason}); remove `known_failure` from its probe file"
            )),
            _ => {}
        }
        if !o.failures.is_empty() {
            eprintln!(
                "{} #{} {}: {}",
                example.name,
                o.probe,
                if o.column == Column::Rewritten {
                    "rewritten"
                } else {
                    "original"
                },
                o.failures.join(" | ")
            );
        }
    }
    let failed = outcomes.iter().filter(|o| !o.failures.is_empty()).count();
    eprintln!("{} probe runs, {failed} failed", outcomes.len());
    problems
}

/// The agent that runs the probes, and the columns it is judged in.
pub fn agent(reference: Option<&PathBuf>, columns: &[Column]) -> (Agent, Vec<Column>) {
    match reference {
        Some(pi) => (Agent::Reference(pi.clone()), vec![Column::Original]),
        // `KC_EXAMPLES_AGENT`: a copy of our binary, for a target folder other checkouts
        // share (their builds replace `target/debug/knightcode` under a running test).
        None => (
            Agent::Ours(std::env::var_os("KC_EXAMPLES_AGENT").map_or_else(
                || PathBuf::from(env!("CARGO_BIN_EXE_knightcode")),
                PathBuf::from,
            )),
            columns.to_vec(),
        ),
    }
}

#[test]
fn example_extensions_behave_as_in_the_reference() {
    let corpus = corpus::corpus();
    let names = corpus::examples(&corpus.original);
    assert_eq!(
        names.len(),
        72,
        "the corpus of {} changed: {names:?}",
        corpus::VERSION
    );
    let (examples, missing) = load_examples(&probes_dir("ext_examples"), &names);
    // A terminal test a probe file names must exist (the compatibility table cites it).
    // `"terminal": "test_name"` is in tui_examples.rs, `"file::test_name"` in file.rs.
    let terminal_tests = [
        ("tui_examples", include_str!("tui_examples.rs")),
        ("tui_examples_model", include_str!("tui_examples_model.rs")),
    ];
    for example in &examples {
        if let Some(cited) = example.spec["terminal"].as_str() {
            let (file, test) = cited.split_once("::").unwrap_or(("tui_examples", cited));
            let source = terminal_tests.iter().find(|(name, _)| *name == file);
            assert!(
                source.is_some_and(|(_, text)| text.contains(&format!("fn {test}()"))),
                "{}: {file}.rs has no test {test}",
                example.name
            );
        }
    }
    let only = only();
    assert!(
        only.is_some() || missing.is_empty(),
        "examples without a probe file in tests/suite/ext_examples/probes: {missing:?}"
    );
    let reference = reference();
    let (agent, columns) = agent(reference.as_ref(), &[Column::Original, Column::Rewritten]);
    let outcomes = run_probes(
        &agent,
        &examples,
        &columns,
        only.as_deref(),
        &|example, column| match column {
            Column::Original => corpus.original.join(&example.name),
            Column::Rewritten => corpus.rewritten.join(&example.name),
        },
    );
    if reference.is_none() && only.is_none() && std::env::var_os("KC_WRITE_COMPAT").is_some() {
        doc::write(doc::Section::Examples, &doc::render(&examples, &outcomes));
    }
    let problems = problems(&examples, &outcomes, reference.is_some());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
