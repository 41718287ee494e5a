//! The agent survives its extensions: runaway loops end on abort, deep recursion and heap
//! exhaustion throw inside the extension, unhandled rejections and throwing timers become
//! `extension_error` events, and after each the host still answers.

use std::sync::Arc;
use std::sync::Mutex;

use knightcode_agent::AgentHooks as _;
use knightcode_agent::EventReceiver;
use knightcode_agent::PendingToolCall;
use knightcode_agent::ToolCallVerdict;
use knightcode_agent::ToolContext;
use knightcode_agent::ToolError;
use knightcode_ext::ExtensionHost;
use knightcode_ext::HostConfig;
use knightcode_ext::SessionPort;
use knightcode_protocol::AgentEvent;
use serde_json::Value;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// A session whose only action is `setSessionName`, which tells the test what the
/// extension is doing ("looping" right before it spins).
struct Signals(Mutex<mpsc::UnboundedSender<String>>);

impl SessionPort for Signals {
    fn call(
        &self,
        op: knightcode_ext::SessionOp,
        args: Value,
    ) -> Result<Value, knightcode_ext::PortError> {
        if op == knightcode_ext::SessionOp::SetSessionName {
            let name = args["name"].as_str().unwrap_or_default().to_owned();
            let _ = self.0.lock().unwrap().send(name);
        }
        Ok(Value::Null)
    }
}

struct Loaded {
    host: Arc<ExtensionHost>,
    signals: mpsc::UnboundedReceiver<String>,
    events: EventReceiver,
    _dir: tempfile::TempDir,
}

async fn load(source: &str, memory_limit: Option<usize>) -> Loaded {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ext.ts");
    std::fs::write(&path, source).unwrap();
    // A cache of the test's own (cold: each test loads once).
    let host = ExtensionHost::load_with_cache(
        HostConfig {
            paths: vec![path],
            cwd: dir.path().to_path_buf(),
            mode: "print".to_owned(),
            flags: serde_json::Map::new(),
            memory_limit,
        },
        Some(dir.path().join("cache")),
    )
    .await
    .unwrap();
    let (tx, signals) = mpsc::unbounded_channel();
    let (sender, events) = knightcode_agent::event_channel(64);
    host.bind(Arc::new(Signals(Mutex::new(tx))), sender);
    Loaded {
        host,
        signals,
        events,
        _dir: dir,
    }
}

async fn next_error(events: &mut EventReceiver) -> (String, String) {
    loop {
        match events.recv().await.expect("the event stream ended") {
            AgentEvent::ExtensionError { event, error, .. } => return (event, error),
            _ => continue,
        }
    }
}

fn call<'a>(name: &'a str, arguments: &'a Value) -> PendingToolCall<'a> {
    PendingToolCall {
        tool_call_id: "call_1",
        tool_name: name,
        arguments,
        parent_tool_call_id: None,
    }
}

/// After a fault the host must still run handlers: `ping` blocks every `ping` tool call.
const PING: &str = r#"
  pi.on("tool_call", (event) => { if (event.toolName === "ping") return { block: true, reason: "pong" }; });
"#;

async fn still_answers(host: &ExtensionHost) {
    let args = json!({});
    let verdict = host
        .before_tool_call(call("ping", &args), &CancellationToken::new())
        .await;
    assert_eq!(verdict, ToolCallVerdict::Block("pong".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_interrupts_a_handler_stuck_in_a_synchronous_loop() {
    let source = format!(
        "export default function (pi) {{
           pi.on(\"tool_call\", (event) => {{
             if (event.toolName !== \"spin\") return;
             pi.setSessionName(\"looping\");
             while (true) {{}}
           }});
           {PING}
         }}"
    );
    let mut loaded = load(&source, None).await;
    let cancel = CancellationToken::new();
    let args = json!({});
    let host = Arc::clone(&loaded.host);
    let aborting = cancel.clone();
    let verdict = {
        let gate = host.before_tool_call(call("spin", &args), &cancel);
        let abort = async {
            assert_eq!(loaded.signals.recv().await.unwrap(), "looping");
            aborting.cancel();
            std::future::pending::<()>().await
        };
        tokio::select! { verdict = gate => verdict, () = abort => unreachable!() }
    };
    assert_eq!(verdict, ToolCallVerdict::Proceed);
    let (event, error) = next_error(&mut loaded.events).await;
    assert_eq!(event, "tool_call");
    assert!(error.contains("interrupted by an abort"), "{error}");
    still_answers(&loaded.host).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_ends_a_tool_whose_body_never_returns() {
    let source = format!(
        "export default function (pi) {{
           pi.registerTool({{
             name: \"spin\", label: \"Spin\", description: \"never returns\",
             parameters: {{ type: \"object\", properties: {{}} }},
             async execute() {{ pi.setSessionName(\"looping\"); while (true) {{}} }},
           }});
           {PING}
         }}"
    );
    let mut loaded = load(&source, None).await;
    let tool = loaded
        .host
        .tools()
        .into_iter()
        .find(|t| t.definition().name == "spin")
        .unwrap();
    let cancel = CancellationToken::new();
    let context = ToolContext::new("call_1", std::env::temp_dir(), cancel.clone());
    let result = {
        let run = tool.execute(json!({}), context);
        let abort = async {
            assert_eq!(loaded.signals.recv().await.unwrap(), "looping");
            cancel.cancel();
            std::future::pending::<()>().await
        };
        tokio::select! { result = run => result, () = abort => unreachable!() }
    };
    assert!(matches!(result, Err(ToolError::Aborted(_))), "{result:?}");
    still_answers(&loaded.host).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_recursion_throws_a_range_error_inside_the_handler() {
    let source = format!(
        "export default function (pi) {{
           const down = (n) => down(n + 1) + 1;
           pi.on(\"tool_call\", (event) => {{ if (event.toolName === \"deep\") down(0); }});
           {PING}
         }}"
    );
    let mut loaded = load(&source, None).await;
    let args = json!({});
    // A throwing `tool_call` handler blocks the call (fail-safe) and is reported.
    let verdict = loaded
        .host
        .before_tool_call(call("deep", &args), &CancellationToken::new())
        .await;
    assert!(matches!(verdict, ToolCallVerdict::Block(_)), "{verdict:?}");
    let (event, error) = next_error(&mut loaded.events).await;
    assert_eq!(event, "tool_call");
    assert!(
        error.contains("Maximum call stack size exceeded"),
        "{error}"
    );
    still_answers(&loaded.host).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heap_exhaustion_throws_out_of_memory_and_the_heap_is_usable_again() {
    let source = format!(
        "export default function (pi) {{
           pi.on(\"tool_call\", (event) => {{
             if (event.toolName !== \"hog\") return;
             const hoard = [];
             while (true) hoard.push(new Array(100000).fill(hoard.length));
           }});
           {PING}
         }}"
    );
    let mut loaded = load(&source, Some(64 << 20)).await;
    let args = json!({});
    let verdict = loaded
        .host
        .before_tool_call(call("hog", &args), &CancellationToken::new())
        .await;
    assert!(matches!(verdict, ToolCallVerdict::Block(_)), "{verdict:?}");
    let (_, error) = next_error(&mut loaded.events).await;
    assert!(error.contains("out of memory"), "{error}");
    still_answers(&loaded.host).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unhandled_rejections_and_throwing_timers_are_reported_handled_ones_are_not() {
    let source = format!(
        "export default function (pi) {{
           pi.on(\"tool_call\", (event) => {{
             if (event.toolName !== \"fire\") return;
             // Rejected, then handled before the JS thread runs out of work: not reported.
             const later = Promise.reject(new Error(\"handled later\"));
             Promise.resolve().then(() => later.catch(() => {{}}));
             Promise.reject(new Error(\"nobody listens\"));
             setTimeout(() => {{ throw new Error(\"timer threw\"); }}, 0);
           }});
           {PING}
         }}"
    );
    let mut loaded = load(&source, None).await;
    let args = json!({});
    let verdict = loaded
        .host
        .before_tool_call(call("fire", &args), &CancellationToken::new())
        .await;
    assert_eq!(verdict, ToolCallVerdict::Proceed);
    let mut errors = vec![
        next_error(&mut loaded.events).await,
        next_error(&mut loaded.events).await,
    ];
    errors.sort();
    assert_eq!(
        errors,
        vec![
            ("uncaught".to_owned(), "timer threw".to_owned()),
            (
                "unhandledRejection".to_owned(),
                "Unhandled promise rejection: nobody listens".to_owned()
            ),
        ]
    );
    still_answers(&loaded.host).await;
    assert!(
        loaded.events.try_recv().is_err(),
        "nothing else was reported"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_while_the_host_is_idle_does_not_hit_the_next_call() {
    let loaded = load(&format!("export default function (pi) {{ {PING} }}"), None).await;
    loaded.host.interrupt();
    still_answers(&loaded.host).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_after_an_await_fails_the_call_instead_of_hanging_it() {
    let source = format!(
        "export default function (pi) {{
           pi.on(\"agent_end\", async () => {{
             await Promise.resolve();
             pi.setSessionName(\"looping\");
             while (true) {{}}
           }});
           {PING}
         }}"
    );
    let mut loaded = load(&source, None).await;
    let host = Arc::clone(&loaded.host);
    let delivered = {
        let delivery = host.dispatch("agent_end", json!({ "messages": [] }));
        let abort = async {
            assert_eq!(loaded.signals.recv().await.unwrap(), "looping");
            host.interrupt();
            std::future::pending::<()>().await
        };
        tokio::select! { delivered = delivery => delivered, () = abort => unreachable!() }
    };
    assert_eq!(delivered, None);
    let (event, error) = next_error(&mut loaded.events).await;
    assert_eq!(event, "agent_end");
    assert!(error.contains("interrupted"), "{error}");
    still_answers(&loaded.host).await;
}
