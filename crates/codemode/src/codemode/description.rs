//! The `codemode` tool's description: what scripts are, their globals, and the tools it
//! lists, grouped by namespace, with TypeScript declarations while they fit in the inline
//! budget (`codemode.inlineBudget`, estimated tokens = characters / 4). Listed tools beyond
//! it are named by their namespace (or by name, for a tool without one), for
//! `describeNamespace`, `describeTool` and `searchTools` to describe on demand.

use std::collections::BTreeMap;

use knightcode_agent::ToolListing;

use super::CODEMODE_NAME;
use super::catalog;
use super::catalog::identifier;

const INTRO: &str = "Run JavaScript that calls other tools. The input is raw JavaScript (not JSON, no code fence), the body of an async function in a QuickJS sandbox: top-level `await` and `return` work. There is no Node, file system, network or timers.
- `await tools.<name>(args)` calls a tool: it resolves to the tool's text, or to an object where its declaration says so (MCP tools: their `CallToolResult`; `bash`: its output and `exit_code`, also for a failed command), and rejects with an Error when the call fails or is blocked. Calls still running when the script ends are cancelled.
- Optional first line: `// @options: {\"max_output_tokens\": 10000, \"timeout_ms\": 60000}`";

const GLOBALS: &str = "Globals:
- `text(value)`, `image(dataUrlOrImageBlock)`, `console.log(...)` and a top-level `return` add output; `exit()` ends the script.
- `store(key, value)` and `load(key)` keep JSON values across codemode calls on this branch.
- `models.getModelsOfType(type, provider?)`, `models.getAvailableOfType(type, provider?)` and `models.getModelOfType(type, provider, id)` list the session's models (`type`: \"chat\", \"image\" or \"classifier\"). `await models.classify(model, { state, questions }, { temperature? })` asks a classifier model typed questions about a JSON `state` (each question `{ type: \"choice\" | \"score\" | \"bool\", instructions, criteria }`: an object of options, a list of levels, `{ true, false }`) and resolves to `{ answers, stopReason, errorMessage? }`, answers keyed by question id (`{ choice, probabilities, confidence }`, `{ score, confidence }`, `{ probability }`). It never throws: a failure has `stopReason` \"error\". `await models.generateImages(model, request)` resolves to such an error result (this build has no image models).
- `ALL_TOOLS`, `await searchTools(query, { limit?, namespace? })`, `await describeTool(name)` and `await describeNamespace(name)` find tools that are not listed here, such as MCP tools.";

/// The intro, the globals, and `listed` (the tools the description lists) within
/// `inline_budget` estimated tokens of declarations; 0 lists only their namespaces.
pub fn description(listed: &[ToolListing], inline_budget: u64) -> String {
    let mut sections = vec![INTRO.to_owned(), GLOBALS.to_owned()];
    let mut budget = usize::try_from(inline_budget.saturating_mul(4)).unwrap_or(usize::MAX);
    let mut listing: Vec<String> = Vec::new();
    let mut uses_mcp = false;
    let mut sorted: Vec<&ToolListing> = listed
        .iter()
        .filter(|t| t.definition.name != CODEMODE_NAME)
        .collect();
    sorted.sort_by_key(|t| t.namespace.as_ref().map(|n| n.name.clone()));
    let mut heading: Option<String> = None;
    // Not inlined: by namespace (`None`: tools without one), with the namespace's description.
    let mut rest: BTreeMap<Option<String>, (Option<String>, Vec<String>)> = BTreeMap::new();
    for tool in sorted {
        let section = format!(
            "### `{}`\n{}",
            identifier(&tool.definition.name),
            catalog::declaration(tool)
        );
        let namespace = tool.namespace.as_ref().map(|n| n.name.clone());
        if section.len() > budget {
            let about = tool.namespace.as_ref().and_then(|n| n.description.clone());
            let entry = rest.entry(namespace).or_insert((about, Vec::new()));
            entry.1.push(identifier(&tool.definition.name));
            continue;
        }
        budget -= section.len();
        if namespace != heading {
            if let Some(ns) = &tool.namespace {
                let about = ns
                    .description
                    .as_deref()
                    .map(|d| format!("\n{d}"))
                    .unwrap_or_default();
                listing.push(format!("## {}{about}", ns.name));
            }
            heading = namespace;
        }
        uses_mcp |= tool
            .output_schema
            .as_ref()
            .is_some_and(catalog::is_call_tool_result);
        listing.push(section);
    }
    if uses_mcp {
        sections.push(format!(
            "Shared types:\n```ts\n{}\n```",
            catalog::CALL_TOOL_RESULT
        ));
    }
    if !listing.is_empty() {
        sections.push(format!("Tools:\n\n{}", listing.join("\n\n")));
    }
    if !rest.is_empty() {
        sections.push(unlisted(&rest));
    }
    sections.join("\n\n")
}

/// The listed tools whose declarations did not fit: namespaces with a count, and the names
/// of tools without a namespace.
fn unlisted(rest: &BTreeMap<Option<String>, (Option<String>, Vec<String>)>) -> String {
    let mut lines = vec![
        "More tools scripts can call, not declared here (`await describeNamespace(name)` and `await describeTool(name)` describe them, `await searchTools(query)` finds them):"
            .to_owned(),
    ];
    for (namespace, (about, names)) in rest {
        match namespace {
            Some(name) => {
                let count = match names.len() {
                    1 => "1 tool".to_owned(),
                    n => format!("{n} tools"),
                };
                let about = about
                    .as_deref()
                    .and_then(|d| d.lines().next())
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default();
                lines.push(format!("- namespace `{name}` ({count}){about}"));
            }
            None => {
                let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
                lines.push(format!("- {}", names.join(", ")));
            }
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use knightcode_agent::ExecutionMode;
    use knightcode_agent::ToolDefinition;
    use knightcode_agent::ToolExposure;
    use knightcode_agent::ToolNamespace;
    use serde_json::json;

    use super::*;
    use crate::DEFAULT_INLINE_BUDGET;

    fn tool(name: &str, namespace: Option<&str>) -> ToolListing {
        ToolListing {
            definition: ToolDefinition {
                name: name.to_owned(),
                label: name.to_owned(),
                description: format!("The {name} tool"),
                parameters: json!({"type": "object", "properties": {"x": {"type": "string"}}}),
                prompt_snippet: None,
                prompt_guidelines: Vec::new(),
                execution: ExecutionMode::Parallel,
            },
            exposure: ToolExposure::Codemode,
            namespace: namespace.map(|name| ToolNamespace {
                name: name.to_owned(),
                description: Some(format!("All about {name}")),
                ..ToolNamespace::default()
            }),
            active: false,
            callable: true,
            output_schema: None,
        }
    }

    #[test]
    fn declarations_fill_the_budget_and_the_rest_are_named_by_namespace() {
        let listed = [
            tool("alpha", None),
            tool("beta", None),
            tool("docs_search", Some("docs")),
            tool("docs_read", Some("docs")),
        ];
        let all = description(&listed, DEFAULT_INLINE_BUDGET);
        assert!(all.contains("tools.alpha(args: {"), "{all}");
        assert!(all.contains("## docs\nAll about docs"), "{all}");
        assert!(all.contains("tools.docs_read(args"), "{all}");
        assert!(!all.contains("More tools"), "{all}");

        let none = description(&listed, 0);
        assert!(!none.contains("tools.alpha(args"), "{none}");
        assert!(!none.contains("Tools:\n"), "{none}");
        assert!(
            none.contains("- `alpha`, `beta`\n- namespace `docs` (2 tools): All about docs"),
            "{none}"
        );

        // Room for one declaration (about 30 tokens each): the first in order.
        let one = description(&listed, 30);
        assert!(one.contains("tools.alpha(args"), "{one}");
        assert!(!one.contains("tools.beta(args"), "{one}");
        assert!(
            one.contains("- `beta`\n- namespace `docs` (2 tools)"),
            "{one}"
        );
    }
}
