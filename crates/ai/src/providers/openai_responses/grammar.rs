//! Grammar tools on the Responses API: a tool whose declaration asks for grammar-constrained
//! input (`constrainedSampling: {type: "grammar", variants}`) is sent as a *custom tool*
//! (`{"type": "custom", …, "format": {"type": "grammar", "syntax": "lark", …}}`) when the
//! model's `supportsOpenAIGrammarTools` compat flag is set, as the reference decides. The
//! model then answers with a `custom_tool_call` whose `input` is the raw text; the call is
//! kept as an ordinary tool call with that text as its one string argument (`{code: …}` for
//! codemode), and replayed as a `custom_tool_call` (its result as `custom_tool_call_output`)
//! to requests that declare the tool the same way, else as a `function_call`.

use std::collections::HashMap;

use knightcode_protocol::ToolDeclaration;
use serde_json::Value;
use serde_json::json;

use crate::error::StreamFailure;
use crate::model::Model;

/// How one tool is sent as a custom tool.
struct GrammarTool {
    syntax: &'static str,
    definition: String,
    /// The one string argument the raw input stands for.
    input_property: String,
}

/// The request's tools that are sent as custom tools, by name.
#[derive(Default)]
pub(crate) struct GrammarTools(HashMap<String, GrammarTool>);

impl GrammarTools {
    /// The grammar tools of a request; a tool that asks for a grammar it cannot have (no
    /// variant, or not exactly one required string argument) fails the request, as in the
    /// reference.
    pub(crate) fn resolve(model: &Model, tools: &[ToolDeclaration]) -> Result<Self, StreamFailure> {
        let mut found = HashMap::new();
        if !supported(model) {
            return Ok(Self(found));
        }
        for tool in tools {
            if let Some(grammar) = resolve_one(tool)? {
                found.insert(tool.name.clone(), grammar);
            }
        }
        Ok(Self(found))
    }

    /// [`GrammarTools::resolve`] for the stream decoder, which only needs the input
    /// properties: a tool the request refused is left out (that request never went out).
    pub(crate) fn lenient(model: &Model, tools: &[ToolDeclaration]) -> Self {
        if !supported(model) {
            return Self::default();
        }
        Self(
            tools
                .iter()
                .filter_map(|tool| Some((tool.name.clone(), resolve_one(tool).ok()??)))
                .collect(),
        )
    }

    /// The argument a custom call of `tool` stands for, when `tool` is sent as a custom tool.
    pub(crate) fn input_property(&self, tool: &str) -> Option<&str> {
        self.0.get(tool).map(|g| g.input_property.as_str())
    }

    /// The custom tool declaration of `tool`, when it is sent as one.
    pub(crate) fn custom_tool(&self, tool: &ToolDeclaration) -> Option<Value> {
        let grammar = self.0.get(&tool.name)?;
        Some(json!({
            "type": "custom",
            "name": tool.name,
            "description": tool.description,
            "format": {
                "type": "grammar",
                "syntax": grammar.syntax,
                "definition": grammar.definition,
            },
        }))
    }

    /// The raw input a stored call of a custom tool is replayed with.
    pub(crate) fn replay_input<'a>(
        tool: &str,
        arguments: &'a Value,
        property: &str,
    ) -> Result<&'a str, StreamFailure> {
        arguments
            .get(property)
            .and_then(Value::as_str)
            .ok_or_else(|| {
                StreamFailure::other(format!(
                    "Grammar tool call \"{tool}\" requires argument \"{property}\" to be a string."
                ))
            })
    }
}

fn supported(model: &Model) -> bool {
    model
        .compat_bool("supportsOpenAIGrammarTools")
        .unwrap_or(false)
}

fn resolve_one(tool: &ToolDeclaration) -> Result<Option<GrammarTool>, StreamFailure> {
    let Some(variants) = tool
        .constrained_sampling
        .as_ref()
        .and_then(|c| c.grammar_variants())
    else {
        return Ok(None);
    };
    let refused = |reason: &str| {
        StreamFailure::other(format!(
            "Tool \"{}\" cannot use grammar constrained sampling: {reason}.",
            tool.name
        ))
    };
    let usable = |v: &Option<String>| v.clone().filter(|d| !d.trim().is_empty());
    let (syntax, definition) = match (
        usable(&variants.openai_lark),
        usable(&variants.openai_regex),
    ) {
        (Some(lark), _) => ("lark", lark),
        (None, Some(regex)) => ("regex", regex),
        (None, None) => return Err(refused("no supported grammar variant was provided")),
    };
    let input_property = input_property(&tool.parameters).map_err(|e| refused(&e.reason()))?;
    Ok(Some(GrammarTool {
        syntax,
        definition,
        input_property,
    }))
}

/// Why a grammar tool's schema has no input property.
enum Unusable {
    NotObject,
    NotOneRequired,
    Undeclared(String),
    NotString(String),
}

impl Unusable {
    fn reason(&self) -> String {
        match self {
            Self::NotObject => {
                "grammar constrained sampling requires an object parameter schema".to_owned()
            }
            Self::NotOneRequired => {
                "grammar constrained sampling requires exactly one required string property"
                    .to_owned()
            }
            Self::Undeclared(property) => {
                format!("grammar constrained sampling requires a properties entry for {property}")
            }
            Self::NotString(property) => {
                format!("grammar constrained sampling property {property} must have type string")
            }
        }
    }
}

/// The schema's one required property, which must be a string: the raw input stands for it.
fn input_property(schema: &Value) -> Result<String, Unusable> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(Unusable::NotObject);
    }
    let property = match schema.get("required").and_then(Value::as_array) {
        Some(required) if required.len() == 1 => required[0].as_str(),
        _ => None,
    }
    .ok_or(Unusable::NotOneRequired)?;
    let Some(declared) = schema.get("properties").and_then(|p| p.get(property)) else {
        return Err(Unusable::Undeclared(property.to_owned()));
    };
    if declared.get("type").and_then(Value::as_str) != Some("string") {
        return Err(Unusable::NotString(property.to_owned()));
    }
    Ok(property.to_owned())
}

/// A custom call's raw input while it streams, turned into the JSON argument text of an
/// ordinary call (`{"code":"…"}`) a delta at a time, so tool-call deltas stay JSON.
pub(crate) struct CustomInput {
    pub(crate) property: String,
    /// The input so far (the call's argument).
    pub(crate) input: String,
    /// How much of it the JSON text already carries.
    emitted: usize,
    started: bool,
    closed: bool,
}

impl CustomInput {
    pub(crate) fn new(property: &str, input: &str) -> Self {
        Self {
            property: property.to_owned(),
            input: input.to_owned(),
            emitted: 0,
            started: false,
            closed: false,
        }
    }

    /// The JSON text to append when the input becomes `next` (`close`: it is complete), or
    /// `None` when there is nothing to add. An input that shrinks or changes after it was
    /// complete is an error, as in the reference.
    pub(crate) fn advance(
        &mut self,
        next: &str,
        close: bool,
    ) -> Result<Option<String>, StreamFailure> {
        let property = &self.property;
        if self.closed {
            if close && next == self.input {
                return Ok(None);
            }
            return Err(StreamFailure::other(format!(
                "grammar tool input for property \"{property}\" changed after it was closed"
            )));
        }
        let emitted = &self.input[..self.emitted];
        let Some(added) = next.strip_prefix(emitted) else {
            return Err(StreamFailure::other(format!(
                "grammar tool input for property \"{property}\" changed non-monotonically"
            )));
        };
        if !close && added.is_empty() {
            self.input = next.to_owned();
            return Ok(None);
        }
        let mut delta = String::new();
        if !self.started {
            delta.push('{');
            delta.push_str(&Value::String(property.clone()).to_string());
            delta.push_str(":\"");
            self.started = true;
        }
        let quoted = Value::String(added.to_owned()).to_string();
        delta.push_str(&quoted[1..quoted.len() - 1]);
        if close {
            delta.push_str("\"}");
            self.closed = true;
        }
        self.input = next.to_owned();
        self.emitted = next.len();
        Ok(Some(delta))
    }
}
