//! A stand-in for llama.cpp's `llama-server` as classifier models use it: `/tokenize` with
//! a configurable vocabulary, `/apply-template` with a small chat template, and
//! `/completion` answering the top next-token log-probabilities configured per prompt
//! (truncated to the request's `n_probs`). Every request is recorded; faults (an HTTP
//! error for the next requests to a path) are queued.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;

use serde_json::Value;
use serde_json::json;
use tokio::io::BufReader;
use tokio::net::TcpListener;

use crate::error::TestkitError;
use crate::http::read_request;
use crate::http::write_sized;

/// One request the server saw.
#[derive(Debug, Clone)]
pub struct LlamaRequest {
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The JSON body (`null` when it was not JSON).
    pub body: Value,
}

impl LlamaRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// How the server behaves.
#[derive(Debug, Clone, Default)]
pub struct LlamaScript {
    /// Tokens by text. A text is tokenized greedily, longest known piece first; a character
    /// no piece starts with becomes token `100000 + its code point`.
    pub vocab: Vec<(String, u64)>,
    /// Whether the chat template opens a `<think>` block for the reply.
    pub opens_think: bool,
    /// The ranked next tokens (`(id, logprob)`, most likely first) of the first rule whose
    /// text the prompt contains; no rule: an empty list.
    pub logprobs: Vec<(String, Vec<(u64, f64)>)>,
}

impl LlamaScript {
    fn tokenize(&self, text: &str) -> Vec<u64> {
        let mut tokens = Vec::new();
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            let piece = self
                .vocab
                .iter()
                .filter(|(piece, _)| !piece.is_empty() && rest.starts_with(piece.as_str()))
                .max_by_key(|(piece, _)| piece.len());
            match piece {
                Some((piece, id)) => {
                    tokens.push(*id);
                    rest = &rest[piece.len()..];
                }
                None => {
                    tokens.push(100_000 + u64::from(u32::from(c)));
                    rest = &rest[c.len_utf8()..];
                }
            }
        }
        tokens
    }

    /// The template: each message as `<|role|>content`, one a line, then the reply's head.
    fn apply_template(&self, messages: &[Value]) -> String {
        let mut prompt = String::new();
        for message in messages {
            let role = message.get("role").and_then(Value::as_str).unwrap_or("");
            let content = message.get("content").and_then(Value::as_str).unwrap_or("");
            prompt.push_str(&format!("<|{role}|>{content}\n"));
        }
        prompt.push_str("<|assistant|>\n");
        if self.opens_think {
            prompt.push_str("<think>");
        }
        prompt
    }

    fn top(&self, prompt: &str, depth: usize) -> Vec<Value> {
        let ranked = self
            .logprobs
            .iter()
            .find(|(needle, _)| prompt.contains(needle.as_str()))
            .map(|(_, ranked)| ranked.as_slice())
            .unwrap_or_default();
        ranked
            .iter()
            .take(depth)
            .map(|(id, logprob)| json!({"id": id, "token": format!("t{id}"), "logprob": logprob, "bytes": []}))
            .collect()
    }
}

/// A queued answer that replaces the next normal one of a path.
#[derive(Debug, Clone)]
struct Fault {
    path: String,
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

struct Shared {
    script: Mutex<LlamaScript>,
    faults: Mutex<VecDeque<Fault>>,
    requests: Mutex<Vec<LlamaRequest>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The server; it stops when dropped.
pub struct LlamaServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl LlamaServer {
    /// Serves `script` on `127.0.0.1` from a thread of its own (usable from sync tests and
    /// async ones alike).
    pub fn start(script: LlamaScript) -> Result<Self, TestkitError> {
        let (std_listener, addr) = crate::thread_server::bind(([127, 0, 0, 1], 0).into())?;
        let shared = Arc::new(Shared {
            script: Mutex::new(script),
            faults: Mutex::default(),
            requests: Mutex::default(),
        });
        let thread_shared = Arc::clone(&shared);
        let (stop, _) =
            crate::thread_server::serve_on_thread("knightcode-mock-llama", std_listener, |l| {
                serve(l, thread_shared)
            })?;
        Ok(Self {
            shared,
            addr,
            _stop: stop,
        })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The next request to `path` answers `status` with `body` (and `headers`).
    pub fn fail_next(&self, path: &str, status: u16, headers: &[(&str, &str)], body: &str) {
        lock(&self.shared.faults).push_back(Fault {
            path: path.to_owned(),
            status,
            headers: headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
            body: body.to_owned(),
        });
    }

    /// Changes how the server behaves from the next request on.
    pub fn set_script(&self, script: LlamaScript) {
        *lock(&self.shared.script) = script;
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<LlamaRequest> {
        lock(&self.shared.requests).clone()
    }

    /// The requests to `path`, in arrival order.
    pub fn requests_to(&self, path: &str) -> Vec<LlamaRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.path == path)
            .collect()
    }
}

async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    while let Ok((stream, _)) = listener.accept().await {
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let mut stream = BufReader::new(stream);
            while let Ok(Some(request)) = read_request(&mut stream).await {
                let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
                lock(&shared.requests).push(LlamaRequest {
                    path: request.path.clone(),
                    headers: request.headers.clone(),
                    body: body.clone(),
                });
                let (status, headers, answer) = answer(&shared, &request.path, &body);
                let mut headers = headers;
                headers.push(("content-type".into(), "application/json".into()));
                let sent = write_sized(stream.get_mut(), status, headers, answer.as_bytes()).await;
                if sent.is_err() || request.wants_close() {
                    return;
                }
            }
        });
    }
}

fn answer(shared: &Shared, path: &str, body: &Value) -> (u16, Vec<(String, String)>, String) {
    {
        let mut faults = lock(&shared.faults);
        if let Some(index) = faults.iter().position(|f| f.path == path)
            && let Some(fault) = faults.remove(index)
        {
            return (fault.status, fault.headers, fault.body);
        }
    }
    let script = lock(&shared.script).clone();
    let text = |key: &str| body.get(key).and_then(Value::as_str).unwrap_or("");
    let ok = |value: Value| (200, Vec::new(), value.to_string());
    match path {
        "/tokenize" => ok(json!({"tokens": script.tokenize(text("content"))})),
        "/apply-template" => {
            let messages = body
                .get("messages")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            ok(json!({"prompt": script.apply_template(&messages)}))
        }
        "/completion" => {
            let depth = body.get("n_probs").and_then(Value::as_u64).unwrap_or(0) as usize;
            let top = script.top(text("prompt"), depth);
            ok(json!({
                "content": "",
                "completion_probabilities": [{"id": 0, "token": "", "logprob": 0, "top_logprobs": top}],
            }))
        }
        _ => (
            404,
            Vec::new(),
            json!({"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}})
                .to_string(),
        ),
    }
}
