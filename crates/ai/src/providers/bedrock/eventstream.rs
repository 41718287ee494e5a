//! The AWS event-stream framing (`application/vnd.amazon.eventstream`) that Bedrock's
//! `ConverseStream` answers in: binary messages, each
//!
//! ```text
//! total length (u32 BE) | headers length (u32 BE) | CRC32 of the 8 bytes before
//! headers | payload | CRC32 of everything before it
//! ```
//!
//! A header is a one-byte name length, the name, a one-byte value type and the value. Bytes
//! arrive in arbitrary pieces; complete messages are handed out as they become whole.

/// The largest message the service sends is far below this; a bigger length means the
/// stream is not event-stream framed (a proxy's HTML page) and is refused before buffering.
const MAX_MESSAGE_LEN: usize = 16 * 1024 * 1024;
/// Prelude (12 bytes) plus the trailing message CRC (4 bytes).
const MIN_MESSAGE_LEN: usize = 16;

/// Why a byte stream is not valid event-stream framing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("event-stream message length {0} is out of range")]
    Length(usize),
    #[error("event-stream prelude checksum mismatch")]
    PreludeCrc,
    #[error("event-stream message checksum mismatch")]
    MessageCrc,
    #[error("event-stream header is malformed: {0}")]
    Header(&'static str),
    #[error("the stream ended inside an event-stream message ({0} bytes left over)")]
    Truncated(usize),
}

/// A header value; only strings matter to Bedrock's stream, the rest are kept for checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderValue<'a> {
    Bool(bool),
    Int(i64),
    Bytes(&'a [u8]),
    String(&'a str),
    Timestamp(i64),
    Uuid(&'a [u8]),
}

/// One complete message, borrowed from the decoder's buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message<'a> {
    pub headers: Vec<(&'a str, HeaderValue<'a>)>,
    pub payload: &'a [u8],
}

impl<'a> Message<'a> {
    /// A string header's value (`:message-type`, `:event-type`, …).
    pub fn header(&self, name: &str) -> Option<&'a str> {
        self.headers.iter().find_map(|(n, v)| match v {
            HeaderValue::String(s) if *n == name => Some(*s),
            _ => None,
        })
    }
}

/// Incremental decoder: feed bytes, get whole messages.
#[derive(Debug, Default)]
pub struct EventStreamDecoder {
    buf: Vec<u8>,
}

impl EventStreamDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds a chunk, calling `on_message` for every message it completes. A framing error
    /// is final: the rest of the stream cannot be resynchronised.
    pub fn feed<E: From<FrameError>>(
        &mut self,
        chunk: &[u8],
        mut on_message: impl FnMut(Message<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.buf.extend_from_slice(chunk);
        let mut start = 0;
        while let Some(len) = complete_length(&self.buf[start..])? {
            let message = parse(&self.buf[start..start + len])?;
            on_message(message)?;
            start += len;
        }
        self.buf.drain(..start);
        Ok(())
    }

    /// The body ended: anything left is a cut-off message.
    pub fn finish(&self) -> Result<(), FrameError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(FrameError::Truncated(self.buf.len()))
        }
    }
}

fn be32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// The length of the message at the front of `buf` once all of it is there; its prelude is
/// checked as soon as the prelude is whole, so garbage fails early.
fn complete_length(buf: &[u8]) -> Result<Option<usize>, FrameError> {
    if buf.len() < 12 {
        return Ok(None);
    }
    let total = be32(buf) as usize;
    if !(MIN_MESSAGE_LEN..=MAX_MESSAGE_LEN).contains(&total) {
        return Err(FrameError::Length(total));
    }
    if crc32fast::hash(&buf[..8]) != be32(&buf[8..12]) {
        return Err(FrameError::PreludeCrc);
    }
    Ok((buf.len() >= total).then_some(total))
}

/// Parses one whole message (its prelude already checked).
fn parse(bytes: &[u8]) -> Result<Message<'_>, FrameError> {
    let total = bytes.len();
    let headers_len = be32(&bytes[4..8]) as usize;
    if headers_len > total - MIN_MESSAGE_LEN {
        return Err(FrameError::Length(headers_len));
    }
    if crc32fast::hash(&bytes[..total - 4]) != be32(&bytes[total - 4..]) {
        return Err(FrameError::MessageCrc);
    }
    let headers = parse_headers(&bytes[12..12 + headers_len])?;
    Ok(Message {
        headers,
        payload: &bytes[12 + headers_len..total - 4],
    })
}

fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Result<&'a [u8], FrameError> {
    if bytes.len() < n {
        return Err(FrameError::Header("value runs past the headers"));
    }
    let (head, rest) = bytes.split_at(n);
    *bytes = rest;
    Ok(head)
}

fn int(bytes: &mut &[u8], n: usize) -> Result<i64, FrameError> {
    let raw = take(bytes, n)?;
    let mut value: i64 = if raw[0] & 0x80 != 0 { -1 } else { 0 };
    for byte in raw {
        value = (value << 8) | i64::from(*byte);
    }
    Ok(value)
}

fn parse_headers(mut bytes: &[u8]) -> Result<Vec<(&str, HeaderValue<'_>)>, FrameError> {
    let mut headers = Vec::new();
    while !bytes.is_empty() {
        let name_len = usize::from(take(&mut bytes, 1)?[0]);
        let name = std::str::from_utf8(take(&mut bytes, name_len)?)
            .map_err(|_| FrameError::Header("name is not UTF-8"))?;
        let kind = take(&mut bytes, 1)?[0];
        let value = match kind {
            0 => HeaderValue::Bool(true),
            1 => HeaderValue::Bool(false),
            2 => HeaderValue::Int(int(&mut bytes, 1)?),
            3 => HeaderValue::Int(int(&mut bytes, 2)?),
            4 => HeaderValue::Int(int(&mut bytes, 4)?),
            5 => HeaderValue::Int(int(&mut bytes, 8)?),
            6 | 7 => {
                let len = int(&mut bytes, 2)? as u16;
                let raw = take(&mut bytes, usize::from(len))?;
                if kind == 6 {
                    HeaderValue::Bytes(raw)
                } else {
                    HeaderValue::String(
                        std::str::from_utf8(raw)
                            .map_err(|_| FrameError::Header("string value is not UTF-8"))?,
                    )
                }
            }
            8 => HeaderValue::Timestamp(int(&mut bytes, 8)?),
            9 => HeaderValue::Uuid(take(&mut bytes, 16)?),
            _ => return Err(FrameError::Header("unknown value type")),
        };
        headers.push((name, value));
    }
    Ok(headers)
}

/// Encodes a message with string headers, for tests.
#[cfg(test)]
pub(crate) fn encode(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut head = Vec::new();
    for (name, value) in headers {
        head.push(name.len() as u8);
        head.extend_from_slice(name.as_bytes());
        head.push(7);
        head.extend_from_slice(&(value.len() as u16).to_be_bytes());
        head.extend_from_slice(value.as_bytes());
    }
    let total = 12 + head.len() + payload.len() + 4;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(head.len() as u32).to_be_bytes());
    let prelude_crc = crc32fast::hash(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(payload);
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(
        decoder: &mut EventStreamDecoder,
        bytes: &[u8],
    ) -> Result<Vec<(String, Vec<u8>)>, FrameError> {
        let mut out = Vec::new();
        decoder.feed(bytes, |m: Message<'_>| {
            out.push((
                m.header(":event-type").unwrap_or("").to_owned(),
                m.payload.to_vec(),
            ));
            Ok::<(), FrameError>(())
        })?;
        Ok(out)
    }

    #[test]
    fn messages_split_anywhere_come_out_whole() {
        let mut bytes = encode(
            &[(":event-type", "a"), (":message-type", "event")],
            b"{\"x\":1}",
        );
        bytes.extend(encode(&[(":event-type", "b")], b""));
        for step in 1..bytes.len() {
            let mut decoder = EventStreamDecoder::new();
            let mut seen = Vec::new();
            for piece in bytes.chunks(step) {
                seen.extend(collect(&mut decoder, piece).unwrap());
            }
            assert_eq!(
                seen,
                vec![("a".into(), b"{\"x\":1}".to_vec()), ("b".into(), vec![])]
            );
            decoder.finish().unwrap();
        }
    }

    #[test]
    fn every_header_type_parses() {
        // From the AWS event-stream test vectors' shapes: bool, byte, short, int, long,
        // bytes, string, timestamp, uuid.
        let mut head = Vec::new();
        for (name, kind, value) in [
            ("t", 0u8, vec![]),
            ("f", 1, vec![]),
            ("b", 2, vec![0xff]),
            ("s", 3, vec![0, 7]),
            ("i", 4, vec![0, 0, 1, 0]),
            ("l", 5, vec![0, 0, 0, 0, 0, 0, 0, 9]),
            ("y", 6, vec![0, 2, 1, 2]),
            ("z", 7, vec![0, 2, b'o', b'k']),
            ("d", 8, vec![0, 0, 0, 0, 0, 0, 0, 5]),
            ("u", 9, vec![7; 16]),
        ] {
            head.push(1);
            head.push(name.as_bytes()[0]);
            head.push(kind);
            head.extend(value);
        }
        let headers = parse_headers(&head).unwrap();
        assert_eq!(headers[2], ("b", HeaderValue::Int(-1)));
        assert_eq!(headers[4], ("i", HeaderValue::Int(256)));
        assert_eq!(headers[7], ("z", HeaderValue::String("ok")));
        assert_eq!(headers.len(), 10);
    }

    #[test]
    fn corruption_is_an_error_not_a_panic() {
        let good = encode(&[(":event-type", "a")], b"payload");
        let mut bad_crc = good.clone();
        let last = bad_crc.len() - 1;
        bad_crc[last] ^= 1;
        assert_eq!(
            collect(&mut EventStreamDecoder::new(), &bad_crc),
            Err(FrameError::MessageCrc)
        );
        let mut bad_prelude = good.clone();
        bad_prelude[9] ^= 1;
        assert_eq!(
            collect(&mut EventStreamDecoder::new(), &bad_prelude),
            Err(FrameError::PreludeCrc)
        );
        assert!(matches!(
            collect(
                &mut EventStreamDecoder::new(),
                b"<html><body>502 Bad Gateway</body>"
            ),
            Err(FrameError::Length(_) | FrameError::PreludeCrc)
        ));
        let mut decoder = EventStreamDecoder::new();
        collect(&mut decoder, &good[..good.len() - 3]).unwrap();
        assert_eq!(decoder.finish(), Err(FrameError::Truncated(good.len() - 3)));
    }
}
