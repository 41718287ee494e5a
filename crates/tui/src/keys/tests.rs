use super::*;

fn parse(bytes: &[u8]) -> Vec<InputEvent> {
    let mut parser = InputParser::new();
    let mut events = parser.feed(bytes);
    events.extend(parser.flush_pending());
    events
}

fn keys(bytes: &[u8]) -> Vec<(KeyCode, Modifiers)> {
    parse(bytes)
        .into_iter()
        .map(|event| match event {
            InputEvent::Key(key) => (key.code, key.modifiers),
            other => panic!("expected keys, got {other:?}"),
        })
        .collect()
}

fn one(bytes: &[u8]) -> Key {
    let events = parse(bytes);
    assert_eq!(events.len(), 1, "{events:?}");
    match events.into_iter().next() {
        Some(InputEvent::Key(key)) => key,
        other => panic!("expected one key, got {other:?}"),
    }
}

const NONE: Modifiers = Modifiers::NONE;
const CTRL: Modifiers = Modifiers::CTRL;
const ALT: Modifiers = Modifiers::ALT;
const SHIFT: Modifiers = Modifiers::SHIFT;

fn ch(c: char) -> KeyCode {
    KeyCode::Char(c)
}

#[test]
fn printable_text_is_one_key_per_character() {
    assert_eq!(
        keys(b"aZ 1~"),
        vec![
            (ch('a'), NONE),
            (ch('Z'), NONE),
            (ch(' '), NONE),
            (ch('1'), NONE),
            (ch('~'), NONE)
        ]
    );
    assert_eq!(
        keys("é漢🙂".as_bytes()),
        vec![(ch('é'), NONE), (ch('漢'), NONE), (ch('🙂'), NONE)]
    );
    assert_eq!(one(b"x").raw, "x");
}

#[test]
fn utf8_split_across_reads_waits_for_the_rest() {
    let bytes = "漢🙂".as_bytes();
    let mut parser = InputParser::new();
    let mut events = Vec::new();
    for b in bytes {
        events.extend(parser.feed(std::slice::from_ref(b)));
    }
    assert!(!parser.has_pending());
    let chars: Vec<_> = events
        .iter()
        .map(|e| match e {
            InputEvent::Key(k) => k.code,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(chars, vec![ch('漢'), ch('🙂')]);
}

#[test]
fn invalid_utf8_is_dropped_without_losing_what_follows() {
    assert_eq!(
        keys(b"\xffa\xc3(b"),
        vec![(ch('a'), NONE), (ch('('), NONE), (ch('b'), NONE)]
    );
    // An unfinished character at a flush is dropped.
    let mut parser = InputParser::new();
    assert!(parser.feed(b"\xe6\xbc").is_empty());
    assert!(parser.has_pending());
    assert!(parser.flush_pending().is_empty());
    assert!(!parser.has_pending());
}

#[test]
fn control_characters() {
    assert_eq!(
        keys(b"\x01\x1a\x00\x1d\x1f\x1c"),
        vec![
            (ch('a'), CTRL),
            (ch('z'), CTRL),
            (ch(' '), CTRL),
            (ch(']'), CTRL),
            (ch('-'), CTRL),
            (ch('\\'), CTRL)
        ]
    );
    assert_eq!(
        keys(b"\t\r\n\x7f\x08"),
        vec![
            (KeyCode::Tab, NONE),
            (KeyCode::Enter, NONE),
            (ch('j'), CTRL),
            (KeyCode::Backspace, NONE),
            (KeyCode::Backspace, NONE)
        ]
    );
}

#[test]
fn windows_terminal_backspace_byte_is_ctrl_backspace() {
    let mut parser = InputParser::new();
    parser.set_windows_terminal(true);
    let events = parser.feed(b"\x08\x7f");
    let codes: Vec<_> = events
        .iter()
        .map(|e| match e {
            InputEvent::Key(k) => (k.code, k.modifiers),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        codes,
        vec![(KeyCode::Backspace, CTRL), (KeyCode::Backspace, NONE)]
    );
}

#[test]
fn lone_escape_waits_for_flush() {
    let mut parser = InputParser::new();
    assert!(parser.feed(b"\x1b").is_empty());
    assert!(parser.has_pending());
    let events = parser.flush_pending();
    assert_eq!(
        events,
        vec![InputEvent::Key(Key {
            code: KeyCode::Escape,
            modifiers: NONE,
            kind: KeyKind::Press,
            raw: "\x1b".into()
        })]
    );
    assert!(!parser.has_pending());
    assert!(parser.flush_pending().is_empty());
}

#[test]
fn escape_then_more_bytes_in_a_later_read_is_a_sequence() {
    let mut parser = InputParser::new();
    assert!(parser.feed(b"\x1b").is_empty());
    let events = parser.feed(b"[A");
    assert_eq!(events.len(), 1);
    assert!(matches!(&events[0], InputEvent::Key(k) if k.code == KeyCode::Up && k.raw == "\x1b[A"));
}

#[test]
fn alt_keys() {
    assert_eq!(
        keys(b"\x1ba\x1bB\x1b \x1b\x7f\x1b\r\x1b\x01\x1b\x1d"),
        vec![
            (ch('a'), ALT),
            (ch('B'), ALT),
            (ch(' '), ALT),
            (KeyCode::Backspace, ALT),
            (KeyCode::Enter, ALT),
            (ch('a'), CTRL | ALT),
            (ch(']'), CTRL | ALT)
        ]
    );
    assert_eq!(one("\x1bé".as_bytes()).code, ch('é'));
    assert_eq!(one(b"\x1bd").raw, "\x1bd");
}

#[test]
fn double_escape_is_two_escapes_or_alt_arrow() {
    assert_eq!(
        keys(b"\x1b\x1b"),
        vec![(KeyCode::Escape, NONE), (KeyCode::Escape, NONE)]
    );
    assert_eq!(keys(b"\x1b\x1b[A"), vec![(KeyCode::Up, ALT)]);
    assert_eq!(
        keys(b"\x1b\x1bx"),
        vec![(KeyCode::Escape, NONE), (ch('x'), ALT)]
    );
}

#[test]
fn csi_cursor_and_editing_keys() {
    let cases: &[(&[u8], KeyCode)] = &[
        (b"\x1b[A", KeyCode::Up),
        (b"\x1b[B", KeyCode::Down),
        (b"\x1b[C", KeyCode::Right),
        (b"\x1b[D", KeyCode::Left),
        (b"\x1b[H", KeyCode::Home),
        (b"\x1b[F", KeyCode::End),
        (b"\x1b[1~", KeyCode::Home),
        (b"\x1b[7~", KeyCode::Home),
        (b"\x1b[4~", KeyCode::End),
        (b"\x1b[8~", KeyCode::End),
        (b"\x1b[2~", KeyCode::Insert),
        (b"\x1b[3~", KeyCode::Delete),
        (b"\x1b[5~", KeyCode::PageUp),
        (b"\x1b[6~", KeyCode::PageDown),
        (b"\x1b[E", KeyCode::Clear),
        (b"\x1bOA", KeyCode::Up),
        (b"\x1bOD", KeyCode::Left),
        (b"\x1bOH", KeyCode::Home),
        (b"\x1bOF", KeyCode::End),
        (b"\x1bOM", KeyCode::Enter),
    ];
    for (bytes, code) in cases {
        let key = one(bytes);
        assert_eq!((key.code, key.modifiers), (*code, NONE), "{bytes:?}");
        assert_eq!(key.raw.as_bytes(), *bytes);
    }
}

#[test]
fn function_keys() {
    let cases: &[(&[u8], u8)] = &[
        (b"\x1bOP", 1),
        (b"\x1bOQ", 2),
        (b"\x1bOR", 3),
        (b"\x1bOS", 4),
        (b"\x1b[11~", 1),
        (b"\x1b[14~", 4),
        (b"\x1b[15~", 5),
        (b"\x1b[17~", 6),
        (b"\x1b[21~", 10),
        (b"\x1b[23~", 11),
        (b"\x1b[24~", 12),
        (b"\x1b[[A", 1),
        (b"\x1b[[E", 5),
    ];
    for (bytes, n) in cases {
        assert_eq!(keys(bytes), vec![(KeyCode::F(*n), NONE)], "{bytes:?}");
    }
    assert_eq!(keys(b"\x1b[1;5P"), vec![(KeyCode::F(1), CTRL)]);
    assert_eq!(keys(b"\x1b[15;2~"), vec![(KeyCode::F(5), SHIFT)]);
}

#[test]
fn xterm_modifier_parameters() {
    assert_eq!(keys(b"\x1b[1;5D"), vec![(KeyCode::Left, CTRL)]);
    assert_eq!(keys(b"\x1b[1;3C"), vec![(KeyCode::Right, ALT)]);
    assert_eq!(keys(b"\x1b[1;2A"), vec![(KeyCode::Up, SHIFT)]);
    assert_eq!(keys(b"\x1b[1;6B"), vec![(KeyCode::Down, CTRL | SHIFT)]);
    assert_eq!(keys(b"\x1b[1;5H"), vec![(KeyCode::Home, CTRL)]);
    assert_eq!(keys(b"\x1b[3;3~"), vec![(KeyCode::Delete, ALT)]);
    assert_eq!(keys(b"\x1b[5;5~"), vec![(KeyCode::PageUp, CTRL)]);
    // Caps Lock / Num Lock bits do not change the key.
    assert_eq!(keys(b"\x1b[1;69D"), vec![(KeyCode::Left, CTRL)]);
    assert_eq!(keys(b"\x1b[Z"), vec![(KeyCode::Tab, SHIFT)]);
}

#[test]
fn rxvt_sequences() {
    assert_eq!(keys(b"\x1b[a"), vec![(KeyCode::Up, SHIFT)]);
    assert_eq!(keys(b"\x1b[d"), vec![(KeyCode::Left, SHIFT)]);
    assert_eq!(keys(b"\x1bOc"), vec![(KeyCode::Right, CTRL)]);
    assert_eq!(keys(b"\x1b[3$"), vec![(KeyCode::Delete, SHIFT)]);
    assert_eq!(keys(b"\x1b[5^"), vec![(KeyCode::PageUp, CTRL)]);
    assert_eq!(
        keys(b"\x1b[7$x"),
        vec![(KeyCode::Home, SHIFT), (ch('x'), NONE)]
    );
}

#[test]
fn kitty_protocol_keys() {
    assert_eq!(keys(b"\x1b[27u"), vec![(KeyCode::Escape, NONE)]);
    assert_eq!(keys(b"\x1b[13;2u"), vec![(KeyCode::Enter, SHIFT)]);
    assert_eq!(keys(b"\x1b[13;3u"), vec![(KeyCode::Enter, ALT)]);
    assert_eq!(keys(b"\x1b[57414u"), vec![(KeyCode::Enter, NONE)]);
    assert_eq!(keys(b"\x1b[9;2u"), vec![(KeyCode::Tab, SHIFT)]);
    assert_eq!(keys(b"\x1b[127;5u"), vec![(KeyCode::Backspace, CTRL)]);
    assert_eq!(keys(b"\x1b[99;5u"), vec![(ch('c'), CTRL)]);
    assert_eq!(keys(b"\x1b[112;6u"), vec![(ch('p'), CTRL | SHIFT)]);
    assert_eq!(keys(b"\x1b[45;5u"), vec![(ch('-'), CTRL)]);
    assert_eq!(keys(b"\x1b[32;5u"), vec![(ch(' '), CTRL)]);
    assert_eq!(keys(b"\x1b[107;9u"), vec![(ch('k'), Modifiers::SUPER)]);
    assert_eq!(keys(b"\x1b[57399u"), vec![(ch('0'), NONE)]);
    assert_eq!(keys(b"\x1b[57417;5u"), vec![(KeyCode::Left, CTRL)]);
    assert_eq!(keys(b"\x1b[57376u"), vec![(KeyCode::F(13), NONE)]);
}

#[test]
fn kitty_shifted_keys_type_the_shifted_character() {
    // With the alternate-keys flag the terminal reports the shifted key.
    assert_eq!(keys(b"\x1b[97:65;2u"), vec![(ch('A'), NONE)]);
    assert_eq!(keys(b"\x1b[49:33;2u"), vec![(ch('!'), NONE)]);
    // Without it, a shifted letter is still upper case.
    assert_eq!(keys(b"\x1b[97;2u"), vec![(ch('A'), NONE)]);
    // Caps Lock alone does not shift.
    assert_eq!(keys(b"\x1b[97;65u"), vec![(ch('a'), NONE)]);
    // An upper-case codepoint with Shift and Ctrl names the letter.
    assert_eq!(keys(b"\x1b[80;6u"), vec![(ch('p'), CTRL | SHIFT)]);
}

#[test]
fn kitty_base_layout_key_names_non_latin_shortcuts() {
    // Ctrl + Cyrillic es on the physical C key.
    assert_eq!(keys(b"\x1b[1089::99;5u"), vec![(ch('c'), CTRL)]);
    // Typed without modifiers it is the Cyrillic letter.
    assert_eq!(keys(b"\x1b[1089::99u"), vec![(ch('с'), NONE)]);
}

#[test]
fn kitty_event_types() {
    let press = one(b"\x1b[97;1:1u");
    assert_eq!(press.kind, KeyKind::Press);
    let repeat = one(b"\x1b[97;1:2u");
    assert_eq!(repeat.kind, KeyKind::Repeat);
    let release = one(b"\x1b[97;1:3u");
    assert_eq!(release.kind, KeyKind::Release);
    assert_eq!(release.code, ch('a'));
    let arrow_release = one(b"\x1b[1;1:3A");
    assert_eq!(
        (arrow_release.code, arrow_release.kind),
        (KeyCode::Up, KeyKind::Release)
    );
    let delete_repeat = one(b"\x1b[3;5:2~");
    assert_eq!(
        (
            delete_repeat.code,
            delete_repeat.modifiers,
            delete_repeat.kind
        ),
        (KeyCode::Delete, CTRL, KeyKind::Repeat)
    );
}

#[test]
fn kitty_text_field_is_ignored() {
    assert_eq!(keys(b"\x1b[97;2;65u"), vec![(ch('A'), NONE)]);
}

#[test]
fn kitty_private_use_keys_are_other_events() {
    // Caps Lock pressed on its own.
    assert_eq!(
        parse(b"\x1b[57358u"),
        vec![InputEvent::Other("\x1b[57358u".into())]
    );
}

#[test]
fn kitty_printable_duplicate_plain_text_is_dropped() {
    assert_eq!(keys(b"\x1b[97ua"), vec![(ch('a'), NONE)]);
    // A different character is kept.
    assert_eq!(keys(b"\x1b[97ub"), vec![(ch('a'), NONE), (ch('b'), NONE)]);
    // Only the very next event is checked.
    assert_eq!(
        keys(b"\x1b[97uxa"),
        vec![(ch('a'), NONE), (ch('x'), NONE), (ch('a'), NONE)]
    );
}

#[test]
fn kitty_mode_changes_ambiguous_legacy_bytes() {
    let mut parser = InputParser::new();
    parser.set_kitty_active(true);
    assert!(parser.kitty_active());
    let codes: Vec<_> = parser
        .feed(b"\x1b\r\n\r")
        .into_iter()
        .map(|e| match e {
            InputEvent::Key(k) => (k.code, k.modifiers),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        codes,
        vec![
            (KeyCode::Enter, SHIFT),
            (KeyCode::Enter, SHIFT),
            (KeyCode::Enter, NONE)
        ]
    );
}

#[test]
fn modify_other_keys() {
    assert_eq!(keys(b"\x1b[27;5;99~"), vec![(ch('c'), CTRL)]);
    assert_eq!(keys(b"\x1b[27;2;13~"), vec![(KeyCode::Enter, SHIFT)]);
    assert_eq!(keys(b"\x1b[27;6;80~"), vec![(ch('p'), CTRL | SHIFT)]);
    assert_eq!(keys(b"\x1b[27;3;13~"), vec![(KeyCode::Enter, ALT)]);
}

#[test]
fn sequences_split_at_every_byte() {
    let input: &[u8] = b"a\x1b[1;5D\x1b[97;6u\x1bOB\x1b[200~hi\r\nyo\x1b[201~\x1b[3~z";
    let whole = {
        let mut parser = InputParser::new();
        parser.feed(input)
    };
    for split in 1..input.len() {
        let mut parser = InputParser::new();
        let mut events = parser.feed(&input[..split]);
        events.extend(parser.feed(&input[split..]));
        assert_eq!(events, whole, "split at {split}");
    }
    assert_eq!(whole.len(), 7);
    assert_eq!(whole[4], InputEvent::Paste("hi\nyo".into()));
}

#[test]
fn every_byte_in_its_own_read() {
    let input: &[u8] = b"\x1b[1;5D\x1b[200~a\rb\x1b[201~\x1b[27;5;99~x";
    let mut parser = InputParser::new();
    let mut events = Vec::new();
    for b in input {
        events.extend(parser.feed(std::slice::from_ref(b)));
    }
    assert_eq!(events.len(), 4, "{events:?}");
    assert_eq!(events[1], InputEvent::Paste("a\nb".into()));
    assert!(!parser.has_pending());
}

#[test]
fn bracketed_paste_spanning_many_reads() {
    let mut parser = InputParser::new();
    assert_eq!(
        parser.feed(b"x\x1b[200~line one\r\n"),
        vec![InputEvent::Key(Key {
            code: ch('x'),
            modifiers: NONE,
            kind: KeyKind::Press,
            raw: "x".into()
        })]
    );
    assert!(parser.in_paste());
    // A quiet period inside a paste does not end it, and the parser does not ask for a flush.
    assert!(!parser.has_pending());
    assert!(parser.flush_pending().is_empty());
    assert!(parser.feed(b"\x1bline two\rline three\x1b[20").is_empty());
    let events = parser.feed(b"1~y");
    assert_eq!(events.len(), 2);
    assert_eq!(
        events[0],
        InputEvent::Paste("line one\n\x1bline two\nline three".into())
    );
    assert!(matches!(&events[1], InputEvent::Key(k) if k.code == ch('y')));
    assert!(!parser.in_paste());
}

#[test]
fn paste_keeps_utf8_and_escape_like_text() {
    let text = "漢字 \x1b[A 🙂";
    let mut bytes = b"\x1b[200~".to_vec();
    bytes.extend_from_slice(text.as_bytes());
    bytes.extend_from_slice(b"\x1b[201~");
    assert_eq!(parse(&bytes), vec![InputEvent::Paste(text.into())]);
    assert_eq!(InputEvent::Paste("p".into()).raw(), "\x1b[200~p\x1b[201~");
}

#[test]
fn empty_paste() {
    assert_eq!(
        parse(b"\x1b[200~\x1b[201~"),
        vec![InputEvent::Paste(String::new())]
    );
}

#[test]
fn stray_paste_end_is_ignored() {
    assert_eq!(keys(b"\x1b[201~a"), vec![(ch('a'), NONE)]);
}

#[test]
fn unknown_sequences_do_not_swallow_following_input() {
    let events = parse(b"\x1b[99Xa\x1b[?62;4cb\x1b[<0;10;5Mc\x1b[1;2;3;4;5qd");
    assert_eq!(
        events,
        vec![
            InputEvent::Other("\x1b[99X".into()),
            InputEvent::Key(Key {
                code: ch('a'),
                modifiers: NONE,
                kind: KeyKind::Press,
                raw: "a".into()
            }),
            InputEvent::Other("\x1b[?62;4c".into()),
            InputEvent::Key(Key {
                code: ch('b'),
                modifiers: NONE,
                kind: KeyKind::Press,
                raw: "b".into()
            }),
            InputEvent::Other("\x1b[<0;10;5M".into()),
            InputEvent::Key(Key {
                code: ch('c'),
                modifiers: NONE,
                kind: KeyKind::Press,
                raw: "c".into()
            }),
            InputEvent::Other("\x1b[1;2;3;4;5q".into()),
            InputEvent::Key(Key {
                code: ch('d'),
                modifiers: NONE,
                kind: KeyKind::Press,
                raw: "d".into()
            }),
        ]
    );
}

#[test]
fn broken_csi_is_cut_at_the_first_foreign_byte() {
    let events = parse(b"\x1b[12\rx");
    assert_eq!(events[0], InputEvent::Other("\x1b[12".into()));
    assert!(matches!(&events[1], InputEvent::Key(k) if k.code == KeyCode::Enter));
    assert!(matches!(&events[2], InputEvent::Key(k) if k.code == ch('x')));
    // `x` is a final byte, so this is a complete (unknown) sequence followed by `A`.
    let events = parse(b"\x1b[1;xA");
    assert_eq!(events[0], InputEvent::Other("\x1b[1;x".into()));
    assert!(matches!(&events[1], InputEvent::Key(k) if k.code == ch('A')));
}

#[test]
fn overlong_csi_gives_up() {
    let mut bytes = b"\x1b[".to_vec();
    bytes.extend(std::iter::repeat_n(b'1', 300));
    bytes.push(b'A');
    let events = parse(&bytes);
    assert!(matches!(&events[0], InputEvent::Other(_)));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, InputEvent::Key(k) if k.code == ch('A')))
    );
}

#[test]
fn unfinished_csi_at_flush_is_other() {
    let mut parser = InputParser::new();
    assert!(parser.feed(b"\x1b[1;5").is_empty());
    assert!(parser.has_pending());
    assert_eq!(
        parser.flush_pending(),
        vec![InputEvent::Other("\x1b[1;5".into())]
    );
}

#[test]
fn terminal_replies_are_other_events() {
    let events =
        parse(b"\x1b[?7u\x1b]11;rgb:0000/0000/0000\x07\x1bP>|kitty(0.35)\x1b\\\x1b_Gi=1;OK\x1b\\");
    assert_eq!(events.len(), 4, "{events:?}");
    assert_eq!(events[0].kitty_flags_reply(), Some(7));
    assert_eq!(
        events[1],
        InputEvent::Other("\x1b]11;rgb:0000/0000/0000\x07".into())
    );
    assert_eq!(
        events[2],
        InputEvent::Other("\x1bP>|kitty(0.35)\x1b\\".into())
    );
    assert_eq!(events[3], InputEvent::Other("\x1b_Gi=1;OK\x1b\\".into()));
    assert_eq!(events[1].kitty_flags_reply(), None);
}

#[test]
fn kitty_reply_split_across_reads() {
    let mut parser = InputParser::new();
    assert!(parser.feed(b"\x1b[?").is_empty());
    let events = parser.feed(b"15u");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].kitty_flags_reply(), Some(15));
}

#[test]
fn alt_shift_p_and_alt_bracket_are_keys_not_strings() {
    assert_eq!(keys(b"\x1bP"), vec![(ch('P'), ALT)]);
    assert_eq!(keys(b"\x1b]"), vec![(ch(']'), ALT)]);
    assert_eq!(keys(b"\x1b]x"), vec![(ch(']'), ALT), (ch('x'), NONE)]);
    assert_eq!(keys(b"\x1bPx"), vec![(ch('P'), ALT), (ch('x'), NONE)]);
}

#[test]
fn x10_mouse_report_is_other() {
    let events = parse(b"\x1b[M !!a");
    assert_eq!(events[0], InputEvent::Other("\x1b[M !!".into()));
    assert_eq!(events.len(), 2);
}

#[test]
fn event_raw_round_trips() {
    let key = one(b"\x1b[1;5D");
    assert_eq!(InputEvent::Key(key).raw(), "\x1b[1;5D");
    assert_eq!(InputEvent::Other("\x1b[?1u".into()).raw(), "\x1b[?1u");
}
