//! Claude Code's own questions (`AskUserQuestion`, caught by `oq hook claude-code`) as
//! the engine records them, whichever door carries them (the local engine, or `oq
//! serve`'s `/projects/{p}/claude-code/questions`): the tool call that asked, the one
//! question with its parts, and how Claude's own dialog settled it.
//!
//! Invariant: a Claude Code question's id is its tool call's (the key
//! `claude-code:<session>:<tool_use_id>`), so the PreToolUse hook declares it once and
//! the PostToolUse hook finds it again without keeping anything of its own.

use serde::{Deserialize, Serialize};

use super::choices::{Prompt, Upstream};
use super::declared::Origin;

/// `Upstream::kind` and `name`, and the service that records a dialog's settlement.
pub const UPSTREAM_KIND: &str = Origin::ClaudeCode.as_str();

/// What every client says of a question handed to Claude Code's dialog.
pub const HANDED_OFF: &str = "waiting in Claude Code's dialog — answer there";

/// The tool call that asked: Claude's session, its `tool_use_id`, its working directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClaudeCall {
    pub session_id: String,
    pub tool_use_id: String,
    #[serde(default)]
    pub directory: String,
}

impl ClaudeCall {
    /// The idempotency key of the call: the same call declares one question.
    pub fn key(&self) -> String {
        format!("claude-code:{}:{}", self.session_id, self.tool_use_id)
    }

    /// Where the question lives in Claude Code (kind `claude-code`: the OpenCode bridge
    /// acts only on its own kind).
    pub fn upstream(&self) -> Upstream {
        Upstream {
            kind: UPSTREAM_KIND.into(),
            name: UPSTREAM_KIND.into(),
            directory: self.directory.clone(),
            request_id: self.tool_use_id.clone(),
            session_id: self.session_id.clone(),
            call_id: None,
        }
    }
}

/// One `AskUserQuestion` call declared in oq: the body of
/// `POST /projects/{p}/claude-code/questions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClaudeDeclare {
    /// The oq session the question is declared in; its author answers.
    pub session_id: String,
    pub pergunta: String,
    /// Claude's questions, one part each.
    pub prompts: Vec<Prompt>,
    pub call: ClaudeCall,
}

/// What Claude's own dialog did with the question (the body of
/// `POST …/claude-code/questions/{questionId}/settlement`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClaudeSettlement {
    /// Answered there: one array per part (a label, the labels of a multiple choice, or
    /// the text typed).
    Answered { answers: Vec<Vec<String>> },
    /// Answered there, but Claude did not report with what: closed, not answered (oq
    /// records no answer it does not have).
    Unreported {},
    /// The person pressed Esc on the dialog: nobody answered, and the agent's turn ended
    /// without one (Claude tells the model the tool use was rejected).
    Declined {},
}
