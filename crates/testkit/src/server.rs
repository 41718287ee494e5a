//! The mock server: accepts connections on 127.0.0.1, records each request, and plays the next
//! scripted reply as a real chunked SSE stream (or the reply's fault).

use std::collections::VecDeque;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::pin::pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinSet;

use crate::error::TestkitError;
use crate::formats::{self, RequestCtx};
use crate::http::{self, HttpRequest};
use crate::log::RequestLog;
use crate::script::{Fault, MockErrorKind, ScriptedReply, WireFormat};

/// One request as the server received it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// HTTP method, e.g. `POST`.
    pub method: String,
    /// Path without the query, e.g. `/v1/messages`.
    pub path: String,
    /// Raw query string without `?` (empty when absent), e.g. `alt=sse`.
    pub query: String,
    /// Headers with lower-cased names, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON; a JSON string holding the raw text when it is not JSON, `null`
    /// when empty.
    pub body: serde_json::Value,
}

impl RecordedRequest {
    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Counters of what the server has done so far, for waiting on it without sleeping
/// (see [`MockServer::wait_until`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Activity {
    /// Requests received (any path).
    pub requests: usize,
    /// Replies taken from the script.
    pub replies_served: usize,
    /// Streams that reached a [`Fault::StallAfterEvents`] point and are waiting.
    pub stalls: usize,
    /// Streams that ended because the client went away (while stalled or writing).
    pub client_disconnects: usize,
    /// Responses written to the end (including faults that end the response on purpose).
    pub completed: usize,
}

/// State shared between the handle and the connection tasks.
pub(crate) struct Shared {
    format: WireFormat,
    state: Mutex<State>,
    /// Wakes async waiters on every state change.
    changed: Notify,
    /// Wakes blocking waiters on every state change.
    changed_sync: Condvar,
    /// Releases stalled streams.
    release: Notify,
    log: Option<RequestLog>,
    /// Fixed JSON answers to `GET` paths (a local server's model list).
    documents: Vec<(String, String)>,
}

#[derive(Default)]
struct State {
    replies: VecDeque<ScriptedReply>,
    requests: Vec<RecordedRequest>,
    activity: Activity,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking test thread must not make every later assertion panic too.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        f(&mut self.lock());
        self.changed.notify_waiters();
        self.changed_sync.notify_all();
    }
}

/// How the server's tasks are kept alive, and stopped on drop.
enum Lifetime {
    /// Runs on the caller's runtime; aborting the accept task drops every connection task.
    Task(tokio::task::JoinHandle<()>),
    /// Runs on its own runtime thread.
    Thread {
        shutdown: Option<oneshot::Sender<()>>,
        thread: Option<std::thread::JoinHandle<()>>,
    },
}

/// A scripted mock provider listening on `127.0.0.1`.
///
/// Each request to the format's endpoint consumes the next [`ScriptedReply`]; requests beyond
/// the script get HTTP 500 with a body saying so. Every request (any path) is recorded.
/// Dropping the server closes the listener and every open connection.
pub struct MockServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    lifetime: Lifetime,
}

/// Options for starting a server; see [`MockServer::builder`].
pub struct MockServerBuilder {
    format: WireFormat,
    replies: Vec<ScriptedReply>,
    addr: SocketAddr,
    log_path: Option<PathBuf>,
    documents: Vec<(String, String)>,
}

impl MockServerBuilder {
    /// Answers `GET path` with this JSON, as local model servers answer `/v1/models`.
    pub fn document(mut self, path: &str, json: serde_json::Value) -> Self {
        self.documents.push((path.to_owned(), json.to_string()));
        self
    }

    /// Sets the script.
    pub fn replies(mut self, replies: Vec<ScriptedReply>) -> Self {
        self.replies = replies;
        self
    }

    /// Binds to this port on 127.0.0.1 instead of an ephemeral one.
    pub fn port(mut self, port: u16) -> Self {
        self.addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        self
    }

    /// Appends every recorded request as one JSON line to this file (created or truncated).
    pub fn request_log(mut self, path: impl Into<PathBuf>) -> Self {
        self.log_path = Some(path.into());
        self
    }

    fn into_shared(self) -> Result<(Arc<Shared>, SocketAddr), TestkitError> {
        let log = match self.log_path {
            Some(path) => Some(RequestLog::create(path)?),
            None => None,
        };
        let shared = Arc::new(Shared {
            format: self.format,
            state: Mutex::new(State {
                replies: self.replies.into(),
                ..State::default()
            }),
            changed: Notify::new(),
            changed_sync: Condvar::new(),
            release: Notify::new(),
            log,
            documents: self.documents,
        });
        Ok((shared, self.addr))
    }

    /// Starts the server on the current tokio runtime.
    pub async fn start(self) -> Result<MockServer, TestkitError> {
        let (shared, addr) = self.into_shared()?;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| TestkitError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| TestkitError::Bind { addr, source })?;
        let task = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        Ok(MockServer {
            shared,
            addr,
            lifetime: Lifetime::Task(task),
        })
    }

    /// Starts the server on a runtime thread of its own, for synchronous tests (for example
    /// ones that run a child-process binary against it). Must not be called from async code
    /// that forbids blocking.
    pub fn start_blocking(self) -> Result<MockServer, TestkitError> {
        let (shared, addr) = self.into_shared()?;
        let (std_listener, addr) = crate::thread_server::bind(addr)?;
        let thread_shared = Arc::clone(&shared);
        let (shutdown_tx, thread) =
            crate::thread_server::serve_on_thread("knightcode-mock-provider", std_listener, |l| {
                accept_loop(l, thread_shared)
            })?;
        Ok(MockServer {
            shared,
            addr,
            lifetime: Lifetime::Thread {
                shutdown: Some(shutdown_tx),
                thread: Some(thread),
            },
        })
    }
}

impl MockServer {
    /// A builder for non-default options (fixed port, request log).
    pub fn builder(format: WireFormat) -> MockServerBuilder {
        MockServerBuilder {
            format,
            replies: Vec::new(),
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            log_path: None,
            documents: Vec::new(),
        }
    }

    /// Starts a server on an ephemeral port of 127.0.0.1 on the current tokio runtime.
    pub async fn start(
        format: WireFormat,
        replies: Vec<ScriptedReply>,
    ) -> Result<MockServer, TestkitError> {
        MockServer::builder(format).replies(replies).start().await
    }

    /// Like [`MockServer::start`] but on its own runtime thread; usable from plain `#[test]`s.
    pub fn start_blocking(
        format: WireFormat,
        replies: Vec<ScriptedReply>,
    ) -> Result<MockServer, TestkitError> {
        MockServer::builder(format)
            .replies(replies)
            .start_blocking()
    }

    /// The format this server speaks.
    pub fn format(&self) -> WireFormat {
        self.shared.format
    }

    /// The bound socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// What a client puts in its `baseUrl`, matching how pi builds URLs per api:
    /// `http://127.0.0.1:PORT/v1` for the OpenAI formats, `http://127.0.0.1:PORT` for Anthropic
    /// (the SDK appends `/v1/messages`) and `http://127.0.0.1:PORT/v1beta` for Google.
    pub fn base_url(&self) -> String {
        let root = self.root_url();
        match self.shared.format {
            WireFormat::AnthropicMessages | WireFormat::Mistral | WireFormat::Bedrock => root,
            WireFormat::OpenAiCompletions | WireFormat::OpenAiResponses => format!("{root}/v1"),
            WireFormat::Google => format!("{root}/v1beta"),
        }
    }

    /// `http://127.0.0.1:PORT` with no path.
    pub fn root_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The full URL of the streaming endpoint for `model` (the model only matters for Google).
    pub fn endpoint_url(&self, model: &str) -> String {
        format!(
            "{}{}",
            self.root_url(),
            formats::endpoint_path(self.shared.format, model)
        )
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Appends a reply to the script.
    pub fn push_reply(&self, reply: ScriptedReply) {
        self.shared.update(|s| s.replies.push_back(reply));
    }

    /// Replies not yet served.
    pub fn remaining_replies(&self) -> usize {
        self.shared.lock().replies.len()
    }

    /// Current counters.
    pub fn activity(&self) -> Activity {
        self.shared.lock().activity
    }

    /// Lets every stream that is stalled right now continue with the rest of its events.
    /// Streams that stall later are not affected.
    pub fn release_stalls(&self) {
        self.shared.release.notify_waiters();
    }

    /// Waits until `pred` holds for the counters and returns them. Wrap it in
    /// `tokio::time::timeout` if the test should fail rather than hang.
    pub async fn wait_until(&self, pred: impl Fn(&Activity) -> bool) -> Activity {
        loop {
            let mut changed = pin!(self.shared.changed.notified());
            // Register before checking, so a change between the check and the await is seen.
            changed.as_mut().enable();
            let activity = self.activity();
            if pred(&activity) {
                return activity;
            }
            changed.await;
        }
    }

    /// Waits until at least `n` requests arrived and returns all recorded requests.
    pub async fn wait_for_requests(&self, n: usize) -> Vec<RecordedRequest> {
        self.wait_until(|a| a.requests >= n).await;
        self.requests()
    }

    /// Waits until at least `n` streams in total have stalled.
    pub async fn wait_for_stalls(&self, n: usize) -> Activity {
        self.wait_until(|a| a.stalls >= n).await
    }

    /// Blocking form of [`MockServer::wait_until`] with a safety timeout; `None` on timeout.
    pub fn wait_until_blocking(
        &self,
        pred: impl Fn(&Activity) -> bool,
        timeout: Duration,
    ) -> Option<Activity> {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        loop {
            if pred(&state.activity) {
                return Some(state.activity);
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            state = self
                .shared
                .changed_sync
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        match &mut self.lifetime {
            Lifetime::Task(task) => task.abort(),
            Lifetime::Thread { shutdown, thread } => {
                if let Some(tx) = shutdown.take() {
                    let _ = tx.send(());
                }
                if let Some(thread) = thread.take() {
                    let _ = thread.join();
                }
            }
        }
    }
}

impl std::fmt::Debug for MockServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockServer")
            .field("format", &self.shared.format)
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    // Owning the connection tasks here means aborting (or dropping) this future ends them all.
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                // A failed accept (a client that reset before we got to it, fd exhaustion)
                // concerns that one connection only; keep serving the others.
                if let Ok((stream, _)) = accepted {
                    connections.spawn(serve_connection(stream, Arc::clone(&shared)));
                }
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// What to do with one request.
enum Action {
    Stream(ScriptedReply, RequestCtx),
    Sized {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
}

/// How a response ended.
enum Outcome {
    /// Written to the end; the connection may serve another request.
    KeepAlive,
    /// Ended on purpose without the terminating chunk (reset fault); the connection closes.
    Close,
    /// The client went away.
    ClientGone,
}

async fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    // Each SSE event is one small write; without TCP_NODELAY Nagle would batch them.
    let _ = stream.set_nodelay(true);
    let mut conn = BufReader::new(stream);
    loop {
        let request = http::read_request(&mut conn).await;
        let request = match request {
            Ok(Some(request)) => request,
            Ok(None) => return,
            Err(err) => {
                let body = format!("mock provider: unreadable request: {err}");
                let _ = http::write_sized(&mut conn, 400, text_headers(), body.as_bytes()).await;
                return;
            }
        };
        let wants_close = request.wants_close();
        let action = plan(&shared, request);
        let outcome = match action {
            Action::Sized {
                status,
                headers,
                body,
            } => match http::write_sized(&mut conn, status, headers, body.as_bytes()).await {
                Ok(()) => Outcome::KeepAlive,
                Err(_) => Outcome::ClientGone,
            },
            Action::Stream(reply, ctx) => play(&shared, &mut conn, &reply, &ctx).await,
        };
        match outcome {
            Outcome::KeepAlive => shared.update(|s| s.activity.completed += 1),
            Outcome::Close => {
                shared.update(|s| s.activity.completed += 1);
                return;
            }
            Outcome::ClientGone => {
                shared.update(|s| s.activity.client_disconnects += 1);
                return;
            }
        }
        if wants_close {
            return;
        }
    }
}

fn text_headers() -> Vec<(String, String)> {
    vec![("content-type".into(), "text/plain; charset=utf-8".into())]
}

fn json_headers() -> Vec<(String, String)> {
    vec![("content-type".into(), "application/json".into())]
}

/// Records the request and decides the answer, taking the next reply when the route matches.
fn plan(shared: &Shared, request: HttpRequest) -> Action {
    let body = parse_body(&request.body);
    let model_in_body = body
        .get("model")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned);
    let route = formats::route(shared.format, &request.method, &request.path);
    // A request the service would refuse for its credentials takes no scripted reply.
    let refused = route
        .as_ref()
        .and_then(|_| formats::check_auth(shared.format, &request.headers));
    let recorded = RecordedRequest {
        method: request.method,
        path: request.path,
        query: request.query,
        headers: request.headers,
        body,
    };
    if let Some(log) = &shared.log {
        // The log is a debugging aid for scripts; a failed write must not fail the exchange,
        // and the same data stays available through `requests()`.
        let _ = log.append(&recorded);
    }
    let mut taken = None;
    let mut seq = 0;
    let mut served = 0;
    let (method, path) = (recorded.method.clone(), recorded.path.clone());
    shared.update(|s| {
        s.requests.push(recorded);
        s.activity.requests += 1;
        seq = s.activity.requests;
        served = s.activity.replies_served;
        if route.is_some() && refused.is_none() {
            taken = s.replies.pop_front();
            if taken.is_some() {
                s.activity.replies_served += 1;
            }
        }
    });
    let format = shared.format;
    if method == "GET"
        && let Some((_, json)) = shared.documents.iter().find(|(p, _)| *p == path)
    {
        return Action::Sized {
            status: 200,
            headers: json_headers(),
            body: json.clone(),
        };
    }
    let Some(path_model) = route else {
        let body = formats::error_body(
            format,
            404,
            &format!(
                "mock provider: no route for {method} {path}; this {} server answers POST {}",
                format.api_name(),
                formats::endpoint_path(format, "{model}")
            ),
        );
        return Action::Sized {
            status: 404,
            headers: json_headers(),
            body,
        };
    };
    if let Some((status, kind, message)) = refused {
        let mut headers = json_headers();
        headers.push(("x-amzn-errortype".to_owned(), kind.to_owned()));
        return Action::Sized {
            status,
            headers,
            body: serde_json::json!({"message": message}).to_string(),
        };
    }
    let Some(reply) = taken else {
        let body = formats::error_body(
            format,
            500,
            &format!(
                "mock provider: script exhausted: request #{seq} has no scripted reply \
                 ({served} scripted replies were already served)"
            ),
        );
        return Action::Sized {
            status: 500,
            headers: json_headers(),
            body,
        };
    };
    if let Some(Fault::HttpStatus {
        status,
        retry_after,
        body,
        headers: extra,
    }) = &reply.fault
    {
        let body = body
            .clone()
            .unwrap_or_else(|| formats::default_error_body(format, *status));
        // A custom body may be plain text (as some proxies send); label it honestly.
        let mut headers = if serde_json::from_str::<serde_json::Value>(&body).is_ok() {
            json_headers()
        } else {
            text_headers()
        };
        headers.extend(formats::error_headers(format, *status));
        if let Some(value) = retry_after {
            headers.push(("retry-after".into(), value.clone()));
        }
        headers.extend(extra.iter().cloned());
        return Action::Sized {
            status: *status,
            headers,
            body,
        };
    }
    let model = path_model
        .or(model_in_body)
        .unwrap_or_else(|| "mock-model".to_owned());
    Action::Stream(reply, RequestCtx { model, seq })
}

fn parse_body(bytes: &[u8]) -> serde_json::Value {
    if bytes.is_empty() {
        return serde_json::Value::Null;
    }
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

/// Where in the event list a fault strikes, and what it does there.
enum Strike<'a> {
    Reset,
    Malformed,
    Stall,
    Error {
        kind: MockErrorKind,
        message: &'a str,
    },
}

/// Streams one reply, applying its fault.
async fn play(
    shared: &Shared,
    conn: &mut BufReader<TcpStream>,
    reply: &ScriptedReply,
    ctx: &RequestCtx,
) -> Outcome {
    let format = shared.format;
    let events = formats::stream_events(format, reply, ctx);
    let strike = match &reply.fault {
        Some(Fault::ResetAfterEvents(n)) => Some((*n, Strike::Reset)),
        Some(Fault::MalformedSseAfterEvents(n)) => Some((*n, Strike::Malformed)),
        Some(Fault::StallAfterEvents(n)) => Some((*n, Strike::Stall)),
        Some(Fault::MidStreamError {
            after_events,
            message,
            kind,
        }) => Some((
            *after_events,
            Strike::Error {
                kind: *kind,
                message,
            },
        )),
        Some(Fault::HttpStatus { .. }) | None => None,
    };
    // A fault beyond the last event strikes just before the terminating chunk.
    let strike = strike.map(|(n, s)| (n.min(events.len()), s));

    if http::write_chunked_head(conn, 200, formats::stream_headers(format, ctx))
        .await
        .is_err()
    {
        return Outcome::ClientGone;
    }
    let mut pacer = Pacer::new(reply.chunking.interval());
    for index in 0..=events.len() {
        if let Some((at, strike)) = &strike
            && *at == index
        {
            match strike {
                Strike::Reset => return Outcome::Close,
                Strike::Malformed => {
                    return finish(conn, &formats::malformed_bytes(format)).await;
                }
                Strike::Error { kind, message } => {
                    let bytes = formats::error_bytes(format, *kind, message, ctx, index);
                    return finish(conn, &bytes).await;
                }
                Strike::Stall => {
                    if !stall(shared, conn).await {
                        return Outcome::ClientGone;
                    }
                    pacer.restart();
                }
            }
        }
        if let Some(event) = events.get(index) {
            pacer.wait().await;
            if http::write_chunk(conn, &formats::event_bytes(format, event))
                .await
                .is_err()
            {
                return Outcome::ClientGone;
            }
        }
    }
    match http::write_last_chunk(conn).await {
        Ok(()) => Outcome::KeepAlive,
        Err(_) => Outcome::ClientGone,
    }
}

/// Spaces the events of a paced reply ([`crate::Chunking::interval_ms`]).
struct Pacer {
    interval: Duration,
    /// When the next event may go; `None` before the first one, which goes at once.
    next: Option<tokio::time::Instant>,
}

impl Pacer {
    fn new(interval: Duration) -> Self {
        Pacer {
            interval,
            next: None,
        }
    }

    async fn wait(&mut self) {
        if self.interval.is_zero() {
            return;
        }
        let at = match self.next {
            Some(at) => {
                tokio::time::sleep_until(at).await;
                at
            }
            None => tokio::time::Instant::now(),
        };
        // Deadlines advance from the schedule, not from when the timer fired: the timer has
        // a millisecond granularity and fires late under load, and the next event makes up
        // for it, so the rate holds on average.
        self.next = Some(at + self.interval);
    }

    /// Starts the schedule afresh after a stall, so the held-back events do not burst out.
    fn restart(&mut self) {
        self.next = None;
    }
}

/// Writes a final chunk of `data` and the terminating chunk.
async fn finish(conn: &mut BufReader<TcpStream>, data: &[u8]) -> Outcome {
    let written = async {
        http::write_chunk(conn, data).await?;
        http::write_last_chunk(conn).await
    };
    match written.await {
        Ok(()) => Outcome::KeepAlive,
        Err(_) => Outcome::ClientGone,
    }
}

/// Holds the stream until released (`true`) or the client disconnects (`false`).
async fn stall(shared: &Shared, conn: &mut BufReader<TcpStream>) -> bool {
    let mut released = pin!(shared.release.notified());
    // Registered before the stall is announced, so a release right after
    // `wait_for_stalls` returns cannot be missed.
    released.as_mut().enable();
    shared.update(|s| s.activity.stalls += 1);
    let mut probe = [0u8; 1024];
    loop {
        tokio::select! {
            () = &mut released => return true,
            read = conn.read(&mut probe) => match read {
                // EOF or error: the client closed or aborted its request.
                Ok(0) | Err(_) => return false,
                // Clients do not pipeline while a response is streaming; ignore stray bytes.
                Ok(_) => {}
            },
        }
    }
}
