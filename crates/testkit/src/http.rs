//! A deliberately minimal HTTP/1.1 layer: enough to read a client's request and write either a
//! sized response or a chunked stream whose chunk boundaries we control exactly.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Largest request head we accept; a real provider request head is a few KiB.
const MAX_HEAD_BYTES: usize = 256 * 1024;
/// Largest request body we accept; long agent conversations can be several MiB.
const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;

/// A parsed request.
#[derive(Debug)]
pub(crate) struct HttpRequest {
    pub method: String,
    pub path: String,
    pub query: String,
    /// Header names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether the client asked to close the connection after this exchange.
    pub fn wants_close(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

fn invalid(msg: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.to_owned())
}

/// Reads one CRLF (or LF) terminated line, bounded by `budget`; `None` on EOF before any byte.
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    budget: &mut usize,
) -> io::Result<Option<String>> {
    let mut line = Vec::new();
    let n = (&mut *reader)
        .take(*budget as u64 + 1)
        .read_until(b'\n', &mut line)
        .await?;
    if n == 0 {
        return Ok(None);
    }
    if n > *budget {
        return Err(invalid("request head too large"));
    }
    *budget -= n;
    if line.last() != Some(&b'\n') {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "connection closed inside the request head",
        ));
    }
    while matches!(line.last(), Some(b'\n' | b'\r')) {
        line.pop();
    }
    String::from_utf8(line)
        .map(Some)
        .map_err(|_| invalid("request head is not UTF-8"))
}

/// Reads the next request on a connection. `Ok(None)` means the client closed the connection
/// cleanly between requests. The `100 Continue` interim answer is written when asked for.
pub(crate) async fn read_request<S>(conn: &mut S) -> io::Result<Option<HttpRequest>>
where
    S: AsyncBufRead + AsyncWrite + Unpin,
{
    let reader = conn;
    let mut budget = MAX_HEAD_BYTES;
    // Tolerate stray blank lines between keep-alive requests (RFC 9112 §2.2).
    let request_line = loop {
        match read_line(reader, &mut budget).await? {
            None => return Ok(None),
            Some(line) if line.is_empty() => continue,
            Some(line) => break line,
        }
    };
    let mut parts = request_line.split(' ');
    let method = parts.next().unwrap_or_default().to_owned();
    let target = parts.next().unwrap_or_default();
    if method.is_empty() || !target.starts_with('/') {
        return Err(invalid("malformed request line"));
    }
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_owned(), q.to_owned()),
        None => (target.to_owned(), String::new()),
    };

    let mut headers = Vec::new();
    loop {
        let Some(line) = read_line(reader, &mut budget).await? else {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed inside the request head",
            ));
        };
        if line.is_empty() {
            break;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(invalid("malformed header line"));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let mut request = HttpRequest {
        method,
        path,
        query,
        headers,
        body: Vec::new(),
    };

    if request
        .header("expect")
        .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
    {
        reader.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
        reader.flush().await?;
    }

    let chunked = request
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    if chunked {
        request.body = read_chunked_body(reader).await?;
    } else if let Some(len) = request.header("content-length") {
        let len: usize = len.parse().map_err(|_| invalid("invalid content-length"))?;
        if len > MAX_BODY_BYTES {
            return Err(invalid("request body too large"));
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body).await?;
        request.body = body;
    }
    Ok(Some(request))
}

async fn read_chunked_body<R: AsyncBufRead + Unpin>(reader: &mut R) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut budget = MAX_HEAD_BYTES;
        let size_line = read_line(reader, &mut budget)
            .await?
            .ok_or_else(|| invalid("connection closed inside a chunked body"))?;
        let size_hex = size_line.split(';').next().unwrap_or_default().trim();
        let size =
            usize::from_str_radix(size_hex, 16).map_err(|_| invalid("invalid chunk size"))?;
        if size == 0 {
            // Trailer section: header lines up to a blank line.
            while read_line(reader, &mut budget)
                .await?
                .is_some_and(|l| !l.is_empty())
            {}
            return Ok(body);
        }
        if body.len() + size > MAX_BODY_BYTES {
            return Err(invalid("request body too large"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..]).await?;
        let mut crlf = [0u8; 2];
        reader.read_exact(&mut crlf).await?;
    }
}

/// The reason phrase for the status codes we are likely to send.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Site Overloaded",
        _ => "Status",
    }
}

fn head(status: u16, headers: &[(String, String)]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in headers {
        out.push_str(name);
        out.push_str(": ");
        out.push_str(value);
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    out.into_bytes()
}

/// Writes a complete response with a `content-length` body.
pub(crate) async fn write_sized<W: AsyncWrite + Unpin>(
    writer: &mut W,
    status: u16,
    mut headers: Vec<(String, String)>,
    body: &[u8],
) -> io::Result<()> {
    headers.push(("content-length".into(), body.len().to_string()));
    let mut bytes = head(status, &headers);
    bytes.extend_from_slice(body);
    writer.write_all(&bytes).await?;
    writer.flush().await
}

/// Writes the head of a chunked response.
pub(crate) async fn write_chunked_head<W: AsyncWrite + Unpin>(
    writer: &mut W,
    status: u16,
    mut headers: Vec<(String, String)>,
) -> io::Result<()> {
    headers.push(("transfer-encoding".into(), "chunked".into()));
    writer.write_all(&head(status, &headers)).await?;
    writer.flush().await
}

/// Writes `data` as exactly one HTTP chunk and flushes it, so it leaves the process now.
pub(crate) async fn write_chunk<W: AsyncWrite + Unpin>(
    writer: &mut W,
    data: &[u8],
) -> io::Result<()> {
    if data.is_empty() {
        // An empty chunk would terminate the body.
        return Ok(());
    }
    let mut bytes = format!("{:x}\r\n", data.len()).into_bytes();
    bytes.extend_from_slice(data);
    bytes.extend_from_slice(b"\r\n");
    writer.write_all(&bytes).await?;
    writer.flush().await
}

/// Writes the terminating zero-length chunk.
pub(crate) async fn write_last_chunk<W: AsyncWrite + Unpin>(writer: &mut W) -> io::Result<()> {
    writer.write_all(b"0\r\n\r\n").await?;
    writer.flush().await
}
