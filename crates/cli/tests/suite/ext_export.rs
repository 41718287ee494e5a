//! The HTML export of a session with extensions' tools: calls drawn by the tools'
//! renderers (`renderCall`/`renderResult`, `registerToolRenderer`) carry those drawings in
//! the page, as the terminal shows them; the page draws the built-in tools and any call
//! whose renderer fails.

use crate::rpc_common;

use knightcode_testkit::ScriptedReply;
use rpc_common::Rpc;
use rpc_common::watchdog;

const EXTENSION: &str = r#"
import { Type } from "typebox";
const line = (text) => ({ render: () => [text], invalidate() {} });
export default function (pi) {
  pi.registerTool({
    name: "weather",
    label: "Weather",
    description: "The weather in a city",
    parameters: Type.Object({ city: Type.String() }),
    async execute(_id, { city }) {
      return { content: [{ type: "text", text: `raw weather for ${city}` }], details: { celsius: 22 } };
    },
    renderCall: (args, theme) => line(theme.bold(`Weather for ${args.city}`)),
    renderResult: (result, { expanded }, theme) =>
      line(theme.fg("error", expanded ? `all day ${result.details.celsius}°C` : "sunny")),
  });
  pi.registerTool({
    name: "broken",
    label: "Broken",
    description: "A tool whose renderer throws",
    parameters: Type.Object({}),
    async execute() {
      return { content: [{ type: "text", text: "broken but fine" }], details: {} };
    },
    renderCall() { throw new Error("no drawing today"); },
  });
  // A resolver over a built-in tool: the page draws those itself, as in the reference.
  pi.registerToolRenderer((name, next) => name === "ls" ? { renderCall: () => line("LS DRAWN") } : next());
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_export_shows_tool_calls_as_their_renderers_draw_them() {
    watchdog(async {
        let rpc = Rpc::start_prepared(
            vec![
                ScriptedReply::tool_call("call-w", "weather", r#"{"city":"Paris"}"#),
                ScriptedReply::tool_call("call-b", "broken", "{}"),
                ScriptedReply::tool_call("call-l", "ls", "{}"),
                ScriptedReply::text("Done."),
            ],
            &["-e", "ext.ts"],
            |sandbox| std::fs::write(sandbox.project.join("ext.ts"), EXTENSION).unwrap(),
        )
        .await;
        let mut rpc = rpc;
        rpc.client.prompt("Weather?").await.unwrap();
        rpc.settled().await;
        let path = rpc.client.export_html(None).await.unwrap();
        let page = std::fs::read_to_string(rpc.sandbox.project.join(&path)).unwrap();
        // The session data is JSON inside the page: `<` is written `\u003c` there.
        let data = page.replace("\\u003c", "<").replace("\\u003e", ">");
        let drawn = data
            .split("\"renderedTools\":")
            .nth(1)
            .unwrap_or_else(|| panic!("no renderedTools in the page: {data}"));
        assert!(drawn.contains("\"call-w\""), "{drawn}");
        assert!(drawn.contains("Weather for Paris"), "{drawn}");
        assert!(drawn.contains("sunny"), "{drawn}");
        assert!(drawn.contains("all day 22°C"), "{drawn}");
        assert!(
            drawn.contains("<span style="),
            "the colours are kept: {drawn}"
        );
        // The throwing renderer and the built-in tool are left to the page.
        assert!(!drawn.contains("\"call-b\""), "{drawn}");
        assert!(!drawn.contains("LS DRAWN"), "{drawn}");
        rpc.shutdown().await;
    })
    .await;
}
