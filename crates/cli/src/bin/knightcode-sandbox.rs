//! `knightcode-sandbox`: the sandbox launcher alone. The agent starts each sandboxed command
//! through it (`knightcode-sandbox __sandbox-exec <policy> -- <command>`): a small binary
//! execs in a fraction of the agent's own start-up, which is most of what the sandbox adds
//! to a command. `knightcode __sandbox-exec` does the same where this binary is missing.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    if args
        .next()
        .is_none_or(|first| first != knightcode_sandbox::EXEC_ARG)
    {
        let usage = format!(
            "knightcode-sandbox is started by knightcode for sandboxed commands \
             (knightcode-sandbox {} --mode <mode> [--write <folder>]... [--network] -- <command>); \
             see docs/security.md\n",
            knightcode_sandbox::EXEC_ARG
        );
        let _ = std::io::Write::write_all(&mut std::io::stderr(), usage.as_bytes());
        return ExitCode::from(2);
    }
    let rest: Vec<std::ffi::OsString> = args.collect();
    let error = knightcode_sandbox::exec_main(&rest);
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("knightcode: {error}\n").as_bytes(),
    );
    ExitCode::from(126)
}
