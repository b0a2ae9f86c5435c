//! Text and id checks shared by every input: limits in characters, not bytes.
//!
//! Decision: of the bidirectional formatting characters, the embeddings, overrides and
//! isolates (U+202A–U+202E, U+2066–U+2069) are refused (`bidi_control`): they reorder
//! text at a distance, so a question or an answer could read one way on screen and
//! mean another in the log ("Trojan Source"). The implicit marks (LRM, RLM, ALM) stay:
//! they only settle the direction of neighbouring neutral characters, and mixed
//! right-to-left text needs them. Text made only of invisible characters (zero-width
//! spaces and joiners, the word joiner, BOM, soft hyphen, variation selectors… — Unicode's
//! default-ignorable code points) is empty: it shows nothing, so it answers nothing.

use super::error::{ErrorCode, OqError};

/// Ids are typed by people and put in URLs: short, printable, no spaces or slashes.
pub const ID_MAX_CHARS: usize = 100;

/// `text` on one line (runs of whitespace one space), cut to `max` characters with "…":
/// how a list or a hint quotes a longer text.
pub fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        flat.chars().take(max.saturating_sub(1)).collect::<String>() + "…"
    }
}

/// The length the limits count: characters of the trimmed text (what `check_text`
/// measures, so a live counter and the refusal agree).
pub fn text_len(value: &str) -> usize {
    value.trim().chars().count()
}

/// Trims `value` and checks it is not empty and at most `max` characters.
pub fn check_text(field: &str, value: &str, max: usize) -> Result<String, OqError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(OqError::invalid(
            ErrorCode::EmptyText,
            format!("{field} is empty"),
        ));
    }
    if trimmed
        .chars()
        .all(|c| c.is_whitespace() || is_invisible(c))
    {
        return Err(OqError::invalid(
            ErrorCode::EmptyText,
            format!("{field} holds only invisible characters (zero-width spaces, joiners…)"),
        ));
    }
    if let Some(c) = trimmed.chars().find(|c| is_bidi_control(*c)) {
        return Err(OqError::invalid(
            ErrorCode::BidiControl,
            format!(
                "{field} contains the bidirectional control U+{:04X}, which can make the text read differently from what is recorded",
                c as u32
            ),
        ));
    }
    let chars = text_len(trimmed);
    if chars > max {
        return Err(OqError::invalid(
            ErrorCode::TextTooLong,
            format!("{field} has {chars} characters; at most {max}"),
        ));
    }
    if trimmed
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t' && c != '\r')
    {
        return Err(OqError::invalid(
            ErrorCode::InvalidText,
            format!("{field} contains control characters"),
        ));
    }
    Ok(trimmed.to_string())
}

pub fn check_id(field: &str, id: &str) -> Result<(), OqError> {
    let ok = !id.is_empty()
        && id.chars().count() <= ID_MAX_CHARS
        && id
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '@'));
    if ok {
        Ok(())
    } else {
        Err(OqError::invalid(
            ErrorCode::InvalidId,
            format!(
                "{field} {id:?} is not a valid id (1–{ID_MAX_CHARS} letters, digits, - _ . : @)"
            ),
        ))
    }
}

/// The explicit bidirectional embeddings, overrides and isolates (with their terminators).
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Unicode's default-ignorable code points: drawn as nothing.
pub fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFF8}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}
