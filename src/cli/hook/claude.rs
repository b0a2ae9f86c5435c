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
    /// The person's next prompt: a dialog declined with Esc since (no tool hook runs for
    /// it) is found in the transcript and its oq question closed as declined.
    UserPromptSubmit,
    /// The end of a turn: the same look back. The transcript is whole by then; at the
    /// next prompt Claude has not always written the declined call's result yet.
    Stop,
    /// The session's end: the same look back, for a dialog declined just before.
    SessionEnd,
}

impl HookEvent {
    /// An event about the `AskUserQuestion` call itself (else one that looks back).
    pub fn is_tool(self) -> bool {
        matches!(self, HookEvent::PreToolUse | HookEvent::PostToolUse)
    }
}

/// What the hook reads of Claude Code's JSON on stdin (other fields are ignored: Claude
/// adds some between versions). The tool fields are the tool events' only.
#[derive(Debug, Clone, Deserialize)]
pub struct HookInput {
    pub session_id: String,
    #[serde(default)]
    pub cwd: String,
    #[serde(default)]
    pub transcript_path: String,
    pub hook_event_name: String,
    #[serde(default)]
    pub tool_name: String,
    #[serde(default)]
    pub tool_input: Value,
    /// PostToolUse only: what the tool returned.
    #[serde(default)]
    pub tool_response: Value,
    #[serde(default)]
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
    let event: HookEvent = serde_json::from_value(json!(input.hook_event_name)).map_err(|_| {
        bad(format!(
            "hook event {:?}: expected PreToolUse, PostToolUse, UserPromptSubmit, Stop or SessionEnd",
            input.hook_event_name
        ))
    })?;
    if event.is_tool() && input.tool_name != TOOL {
        return Err(bad(format!(
            "the hook is for {TOOL}; it was called for {:?} (check the matcher in Claude's settings)",
            input.tool_name
        )));
    }
    if event.is_tool() && input.tool_use_id.trim().is_empty() {
        return Err(bad(format!("{event:?} without a tool_use_id")));
    }
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
    call_of(input, &input.tool_use_id)
}

/// The session's tool call `tool_use_id` (one the transcript names).
pub fn call_of(input: &HookInput, tool_use_id: &str) -> ClaudeCall {
    ClaudeCall {
        session_id: input.session_id.clone(),
        tool_use_id: tool_use_id.to_string(),
        directory: input.cwd.clone(),
    }
}

/// The `AskUserQuestion` calls of a transcript (Claude's JSON lines) whose result is an
/// error: the dialogs declined with Esc (Claude records "The user doesn't want to
/// proceed with this tool use" and runs no tool hook). Lines it cannot read are skipped:
/// the transcript is Claude's, and a line of another shape declines nothing.
pub fn declined_calls(transcript: &str) -> Vec<String> {
    let (mut asked, mut failed) = (Vec::new(), Vec::new());
    for line in transcript.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        for part in v["message"]["content"].as_array().into_iter().flatten() {
            match part["type"].as_str() {
                Some("tool_use") if part["name"] == TOOL => {
                    asked.extend(part["id"].as_str().map(str::to_string));
                }
                Some("tool_result") if part["is_error"] == true => {
                    failed.extend(part["tool_use_id"].as_str().map(str::to_string));
                }
                _ => {}
            }
        }
    }
    asked.retain(|id| failed.contains(id));
    asked
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
        let e = read_input(&input(TOOL, "Notification")).unwrap_err();
        assert!(e.to_string().contains("\"Notification\""), "{e}");
        let e = read_input(&input(TOOL, "PreToolUse").replace("toolu_1", "")).unwrap_err();
        assert!(e.to_string().contains("tool_use_id"), "{e}");
        let (event, _) = read_input(&input("", "UserPromptSubmit")).unwrap();
        assert!(!event.is_tool());
        let e = read_input("not json").unwrap_err();
        assert_eq!(e.code(), "invalid_hook_input");
    }

    #[test]
    fn a_declined_dialog_is_an_ask_whose_result_is_an_error() {
        let lines = [
            json!({"message": {"content": [{"type": "tool_use", "id": "t1", "name": TOOL},
                {"type": "tool_use", "id": "t2", "name": TOOL},
                {"type": "tool_use", "id": "t3", "name": "Bash"}]}}),
            json!({"message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": true},
                {"type": "tool_result", "tool_use_id": "t2", "content": "answered"},
                {"type": "tool_result", "tool_use_id": "t3", "is_error": true}]}}),
        ];
        let text = format!("{}\nnot json\n{}\n", lines[0], lines[1]);
        assert_eq!(declined_calls(&text), vec!["t1".to_string()]);
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
