//! Claude Code's hook JSON for `AskUserQuestion`, read and written without IO: the input
//! read strictly enough to refuse another tool or event by name, its questions as oq's
//! parts, an oq answer as the `updatedInput.answers` that answers the dialog, and the
//! answers Claude's own dialog reports as oq's `answers`.
//!
//! Invariant: the hook output carries the tool input Claude gave, unchanged, plus the
//! answers — the same questions, so Claude shows and returns exactly what oq recorded.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::domain::choices::{Prompt, PromptOption};
use crate::domain::claude_code::{ClaudeCall, ClaudeDeclare, ClaudeSettlement};
use crate::domain::question::PERGUNTA_MAX_CHARS;
use crate::domain::{ErrorCode, OqError};
use crate::wire::QuestionItem;

/// The tool whose questions the hook catches.
pub const TOOL: &str = "AskUserQuestion";

/// The hook events the command handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum HookEvent {
    /// Before the dialog: declare in oq, wait, answer.
    PreToolUse,
    /// After the dialog: what was answered there settles the oq question (`upstream`).
    PostToolUse,
}

/// What the hook reads of Claude Code's JSON on stdin (other fields are ignored: Claude
/// adds some between versions).
#[derive(Debug, Clone, Deserialize)]
pub struct HookInput {
    pub session_id: String,
    #[serde(default)]
    pub cwd: String,
    pub hook_event_name: String,
    pub tool_name: String,
    pub tool_input: Value,
    /// PostToolUse only: what the tool returned.
    #[serde(default)]
    pub tool_response: Value,
    pub tool_use_id: String,
}

/// One question of `AskUserQuestion`'s input.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AskedQuestion {
    question: String,
    #[serde(default)]
    header: String,
    #[serde(default)]
    options: Vec<AskedOption>,
    #[serde(default)]
    multi_select: bool,
}

#[derive(Debug, Clone, Deserialize)]
struct AskedOption {
    label: String,
    #[serde(default)]
    description: String,
}

/// The hook's input read from `text`: JSON, for `AskUserQuestion`, on an event this
/// command handles. Anything else is `invalid_hook_input` naming what it was.
pub fn read_input(text: &str) -> Result<(HookEvent, HookInput), OqError> {
    let bad = |m: String| OqError::invalid(ErrorCode::InvalidHookInput, m);
    let input: HookInput = serde_json::from_str(text).map_err(|e| {
        bad(format!(
            "the hook input is not Claude Code's hook JSON: {e}"
        ))
    })?;
    if input.tool_name != TOOL {
        return Err(bad(format!(
            "the hook is for {TOOL}; it was called for {:?} (check the matcher in Claude's settings)",
            input.tool_name
        )));
    }
    let event = serde_json::from_value(json!(input.hook_event_name)).map_err(|_| {
        bad(format!(
            "hook event {:?}: expected PreToolUse or PostToolUse",
            input.hook_event_name
        ))
    })?;
    Ok((event, input))
}

fn asked(input: &HookInput) -> Result<Vec<AskedQuestion>, OqError> {
    serde_json::from_value(input.tool_input["questions"].clone()).map_err(|e| {
        OqError::invalid(
            ErrorCode::InvalidHookInput,
            format!("{TOOL}'s tool_input.questions: {e}"),
        )
    })
}

/// The questions as oq's parts: each with its header, question and options; free text
/// is allowed (Claude's dialog offers "Type something.").
pub fn prompts(input: &HookInput) -> Result<Vec<Prompt>, OqError> {
    Ok(asked(input)?
        .into_iter()
        .map(|q| Prompt {
            header: if q.header.trim().is_empty() {
                "Question".into()
            } else {
                q.header
            },
            question: q.question,
            options: q
                .options
                .into_iter()
                .map(|o| PromptOption {
                    label: o.label,
                    description: o.description,
                })
                .collect(),
            multiple: q.multi_select,
            custom: true,
        })
        .collect())
}

/// The oq question's own text: the one question, or the several joined; past the
/// ADR's limit, their headers.
pub fn pergunta(prompts: &[Prompt]) -> String {
    let joined = prompts
        .iter()
        .map(|p| p.question.trim())
        .collect::<Vec<_>>()
        .join(" · ");
    if joined.chars().count() <= PERGUNTA_MAX_CHARS {
        return joined;
    }
    let headers: Vec<&str> = prompts.iter().map(|p| p.header.as_str()).collect();
    format!(
        "Claude Code asks {} questions: {}",
        prompts.len(),
        headers.join(", ")
    )
}

/// The tool call that asked: Claude's session, its tool call, its working directory.
pub fn call(input: &HookInput) -> ClaudeCall {
    ClaudeCall {
        session_id: input.session_id.clone(),
        tool_use_id: input.tool_use_id.clone(),
        directory: input.cwd.clone(),
    }
}

/// The call declared in the oq session `session_id`: one question with its parts.
pub fn declaration(input: &HookInput, session_id: String, prompts: Vec<Prompt>) -> ClaudeDeclare {
    ClaudeDeclare {
        session_id,
        pergunta: pergunta(&prompts),
        prompts,
        call: call(input),
    }
}

/// The PreToolUse output that answers the dialog with `q`'s answer, or `None` when `q`
/// holds no answer (closed, or still open).
pub fn answered_output(input: &HookInput, q: &QuestionItem) -> Option<Value> {
    let answer = q.answer.as_ref()?;
    let mut answers = Map::new();
    for (i, p) in q.prompts.iter().enumerate() {
        let text = match answer.answers.get(i) {
            Some(chosen) => chosen.join(", "),
            None => answer.resposta.clone(),
        };
        answers.insert(p.question.clone(), Value::String(text));
    }
    let mut updated = match &input.tool_input {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    updated.insert("answers".into(), Value::Object(answers));
    Some(json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": format!(
                "answered in oq by {} ({})", answer.respondida_por, q.question_id
            ),
            "updatedInput": updated,
        }
    }))
}

/// What Claude's own dialog did, as the PostToolUse hook reports it: the answers when
/// they can be read, else that it was answered with something oq cannot read.
pub fn dialog_settlement(input: &HookInput, prompts: &[Prompt]) -> ClaudeSettlement {
    match dialog_answers(input, prompts) {
        Some(answers) => ClaudeSettlement::Answered { answers },
        None => ClaudeSettlement::Unreported {},
    }
}

/// What Claude's own dialog answered (PostToolUse's `tool_input.answers`, else
/// `tool_response.answers`), as oq's answers, one array per part: a label chosen, the
/// labels of a multiple choice (Claude joins them with ", "), or the text typed. `None`
/// when it reports no answer for some part.
pub fn dialog_answers(input: &HookInput, prompts: &[Prompt]) -> Option<Vec<Vec<String>>> {
    let given = input.tool_input["answers"]
        .as_object()
        .or_else(|| input.tool_response["answers"].as_object())?;
    prompts
        .iter()
        .map(|p| {
            let text = given.get(&p.question)?.as_str()?;
            let is_label = |s: &str| p.options.iter().any(|o| o.label == s);
            let parts: Vec<&str> = text.split(", ").collect();
            Some(if p.multiple && parts.iter().all(|s| is_label(s)) {
                parts.into_iter().map(str::to_string).collect()
            } else {
                vec![text.to_string()]
            })
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn input(tool: &str, event: &str) -> String {
        json!({
            "session_id": "s1", "cwd": "/w", "hook_event_name": event, "tool_name": tool,
            "tool_use_id": "toolu_1",
            "tool_input": {"questions": [
                {"question": "Which DB?", "header": "DB", "multiSelect": false,
                 "options": [{"label": "SQLite"}, {"label": "Postgres"}]},
                {"question": "Which parts?", "header": "Parts", "multiSelect": true,
                 "options": [{"label": "a"}, {"label": "b"}]}],
              "answers": {"Which DB?": "SQLite", "Which parts?": "a, b"}}
        })
        .to_string()
    }

    #[test]
    fn another_tool_or_event_or_no_json_is_refused_by_name() {
        let e = read_input(&input("Bash", "PreToolUse")).unwrap_err();
        assert!(e.to_string().contains("\"Bash\""), "{e}");
        let e = read_input(&input(TOOL, "Stop")).unwrap_err();
        assert!(e.to_string().contains("\"Stop\""), "{e}");
        let e = read_input("not json").unwrap_err();
        assert_eq!(e.code(), "invalid_hook_input");
    }

    #[test]
    fn the_dialog_answers_map_back_to_parts() {
        let (event, i) = read_input(&input(TOOL, "PostToolUse")).unwrap();
        assert_eq!(event, HookEvent::PostToolUse);
        let p = prompts(&i).unwrap();
        assert_eq!(pergunta(&p), "Which DB? · Which parts?");
        assert_eq!(
            dialog_answers(&i, &p).unwrap(),
            vec![vec!["SQLite".to_string()], vec!["a".into(), "b".into()]]
        );
    }
}
