//! `knightcode-mock-provider`: serves a scripted model over one wire format on 127.0.0.1, so
//! benchmark and fidelity scripts can point the reference agent `pi` or `knightcode` at it.
//!
//! ```text
//! knightcode-mock-provider --format openai-completions --script replies.json [--port 0] [--log requests.jsonl]
//! ```
//!
//! The first stdout line is the base URL to configure (`baseUrl` in models.json). The process
//! serves until it is killed.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use knightcode_testkit::{MockServer, WireFormat, read_script};

const USAGE: &str = "usage: knightcode-mock-provider --format \
anthropic-messages|openai-completions|openai-responses|google --script replies.json \
[--port N] [--log requests.jsonl]

The script is a JSON array of replies, one per request, e.g.
  [{\"parts\":[{\"thinking\":{\"text\":\"hmm\"}},{\"toolCall\":{\"id\":\"call_1\",\"name\":\"ls\",\"argumentsJson\":\"{}\"}}]},
   {\"parts\":[{\"text\":\"done\"}],\"usage\":{\"input\":10,\"output\":2}}]
\"chunking\":{\"textChars\":4,\"intervalMs\":1} in a reply streams 4-character deltas 1 ms apart.
Prints the base URL on the first stdout line, then serves until killed.";

struct Args {
    format: WireFormat,
    script: PathBuf,
    port: u16,
    log: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut format = None;
    let mut script = None;
    let mut port = 0u16;
    let mut log = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
            None => (arg.clone(), None),
        };
        if name == "--help" || name == "-h" {
            return Err(String::new());
        }
        let mut value = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match name.as_str() {
            "--format" => {
                let v = value()?;
                format = Some(
                    WireFormat::from_api_name(&v).ok_or_else(|| format!("unknown format {v}"))?,
                );
            }
            "--script" => script = Some(PathBuf::from(value()?)),
            "--port" => {
                let v = value()?;
                port = v.parse().map_err(|_| format!("invalid port {v}"))?;
            }
            "--log" => log = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(Args {
        format: format.ok_or("--format is required")?,
        script: script.ok_or("--script is required")?,
        port,
        log,
    })
}

fn fail(message: &str) -> ExitCode {
    let mut stderr = std::io::stderr().lock();
    if !message.is_empty() {
        let _ = writeln!(stderr, "knightcode-mock-provider: {message}");
    }
    let _ = writeln!(stderr, "{USAGE}");
    ExitCode::from(2)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => return fail(&message),
    };
    let replies = match read_script(&args.script) {
        Ok(replies) => replies,
        Err(err) => return fail(&err.to_string()),
    };
    let mut builder = MockServer::builder(args.format)
        .replies(replies)
        .port(args.port);
    if let Some(log) = args.log {
        builder = builder.request_log(log);
    }
    let server = match builder.start().await {
        Ok(server) => server,
        Err(err) => return fail(&err.to_string()),
    };
    {
        let mut stdout = std::io::stdout().lock();
        // Scripts block on this line; if stdout is gone there is nobody to serve.
        if writeln!(stdout, "{}", server.base_url())
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
    }
    std::future::pending::<()>().await;
    drop(server);
    ExitCode::SUCCESS
}
