//! Terminal input bytes → crossterm [`Event`]s, the subset a TUI in raw mode with
//! bracketed paste receives: characters (UTF-8), control keys, Alt+key, the cursor and
//! editing keys (CSI and SS3, with modifiers), F1–F12, Shift-Tab, pastes. Ported from
//! crossterm 0.29's `event/sys/unix/parse.rs` (MIT), whose parser is private: the reader
//! (`reader.rs`) must own the tty to see its end, so it parses what it reads.
//!
//! Invariant: pure — bytes in, events out, in order; an unknown sequence is dropped
//! whole, never turned into keys.

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// One step of the parse of the bytes seen so far.
#[derive(Debug, PartialEq)]
enum Step {
    /// The bytes are a prefix: wait for more.
    More,
    /// A complete event.
    Done(Event),
    /// A complete sequence the TUI does not use (focus, mouse, replies), or garbage.
    Drop,
}

/// The bytes of an unfinished sequence between two reads.
#[derive(Debug, Default)]
pub struct Parser {
    buffer: Vec<u8>,
}

impl Parser {
    /// The events `bytes` complete. `more`: the read filled its buffer, so a lone Esc at
    /// the end may be the start of a sequence still to come.
    pub fn advance(&mut self, bytes: &[u8], more: bool) -> Vec<Event> {
        let mut out = Vec::new();
        for (i, byte) in bytes.iter().enumerate() {
            self.buffer.push(*byte);
            match step(&self.buffer, i + 1 < bytes.len() || more) {
                Step::More => {}
                Step::Done(ev) => {
                    out.push(ev);
                    self.buffer.clear();
                }
                Step::Drop => self.buffer.clear(),
            }
        }
        out
    }
}

fn key(code: KeyCode) -> Step {
    Step::Done(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

fn with(code: KeyCode, modifiers: KeyModifiers) -> Step {
    Step::Done(Event::Key(KeyEvent::new(code, modifiers)))
}

fn step(buffer: &[u8], input_available: bool) -> Step {
    let Some(&first) = buffer.first() else {
        return Step::More;
    };
    match first {
        b'\x1b' => escape(buffer, input_available),
        b'\r' => key(KeyCode::Enter),
        b'\t' => key(KeyCode::Tab),
        b'\x7f' => key(KeyCode::Backspace),
        // Raw mode: `\n` is Ctrl-J, as every other control byte is Ctrl-letter.
        c @ 0x01..=0x1a => with(
            KeyCode::Char((c - 0x1 + b'a') as char),
            KeyModifiers::CONTROL,
        ),
        c @ 0x1c..=0x1f => with(
            KeyCode::Char((c - 0x1c + b'4') as char),
            KeyModifiers::CONTROL,
        ),
        0 => with(KeyCode::Char(' '), KeyModifiers::CONTROL),
        _ => match utf8_char(buffer) {
            Ok(Some(c)) if c.is_uppercase() => with(KeyCode::Char(c), KeyModifiers::SHIFT),
            Ok(Some(c)) => key(KeyCode::Char(c)),
            Ok(None) => Step::More,
            Err(()) => Step::Drop,
        },
    }
}

fn escape(buffer: &[u8], input_available: bool) -> Step {
    match buffer.get(1) {
        None if input_available => Step::More,
        None => key(KeyCode::Esc),
        Some(b'O') => match buffer.get(2) {
            None => Step::More,
            Some(b'D') => key(KeyCode::Left),
            Some(b'C') => key(KeyCode::Right),
            Some(b'A') => key(KeyCode::Up),
            Some(b'B') => key(KeyCode::Down),
            Some(b'H') => key(KeyCode::Home),
            Some(b'F') => key(KeyCode::End),
            Some(v @ b'P'..=b'S') => key(KeyCode::F(1 + v - b'P')),
            Some(_) => Step::Drop,
        },
        Some(b'[') => csi(buffer),
        Some(b'\x1b') => key(KeyCode::Esc),
        // Esc then a key: Alt+key.
        Some(_) => match step(&buffer[1..], input_available) {
            Step::Done(Event::Key(mut k)) => {
                k.modifiers |= KeyModifiers::ALT;
                Step::Done(Event::Key(k))
            }
            other => other,
        },
    }
}

fn csi(buffer: &[u8]) -> Step {
    let Some(&third) = buffer.get(2) else {
        return Step::More;
    };
    match third {
        b'D' => key(KeyCode::Left),
        b'C' => key(KeyCode::Right),
        b'A' => key(KeyCode::Up),
        b'B' => key(KeyCode::Down),
        b'H' => key(KeyCode::Home),
        b'F' => key(KeyCode::End),
        b'Z' => Step::Done(Event::Key(KeyEvent::new_with_kind(
            KeyCode::BackTab,
            KeyModifiers::SHIFT,
            KeyEventKind::Press,
        ))),
        b'P' => key(KeyCode::F(1)),
        b'Q' => key(KeyCode::F(2)),
        b'S' => key(KeyCode::F(4)),
        b'[' => match buffer.get(3) {
            None => Step::More,
            Some(v @ b'A'..=b'E') => key(KeyCode::F(1 + v - b'A')),
            Some(_) => Step::Drop,
        },
        // Focus reports, mouse reports, private replies: complete once a final byte comes.
        b'I' | b'O' => Step::Drop,
        b';' | b'0'..=b'9' | b'?' | b'<' | b'M' => numbered(buffer),
        _ => Step::Drop,
    }
}

/// `ESC [ params final`: the final byte is in 64..=126.
fn numbered(buffer: &[u8]) -> Step {
    if buffer.starts_with(b"\x1b[200~") {
        return paste(buffer);
    }
    let last = buffer[buffer.len() - 1];
    if buffer.len() == 3 || !(64..=126).contains(&last) {
        return Step::More;
    }
    if matches!(buffer[2], b'?' | b'<' | b'M') {
        return Step::Drop;
    }
    let Ok(params) = std::str::from_utf8(&buffer[2..buffer.len() - 1]) else {
        return Step::Drop;
    };
    let mut split = params.split(';');
    let first = split.next().unwrap_or("");
    let modifiers = split
        .next()
        .and_then(|m| m.split(':').next())
        .and_then(|m| m.parse::<u8>().ok())
        .map_or(KeyModifiers::NONE, modifiers);
    let code = match last {
        b'~' => match first.parse::<u8>() {
            Ok(1 | 7) => KeyCode::Home,
            Ok(2) => KeyCode::Insert,
            Ok(3) => KeyCode::Delete,
            Ok(4 | 8) => KeyCode::End,
            Ok(5) => KeyCode::PageUp,
            Ok(6) => KeyCode::PageDown,
            Ok(v @ 11..=15) => KeyCode::F(v - 10),
            Ok(v @ 17..=21) => KeyCode::F(v - 11),
            Ok(v @ 23..=24) => KeyCode::F(v - 12),
            _ => return Step::Drop,
        },
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'F' => KeyCode::End,
        b'H' => KeyCode::Home,
        b'P' => KeyCode::F(1),
        b'Q' => KeyCode::F(2),
        b'R' => KeyCode::F(3),
        b'S' => KeyCode::F(4),
        _ => return Step::Drop,
    };
    with(code, modifiers)
}

fn paste(buffer: &[u8]) -> Step {
    if buffer.len() >= 12 && buffer.ends_with(b"\x1b[201~") {
        let text = String::from_utf8_lossy(&buffer[6..buffer.len() - 6]).into_owned();
        Step::Done(Event::Paste(text))
    } else {
        Step::More
    }
}

/// xterm's modifier parameter: 1 + a bit mask (Shift 1, Alt 2, Ctrl 4, Super 8).
fn modifiers(param: u8) -> KeyModifiers {
    let mask = param.saturating_sub(1);
    let mut m = KeyModifiers::NONE;
    for (bit, modifier) in [
        (1, KeyModifiers::SHIFT),
        (2, KeyModifiers::ALT),
        (4, KeyModifiers::CONTROL),
        (8, KeyModifiers::SUPER),
    ] {
        if mask & bit != 0 {
            m |= modifier;
        }
    }
    m
}

/// The first character of `buffer`; `Ok(None)` while a multi-byte one is incomplete.
fn utf8_char(buffer: &[u8]) -> Result<Option<char>, ()> {
    if let Ok(s) = std::str::from_utf8(buffer) {
        return s.chars().next().map(Some).ok_or(());
    }
    let needed = match buffer[0] {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return Err(()),
    };
    let continuation = buffer[1..].iter().all(|b| b & 0b1100_0000 == 0b1000_0000);
    if continuation && buffer.len() < needed {
        Ok(None)
    } else {
        Err(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> Vec<Event> {
        Parser::default().advance(bytes, false)
    }

    fn k(code: KeyCode, m: KeyModifiers) -> Event {
        Event::Key(KeyEvent::new(code, m))
    }

    const NONE: KeyModifiers = KeyModifiers::NONE;

    #[test]
    fn characters_control_keys_and_alt() {
        assert_eq!(
            parse("aÉ\r\t\x7f\n\x03\x1bx€".as_bytes()),
            vec![
                k(KeyCode::Char('a'), NONE),
                k(KeyCode::Char('É'), KeyModifiers::SHIFT),
                k(KeyCode::Enter, NONE),
                k(KeyCode::Tab, NONE),
                k(KeyCode::Backspace, NONE),
                k(KeyCode::Char('j'), KeyModifiers::CONTROL),
                k(KeyCode::Char('c'), KeyModifiers::CONTROL),
                k(KeyCode::Char('x'), KeyModifiers::ALT),
                k(KeyCode::Char('€'), NONE),
            ]
        );
    }

    #[test]
    fn cursor_and_editing_keys_with_modifiers() {
        assert_eq!(
            parse(b"\x1b[A\x1bOB\x1b[1;5C\x1b[5~\x1b[6;2~\x1b[3~\x1b[H\x1b[15~\x1b[Z"),
            vec![
                k(KeyCode::Up, NONE),
                k(KeyCode::Down, NONE),
                k(KeyCode::Right, KeyModifiers::CONTROL),
                k(KeyCode::PageUp, NONE),
                k(KeyCode::PageDown, KeyModifiers::SHIFT),
                k(KeyCode::Delete, NONE),
                k(KeyCode::Home, NONE),
                k(KeyCode::F(5), NONE),
                k(KeyCode::BackTab, KeyModifiers::SHIFT),
            ]
        );
    }

    #[test]
    fn a_lone_escape_is_esc_unless_more_is_coming() {
        assert_eq!(parse(b"\x1b"), vec![k(KeyCode::Esc, NONE)]);
        let mut p = Parser::default();
        assert!(p.advance(b"\x1b", true).is_empty());
        assert_eq!(p.advance(b"[B", false), vec![k(KeyCode::Down, NONE)]);
    }

    #[test]
    fn a_paste_is_one_event_even_across_reads() {
        let mut p = Parser::default();
        assert!(p.advance(b"\x1b[200~two\rli", false).is_empty());
        assert_eq!(
            p.advance("nés\x1b[201~x".as_bytes(), false),
            vec![
                Event::Paste("two\rlinés".into()),
                k(KeyCode::Char('x'), NONE)
            ]
        );
    }

    #[test]
    fn a_split_character_waits_and_unknown_sequences_are_dropped_whole() {
        let mut p = Parser::default();
        let e = "é".as_bytes();
        assert!(p.advance(&e[..1], false).is_empty());
        assert_eq!(p.advance(&e[1..], false), vec![k(KeyCode::Char('é'), NONE)]);
        // A focus report, a mouse report and a device reply: nothing, then the key.
        assert_eq!(
            parse(b"\x1b[I\x1b[<0;3;4M\x1b[?62;22cq"),
            vec![k(KeyCode::Char('q'), NONE)]
        );
    }
}
