//! The checks of a probe, each a JSON object judged against what the run left behind:
//!
//! - `{"exit": n}` (without one, exit 0 is expected)
//! - `{"stdout": text}`, `{"stdout_lacks": text}`, `{"stderr": text}`, `{"stderr_lacks": text}`
//! - `{"file": path}` exists, with `"contains"`/`"lacks"`; `{"no_file": path}`
//! - `{"requests": n}`: model requests made
//! - `{"request": i, "contains"|"lacks": text}` (negative `i` counts from the end)
//! - `{"offered": tool, "request": i}`, `{"not_offered": tool, "request": i}`
//! - `{"event": type}` on stdout (JSON/RPC), with `"contains"`/`"lacks"`; `{"no_event": type}`
//! - `{"ui": method}`: an `extension_ui_request`, with `"contains"`; `{"no_ui": method}`
//! - `{"entry": type}`: a session entry, with `"contains"`; `{"no_entry": type}`
//! - `{"shell": command}`: its output in the project afterwards, with `"contains"`/`"lacks"`
//!
//! "contains" means some string inside the value (or its JSON text) contains the text;
//! `"last": true` judges only the last matching value.

use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use std::path::Path;

use serde_json::Value;

use super::probe::Observed;

fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k);
            strings(v, out);
        }),
        _ => {}
    }
}

pub fn contains(value: &Value, text: &str) -> bool {
    let mut all = Vec::new();
    strings(value, &mut all);
    all.iter().any(|s| s.contains(text)) || value.to_string().contains(text)
}

fn session_entries(agent: &Path) -> Vec<Value> {
    let mut entries = Vec::new();
    let Ok(dirs) = std::fs::read_dir(agent.join("sessions")) else {
        return entries;
    };
    for dir in dirs.flatten() {
        for file in std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let text = std::fs::read_to_string(file.path()).unwrap_or_default();
            entries.extend(text.lines().filter_map(|l| serde_json::from_str(l).ok()));
        }
    }
    entries
}

fn text_of(check: &Value, key: &str) -> Option<String> {
    check.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Matching values must exist; with `contains`, one must contain it; with `lacks`, none may.
/// With `"last": true` only the last matching value is judged.
fn judge(
    what: &str,
    mut items: Vec<&Value>,
    check: &Value,
    shown: impl Fn() -> String,
) -> Result<(), String> {
    if check["last"] == true && items.len() > 1 {
        items.drain(..items.len() - 1);
    }
    if let Some(text) = text_of(check, "lacks") {
        return match items.iter().find(|v| contains(v, &text)) {
            Some(v) => Err(format!(
                "{what}: one contains {text:?}: {}",
                clip(&v.to_string())
            )),
            None => Ok(()),
        };
    }
    if items.is_empty() {
        return Err(format!("{what}: none (saw {})", shown()));
    }
    match text_of(check, "contains") {
        Some(text) if !items.iter().any(|v| contains(v, &text)) => Err(format!(
            "{what}: none contains {text:?}; first: {}",
            clip(&items[0].to_string())
        )),
        _ => Ok(()),
    }
}

pub fn clip(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() > 300 {
        format!("{}…", text.chars().take(300).collect::<String>())
    } else {
        text.to_owned()
    }
}

fn index(list_len: usize, check: &Value) -> Option<usize> {
    let i = check["request"].as_i64().unwrap_or(0);
    if i < 0 {
        list_len.checked_sub(i.unsigned_abs() as usize)
    } else {
        Some(i as usize).filter(|&i| i < list_len)
    }
}

fn offered(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect()
}

fn types(list: &[Value]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for v in list {
        let t = v["type"].as_str().or(v["method"].as_str()).unwrap_or("?");
        if !seen.contains(&t) {
            seen.push(t);
        }
    }
    seen.join(",")
}

/// The check kinds, in the order they are looked for (`request` is also the index of
/// `offered`).
const KINDS: [&str; 18] = [
    "exit",
    "stdout",
    "stdout_lacks",
    "stderr",
    "stderr_lacks",
    "file",
    "no_file",
    "requests",
    "offered",
    "not_offered",
    "request",
    "event",
    "no_event",
    "ui",
    "no_ui",
    "entry",
    "no_entry",
    "shell",
];

/// `{project}`, `{agent}` and `{home}` in the check's strings name the run's folders.
fn expand(o: &Observed, value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(
            s.replace("{project}", &o.project.to_string_lossy())
                .replace("{agent}", &o.agent.to_string_lossy())
                .replace("{home}", &o.home.to_string_lossy()),
        ),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), expand(o, v))).collect())
        }
        other => other.clone(),
    }
}

/// Judges one check.
pub fn check(o: &Observed, check: &Value) -> Result<(), String> {
    let check = &expand(o, check);
    let map = check.as_object().ok_or("a check is an object")?;
    let key = KINDS
        .iter()
        .find(|k| map.contains_key(**k))
        .ok_or_else(|| format!("unknown check {check}"))?;
    let key = *key;
    let arg = &check[key];
    let arg_str = arg.as_str().unwrap_or("");
    match key {
        "exit" => match o.code {
            Some(c) if Some(i64::from(c)) == arg.as_i64() => Ok(()),
            other => Err(format!("exit {other:?}, expected {arg}")),
        },
        "stdout" if o.stdout.contains(arg_str) => Ok(()),
        "stdout" => Err(format!("stdout lacks {arg_str:?}: {}", clip(&o.stdout))),
        "stdout_lacks" if !o.stdout.contains(arg_str) => Ok(()),
        "stdout_lacks" => Err(format!("stdout contains {arg_str:?}")),
        "stderr_lacks" if !o.stderr.contains(arg_str) => Ok(()),
        "stderr_lacks" => Err(format!("stderr contains {arg_str:?}: {}", clip(&o.stderr))),
        "stderr" if o.stderr.contains(arg_str) => Ok(()),
        "stderr" => Err(format!("stderr lacks {arg_str:?}: {}", clip(&o.stderr))),
        "file" => {
            let path = o.project.join(arg_str);
            let Ok(text) = std::fs::read_to_string(&path) else {
                return Err(format!("no file {arg_str}"));
            };
            let value = Value::String(text);
            judge(&format!("file {arg_str}"), vec![&value], check, String::new)
        }
        "no_file" if o.project.join(arg_str).exists() => Err(format!("file {arg_str} exists")),
        "no_file" => Ok(()),
        "requests" if Some(o.requests.len() as u64) == arg.as_u64() => Ok(()),
        "requests" => Err(format!(
            "{} model requests, expected {arg}",
            o.requests.len()
        )),
        "request" => {
            let Some(i) = index(o.requests.len(), check) else {
                return Err(format!("no request {arg} (made {})", o.requests.len()));
            };
            judge(
                &format!("request {arg}"),
                vec![&o.requests[i]],
                check,
                String::new,
            )
        }
        "offered" | "not_offered" => {
            let Some(i) = index(o.requests.len(), check) else {
                return Err(format!(
                    "no request {} (made {})",
                    check["request"],
                    o.requests.len()
                ));
            };
            let tools = offered(&o.requests[i]);
            let has = tools.iter().any(|t| t == arg_str);
            match (key, has) {
                ("offered", false) => Err(format!("{arg_str} not offered: {tools:?}")),
                ("not_offered", true) => Err(format!("{arg_str} offered: {tools:?}")),
                _ => Ok(()),
            }
        }
        "event" => {
            let items = o.events.iter().filter(|e| e["type"] == arg_str).collect();
            judge(&format!("event {arg_str}"), items, check, || {
                types(&o.events)
            })
        }
        "no_event" => match o.events.iter().find(|e| e["type"] == arg_str) {
            Some(e) => Err(format!("event {arg_str}: {}", clip(&e.to_string()))),
            None => Ok(()),
        },
        "ui" => {
            let items = o
                .ui_requests
                .iter()
                .filter(|e| e["method"] == arg_str)
                .collect();
            judge(&format!("ui {arg_str}"), items, check, || {
                types(&o.ui_requests)
            })
        }
        "no_ui" => match o.ui_requests.iter().find(|e| e["method"] == arg_str) {
            Some(e) => Err(format!("ui {arg_str}: {}", clip(&e.to_string()))),
            None => Ok(()),
        },
        "entry" | "no_entry" => {
            let entries = session_entries(&o.agent);
            let items: Vec<&Value> = entries.iter().filter(|e| e["type"] == arg_str).collect();
            if key == "no_entry" {
                return match items.first() {
                    Some(e) => Err(format!("entry {arg_str}: {}", clip(&e.to_string()))),
                    None => Ok(()),
                };
            }
            judge(&format!("entry {arg_str}"), items, check, || {
                types(&entries)
            })
        }
        "shell" => {
            let output = std::process::Command::new("sh")
                .args(["-c", arg_str])
                .current_dir(&o.project)
                .env("HOME", &o.home)
                .output_within(PROCESS_LIMIT, "a probe's shell check")
                .map_err(|e| format!("{arg_str}: {e}"))?;
            let text = Value::String(format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
            judge(&format!("`{arg_str}`"), vec![&text], check, String::new)
        }
        other => Err(format!("unknown check {other}")),
    }
}
