//! The `__kc` ops of `js/providers.js` (see `providers.rs`).

use std::sync::Arc;

use rquickjs::Ctx;
use rquickjs::Function;
use rquickjs::Object;
use rquickjs::Promise;
use serde_json::Value;
use serde_json::json;

use crate::providers::ProviderOps;

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// The async ops' one shape: a promise resolved with the text `future` ends with, the
/// future run on the JS thread's executor.
pub(crate) fn async_op<'js>(
    ctx: &Ctx<'js>,
    future: impl std::future::Future<Output = String> + 'js,
) -> rquickjs::Result<Promise<'js>> {
    let (promise, resolve, _reject) = ctx.promise()?;
    ctx.spawn(async move {
        let _ = resolve.call::<_, ()>((future.await,));
    });
    Ok(promise)
}

pub(crate) fn install<'js>(
    ctx: &Ctx<'js>,
    kc: &Object<'js>,
    ops: &Arc<ProviderOps>,
) -> rquickjs::Result<()> {
    let p = Arc::clone(ops);
    kc.set(
        "streamEvent",
        Function::new(ctx.clone(), move |id: f64, event: String| {
            p.js_event(id as u64, parse(&event)).to_string()
        })?,
    )?;
    let p = Arc::clone(ops);
    kc.set(
        "models",
        Function::new(ctx.clone(), move || p.models().to_string())?,
    )?;
    let p = Arc::clone(ops);
    kc.set(
        "modelsVersion",
        Function::new(ctx.clone(), move || p.models_version())?,
    )?;
    let p = Arc::clone(ops);
    kc.set(
        "modelAuth",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, model: String| -> rquickjs::Result<Promise<'js>> {
                let future = p.auth(parse(&model));
                async_op(&ctx, async move { future.await.to_string() })
            },
        )?,
    )?;
    let p = Arc::clone(ops);
    kc.set(
        "modelClassify",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, request: String| -> rquickjs::Result<Promise<'js>> {
                let future = p.classify(parse(&request));
                async_op(&ctx, async move { future.await.to_string() })
            },
        )?,
    )?;
    let p = Arc::clone(ops);
    kc.set(
        "modelStream",
        Function::new(ctx.clone(), move |args: String| {
            p.start_rust_stream(parse(&args)).to_string()
        })?,
    )?;
    let p = Arc::clone(ops);
    kc.set(
        "modelNext",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, id: f64| -> rquickjs::Result<Promise<'js>> {
                let id = id as u64;
                let stream = p.rust_stream(id);
                let p = Arc::clone(&p);
                async_op(&ctx, async move {
                    let next = match stream {
                        Some(stream) => stream.lock().await.recv().await,
                        None => None,
                    };
                    if next.is_none() {
                        p.finish_rust_stream(id);
                    }
                    next.unwrap_or_else(|| "null".to_owned())
                })
            },
        )?,
    )?;
    let p = Arc::clone(ops);
    kc.set(
        "modelAbort",
        Function::new(ctx.clone(), move |id: f64| {
            p.abort_rust_stream(id as u64).to_string()
        })?,
    )?;
    let p = Arc::clone(ops);
    kc.set(
        "jsStreamPayload",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, id: f64, payload: String| -> rquickjs::Result<Promise<'js>> {
                let hook = p.js_payload_hook(id as u64);
                let main = p.main.lock().ok().and_then(|m| m.clone());
                let payload = parse(&payload);
                async_op(&ctx, async move {
                    let result = match (hook, main) {
                        // The hook dispatches to extensions, which may need this thread:
                        // it runs on the session's runtime while this one waits.
                        (Some(hook), Some(main)) => {
                            let original = payload.clone();
                            match main.spawn(async move { (hook.0)(payload).await }).await {
                                Ok(replaced) => replaced,
                                Err(_) => original,
                            }
                        }
                        _ => payload,
                    };
                    json!({ "ok": result }).to_string()
                })
            },
        )?,
    )?;
    let p = Arc::clone(ops);
    kc.set(
        "fetch",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, args: String| -> rquickjs::Result<Promise<'js>> {
                let main = p.main.lock().ok().and_then(|m| m.clone());
                let args = parse(&args);
                let bodies = Arc::clone(&p.bodies);
                async_op(&ctx, async move {
                    let result = match main {
                        // On the session's runtime: its I/O driver serves the connection.
                        Some(main) => main
                            .spawn(crate::fetch::fetch(args, bodies))
                            .await
                            .unwrap_or_else(|_| json!({ "error": { "code": "ERR_KC_FETCH", "message": "fetch was cancelled" } })),
                        None => crate::fetch::fetch(args, bodies).await,
                    };
                    result.to_string()
                })
            },
        )?,
    )?;
    let p = Arc::clone(ops);
    kc.set(
        "jsStreamResponse",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>,
                  id: f64,
                  status: f64,
                  headers: String|
                  -> rquickjs::Result<Promise<'js>> {
                let hook = p.js_response_hook(id as u64);
                let main = p.main.lock().ok().and_then(|m| m.clone());
                let headers = parse(&headers).as_object().cloned().unwrap_or_default();
                async_op(&ctx, async move {
                    if let (Some(hook), Some(main)) = (hook, main) {
                        // As for payloads: extensions' handlers may need this thread.
                        let _ = main
                            .spawn(async move { (hook.0)(status as u16, headers).await })
                            .await;
                    }
                    "{\"ok\":null}".to_owned()
                })
            },
        )?,
    )?;
    let p = Arc::clone(ops);
    kc.set(
        "fetchRead",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, id: f64| -> rquickjs::Result<Promise<'js>> {
                let main = p.main.lock().ok().and_then(|m| m.clone());
                let bodies = Arc::clone(&p.bodies);
                async_op(&ctx, async move {
                    let result = match main {
                        Some(main) => main
                            .spawn(async move { bodies.read(id as u64).await })
                            .await
                            .unwrap_or_else(|_| json!({ "ok": null })),
                        None => bodies.read(id as u64).await,
                    };
                    result.to_string()
                })
            },
        )?,
    )?;
    let p = Arc::clone(ops);
    kc.set(
        "fetchClose",
        Function::new(ctx.clone(), move |id: f64| p.bodies.close(id as u64))?,
    )?;
    Ok(())
}

/// The ops of `js/tools.js`: built-in tools run for the tool factories.
pub(crate) fn install_tools<'js>(
    ctx: &Ctx<'js>,
    kc: &Object<'js>,
    ops: &Arc<crate::ops::Ops>,
) -> rquickjs::Result<()> {
    let o = Arc::clone(ops);
    kc.set(
        "builtinTool",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, args: String| -> rquickjs::Result<Promise<'js>> {
                let run = crate::tools::BuiltinRun::from_json(&parse(&args));
                let main = o.providers.main.lock().ok().and_then(|m| m.clone());
                let engine = o.providers.engine.lock().ok().and_then(|e| e.clone());
                let updates = run
                    .js_updates
                    .then(|| crate::tools::js_update_sink(&o.providers, run.run));
                let tools = Arc::clone(&o.tools);
                // The partial results posted to the caller's onUpdate run before the result
                // resolves its call: the call's updates are heard only while it runs.
                let flush = updates
                    .as_ref()
                    .and(engine.as_ref())
                    .and_then(crate::engine::WeakEngine::upgrade);
                async_op(&ctx, async move {
                    let result = match (main, engine) {
                        // On the session's runtime, where the tools' processes and timers live.
                        (Some(main), Some(engine)) => main
                            .spawn(crate::tools::run_builtin(run, engine, tools, updates))
                            .await
                            .unwrap_or_else(|_| json!({ "error": { "message": "the tool stopped" } })),
                        _ => json!({ "error": { "message": "built-in tools are not available before the session starts" } }),
                    };
                    if let Some(engine) = flush {
                        engine.flushed().await;
                    }
                    result.to_string()
                })
            },
        )?,
    )?;
    kc.set(
        "builtinToolDefinition",
        Function::new(ctx.clone(), |name: String| {
            crate::tools::definition(&name).to_string()
        })?,
    )?;
    let o = Arc::clone(ops);
    kc.set(
        "builtinToolAbort",
        Function::new(ctx.clone(), move |run: f64| o.tools.abort(run as u64))?,
    )?;
    let o = Arc::clone(ops);
    kc.set(
        "toolOpData",
        Function::new(ctx.clone(), move |sink: f64, data: String| {
            o.tools
                .data(sink as u64, &crate::tools::decode_base64(&data));
        })?,
    )?;
    Ok(())
}
