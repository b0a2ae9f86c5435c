//! Questions that carry options — an OpenCode request: one or more parts, each with
//! options, single or multiple choice, and free text — and how such a question is
//! answered (`answers: string[][]`, one array per part), dismissed, or settled upstream.
//!
//! Upstream validates nothing, so oq checks an answer against the options here.

use serde::{Deserialize, Serialize};

use super::error::{ErrorCode, OqError};
use super::question::RESPOSTA_MAX_CHARS;
use super::text::check_text;

/// One part of a question with options.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    pub header: String,
    pub question: String,
    pub options: Vec<PromptOption>,
    /// Several options may be chosen.
    #[serde(default)]
    pub multiple: bool,
    /// Free text is accepted besides the options (OpenCode's default).
    #[serde(default = "yes")]
    pub custom: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptOption {
    pub label: String,
    #[serde(default)]
    pub description: String,
}

/// Where an imported question lives upstream, so its answer can be carried back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Upstream {
    /// `opencode`.
    pub kind: String,
    /// The upstream's name in the server's configuration (never its credentials).
    pub name: String,
    pub directory: String,
    #[serde(rename = "requestID")]
    pub request_id: String,
    #[serde(rename = "sessionID")]
    pub session_id: String,
    /// The tool call that asked (OpenCode's `tool.callID`), to find what became of the
    /// request once upstream no longer lists it.
    #[serde(rename = "callID", default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
}

/// Why a question left the queue without an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClosedReason {
    /// Its author dismissed it (an OpenCode question rejected from oq).
    Rejected,
    /// It was settled upstream by someone else (replied or rejected there).
    External,
    /// The agent that declared it (or the session's author) retracted it.
    Withdrawn,
}

impl ClosedReason {
    pub fn as_str(self) -> &'static str {
        match self {
            ClosedReason::Rejected => "rejected",
            ClosedReason::External => "external",
            ClosedReason::Withdrawn => "withdrawn",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closure {
    pub reason: ClosedReason,
    pub by: String,
    pub at: i64,
    /// How it was settled (dismissed, upstream, vanished, withdrawn…).
    pub decision_source: super::DecisionSource,
}

/// Checks `answers` against `prompts`: one array per part; each part answered; a single
/// choice part takes exactly one entry; every entry is one of the labels, or free text
/// where the part allows it; no entry twice.
pub fn validate_choices(
    prompts: &[Prompt],
    answers: &[Vec<String>],
) -> Result<Vec<Vec<String>>, OqError> {
    if answers.len() != prompts.len() {
        return Err(OqError::invalid(
            ErrorCode::InvalidAnswers,
            format!(
                "this question has {} part(s); answers has {}",
                prompts.len(),
                answers.len()
            ),
        ));
    }
    let mut checked = Vec::with_capacity(answers.len());
    for (i, (prompt, chosen)) in prompts.iter().zip(answers).enumerate() {
        let part = format!("part {} ({})", i + 1, prompt.header);
        if chosen.is_empty() {
            return Err(OqError::invalid(
                ErrorCode::InvalidAnswers,
                format!("{part} has no answer"),
            ));
        }
        if !prompt.multiple && chosen.len() > 1 {
            return Err(OqError::invalid(
                ErrorCode::InvalidAnswers,
                format!("{part} takes one choice; {} were given", chosen.len()),
            ));
        }
        let mut entries: Vec<String> = Vec::with_capacity(chosen.len());
        for entry in chosen {
            let is_label = prompt.options.iter().any(|o| o.label == *entry);
            let entry = if is_label {
                entry.clone()
            } else if prompt.custom {
                check_text(&part, entry, RESPOSTA_MAX_CHARS)?
            } else {
                return Err(OqError::invalid(
                    ErrorCode::InvalidAnswers,
                    format!("{part}: {entry:?} is not one of its options"),
                ));
            };
            if entries.contains(&entry) {
                return Err(OqError::invalid(
                    ErrorCode::InvalidAnswers,
                    format!("{part}: {entry:?} is given twice"),
                ));
            }
            entries.push(entry);
        }
        checked.push(entries);
    }
    Ok(checked)
}

/// The answer in words, for the decision record and the dev-context:
/// "Database: SQLite; Colours: Red, Blue".
pub fn render_choices(prompts: &[Prompt], answers: &[Vec<String>]) -> String {
    prompts
        .iter()
        .zip(answers)
        .map(|(p, a)| format!("{}: {}", p.header, a.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}
