//! A small, allocation-light Server-Sent Events decoder.
//!
//! Bytes arrive in arbitrary chunks; complete events are handed to a callback as borrowed
//! slices. A single-line `data:` field (the common case for every provider) is passed straight
//! out of the receive buffer without copying. Line endings `\n`, `\r\n` and `\r` are accepted.

/// One dispatched event: `event` is empty when the stream did not name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    pub event: &'a str,
    pub data: &'a [u8],
}

/// Incremental SSE decoder.
#[derive(Debug, Default)]
pub struct SseDecoder {
    buf: Vec<u8>,
    event: String,
    /// Data of multi-line events, or of a single line copied out before compaction.
    data: Vec<u8>,
    /// A single data line still living in `buf`.
    data_range: Option<(usize, usize)>,
    data_lines: usize,
    /// The previous chunk ended in `\r`; a leading `\n` of the next one belongs to it.
    pending_cr: bool,
    /// Lines that are not SSE fields (`{`, `"error": ...`), kept when `keep_raw` is set:
    /// Gemini reports in-stream errors as bare JSON between events.
    raw: Vec<u8>,
    keep_raw: bool,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that also keeps lines that are not SSE fields (see [`SseDecoder::raw`]).
    pub fn keeping_raw_lines() -> Self {
        Self {
            keep_raw: true,
            ..Self::default()
        }
    }

    /// Non-SSE lines seen so far, each followed by `\n`.
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    pub fn clear_raw(&mut self) {
        self.raw.clear();
    }

    /// Feeds a chunk, calling `on_event` for every completed event.
    pub fn feed<E>(
        &mut self,
        chunk: &[u8],
        mut on_event: impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut chunk = chunk;
        if self.pending_cr {
            self.pending_cr = false;
            if chunk.first() == Some(&b'\n') {
                chunk = &chunk[1..];
            }
        }
        self.buf.extend_from_slice(chunk);
        let mut start = 0;
        loop {
            let rest = &self.buf[start..];
            let Some(offset) = memchr::memchr2(b'\n', b'\r', rest) else {
                break;
            };
            let end = start + offset;
            let mut next = end + 1;
            if self.buf[end] == b'\r' {
                match self.buf.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.pending_cr = true,
                }
            }
            self.line(start, end, &mut on_event)?;
            start = next;
        }
        self.compact(start);
        Ok(())
    }

    /// Flushes a final event that was not followed by a blank line (end of stream).
    pub fn finish<E>(
        &mut self,
        mut on_event: impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if !self.buf.is_empty() {
            let end = self.buf.len();
            self.line(0, end, &mut on_event)?;
        }
        let result = self.dispatch(&mut on_event);
        self.buf.clear();
        result
    }

    fn line<E>(
        &mut self,
        start: usize,
        end: usize,
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if start == end {
            return self.dispatch(on_event);
        }
        let line = &self.buf[start..end];
        if line[0] == b':' {
            return Ok(());
        }
        let colon = memchr::memchr(b':', line);
        let (field, mut value_start) = match colon {
            Some(i) => (&line[..i], start + i + 1),
            None => (line, end),
        };
        if value_start < end && self.buf[value_start] == b' ' {
            value_start += 1;
        }
        match field {
            b"data" => {
                self.data_lines += 1;
                if self.data_lines == 1 {
                    self.data_range = Some((value_start, end));
                } else {
                    if let Some((s, e)) = self.data_range.take() {
                        self.data.extend_from_slice(&self.buf[s..e]);
                    }
                    self.data.push(b'\n');
                    self.data.extend_from_slice(&self.buf[value_start..end]);
                }
            }
            b"event" => {
                self.event.clear();
                self.event
                    .push_str(&String::from_utf8_lossy(&self.buf[value_start..end]));
            }
            b"id" | b"retry" => {}
            _ if self.keep_raw => {
                self.raw.extend_from_slice(&self.buf[start..end]);
                self.raw.push(b'\n');
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch<E>(
        &mut self,
        on_event: &mut impl FnMut(SseEvent<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.data_lines == 0 && self.event.is_empty() {
            return Ok(());
        }
        let data = match self.data_range.take() {
            Some((s, e)) => &self.buf[s..e],
            None => &self.data[..],
        };
        let result = on_event(SseEvent {
            event: &self.event,
            data,
        });
        self.event.clear();
        self.data.clear();
        self.data_lines = 0;
        result
    }

    /// Drops consumed bytes; a pending single data line moves to the owned buffer first.
    fn compact(&mut self, consumed: usize) {
        if consumed == 0 {
            return;
        }
        if let Some((s, e)) = self.data_range.take() {
            self.data.extend_from_slice(&self.buf[s..e]);
        }
        self.buf.drain(..consumed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(chunks: &[&[u8]]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut decoder = SseDecoder::new();
        let mut push = |ev: SseEvent<'_>| -> Result<(), ()> {
            out.push((
                ev.event.to_owned(),
                String::from_utf8_lossy(ev.data).into_owned(),
            ));
            Ok(())
        };
        for chunk in chunks {
            decoder.feed(chunk, &mut push).unwrap();
        }
        decoder.finish(&mut push).unwrap();
        out
    }

    #[test]
    fn events_across_chunk_boundaries() {
        let text = b"event: message_start\ndata: {\"a\":1}\n\n: comment\ndata: x\ndata: y\n\ndata:[DONE]\n\n";
        let whole = collect(&[text]);
        let expected = vec![
            ("message_start".to_owned(), "{\"a\":1}".to_owned()),
            (String::new(), "x\ny".to_owned()),
            (String::new(), "[DONE]".to_owned()),
        ];
        assert_eq!(whole, expected);
        for split in 1..text.len() {
            let (a, b) = text.split_at(split);
            assert_eq!(collect(&[a, b]), expected, "split at {split}");
        }
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(collect(&bytes), expected);
    }

    #[test]
    fn crlf_and_cr_line_endings() {
        let expected = vec![(String::from("e"), String::from("1"))];
        assert_eq!(collect(&[b"event: e\r\ndata: 1\r\n\r\n"]), expected);
        assert_eq!(collect(&[b"event: e\r", b"\ndata: 1\r", b"\r"]), expected);
        assert_eq!(collect(&[b"event: e\rdata: 1\r\r"]), expected);
    }

    #[test]
    fn trailing_event_without_blank_line() {
        assert_eq!(
            collect(&[b"data: last"]),
            vec![(String::new(), "last".to_owned())]
        );
    }
}
