//! Text and id checks shared by every input: limits in characters, not bytes.

use super::error::{ErrorCode, OqError};

/// Ids are typed by people and put in URLs: short, printable, no spaces or slashes.
pub const ID_MAX_CHARS: usize = 100;

/// Trims `value` and checks it is not empty and at most `max` characters.
pub fn check_text(field: &str, value: &str, max: usize) -> Result<String, OqError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(OqError::invalid(
            ErrorCode::EmptyText,
            format!("{field} is empty"),
        ));
    }
    let chars = trimmed.chars().count();
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
