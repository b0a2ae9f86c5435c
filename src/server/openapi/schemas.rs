//! The document's component schemas: the wire shapes of `crate::wire`.

use serde_json::{Value, json};

use super::parts::{id_schema, schema};
use crate::domain::ErrorCode;
use crate::domain::similar::SIMILAR_THRESHOLD_PERCENT;
use crate::engine::SEARCH_TOTAL_CAP;

/// Every schema the operations refer to by `#/components/schemas/NAME`.
pub(super) fn all() -> Value {
    // The codes a refusal may carry: the one vocabulary, so the document cannot drift.
    let codes: Vec<&str> = ErrorCode::ALL
        .iter()
        .filter(|c| **c != ErrorCode::RemoteError)
        .map(|c| c.as_str())
        .collect();
    json!({
        "Error": { "type": "object", "required": ["code", "message"], "properties": { "code": { "type": "string", "enum": codes }, "message": { "type": "string" } } },
        "Afeta": { "type": "object", "additionalProperties": false, "properties": {
            "regras": { "type": "array", "items": { "type": "string" } },
            "historias": { "type": "array", "items": { "type": "string" } },
            "tarefas": { "type": "array", "items": { "type": "string" } } } },
        "DeclareInput": { "type": "object", "additionalProperties": false, "required": ["pergunta", "sessionId"], "properties": {
            "pergunta": { "type": "string", "maxLength": 500 }, "sugestao": { "type": "string", "maxLength": 300 },
            "afeta": schema("Afeta"), "sessionId": id_schema() } },
        "AnswerInput": {
            "description": "exactly one of resposta, aceitarSugestao: true, or (for a question with options) answers: one array of chosen labels or typed text per part",
            "oneOf": [
                { "type": "object", "additionalProperties": false, "required": ["resposta"],
                  "properties": { "resposta": { "type": "string", "maxLength": 2000 } } },
                { "type": "object", "additionalProperties": false, "required": ["aceitarSugestao"],
                  "properties": { "aceitarSugestao": { "const": true } } },
                { "type": "object", "additionalProperties": false, "required": ["answers"],
                  "properties": { "answers": { "type": "array", "minItems": 1, "items": { "type": "array", "items": { "type": "string" } } } } }
            ] },
        "Answer": { "type": "object", "properties": {
            "resposta": { "type": "string" }, "aceitouSugestao": { "type": "boolean" }, "decisionEventId": { "type": "string" },
            "respondidaPor": { "type": "string" }, "answeredAt": { "type": "integer" },
            "answers": { "type": "array", "items": { "type": "array", "items": { "type": "string" } } } } },
        "Prompt": { "type": "object", "properties": {
            "header": { "type": "string" }, "question": { "type": "string" }, "multiple": { "type": "boolean" }, "custom": { "type": "boolean" },
            "options": { "type": "array", "items": { "type": "object", "properties": {
                "label": { "type": "string" }, "description": { "type": "string" } } } } } },
        "Question": { "type": "object", "properties": {
            "questionId": id_schema(), "projectId": id_schema(), "sessionId": id_schema(),
            "sessionAuthor": { "type": "string" }, "pergunta": { "type": "string" }, "sugestao": { "type": "string" },
            "afeta": schema("Afeta"), "autor": { "type": "string" }, "source": { "type": "string" },
            "status": { "type": "string", "enum": ["open", "answered", "closed"] }, "createdAt": { "type": "integer" },
            "answer": schema("Answer"), "decisionEventId": { "type": "string" },
            "prompts": { "type": "array", "items": schema("Prompt") },
            "upstream": { "type": "object", "properties": {
                "kind": { "type": "string" }, "name": { "type": "string" }, "directory": { "type": "string" },
                "requestID": { "type": "string" }, "sessionID": { "type": "string" } } },
            "closed": { "type": "object", "properties": {
                "reason": { "type": "string", "enum": ["rejected", "external"] }, "by": { "type": "string" }, "closedAt": { "type": "integer" } } },
            "orphaned": { "type": "boolean" },
            "snooze": { "type": "object", "required": ["until", "by"], "properties": {
                "until": { "type": "integer" }, "by": { "type": "string" } },
                "description": "an open question's newest snooze: hidden from its author's queue while `until` is ahead, open for everything else" },
            "handedOff": { "type": "boolean", "description": "Claude Code's hook handed it to Claude Code's own dialog: answer it there (an answer here is refused, `handed_to_claude_code`)" },
            "canAnswer": { "type": "boolean" }, "reason": { "type": "string" },
            "similarAnswer": schema("SimilarAnswer") } },
        "SimilarAnswer": { "type": "object", "additionalProperties": false,
            "required": ["questionId", "pergunta", "resposta", "respondidaPor", "answeredAt", "match", "similarity"],
            "description": format!("the memory of answers, only on one open question's read: the earlier answer of the project to a question this one resembles (`same` once case, accents, punctuation and spacing are set aside; `similar` at {SIMILAR_THRESHOLD_PERCENT} % or more of character trigrams in common). A hint to copy and edit: nothing is answered by it"),
            "properties": {
                "questionId": id_schema(), "pergunta": { "type": "string" }, "resposta": { "type": "string" },
                "respondidaPor": { "type": "string" }, "answeredAt": { "type": "integer", "description": "Unix ms" },
                "match": { "type": "string", "enum": ["same", "similar"] },
                "similarity": { "type": "integer", "minimum": SIMILAR_THRESHOLD_PERCENT, "maximum": 100, "description": "trigrams in common, percent (100 for same)" } } },
        "QuestionList": { "type": "object", "properties": {
            "items": { "type": "array", "maxItems": 50, "items": schema("Question") },
            "total": { "type": "integer", "description": format!("how many questions the whole filter (status, search) holds, not the page; a search is counted up to {SEARCH_TOTAL_CAP} (see totalIsLowerBound)") },
            "totalIsLowerBound": { "type": "boolean", "description": format!("present and true when a search's count stopped at {SEARCH_TOTAL_CAP}: at least `total` questions match (shown as {SEARCH_TOTAL_CAP}+); absent when `total` is exact") },
            "snoozed": { "type": "integer", "minimum": 1, "description": "how many open questions of the filter a snooze hides now, whichever `snoozed` kept; absent when none" },
            "snoozedNextReturn": { "type": "integer", "description": "when the first of them comes back (Unix ms)" },
            "cursor": { "type": "string" } } },
        "SnoozeInput": { "type": "object", "additionalProperties": false, "properties": {
            "until": { "type": "integer", "description": "Unix ms: back in the queue from then on" },
            "forSeconds": { "type": "integer", "description": "or a duration from the server's clock" } },
            "description": "exactly one of `until` or `forSeconds`; the end is ahead of now and at most 90 days away" },
        "Session": { "type": "object", "properties": {
            "sessionId": { "type": "string" }, "projectId": { "type": "string" },
            "kind": { "type": "string", "enum": ["conversation", "execution"] }, "author": { "type": "string" } } },
        "Readiness": { "type": "object", "properties": {
            "openQuestions": { "type": "integer" }, "notice": { "type": ["string", "null"] } } },
        "StateBody": { "type": "object", "additionalProperties": false, "required": ["state"], "properties": {
            "state": { "type": "string", "enum": ["draft", "ready", "in_progress", "in_review", "done", "archived"] } } },
        "Story": { "type": "object", "properties": {
            "storyId": { "type": "string" }, "projectId": { "type": "string" }, "title": { "type": "string" }, "state": { "type": "string" } } },
        "Task": { "type": "object", "properties": {
            "taskId": { "type": "string" }, "projectId": { "type": "string" }, "storyId": { "type": "string" },
            "sessionId": { "type": "string" }, "title": { "type": "string" }, "state": { "type": "string" },
            "gate": { "type": "object", "properties": {
                "state": { "type": "string", "enum": ["active", "parked", "approved", "exhausted"] },
                "corrections": { "type": "integer" }, "ceiling": { "type": "integer" }, "parkedOn": { "type": "string" } } } } },
        "Waiting": { "type": "object", "properties": {
            "task": schema("Task"), "questionId": { "type": "string" }, "parkedAt": { "type": "integer" } } },
        "Tip": { "type": "object", "properties": { "type": { "type": "string" }, "revision": { "type": "integer" } } }
    })
}
