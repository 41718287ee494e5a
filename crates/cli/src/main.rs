//! The `knightcode` binary: parses the command line, answers `--help`, `--version` and
//! `--list-models`, and says plainly which requested mode or command this build lacks.
//!
//! The order of checks follows the reference CLI: subcommands by first token, then parse
//! diagnostics, `--version`, `--export`, RPC with `@file`s, flag conflicts, `--help`,
//! `--list-models`, and finally the run mode. Nothing is initialised before `--help` and
//! `--version` answer: no async runtime, no configuration reads.

use std::io::IsTerminal as _;
use std::io::Write as _;
use std::process::ExitCode;

use knightcode_cli::args;
use knightcode_cli::args::AppMode;
use knightcode_cli::args::Parsed;
use knightcode_cli::help;
use knightcode_cli::list_models;
use knightcode_cli::oneshot;
use knightcode_cli::unavailable;

fn main() -> ExitCode {
    // A sandboxed tool command: restrict this process and become the command. Checked first,
    // before anything else starts (no threads, no configuration), since it runs per command.
    let mut raw = std::env::args_os().skip(1);
    if raw
        .next()
        .is_some_and(|first| first == knightcode_sandbox::EXEC_ARG)
    {
        let rest: Vec<std::ffi::OsString> = raw.collect();
        let error = knightcode_sandbox::exec_main(&rest);
        stderr_line(&format!("knightcode: {error}"));
        return ExitCode::from(126);
    }
    // Lossy like the reference (JavaScript strings); a non-UTF-8 argument must not panic.
    let argv: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    run(&argv)
}

fn run(argv: &[String]) -> ExitCode {
    if let Some(name) = args::subcommand(argv) {
        if name == "mcp" {
            return mcp_command(&argv[1..]);
        }
        if name == "auth" {
            return auth_command(&argv[1..]);
        }
        return match package_command(argv) {
            Some(code) => code,
            None => not_available(&format!("`knightcode {name}`")),
        };
    }

    let Parsed { args, diagnostics } = args::parse(argv);
    for diagnostic in &diagnostics {
        stderr_line(&diagnostic.to_string());
    }
    if diagnostics.iter().any(args::Diagnostic::is_error) {
        return ExitCode::FAILURE;
    }

    if args.version {
        return stdout(&format!("{}\n", env!("CARGO_PKG_VERSION")));
    }
    if let Some(input) = &args.export {
        return export(input, args.export_output());
    }
    if args.mode == Some(args::OutputMode::Rpc) && !args.file_args.is_empty() {
        stderr_line("Error: @file arguments are not supported in RPC mode");
        return ExitCode::FAILURE;
    }
    let conflicts = args::check_conflicts(&args);
    if !conflicts.is_empty() {
        for conflict in &conflicts {
            stderr_line(&conflict.to_string());
        }
        return ExitCode::FAILURE;
    }

    if args.help {
        return stdout(&help::text());
    }
    if let Some(list) = &args.list_models {
        let extensions = knightcode_runtime::ExtensionSources {
            cli: args.extensions.clone(),
            no_extensions: args.no_extensions,
            mode: "print".to_owned(),
            ..Default::default()
        };
        return match list_models::run(list.search(), &extensions) {
            Ok(listing) => {
                for warning in &listing.warnings {
                    stderr_line(warning);
                }
                stdout(&listing.stdout)
            }
            Err(error) => {
                stderr_line(&format!("Error: {error:#}"));
                ExitCode::FAILURE
            }
        };
    }

    let mode = args::resolve_mode(
        &args,
        std::io::stdin().is_terminal(),
        std::io::stdout().is_terminal(),
    );
    let warnings = unavailable::warnings(&args, mode);
    if mode != AppMode::Interactive {
        // stderr only: stdout carries the answer, the JSON events or the RPC protocol.
        for warning in &warnings {
            stderr_line(&warning.to_string());
        }
    }
    let one_shot = match mode {
        AppMode::Interactive => {
            // Into the transcript: lines written before the interface starts would be
            // cleared away by its first full redraw.
            let warnings = warnings.into_iter().map(|w| w.message).collect();
            return match knightcode_cli::interactive::run(&args, warnings) {
                Ok(code) => code,
                Err(error) => {
                    stderr_line(&format!("Error: {error:#}"));
                    ExitCode::FAILURE
                }
            };
        }
        AppMode::Rpc => {
            return match knightcode_cli::setup::session_setup(&args) {
                Ok(setup) => ExitCode::from(knightcode_headless::rpc::run_stdio(setup)),
                Err(error) => {
                    stderr_line(&format!("Error: {error:#}"));
                    ExitCode::FAILURE
                }
            };
        }
        AppMode::Print => oneshot::OneShot::Print,
        AppMode::Json => oneshot::OneShot::Json,
    };
    match oneshot::run(&args, one_shot) {
        Ok(code) => code,
        Err(error) => {
            stderr_line(&format!("Error: {error:#}"));
            ExitCode::FAILURE
        }
    }
}

/// `--export <in.jsonl> [out.html]`: the page in the built-in theme's colours (no terminal
/// theme is loaded for a one-off export), `Exported to: <path>` on success.
fn export(input: &str, output: Option<&str>) -> ExitCode {
    let store = knightcode_session::SessionStore::default();
    let result = knightcode_runtime::export::export_file(
        &store,
        std::path::Path::new(input),
        output.map(std::path::Path::new),
        &knightcode_runtime::export::ExportColors::default(),
    );
    match result {
        Ok(path) => stdout(&format!("Exported to: {}\n", path.display())),
        Err(error) => {
            stderr_line(&format!("Error: {error}"));
            ExitCode::FAILURE
        }
    }
}

/// The package commands (`install`, `remove`, `update`, `list`, `config`); `None` for the
/// other subcommands.
fn package_command(argv: &[String]) -> Option<ExitCode> {
    if !matches!(
        argv.first().map(String::as_str),
        Some("install" | "remove" | "uninstall" | "update" | "list" | "config")
    ) {
        return None;
    }
    let layout = match (list_models::agent_dir(), std::env::current_dir()) {
        (Ok(agent_dir), Ok(cwd)) => knightcode_packages::Layout {
            agent_dir,
            cwd,
            home: std::env::home_dir(),
        },
        (Err(e), _) => {
            stderr_line(&format!("Error: {e:#}"));
            return Some(ExitCode::FAILURE);
        }
        (_, Err(e)) => {
            stderr_line(&format!("Error: cannot read the current folder: {e}"));
            return Some(ExitCode::FAILURE);
        }
    };
    let npm_command = knightcode_cli::packages::npm_command(&layout.agent_dir);
    let code = knightcode_cli::packages::run(
        argv,
        &layout,
        npm_command,
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    )?;
    Some(ExitCode::from(code))
}

/// `knightcode auth login|logout|check|print-api-key|print-bearer-token`.
fn auth_command(argv: &[String]) -> ExitCode {
    let agent_dir = match list_models::agent_dir() {
        Ok(dir) => dir,
        Err(e) => {
            stderr_line(&format!("Error: {e:#}"));
            return ExitCode::FAILURE;
        }
    };
    let code = knightcode_cli::auth::run(
        argv,
        &agent_dir,
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    );
    ExitCode::from(code)
}

/// `knightcode mcp list|add|remove`.
fn mcp_command(argv: &[String]) -> ExitCode {
    let layout = match (list_models::agent_dir(), std::env::current_dir()) {
        (Ok(agent_dir), Ok(cwd)) => knightcode_cli::mcp::Layout {
            agent_dir,
            cwd,
            home: std::env::home_dir(),
        },
        (Err(e), _) => {
            stderr_line(&format!("Error: {e:#}"));
            return ExitCode::FAILURE;
        }
        (_, Err(e)) => {
            stderr_line(&format!("Error: cannot read the current folder: {e}"));
            return ExitCode::FAILURE;
        }
    };
    let code = knightcode_cli::mcp::run(
        argv,
        &layout,
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    );
    ExitCode::from(code)
}

fn not_available(what: &str) -> ExitCode {
    stderr_line(&format!(
        "Error: {what} is not available yet in this build of knightcode; the interactive, print (-p), JSON (--mode json) and RPC (--mode rpc) modes work."
    ));
    ExitCode::FAILURE
}

/// Writes the command's output. A reader that went away (`knightcode --help | head -1`) is
/// not a failure; any other write error is.
fn stdout(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

/// Diagnostics go to stderr; if even that fails there is nowhere left to report it.
fn stderr_line(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
