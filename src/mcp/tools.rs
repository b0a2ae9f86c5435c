//! The tools as a client lists them: names, descriptions (ADR 0214's central sentence in
//! `declare_open_question`'s, word for word) and JSON Schemas that say exactly what
//! `calls.rs` accepts (no other property, the same limits).

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

use crate::domain::declared::{
    DESCRIPTION_MAX_CHARS, LABEL_MAX_CHARS, OPTIONS_MAX, WITHDRAW_REASON_MAX_CHARS,
};
use crate::domain::question::{PERGUNTA_MAX_CHARS, SUGESTAO_MAX_CHARS};

/// The tool names, as `tools/call` names them.
pub const DECLARE: &str = "declare_open_question";
pub const WAIT: &str = "wait_for_answer";
pub const GET: &str = "get_question";
pub const LIST: &str = "list_my_questions";
pub const WITHDRAW: &str = "withdraw_question";

/// `wait_for_answer`'s bound when the call gives none, and the most it may ask.
pub const WAIT_DEFAULT_SECONDS: u64 = 60;
pub const WAIT_MAX_SECONDS: u64 = 600;

const DECLARE_DESCRIPTION: &str = concat!(
    crate::central_instruction!(),
    "\n\nDeclares an open question for the person who started this session; they answer it \
     in oq. Returns its questionId and who answers it (answeredBy). Give options (and \
     multiple) for a choice. Send an idempotencyKey so a retry after a lost reply returns \
     the same question instead of a second one. Then call wait_for_answer."
);

fn object(properties: Value, required: &[&str]) -> Arc<JsonObject> {
    let schema = json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    });
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn question_id() -> Value {
    json!({"type": "string", "description": "The questionId declare_open_question returned."})
}

/// The five tools, in the order `tools/list` gives them.
pub fn all() -> Vec<Tool> {
    vec![
        Tool::new(
            DECLARE,
            DECLARE_DESCRIPTION,
            object(
                json!({
                    "pergunta": {"type": "string", "minLength": 1, "maxLength": PERGUNTA_MAX_CHARS,
                        "description": "The question, for a person to read."},
                    "sugestao": {"type": "string", "maxLength": SUGESTAO_MAX_CHARS,
                        "description": "Your suggested answer; the person may accept it."},
                    "afeta": {"type": "object", "additionalProperties": false,
                        "description": "What the answer affects: rule, story and task ids.",
                        "properties": {
                            "regras": {"type": "array", "items": {"type": "string"}},
                            "historias": {"type": "array", "items": {"type": "string"}},
                            "tarefas": {"type": "array", "items": {"type": "string"}}}},
                    "options": {"type": "array", "minItems": 1, "maxItems": OPTIONS_MAX,
                        "description": "The choices, when the answer is one (or several) of them; the person may still type another.",
                        "items": {"type": "object", "additionalProperties": false, "required": ["label"],
                            "properties": {
                                "label": {"type": "string", "minLength": 1, "maxLength": LABEL_MAX_CHARS},
                                "description": {"type": "string", "maxLength": DESCRIPTION_MAX_CHARS}}}},
                    "multiple": {"type": "boolean", "description": "With options: several may be chosen."},
                    "idempotencyKey": {"type": "string", "minLength": 1, "maxLength": 128,
                        "description": "Your key for this question: the same key again returns the same questionId."}
                }),
                &["pergunta"],
            ),
        ),
        Tool::new(
            WAIT,
            "Waits for the person's answer to one of your questions, at most timeoutSeconds \
             (default 60, at most 600), and says what became of it: answered (with resposta, \
             or answers for a choice), still_open (nobody answered yet: call again; never an \
             invented answer), dismissed or withdrawn. Cancelling the call leaves the question open.",
            object(
                json!({
                    "questionId": question_id(),
                    "timeoutSeconds": {"type": "integer", "minimum": 0, "maximum": WAIT_MAX_SECONDS}
                }),
                &["questionId"],
            ),
        ),
        Tool::new(
            GET,
            "One of this session's questions as oq holds it: status, answer, options.",
            object(json!({"questionId": question_id()}), &["questionId"]),
        ),
        Tool::new(
            LIST,
            "This session's questions, oldest first (open by default).",
            object(
                json!({"status": {"type": "string", "enum": ["open", "answered", "all"]}}),
                &[],
            ),
        ),
        Tool::new(
            WITHDRAW,
            "Retracts a question you declared that is still open (it no longer needs an \
             answer); recorded with your reason and shown as withdrawn.",
            object(
                json!({
                    "questionId": question_id(),
                    "reason": {"type": "string", "minLength": 1, "maxLength": WITHDRAW_REASON_MAX_CHARS}
                }),
                &["questionId", "reason"],
            ),
        ),
    ]
}
