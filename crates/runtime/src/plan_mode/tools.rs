//! `ask_user` and `submit_plan`: registered with the session's tools, declared only once
//! planning activates them.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use knightcode_agent::ExecutionMode;
use knightcode_agent::Tool;
use knightcode_agent::ToolContext;
use knightcode_agent::ToolDefinition;
use knightcode_agent::ToolError;
use knightcode_agent::ToolExposure;
use knightcode_agent::ToolFuture;
use knightcode_agent::ToolOutput;
use knightcode_protocol::plan::PlanDraft;
use knightcode_protocol::plan::PlanMode as Mode;
use knightcode_protocol::plan::PlanState;
use knightcode_protocol::rpc::UiReply;
use knightcode_protocol::rpc::UiRequestKind;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::dialogs::Dialogs;
use crate::dialogs::Question;
use crate::dialogs::QuestionAnswer;
use crate::dialogs::QuestionChoice;

use super::ASK_USER;
use super::PlanMode;
use super::SUBMIT_PLAN;

/// The two planning tools, sharing the built-in's state.
pub(crate) fn planning_tools(plan: &Arc<PlanMode>) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(AskUser {
            plan: Arc::clone(plan),
            definition: ask_user_definition(),
        }),
        Arc::new(SubmitPlan {
            plan: Arc::clone(plan),
            definition: submit_plan_definition(),
        }),
    ]
}

fn ask_user_definition() -> ToolDefinition {
    ToolDefinition {
        name: ASK_USER.to_owned(),
        label: "Ask user".to_owned(),
        description: "Ask the user to decide a trade-off the plan depends on. Offer two to four choices, the recommended one first; the user may also answer in their own words. Without anyone to answer, the recommended choice is taken: record it under Assumptions in the plan.".to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "question": {"type": "string", "description": "The question, in one or two sentences"},
                "options": {
                    "type": "array",
                    "minItems": 2,
                    "maxItems": 4,
                    "description": "Two to four choices, the recommended one first",
                    "items": {
                        "type": "object",
                        "properties": {
                            "label": {"type": "string", "description": "The choice, a few words"},
                            "description": {"type": "string", "description": "What choosing it means"}
                        },
                        "required": ["label"]
                    }
                }
            },
            "required": ["question", "options"]
        }),
        prompt_snippet: Some("Ask the user to decide a trade-off (2-4 choices, recommended first)".to_owned()),
        prompt_guidelines: Vec::new(),
        execution: ExecutionMode::Sequential,
    }
}

fn submit_plan_definition() -> ToolDefinition {
    ToolDefinition {
        name: SUBMIT_PLAN.to_owned(),
        label: "Submit plan".to_owned(),
        description: "Submit the complete plan as Markdown: the goal, the specific changes with file paths, the commands that verify them, and Assumptions. It replaces the previous draft entirely and ends the run; the user then reviews it.".to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "markdown": {"type": "string", "description": "The complete plan in Markdown"}
            },
            "required": ["markdown"]
        }),
        prompt_snippet: Some("Submit the complete Markdown plan for the user's review".to_owned()),
        prompt_guidelines: Vec::new(),
        execution: ExecutionMode::Sequential,
    }
}

struct AskUser {
    plan: Arc<PlanMode>,
    definition: ToolDefinition,
}

/// The free-text choice added after the model's options.
const OWN_ANSWER: &str = "Type your own answer";

impl Tool for AskUser {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn execute(&self, arguments: Value, context: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let question = arguments["question"]
                .as_str()
                .unwrap_or("")
                .trim()
                .to_owned();
            let labels: Vec<String> = arguments["options"]
                .as_array()
                .map(|options| {
                    options
                        .iter()
                        .filter_map(|o| o["label"].as_str())
                        .map(|l| l.trim().to_owned())
                        .collect()
                })
                .unwrap_or_default();
            if question.is_empty() || !(2..=4).contains(&labels.len()) {
                return Err(ToolError::failed(
                    "ask_user needs a question and two to four options with labels, the recommended one first.",
                ));
            }
            let recommended = labels[0].clone();
            let dialogs = self.plan.dialogs();
            if !dialogs.has_ui() {
                return Ok(ToolOutput::text(format!(
                    "Nobody can answer questions here. Proceed with the recommended option, \"{recommended}\", and record that decision under Assumptions in the plan."
                ))
                .with_details(json!({"answer": recommended, "assumed": true})));
            }
            let descriptions: Vec<Option<String>> = (0..labels.len())
                .map(|i| {
                    arguments["options"][i]["description"]
                        .as_str()
                        .map(str::to_owned)
                })
                .collect();
            let asked = Asked {
                question: &question,
                labels: &labels,
                descriptions: &descriptions,
            };
            let answer = match dialogs.ask_question(asked.question(), context.cancel.clone()) {
                Some(wait) => match wait.await {
                    Some(QuestionAnswer::Choice { index, .. }) => labels.get(index).cloned(),
                    Some(QuestionAnswer::Typed(text)) => Some(text),
                    None => None,
                },
                None => asked.with_dialogs(dialogs.as_ref(), &context.cancel).await,
            };
            if context.cancel.is_cancelled() {
                return Err(ToolError::Aborted("Operation aborted".to_owned()));
            }
            Ok(match answer {
                Some(answer) => ToolOutput::text(format!("The user answered: {answer}"))
                    .with_details(json!({"answer": answer, "assumed": false})),
                None => ToolOutput::text(
                    "The user dismissed the question. Proceed with your best judgment and record the decision under Assumptions in the plan.",
                )
                .with_details(json!({"answer": null, "assumed": true})),
            })
        })
    }

    fn exposure(&self) -> ToolExposure {
        ToolExposure::ModelOnly
    }

    fn active_on_registration(&self) -> bool {
        false
    }
}

/// An `ask_user` question as the model wrote it.
struct Asked<'a> {
    question: &'a str,
    labels: &'a [String],
    descriptions: &'a [Option<String>],
}

impl Asked<'_> {
    /// For the terminal's question picker: the first choice marked as recommended, each
    /// description under its label, and a row for a typed answer.
    fn question(&self) -> Question {
        let choices = self
            .labels
            .iter()
            .zip(self.descriptions)
            .enumerate()
            .map(|(i, (label, description))| {
                let label = match i {
                    0 => format!("{label} (recommended)"),
                    _ => label.clone(),
                };
                QuestionChoice::new(label).described(description.clone())
            })
            .collect();
        Question {
            title: self.question.to_owned(),
            choices,
            typed_answer: Some(OWN_ANSWER.to_owned()),
        }
    }

    /// Through plain dialogs (RPC): a `select` whose options carry the descriptions after a
    /// dash, and an `input` when the user types their own answer.
    async fn with_dialogs(
        &self,
        dialogs: &dyn Dialogs,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let mut shown: Vec<String> = self
            .labels
            .iter()
            .zip(self.descriptions)
            .enumerate()
            .map(|(i, (label, description))| {
                let description = description
                    .as_deref()
                    .map(|d| format!(" — {d}"))
                    .unwrap_or_default();
                let mark = if i == 0 { " (recommended)" } else { "" };
                format!("{label}{mark}{description}")
            })
            .collect();
        shown.push(OWN_ANSWER.to_owned());
        let select = UiRequestKind::Select {
            title: self.question.to_owned(),
            options: shown.clone(),
            timeout: None,
        };
        match dialogs.extension_ui(select, None, cancel.clone()).await {
            Some(UiReply::Value(choice)) if choice == OWN_ANSWER => {
                let input = UiRequestKind::Input {
                    title: self.question.to_owned(),
                    placeholder: None,
                    timeout: None,
                };
                match dialogs.extension_ui(input, None, cancel.clone()).await {
                    Some(UiReply::Value(text)) if !text.trim().is_empty() => {
                        Some(text.trim().to_owned())
                    }
                    _ => None,
                }
            }
            Some(UiReply::Value(choice)) => shown
                .iter()
                .position(|s| *s == choice)
                .and_then(|i| self.labels.get(i).cloned())
                .or(Some(choice)),
            _ => None,
        }
    }
}

struct SubmitPlan {
    plan: Arc<PlanMode>,
    definition: ToolDefinition,
}

impl Tool for SubmitPlan {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn execute(&self, arguments: Value, _context: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let markdown = arguments["markdown"].as_str().unwrap_or("").to_owned();
            if markdown.trim().is_empty() {
                return Err(ToolError::failed(
                    "submit_plan needs the complete plan as Markdown in `markdown`.",
                ));
            }
            let state = match self.plan.state() {
                Ok(Some(state)) if state.planning() => state,
                Ok(_) => {
                    return Err(ToolError::failed(
                        "submit_plan only works while planning; the session is not planning now.",
                    ));
                }
                Err(error) => {
                    return Err(ToolError::failed(format!(
                        "The plan-mode state cannot be read: {error}."
                    )));
                }
            };
            let revision = state.revision().unwrap_or(0) + 1;
            self.plan
                .save(&PlanState {
                    mode: Mode::Planning,
                    draft: Some(PlanDraft {
                        revision,
                        markdown: markdown.clone(),
                    }),
                    approved: None,
                })
                .map_err(|error| {
                    ToolError::failed(format!("The plan could not be saved: {error}."))
                })?;
            self.plan.submitted.store(true, Ordering::Relaxed);
            Ok(ToolOutput {
                terminate: true,
                ..ToolOutput::text(format!(
                    "Plan revision {revision} submitted. The run ends here; the user reviews the plan."
                ))
                .with_details(json!({"revision": revision, "markdown": markdown}))
            })
        })
    }

    fn exposure(&self) -> ToolExposure {
        ToolExposure::ModelOnly
    }

    fn active_on_registration(&self) -> bool {
        false
    }
}
