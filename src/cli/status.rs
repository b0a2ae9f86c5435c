//! `oq status [--format '…']`: one line for a shell prompt or tmux's `status-right`
//! ("oq 3 · 1 for you"). The template is checked before the source is read, so a typo
//! is a clear error (`invalid_format`) rather than a prompt that silently lies.

use serde::Serialize;

use super::context::Context;
use crate::domain::error::exit;
use crate::domain::{ErrorCode, OqError};
use crate::source::Source;

/// The line printed without `--format`.
pub const DEFAULT_FORMAT: &str = "oq {open} · {mine} for you";

/// The fields a template may name.
pub const FIELDS: [&str; 3] = ["open", "mine", "project"];

/// A checked template: literal text and fields, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(String),
    Field(&'static str),
}

/// Parses `{field}` placeholders; `{{` and `}}` are literal braces.
pub fn parse_format(template: &str) -> Result<Vec<Piece>, OqError> {
    let bad = |m: String| OqError::invalid(ErrorCode::InvalidFormat, m);
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '{' => {
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => name.push(c),
                        None => return Err(bad(format!("--format: {{{name} is not closed"))),
                    }
                }
                let field = FIELDS.iter().find(|f| **f == name).ok_or_else(|| {
                    bad(format!(
                        "--format: unknown field {{{name}}}; the fields are {}",
                        FIELDS.map(|f| format!("{{{f}}}")).join(", ")
                    ))
                })?;
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(Piece::Field(field));
            }
            '}' => return Err(bad("--format: a lone '}' (write '}}' for a brace)".into())),
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// Open questions in view.
    pub open: u64,
    /// Of those, the ones this person may answer now.
    pub mine: u64,
    /// The project named, or `all`.
    pub project: String,
}

impl Status {
    pub fn render(&self, pieces: &[Piece]) -> String {
        pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.clone(),
                Piece::Field("open") => self.open.to_string(),
                Piece::Field("mine") => self.mine.to_string(),
                Piece::Field(_) => self.project.clone(),
            })
            .collect()
    }
}

/// The source's open counts, for the project in view.
pub async fn read(ctx: &Context) -> Result<Status, OqError> {
    let project = ctx.project_filter();
    let counts = ctx.source.open_counts(project).await?;
    Ok(Status {
        open: counts.open,
        mine: counts.mine,
        project: project.unwrap_or("all").to_string(),
    })
}

pub async fn run(ctx: &Context, format: Option<String>) -> Result<i32, OqError> {
    let pieces = parse_format(format.as_deref().unwrap_or(DEFAULT_FORMAT))?;
    let status = read(ctx).await?;
    ctx.emit(&status, || format!("{}\n", status.render(&pieces)));
    Ok(exit::OK)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn fields_braces_and_refusals() {
        let s = Status {
            open: 3,
            mine: 1,
            project: "loja".into(),
        };
        let render = |t: &str| parse_format(t).map(|p| s.render(&p));
        assert_eq!(render(DEFAULT_FORMAT).unwrap(), "oq 3 · 1 for you");
        assert_eq!(render("{{{project}}} {mine}/{open}").unwrap(), "{loja} 1/3");
        for bad in ["{opne}", "{open", "x}", "{}"] {
            let e = render(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidFormat, "{bad}");
        }
        assert!(render("{opne}").unwrap_err().to_string().contains("{opne}"));
    }
}
