//! Questions agents declare through MCP (`oq mcp`, `/mcp` on `oq serve`) or Claude
//! Code's hook: the choices they may carry (the shape oq keeps for OpenCode requests),
//! what a retry under the same key must match, and who may withdraw one.
//!
//! Invariant: only the declaring agent or the session's author withdraws a question, and
//! a retry under a key is the first question only when it sends the same thing.

use super::choices::{Prompt, PromptOption};
use super::error::{ErrorCode, OqError};
use super::text::check_text;
use super::{Actor, Question};

/// Where an agent's question came from: the `source` a question records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A `declare_open_question` tool call over MCP.
    Mcp,
    /// Claude Code's own `AskUserQuestion`, caught by `oq hook claude-code`.
    ClaudeCode,
}

impl Origin {
    pub const fn as_str(self) -> &'static str {
        match self {
            Origin::Mcp => "mcp",
            Origin::ClaudeCode => "claude-code",
        }
    }
}

/// Parts of one question (Claude Code asks up to four at once).
pub const PARTS_MAX: usize = 8;
/// Options of one part.
pub const OPTIONS_MAX: usize = 20;
pub const HEADER_MAX_CHARS: usize = 60;
pub const LABEL_MAX_CHARS: usize = 100;
pub const DESCRIPTION_MAX_CHARS: usize = 300;
/// A part's own question text (the whole question's `pergunta` has the ADR's limit).
pub const PART_QUESTION_MAX_CHARS: usize = 500;
pub const WITHDRAW_REASON_MAX_CHARS: usize = 300;

/// Checks the parts an agent sent: at most [`PARTS_MAX`], each with a header, its own
/// question, 1–[`OPTIONS_MAX`] options with distinct non-empty labels. Returns them as
/// they will be recorded (trimmed).
pub fn check_prompts(prompts: &[Prompt]) -> Result<Vec<Prompt>, OqError> {
    let bad = |m: String| OqError::invalid(ErrorCode::InvalidOptions, m);
    if prompts.len() > PARTS_MAX {
        return Err(bad(format!("{} parts: at most {PARTS_MAX}", prompts.len())));
    }
    let mut checked = Vec::with_capacity(prompts.len());
    for (i, p) in prompts.iter().enumerate() {
        let part = format!("part {}", i + 1);
        if p.options.is_empty() || p.options.len() > OPTIONS_MAX {
            return Err(bad(format!(
                "{part} has {} options: expected 1 to {OPTIONS_MAX}",
                p.options.len()
            )));
        }
        let mut options: Vec<PromptOption> = Vec::with_capacity(p.options.len());
        for o in &p.options {
            let label = check_text(&format!("{part}: option label"), &o.label, LABEL_MAX_CHARS)?;
            if options.iter().any(|seen| seen.label == label) {
                return Err(bad(format!("{part}: option {label:?} is given twice")));
            }
            let description = match o.description.trim() {
                "" => String::new(),
                d => check_text(
                    &format!("{part}: option description"),
                    d,
                    DESCRIPTION_MAX_CHARS,
                )?,
            };
            options.push(PromptOption { label, description });
        }
        checked.push(Prompt {
            header: check_text(&format!("{part}: header"), &p.header, HEADER_MAX_CHARS)?,
            question: check_text(
                &format!("{part}: question"),
                &p.question,
                PART_QUESTION_MAX_CHARS,
            )?,
            options,
            multiple: p.multiple,
            custom: p.custom,
        });
    }
    Ok(checked)
}

/// Whether `existing`, the question a retry under the same key found, carries the parts
/// this retry sends (the ADR's fields are compared by [`super::DeclareInput`]). The same
/// key for another question is refused, never merged.
pub fn check_retry_parts(existing: &Question, prompts: &[Prompt]) -> Result<(), OqError> {
    if existing.prompts == prompts {
        return Ok(());
    }
    Err(OqError::invalid(
        ErrorCode::IdempotencyKeyReused,
        format!(
            "idempotencyKey already declared question {} with other options",
            existing.question_id
        ),
    ))
}

/// ADR 0214 leaves retraction to no one; oq lets the agent that declared a question
/// (its role, as recorded in `autor`) or the session's author withdraw it while open.
pub fn check_withdrawer(question: &Question, actor: &Actor) -> Result<(), OqError> {
    let allowed = match actor {
        Actor::Agent { role, .. } => role.as_str() == question.autor,
        Actor::Person { id } => *id == question.session_author,
        Actor::Service { .. } => false,
    };
    if !allowed {
        return Err(OqError::forbidden(
            ErrorCode::NotDeclarer,
            format!(
                "only the agent that declared {} ({}) or {} may withdraw it",
                question.question_id, question.autor, question.session_author
            ),
        ));
    }
    if !question.is_open() {
        return Err(OqError::conflict(
            ErrorCode::QuestionClosed,
            format!(
                "question {} is no longer open: nothing to withdraw",
                question.question_id
            ),
        ));
    }
    Ok(())
}
