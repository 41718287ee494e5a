//! Scripts run by the `codemode` tool outside the loop (no tools to call): output, the
//! `// @options:` line, errors, limits, timeouts, aborts, and `store()`/`load()`.

use std::sync::Arc;
use std::sync::Mutex;

use knightcode_agent::Tool;
use knightcode_agent::ToolContext;
use knightcode_agent::ToolError;
use knightcode_agent::ToolOutput;
use knightcode_codemode::Codemode;
use knightcode_codemode::CodemodeError;
use knightcode_codemode::ScriptStore;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[derive(Default)]
struct MemoryStore {
    values: Mutex<serde_json::Map<String, Value>>,
    saves: Mutex<Vec<Value>>,
}

impl ScriptStore for MemoryStore {
    fn load(&self) -> serde_json::Map<String, Value> {
        self.values.lock().unwrap().clone()
    }

    fn save(
        &self,
        set: serde_json::Map<String, Value>,
        delete: Vec<String>,
    ) -> Result<(), CodemodeError> {
        let mut values = self.values.lock().unwrap();
        for (k, v) in &set {
            values.insert(k.clone(), v.clone());
        }
        for k in &delete {
            values.remove(k);
        }
        self.saves
            .lock()
            .unwrap()
            .push(json!({"set": set, "delete": delete}));
        Ok(())
    }
}

async fn run_with(
    tool: &Codemode,
    code: &str,
    cancel: CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let context = ToolContext::new("call_1", ".", cancel);
    tool.execute(json!({ "code": code }), context).await
}

async fn run(code: &str) -> (String, bool) {
    let tool = Codemode::new(&[], None);
    let output = run_with(&tool, code, CancellationToken::new())
        .await
        .unwrap();
    let text = knightcode_protocol::content::join_text(&output.content);
    (text, output.is_error)
}

#[tokio::test]
async fn output_return_console_and_several_texts() {
    let (text, failed) = run("return 1 + 1;").await;
    assert!(!failed);
    assert!(text.starts_with("Script completed in "), "{text}");
    assert!(text.ends_with("\n\n2"), "{text}");

    let (text, _) =
        run("text('a');\ntext({ b: [1] });\nconsole.log('x', 2);\nconsole.warn('careful');").await;
    assert!(text.contains("==> text 1/2 <==\na"), "{text}");
    assert!(
        text.contains("==> text 2/2 <==\n{\n  \"b\": [\n    1\n  ]\n}"),
        "{text}"
    );
    assert!(
        text.contains("<console_output>\nx 2\n[warn] careful\n</console_output>"),
        "{text}"
    );

    let (text, failed) = run("text('before');\nexit();\ntext('after');").await;
    assert!(!failed);
    assert!(text.contains("before") && !text.contains("after"), "{text}");
}

#[tokio::test]
async fn no_node_file_system_network_or_timers() {
    let code = "return [typeof require, typeof process, typeof fetch, typeof setTimeout, typeof tools, typeof searchTools].join(',');";
    let (text, _) = run(code).await;
    assert!(
        text.ends_with("undefined,undefined,undefined,undefined,object,function"),
        "{text}"
    );
}

#[tokio::test]
async fn failures_keep_partial_output_and_say_what_failed() {
    let (text, failed) = run("text('partial');\nnull.x;").await;
    assert!(failed);
    assert!(text.starts_with("Script failed after "), "{text}");
    assert!(text.contains("partial"), "{text}");
    assert!(text.contains("Script error: TypeError"), "{text}");

    let (text, failed) = run("return (;").await;
    assert!(failed);
    assert!(text.contains("Script error: SyntaxError"), "{text}");

    let (text, failed) = run("await new Promise(() => {});").await;
    assert!(failed);
    assert!(text.contains("can never settle"), "{text}");

    let (text, failed) = run("await tools.nothing_here({});").await;
    assert!(failed);
    assert!(text.contains("TypeError"), "{text}");
}

#[tokio::test]
async fn options_line_sets_a_timeout_and_an_output_budget() {
    let (text, failed) = run("// @options: {\"timeout_ms\": 100}\nwhile (true) {}").await;
    assert!(failed);
    assert!(text.contains("timed out after 100 ms"), "{text}");

    let (text, failed) =
        run("// @options: {\"max_output_tokens\": 10}\nreturn 'a'.repeat(100) + 'z'.repeat(100);")
            .await;
    assert!(!failed);
    assert!(text.contains("chars truncated"), "{text}");
    assert!(text.contains("aaaa") && text.ends_with("zzzz"), "{text}");

    let tool = Codemode::new(&[], None);
    let error = run_with(
        &tool,
        "// @options: {\"speed\": 1}\nreturn 1;",
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(
        error.to_string().contains("unknown option \"speed\""),
        "{error}"
    );
}

#[tokio::test]
async fn limits_of_output_and_memory_are_errors_the_script_sees() {
    let (text, failed) = run("for (let i = 0; i < 100001; i++) console.log(i);").await;
    assert!(failed);
    assert!(
        text.contains("RangeError: output is limited to 100000 items"),
        "{text}"
    );

    let (text, failed) =
        run("const a = [];\nwhile (true) a.push('x'.repeat(1 << 20) + a.length);").await;
    assert!(failed);
    assert!(text.contains("out of memory"), "{text}");
}

#[tokio::test]
async fn an_abort_stops_a_looping_script() {
    let tool = Codemode::new(&[], None);
    let cancel = CancellationToken::new();
    let abort = cancel.clone();
    let running = run_with(&tool, "while (true) {}", cancel);
    let (result, ()) = tokio::join!(running, async move { abort.cancel() });
    assert_eq!(
        result.unwrap_err(),
        ToolError::Aborted("Operation aborted".to_owned())
    );
}

#[tokio::test]
async fn store_writes_are_saved_only_when_the_script_succeeds() {
    let store = Arc::new(MemoryStore::default());
    let tool = Codemode::new(&[], Some(store.clone()));
    let ok = run_with(
        &tool,
        "store('a', [1]);\nstore('b', 2);\nstore('b', undefined);\nreturn load('a');",
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert!(!ok.is_error);
    let failed = run_with(
        &tool,
        "store('a', 'lost');\nthrow new Error('no');",
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert!(failed.is_error);
    let loaded = run_with(&tool, "return load('a');", CancellationToken::new())
        .await
        .unwrap();
    let text = knightcode_protocol::content::join_text(&loaded.content);
    assert!(text.ends_with("[\n  1\n]"), "{text}");
    assert_eq!(
        *store.saves.lock().unwrap(),
        [json!({"set": {"a": [1]}, "delete": ["b"]})]
    );
    let (text, failed) = run("store('big', 'x'.repeat(300000));").await;
    assert!(failed);
    assert!(text.contains("RangeError: store()"), "{text}");
}
