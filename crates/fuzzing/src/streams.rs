//! The SSE decoder and each provider's stream decoder, fed response bodies cut into pieces
//! at places the first input byte chooses (network reads split events anywhere).

use knightcode_ai::Api;
use knightcode_ai::Model;
use knightcode_ai::StreamEvent;
use knightcode_ai::WireDecoder;
use knightcode_ai::sse::SseDecoder;
use knightcode_ai::sse::SseEvent;

use crate::pieces;

/// An event as (name, data), compared across ways of cutting the same body.
type Owned = (String, Vec<u8>);

/// The decoder must give the same events, and keep the same non-SSE lines, however the
/// body is cut.
pub(crate) fn sse(data: &[u8]) {
    let Some((&control, body)) = data.split_first() else {
        return;
    };
    let keep_raw = control & 0x80 != 0;
    let step = usize::from(control & 0x7f);
    let whole = decode_sse(&[body], keep_raw);
    let cut = decode_sse(&pieces(body, step), keep_raw);
    assert_eq!(
        whole, cut,
        "SSE events depend on where the body was cut (step {step})"
    );
}

fn decode_sse(chunks: &[&[u8]], keep_raw: bool) -> (Vec<Owned>, Vec<u8>) {
    let mut decoder = if keep_raw {
        SseDecoder::keeping_raw_lines()
    } else {
        SseDecoder::new()
    };
    let mut events = Vec::new();
    let mut push = |event: SseEvent<'_>| -> Result<(), ()> {
        events.push((event.event.to_owned(), event.data.to_vec()));
        Ok(())
    };
    for chunk in chunks {
        let _ = decoder.feed(chunk, &mut push);
    }
    let _ = decoder.finish(&mut push);
    (events, decoder.raw().to_vec())
}

/// One provider's decoder over a whole body: a stream that was not failed by a chunk ends
/// in exactly one `Done` or `Error`, whatever the bytes.
pub(crate) fn provider(api: Api, data: &[u8]) {
    let Some((&control, body)) = data.split_first() else {
        return;
    };
    let mut model = Model::new("fuzz", "fuzz-model", api, "http://127.0.0.1");
    // Reasoning models take other paths through some decoders (thinking blocks, signatures).
    model.reasoning = control & 0x80 != 0;
    let Some(mut decoder) = WireDecoder::new(&model, 0) else {
        return;
    };
    let mut events = Vec::new();
    for chunk in pieces(body, usize::from(control & 0x7f)) {
        // A failed chunk ends the stream with that failure, as in the streaming driver.
        if decoder.feed(chunk).is_err() {
            return;
        }
        decoder.drain_into(&mut events);
    }
    let last = decoder.finish(1, &mut events);
    assert!(
        matches!(last, StreamEvent::Done { .. } | StreamEvent::Error { .. }),
        "the stream did not end in Done or Error: {last:?}"
    );
    assert!(
        !events
            .iter()
            .any(|event| matches!(event, StreamEvent::Done { .. } | StreamEvent::Error { .. })),
        "a Done or Error before the end of the stream"
    );
}
