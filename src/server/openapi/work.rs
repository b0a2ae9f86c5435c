//! The stories' and tasks' operations (ADR 0212's work, QA's gate), with who may call each.

use serde_json::{Value, json};

use super::parts::*;
use super::refusals::*;
use crate::domain::ErrorCode as C;

/// The operations, by route.
pub(super) struct WorkOps {
    pub story_create: Value,
    pub story_state: Value,
    pub correction: Value,
    pub task_create: Value,
    pub waiting: Value,
    pub task_show: Value,
    pub task_state: Value,
    pub verdict: Value,
    pub dev_context: Value,
}

pub(super) fn work_ops() -> WorkOps {
    let po_only: [Refusal; 1] = [(
        "403",
        "not the po agent (`role_not_allowed`)",
        &[C::RoleNotAllowed],
    )];
    let story_create = with_body(
        op(
            "Create a story (draft)",
            "the po agent",
            &[],
            with(
                project_errors(&body_errors(&po_only, TITLE_422, TITLE_CODES)),
                "201",
                ok("the story", schema("Story")),
            ),
        ),
        json!({ "type": "object", "additionalProperties": false, "required": ["title"], "properties": { "title": { "type": "string", "maxLength": 200 } } }),
    );
    // A move: `{state}` in, the moved thing out.
    let move_op = |summary: &str, who: &str, id: &str, own: &[Refusal], out: &str| {
        with_body(
            op(
                summary,
                who,
                &[id],
                with(
                    project_errors(&body_errors(own, STATE_422, &STATE_CODES)),
                    "200",
                    ok("the moved one", schema(out)),
                ),
            ),
            schema("StateBody"),
        )
    };
    let story_state = move_op(
        "Move a story; archiving only from draft",
        "the po agent",
        "storyId",
        &[po_only[0], TRANSITION_409],
        "Story",
    );
    let correction = with_body(
        op(
            "Correct a story (ADR 0212 as revised by ADR 0214 §8)",
            "the po agent",
            &["storyId"],
            with(
                project_errors(&body_errors(
                    &[
                        po_only[0],
                        (
                            "409",
                            "refused: `tarefa_em_andamento`, `historia_pronta_sem_resposta`, `pergunta_nao_respondida`, `historia_nao_corrigivel`",
                            &[
                                C::TarefaEmAndamento,
                                C::HistoriaProntaSemResposta,
                                C::PerguntaNaoRespondida,
                                C::HistoriaNaoCorrigivel,
                            ],
                        ),
                    ],
                    "malformed JSON, a wrong type, an unknown field, a bad id",
                    &[C::InvalidBody, C::InvalidId],
                )),
                "200",
                ok(
                    "accepted",
                    json!({ "type": "object", "properties": { "accepted": { "type": "boolean" }, "story": schema("Story"), "questionId": { "type": ["string", "null"] } } }),
                ),
            ),
        ),
        json!({ "type": "object", "additionalProperties": false, "properties": { "questionId": { "type": "string" } } }),
    );

    let task_roles: [Refusal; 1] = [(
        "403",
        "not the po or dev-lead agent (`role_not_allowed`)",
        &[C::RoleNotAllowed],
    )];
    let task_create = with_body(
        op(
            "Create a task in an execution session",
            "the po or dev-lead agent",
            &[],
            with(
                project_errors(&body_errors(
                    &task_roles,
                    "malformed JSON, a wrong type, an unknown field, a title empty, too long or with a bidirectional override, a bad id, a session that is not an execution session (`not_an_execution_session`)",
                    &TASK_CODES,
                )),
                "201",
                ok("the task", schema("Task")),
            ),
        ),
        json!({ "type": "object", "additionalProperties": false, "required": ["storyId", "sessionId", "title"],
                "properties": { "storyId": { "type": "string" }, "sessionId": { "type": "string" }, "title": { "type": "string", "maxLength": 200 } } }),
    );
    let mut waiting = op(
        "The tasks parked on a question the caller must answer (\"waiting for you\")",
        "a member (person)",
        &[],
        with(
            project_errors(&[
                PEOPLE_ONLY,
                ("422", "waiting is not `me`", &[C::InvalidQuery]),
            ]),
            "200",
            ok(
                "parked tasks",
                json!({ "type": "object", "properties": { "items": { "type": "array", "items": schema("Waiting") }, "total": { "type": "integer" } } }),
            ),
        ),
    );
    waiting["parameters"] = json!([param("projectId"), { "name": "waiting", "in": "query", "required": true, "schema": { "type": "string", "enum": ["me"] } }]);
    let task_show = op(
        "A task with its QA gate",
        "a member or an agent of the project",
        &["taskId"],
        with(project_errors(&[]), "200", ok("the task", schema("Task"))),
    );
    let task_state = move_op(
        "Move a task",
        "the po or dev-lead agent",
        "taskId",
        &task_roles,
        "Task",
    );
    let verdict = with_body(
        op(
            "emit_qa_verdict; needs_user_decision parks the gate without spending a correction",
            "the qa-agent agent",
            &["taskId"],
            with(
                project_errors(&body_errors(
                    &[
                        (
                            "403",
                            "not qa-agent (`role_not_allowed`)",
                            &[C::RoleNotAllowed],
                        ),
                        (
                            "409",
                            "the gate is parked or closed (`gate_parked`, `gate_closed`), or the cited question is answered",
                            &[
                                C::GateParked,
                                C::GateClosed,
                                C::PerguntaJaRespondida,
                                C::QuestionClosed,
                            ],
                        ),
                    ],
                    "malformed JSON, a wrong type, an unknown field, a verdict with the wrong parts, a text empty, too long or with a bidirectional override, a bad id",
                    &VERDICT_422,
                )),
                "200",
                ok(
                    "the task after the verdict",
                    json!({ "type": "object", "properties": {
                    "verdict": { "type": "string" }, "task": schema("Task"), "openQuestionId": { "type": ["string", "null"] } } }),
                ),
            ),
        ),
        json!({ "type": "object", "additionalProperties": false, "required": ["verdict"], "properties": {
            "verdict": { "type": "string", "enum": ["approved", "changes_requested", "needs_user_decision"] },
            "pergunta": { "type": "string", "maxLength": 500 }, "sugestao": { "type": "string", "maxLength": 300 },
            "openQuestionId": { "type": "string" }, "subspecialty": { "type": "string" } } }),
    );
    let dev_context = op(
        "The user decisions linked to the task or its story (at most 10, 1,500 characters)",
        "a member or an agent of the project",
        &["taskId"],
        with(
            project_errors(&[]),
            "200",
            ok(
                "decisions, newest first",
                json!({ "type": "object", "properties": {
            "header": { "type": "string", "const": "User decisions — they win over FR/DoR when they conflict" },
            "decisoes": { "type": "array", "items": { "type": "object" } } } }),
            ),
        ),
    );
    WorkOps {
        story_create,
        story_state,
        correction,
        task_create,
        waiting,
        task_show,
        task_state,
        verdict,
        dev_context,
    }
}
