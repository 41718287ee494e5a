//! `ctx.executeTool(name, args, {signal, onUpdate})` and `ctx.tools` in a tool's context:
//! the JS side asks for a nested call of the tool call whose `execute` it is in, and the
//! agent loop's pipeline runs it ([`ToolContext::execute_tool`]: validation, `tool_call` and
//! `tool_result` handlers, `tool_execution_*` events with `parentToolCallId`, the
//! `nestedCalls` record). The contexts of the running extension tool calls are kept here by
//! call id for that; partial results of a nested call go back to its JS `onUpdate` as
//! `nestedUpdate` calls.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use knightcode_agent::NestedCallOptions;
use knightcode_agent::ToolContext;
use knightcode_agent::ToolOutput;
use rquickjs::Ctx;
use rquickjs::Function;
use rquickjs::Object;
use rquickjs::Promise;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The running extension tool calls and their nested calls.
#[derive(Default)]
pub(crate) struct NestedOps {
    /// The context of each extension tool call while its `execute` runs.
    contexts: Mutex<HashMap<String, ToolContext>>,
    /// Each nested call's abort (its JS `signal`), by the id JS gave the request.
    cancels: Mutex<HashMap<u64, CancellationToken>>,
    /// The calling call of each nested call between `tool_call` and `tool_result`, for the
    /// `parentToolCallId` of the latter.
    parents: Mutex<HashMap<String, String>>,
}

impl NestedOps {
    pub(crate) fn watch(&self, context: &ToolContext) {
        if context.can_execute_tools() {
            lock(&self.contexts).insert(context.tool_call_id.clone(), context.clone());
        }
    }

    pub(crate) fn unwatch(&self, call_id: &str) {
        lock(&self.contexts).remove(call_id);
    }

    fn context(&self, call_id: &str) -> Option<ToolContext> {
        lock(&self.contexts).get(call_id).cloned()
    }

    pub(crate) fn note_parent(&self, call_id: &str, parent: Option<&str>) {
        if let Some(parent) = parent {
            lock(&self.parents).insert(call_id.to_owned(), parent.to_owned());
        }
    }

    pub(crate) fn take_parent(&self, call_id: &str) -> Option<String> {
        lock(&self.parents).remove(call_id)
    }
}

fn output_json(output: &ToolOutput) -> Value {
    json!({ "content": output.content, "details": output.details })
}

/// `ctx.tools`: what a tool may call, as `{name, label, description, parameters,
/// executionMode}`.
fn callable_json(context: Option<ToolContext>) -> Value {
    let tools = context.map(|c| c.callable_tools()).unwrap_or_default();
    Value::Array(
        tools
            .into_iter()
            .map(|d| {
                json!({
                    "name": d.name,
                    "label": d.label,
                    "description": d.description,
                    "parameters": d.parameters,
                    "executionMode": match d.execution {
                        knightcode_agent::ExecutionMode::Sequential => "sequential",
                        knightcode_agent::ExecutionMode::Parallel => "parallel",
                    },
                })
            })
            .collect(),
    )
}

pub(crate) fn install<'js>(
    ctx: &Ctx<'js>,
    kc: &Object<'js>,
    ops: &Arc<crate::ops::Ops>,
) -> rquickjs::Result<()> {
    let o = Arc::clone(ops);
    kc.set(
        "executeNested",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, id: f64, args: String| -> rquickjs::Result<Promise<'js>> {
                let id = id as u64;
                let args: Value = serde_json::from_str(&args).unwrap_or(Value::Null);
                let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or("");
                let parent = o.nested.context(text("parentToolCallId"));
                let name = text("name").to_owned();
                let arguments = args.get("arguments").cloned().unwrap_or(Value::Null);
                let main = o.providers.main.lock().ok().and_then(|m| m.clone());
                let engine = o.providers.engine.lock().ok().and_then(|e| e.clone());
                let cancel = CancellationToken::new();
                lock(&o.nested.cancels).insert(id, cancel.clone());
                let on_update: Option<knightcode_agent::UpdateSink> =
                    (args.get("updates").and_then(Value::as_bool) == Some(true))
                        .then_some(engine)
                        .flatten()
                        .map(|engine| {
                            Arc::new(move |partial: ToolOutput| {
                                if let Some(engine) = engine.upgrade() {
                                    engine.post(
                                        "nestedUpdate",
                                        &json!({ "id": id, "partial": output_json(&partial) }),
                                    );
                                }
                            }) as knightcode_agent::UpdateSink
                        });
                let done = Arc::clone(&o);
                crate::providers_ops::async_op(&ctx, async move {
                    let reply = match (parent, main) {
                        (Some(parent), Some(main)) => {
                            let options = NestedCallOptions {
                                cancel: Some(cancel),
                                on_update,
                            };
                            // On the session's runtime, where the tools' processes live.
                            let running = parent.execute_tool(&name, arguments, options);
                            match main.spawn(running).await {
                                Ok(outcome) => json!({ "ok": outcome.to_json() }),
                                Err(_) => {
                                    json!({ "error": { "message": "the nested tool call stopped" } })
                                }
                            }
                        }
                        _ => json!({ "error": { "message":
                            "ctx.executeTool() can only be called while the tool's execute() runs" } }),
                    };
                    lock(&done.nested.cancels).remove(&id);
                    reply.to_string()
                })
            },
        )?,
    )?;
    let o = Arc::clone(ops);
    kc.set(
        "cancelNested",
        Function::new(ctx.clone(), move |id: f64| {
            if let Some(cancel) = lock(&o.nested.cancels).remove(&(id as u64)) {
                cancel.cancel();
            }
        })?,
    )?;
    let o = Arc::clone(ops);
    kc.set(
        "nestedTools",
        Function::new(ctx.clone(), move |call_id: String| {
            callable_json(o.nested.context(&call_id)).to_string()
        })?,
    )?;
    Ok(())
}
