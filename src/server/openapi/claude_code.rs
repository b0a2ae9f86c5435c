//! The Claude Code routes in the document: `oq hook claude-code --source http://…`
//! declaring Claude's `AskUserQuestion`, handing it to Claude's own dialog, and
//! reporting what that dialog did.

use serde_json::{Value, json};

use super::parts::{body_errors, id_schema, ok, op, project_errors, schema, with, with_body};
use crate::domain::ErrorCode as C;

const AGENTS_ONLY: (&str, &str, &[C]) = (
    "403",
    "a person's token, or an agent role that does not declare (`role_not_allowed`)",
    &[C::RoleNotAllowed],
);

/// `(declare, settle, hand_off)`: the three operations.
pub(super) fn ops() -> (Value, Value, Value) {
    let call = json!({ "type": "object", "additionalProperties": false,
        "required": ["sessionId", "toolUseId"], "properties": {
            "sessionId": { "type": "string", "description": "Claude Code's session_id" },
            "toolUseId": { "type": "string", "description": "the AskUserQuestion tool call's tool_use_id" },
            "directory": { "type": "string", "description": "Claude Code's working directory (cwd)" } } });
    let declare_body = json!({ "type": "object", "additionalProperties": false,
        "required": ["sessionId", "pergunta", "prompts", "call"], "properties": {
            "sessionId": id_schema(),
            "pergunta": { "type": "string", "maxLength": 500 },
            "prompts": { "type": "array", "minItems": 1, "items": schema("Prompt") },
            "call": call } });
    let mut declare = with_body(
        op(
            "Declare Claude Code's AskUserQuestion call as one question with its parts (source `claude-code`); the same call again returns the first question",
            "an agent criativo, po, arquiteto or dev-lead of the project (the hook's token), in a session a person started",
            &[],
            with(
                project_errors(&body_errors(
                    &[AGENTS_ONLY],
                    "malformed JSON, a wrong type, an unknown field, a text empty, too long or with a bidirectional override, bad parts or options (`invalid_options`), a bad id, or the same call sent again with other text or parts (`idempotency_key_reused`)",
                    &[
                        C::InvalidBody,
                        C::InvalidText,
                        C::EmptyText,
                        C::TextTooLong,
                        C::BidiControl,
                        C::InvalidId,
                        C::InvalidOptions,
                        C::IdempotencyKeyReused,
                        C::SessionRequired,
                    ],
                )),
                "201",
                ok("the recorded question", schema("Question")),
            ),
        ),
        declare_body,
    );
    declare["description"] = json!(
        "Who: an agent of the project (the Claude Code hook's token). The question's idempotency key is the call's (`claude-code:<sessionId>:<toolUseId>`), its upstream the call (kind `claude-code`); the session's author answers it with the question routes."
    );
    let settle_body = json!({ "oneOf": [
        { "type": "object", "additionalProperties": false, "required": ["outcome", "answers"], "properties": {
            "outcome": { "const": "answered" },
            "answers": { "type": "array", "minItems": 1, "items": { "type": "array", "items": { "type": "string" } } } } },
        { "type": "object", "additionalProperties": false, "required": ["outcome"], "properties": {
            "outcome": { "enum": ["unreported", "declined"] } } }
    ], "description": "answered in Claude's dialog (one array per part); answered there with something Claude did not report; or declined there (Esc): closed, not answered" });
    let settle = with_body(
        op(
            "Record what Claude Code's own dialog did with the question (decisionSource `upstream`); a question already settled is returned as it is",
            "the agent that declared it",
            &["questionId"],
            with(
                project_errors(&body_errors(
                    &[
                        (
                            "403",
                            "a person's token (`role_not_allowed`), or not the agent that declared it (`not_declarer`)",
                            &[C::RoleNotAllowed, C::NotDeclarer],
                        ),
                        (
                            "409",
                            "the question was not declared by Claude Code's hook (`not_claude_code`)",
                            &[C::NotClaudeCode],
                        ),
                    ],
                    "malformed JSON, an unknown field or outcome, or answers that do not fit the parts (`invalid_answers`)",
                    &[C::InvalidBody, C::InvalidAnswers],
                )),
                "200",
                ok("the question as it now is", schema("Question")),
            ),
        ),
        settle_body,
    );
    let hand_off = op(
        "Record that the hook stopped waiting and Claude Code shows its own dialog for the question (`open_question.handed_off`): it stays open, an answer in oq is refused from now on (`handed_to_claude_code`), the dialog's settlement and the author's dismissal still close it; a question already settled (an answer that came first) is returned as it is",
        "the agent that declared it",
        &["questionId"],
        with(
            project_errors(&[
                (
                    "403",
                    "a person's token (`role_not_allowed`), or not the agent that declared it (`not_declarer`)",
                    &[C::RoleNotAllowed, C::NotDeclarer],
                ),
                (
                    "409",
                    "the question was not declared by Claude Code's hook (`not_claude_code`)",
                    &[C::NotClaudeCode],
                ),
            ]),
            "200",
            ok("the question as it now is", schema("Question")),
        ),
    );
    (declare, settle, hand_off)
}
