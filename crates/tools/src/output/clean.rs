//! Terminal output made plain text for user shell commands: escape sequences, CRs and other
//! control characters removed, as the reference agent shows them (`spec/rpc.md` "Bash").

/// An escape sequence longer than this is garbage, not a sequence still arriving: it is
/// dropped instead of being carried to the next chunk.
const MAX_ESCAPE_CARRY: usize = 4096;

/// Appends `input` without escape sequences, CRs and other control characters to `out`;
/// returns an escape sequence cut off at the end (to be completed by the next chunk).
pub(super) fn clean(input: &str, out: &mut String) -> String {
    let bytes = input.as_bytes();
    let mut chars = input.char_indices();
    while let Some((start, c)) = chars.next() {
        let skip = match c {
            '\u{1b}' => escape_length(&bytes[start..]),
            '\u{9b}' => csi_length(&bytes[start..], 2),
            '\t' | '\n' => {
                out.push(c);
                continue;
            }
            c if (c as u32) < 0x20 => continue,
            '\u{FFF9}'..='\u{FFFB}' => continue,
            c => {
                out.push(c);
                continue;
            }
        };
        match skip {
            Some(length) => {
                // Escape sequences are ASCII after their introducer, so `length` lands on a
                // character boundary; skip the characters it covers.
                let end = start + length;
                while chars.offset() < end {
                    if chars.next().is_none() {
                        break;
                    }
                }
            }
            None => {
                let rest = &input[start..];
                return if rest.len() > MAX_ESCAPE_CARRY {
                    String::new()
                } else {
                    rest.to_owned()
                };
            }
        }
    }
    String::new()
}

/// Length of the escape sequence at the start of `bytes` (which begins with ESC); `None`
/// when it is incomplete.
fn escape_length(bytes: &[u8]) -> Option<usize> {
    let next = *bytes.get(1)?;
    match next {
        b'[' => csi_length(bytes, 2),
        // OSC, DCS, SOS, PM, APC: a string ended by BEL or ESC \.
        b']' | b'P' | b'X' | b'^' | b'_' => {
            let mut index = 2;
            while index < bytes.len() {
                match bytes[index] {
                    0x07 => return Some(index + 1),
                    0x1b => {
                        let after = *bytes.get(index + 1)?;
                        return Some(if after == b'\\' { index + 2 } else { index });
                    }
                    _ => index += 1,
                }
            }
            None
        }
        // Intermediate bytes, then one final byte (`ESC ( B`, `ESC # 8`).
        0x20..=0x2f => {
            let mut index = 1;
            while bytes.get(index).is_some_and(|b| (0x20..=0x2f).contains(b)) {
                index += 1;
            }
            bytes.get(index).map(|_| index + 1)
        }
        0x40..=0x7e => Some(2),
        // A lone ESC before ordinary text: drop the ESC only.
        _ => Some(1),
    }
}

/// Length of a control sequence whose parameters start at `start`: parameter bytes,
/// intermediate bytes, one final byte.
fn csi_length(bytes: &[u8], start: usize) -> Option<usize> {
    let mut index = start;
    while bytes.get(index).is_some_and(|b| (0x30..=0x3f).contains(b)) {
        index += 1;
    }
    while bytes.get(index).is_some_and(|b| (0x20..=0x2f).contains(b)) {
        index += 1;
    }
    let last = *bytes.get(index)?;
    Some(if (0x40..=0x7e).contains(&last) {
        index + 1
    } else {
        // Malformed: drop what was read, keep the unexpected byte.
        index
    })
}
