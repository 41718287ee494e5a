//! A plain web server for tools that fetch pages: fixed responses by path, every request
//! recorded. Serves the web tools' tests the way [`crate::MockServer`] serves providers'.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;

use tokio::io::BufReader;
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::error::TestkitError;
use crate::http::read_request;
use crate::http::write_sized;

/// What one path answers.
#[derive(Debug, Clone)]
pub struct WebResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Never answer (the request hangs until the client gives up).
    pub stall: bool,
}

impl WebResponse {
    /// `200` with this content type and body.
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), content_type.into())],
            body: body.into(),
            stall: false,
        }
    }

    /// A redirect to `location`.
    pub fn redirect(status: u16, location: &str) -> Self {
        Self {
            status,
            headers: vec![("location".into(), location.into())],
            body: Vec::new(),
            stall: false,
        }
    }

    /// A response with this status and a text body.
    pub fn status(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: body.as_bytes().to_vec(),
            stall: false,
        }
    }

    /// A request that is never answered.
    pub fn stall() -> Self {
        Self {
            status: 200,
            headers: Vec::new(),
            body: Vec::new(),
            stall: true,
        }
    }
}

/// One request the server saw.
#[derive(Debug, Clone)]
pub struct WebRequest {
    pub path: String,
    pub query: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub method: String,
    pub body: Vec<u8>,
}

impl WebRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct Shared {
    routes: Mutex<HashMap<String, WebResponse>>,
    requests: Mutex<Vec<WebRequest>>,
    seen: Notify,
}

/// Serves fixed responses on `127.0.0.1`; unknown paths get `404`.
pub struct WebServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for WebServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl WebServer {
    /// Starts serving `routes` (path without query → response) on the current runtime.
    pub async fn start(routes: Vec<(&str, WebResponse)>) -> Result<Self, TestkitError> {
        let addr: SocketAddr = ([127, 0, 0, 1], 0).into();
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| TestkitError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| TestkitError::Bind { addr, source })?;
        let shared = Arc::new(Shared::default());
        {
            let mut table = shared.routes.lock().unwrap_or_else(|e| e.into_inner());
            for (path, response) in routes {
                table.insert(path.to_owned(), response);
            }
        }
        let task = tokio::spawn(serve(listener, Arc::clone(&shared)));
        Ok(Self { shared, addr, task })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<WebRequest> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Waits until `n` requests have arrived.
    pub async fn wait_for_requests(&self, n: usize) -> Vec<WebRequest> {
        loop {
            let seen = self.shared.seen.notified();
            let requests = self.requests();
            if requests.len() >= n {
                return requests;
            }
            seen.await;
        }
    }
}

async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    while let Ok((stream, _)) = listener.accept().await {
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let mut stream = BufReader::new(stream);
            while let Ok(Some(request)) = read_request(&mut stream).await {
                let response = shared
                    .routes
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&request.path)
                    .cloned()
                    .unwrap_or_else(|| WebResponse::status(404, "not found"));
                shared
                    .requests
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(WebRequest {
                        path: request.path.clone(),
                        query: request.query.clone(),
                        headers: request.headers.clone(),
                        method: request.method.clone(),
                        body: request.body.clone(),
                    });
                shared.seen.notify_waiters();
                if response.stall {
                    std::future::pending::<()>().await;
                }
                let sent = write_sized(
                    stream.get_mut(),
                    response.status,
                    response.headers,
                    &response.body,
                )
                .await;
                if sent.is_err() || request.wants_close() {
                    return;
                }
            }
        });
    }
}
