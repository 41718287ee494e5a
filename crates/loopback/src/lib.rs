//! The loopback callback of a browser sign-in (the built-in subscription logins in
//! `knightcode-ai`, MCP servers' OAuth in `knightcode-mcp`): a listener on `127.0.0.1`
//! whose requests are read as far as their target and answered with a short HTML page.
//! What a request means (its path, `code`, `state`, `error`) is the caller's to decide;
//! this crate only speaks the HTTP of it, so that both sign-ins answer a browser alike.

use std::time::Duration;

use tokio::io::AsyncReadExt as _;
use tokio::io::AsyncWriteExt as _;
use tokio::net::TcpListener;
use tokio::net::TcpStream;
pub use url::Url;

/// How long one browser connection may take to send its request head.
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// A request head larger than this is not a callback.
const HEAD_LIMIT: usize = 16 * 1024;

/// A listener for the browser's redirect.
#[derive(Debug)]
pub struct CallbackListener {
    listener: TcpListener,
}

impl CallbackListener {
    /// Listens on `127.0.0.1:port` (`0`: a free port). Fails when the port is taken.
    pub async fn bind(port: u16) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        Ok(Self { listener })
    }

    /// The port listened on.
    pub fn port(&self) -> std::io::Result<u16> {
        Ok(self.listener.local_addr()?.port())
    }

    /// The next browser request. A connection that fails to open is skipped; one whose
    /// request cannot be read (not HTTP, too large, or not sent within 10 seconds) comes
    /// back with no address, to be answered with an error page.
    pub async fn next(&self) -> CallbackRequest {
        loop {
            let Ok((mut stream, _)) = self.listener.accept().await else {
                continue;
            };
            let target = tokio::time::timeout(READ_TIMEOUT, read_target(&mut stream))
                .await
                .ok()
                .flatten();
            let url = target.and_then(|t| Url::parse(&format!("http://localhost{t}")).ok());
            return CallbackRequest { stream, url };
        }
    }
}

/// One browser request, to be answered.
#[derive(Debug)]
pub struct CallbackRequest {
    stream: TcpStream,
    /// The address asked for (its path and query on `http://localhost`), or `None` when the
    /// request could not be read.
    pub url: Option<Url>,
}

impl CallbackRequest {
    /// The value of the query parameter `name`, when the request was read and has it.
    pub fn param(&self, name: &str) -> Option<String> {
        query_param(self.url.as_ref()?, name)
    }

    /// Answers with `status` and a page titled `title` that says `message`, then closes the
    /// connection. A browser that went away is not an error: there is no one to tell.
    pub async fn respond(mut self, status: u16, title: &str, message: &str) {
        let page = format!(
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title>\
             </head><body><p>{message}</p></body></html>"
        );
        let reason = if status == 200 { "OK" } else { "Error" };
        let response = format!(
            "HTTP/1.1 {status} {reason}\r\ncontent-type: text/html; charset=utf-8\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n{page}",
            page.len()
        );
        let _ = self.stream.write_all(response.as_bytes()).await;
        let _ = self.stream.shutdown().await;
    }
}

/// The value of the query parameter `name` of `url`.
pub fn query_param(url: &Url, name: &str) -> Option<String> {
    url.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// The request target (`/callback?code=…`) of an HTTP request's first line. The whole head
/// is read before answering: closing a socket with unread request bytes resets the
/// connection, and the browser (or a client still writing its headers) then shows an error
/// instead of the page.
async fn read_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() > HEAD_LIMIT {
            return None;
        }
        let n = stream.read(&mut buffer).await.ok()?;
        if n == 0 {
            return None;
        }
        head.extend_from_slice(&buffer[..n]);
    }
    let head = String::from_utf8_lossy(&head);
    let mut parts = head.lines().next()?.split_whitespace();
    let _method = parts.next()?;
    parts.next().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt as _;
    use tokio::io::AsyncWriteExt as _;

    use super::*;

    /// Sends a request in the writes given and reads the answer to its end.
    async fn get(port: u16, writes: &[&[u8]]) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap_or_else(|e| panic!("connect to the callback: {e}"));
        for part in writes {
            stream
                .write_all(part)
                .await
                .unwrap_or_else(|e| panic!("send the request: {e}"));
            stream
                .flush()
                .await
                .unwrap_or_else(|e| panic!("send the request: {e}"));
        }
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .await
            .unwrap_or_else(|e| panic!("read the answer: {e}"));
        answer
    }

    #[tokio::test]
    async fn a_request_is_read_to_its_query_and_answered_with_a_page() {
        let listener = CallbackListener::bind(0)
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let port = listener.port().unwrap_or_else(|e| panic!("port: {e}"));
        // The head arrives in two writes: the answer waits for all of it.
        let client = tokio::spawn(async move {
            let writes: [&[u8]; 2] = [
                b"GET /callback?code=abc%20d&state=s1 HTTP/1.1\r\n",
                b"Host: localhost\r\n\r\n",
            ];
            get(port, &writes).await
        });
        let request = listener.next().await;
        assert_eq!(request.url.as_ref().map(Url::path), Some("/callback"));
        assert_eq!(request.param("code").as_deref(), Some("abc d"));
        assert_eq!(request.param("state").as_deref(), Some("s1"));
        assert_eq!(request.param("error"), None);
        request.respond(200, "KnightCode login", "Done.").await;
        let answer = client.await.unwrap_or_else(|e| panic!("client: {e}"));
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(
            answer.ends_with(
                "<title>KnightCode login</title></head><body><p>Done.</p></body></html>"
            ),
            "{answer}"
        );
    }

    #[tokio::test]
    async fn a_request_that_is_not_http_has_no_address() {
        let listener = CallbackListener::bind(0)
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let port = listener.port().unwrap_or_else(|e| panic!("port: {e}"));
        let client = tokio::spawn(async move {
            let mut stream = TcpStream::connect(("127.0.0.1", port))
                .await
                .unwrap_or_else(|e| panic!("connect: {e}"));
            stream
                .write_all(b"hello")
                .await
                .unwrap_or_else(|e| panic!("write: {e}"));
            // Ends its side without a complete head.
            stream
                .shutdown()
                .await
                .unwrap_or_else(|e| panic!("shutdown: {e}"));
            let mut answer = String::new();
            let _ = stream.read_to_string(&mut answer).await;
            answer
        });
        let request = listener.next().await;
        assert!(request.url.is_none());
        request
            .respond(400, "KnightCode login", "The request could not be read.")
            .await;
        let answer = client.await.unwrap_or_else(|e| panic!("client: {e}"));
        assert!(answer.starts_with("HTTP/1.1 400 Error\r\n"), "{answer}");
    }

    #[tokio::test]
    async fn a_taken_port_fails_to_bind() {
        let first = CallbackListener::bind(0)
            .await
            .unwrap_or_else(|e| panic!("bind: {e}"));
        let port = first.port().unwrap_or_else(|e| panic!("port: {e}"));
        assert!(CallbackListener::bind(port).await.is_err());
    }
}
