//! Turning a file (an extension's, or our own bootstrap script) into something to run:
//! through the load cache when it has the file (`cache.rs`), else strip, wrap, compile, and
//! store what that made. Every cache fault (a missing, damaged or foreign entry, bytecode
//! QuickJS refuses) falls back to compiling.

use std::path::Path;
use std::sync::Arc;

use rquickjs::Ctx;
use rquickjs::Object;
use rquickjs::Value;

use crate::bytecode;
use crate::bytecode::Sealed;
use crate::cache::Cache;
use crate::cache::Entry;
use crate::ops::Ops;
use crate::transpile::PositionMap;

/// The runner's wrapper around a stripped body (see `js/runner.js`): a function taking the
/// CommonJS arguments; for an ES module it returns the module-runner body function.
fn wrap(code: &str, module: bool, tla: bool) -> String {
    if module {
        format!(
            "(function (require, module, exports, __filename, __dirname) {{ return {}function (__vite_ssr_import__, __vite_ssr_dynamic_import__, __vite_ssr_exports__, __vite_ssr_exportAll__, __vite_ssr_import_meta__) {{\"use strict\";{code}\n}}}})",
            if tla { "async " } else { "" },
        )
    } else {
        format!("(function (exports, require, module, __filename, __dirname) {{{code}\n}})")
    }
}

/// Runs `source` (a global script named `name`) from its cached bytecode, or compiles it
/// and stores the bytecode. `entry` is what is stored beside it.
fn run_cached<'js>(
    ctx: &Ctx<'js>,
    cache: &Cache,
    key: &crate::cache::Key,
    name: &str,
    source: &str,
    mut entry: Entry,
) -> rquickjs::Result<Value<'js>> {
    let compiled = bytecode::compile(ctx, source, name)?;
    if cache.enabled()
        && let Ok(bytes) = compiled.write()
    {
        entry.bytecode = bytecode::seal(&bytes, cache.build());
        cache.put(key, &entry);
    }
    compiled.run()
}

/// Evaluates one of our bootstrap scripts.
pub(crate) fn bootstrap_script(
    ctx: &Ctx<'_>,
    cache: &Cache,
    name: &str,
    source: &str,
) -> rquickjs::Result<()> {
    if !cache.enabled() {
        let mut options = rquickjs::context::EvalOptions::default();
        options.global = true;
        options.strict = false;
        options.filename = Some(name.to_owned());
        return ctx.eval_with_options::<(), _>(source, options);
    }
    let key = cache.key(name, source.as_bytes());
    if let Some(entry) = cache.get(&key)
        && let Some(compiled) = Sealed(&entry.bytecode).open(ctx, cache.build())
    {
        return compiled.run().map(drop);
    }
    run_cached(ctx, cache, &key, name, source, Entry::default()).map(drop)
}

/// `__kc.loadFile(path)`: `{json}` for a JSON file, else `{module, tla, fn}` with `fn`
/// the wrapper function; a failure to read or strip is an `{"error": …}` JSON text for
/// the runner's `op` to throw, a QuickJS syntax error is thrown as it is.
pub(crate) fn load_file<'js>(
    ctx: &Ctx<'js>,
    ops: &Arc<Ops>,
    path: &str,
) -> rquickjs::Result<Value<'js>> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => return error_text(ctx, &crate::ops::io_error(&e, "open", path)),
    };
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let e = std::io::Error::new(std::io::ErrorKind::InvalidData, e);
            return error_text(ctx, &crate::ops::io_error(&e, "open", path));
        }
    };
    let out = Object::new(ctx.clone())?;
    if path.ends_with(".json") {
        out.set("json", text)?;
        return Ok(out.into_value());
    }
    let cache = ops.cache();
    let key = cache.key(path, text.as_bytes());
    let cached = if cache.enabled() {
        cache.get(&key)
    } else {
        None
    };
    let cached = cached.and_then(|entry| {
        let positions = PositionMap::from_bytes(&entry.positions)?;
        Some((entry, positions))
    });
    let function = match cached {
        Some((entry, positions)) => {
            ops.remember_positions(path, positions);
            out.set("module", entry.module)?;
            out.set("tla", entry.tla)?;
            match Sealed(&entry.bytecode).open(ctx, cache.build()) {
                Some(compiled) => compiled.run()?,
                None => {
                    let source = wrap(&entry.code, entry.module, entry.tla);
                    run_cached(ctx, cache, &key, path, &source, entry)?
                }
            }
        }
        None => {
            let stripped = match crate::transpile::strip(Path::new(path), &text) {
                Ok(stripped) => stripped,
                Err(e) => {
                    return error_text(ctx, &crate::ops::error("ERR_KC_SYNTAX", &e.to_string()));
                }
            };
            let entry = Entry {
                module: stripped.module,
                tla: stripped.top_level_await,
                positions: if cache.enabled() {
                    stripped.positions.to_bytes()
                } else {
                    Vec::new()
                },
                code: stripped.code,
                bytecode: Vec::new(),
            };
            ops.remember_positions(path, stripped.positions);
            out.set("module", entry.module)?;
            out.set("tla", entry.tla)?;
            let source = wrap(&entry.code, entry.module, entry.tla);
            run_cached(ctx, cache, &key, path, &source, entry)?
        }
    };
    out.set("fn", function)?;
    Ok(out.into_value())
}

fn error_text<'js>(ctx: &Ctx<'js>, error: &serde_json::Value) -> rquickjs::Result<Value<'js>> {
    rquickjs::String::from_str(ctx.clone(), &error.to_string()).map(rquickjs::String::into_value)
}
