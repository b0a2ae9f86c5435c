//! The OpenAPI 3.1 document served at `GET /openapi.json`, written by hand to say what the
//! handlers do; a test checks it names exactly the routes the router serves.

mod delegate;
mod list;
mod mcp;
mod parts;
mod schemas;

use crate::domain::CENTRAL_INSTRUCTION;
use serde_json::{Value, json};

use delegate::delegate_ops;
use parts::*;

pub fn document() -> Value {
    let list = list::list_op();

    let declare = with_body(
        op(
            "declare_open_question",
            "an agent criativo, po, arquiteto or dev-lead",
            &[],
            with(
                project_errors(
                    &[("403", "another role (`role_not_allowed`)")]
                        .iter()
                        .chain(BODY_ERRORS.iter())
                        .copied()
                        .collect::<Vec<_>>(),
                ),
                "201",
                ok(
                    "the recorded question, with its questionId",
                    schema("Question"),
                ),
            ),
        ),
        schema("DeclareInput"),
    );
    let mut declare = declare;
    declare["description"] = json!(format!(
        "Who: an agent criativo, po, arquiteto or dev-lead. With an Idempotency-Key header, a retry carrying the same key and body gets the first question back (the same questionId); the key with another body is 422 `idempotency_key_reused`. {CENTRAL_INSTRUCTION}"
    ));
    if let Some(params) = declare["parameters"].as_array_mut() {
        params.push(json!({ "name": "Idempotency-Key", "in": "header", "required": false,
            "description": "1–100 letters, digits, - _ . : @; the same key from the same agent returns the first question",
            "schema": { "type": "string" } }));
    }

    let mut answer = with_body(
        op(
            "Answer a question (only the session's author). With an Idempotency-Key header, a retry carrying the same key gets the first answer back (200) instead of 409",
            "the author of the question's session",
            &["questionId"],
            with(
                project_errors(&[
                    (
                        "403",
                        "the caller is not the session's author (`so_o_autor_da_sessao`)",
                    ),
                    ("409", "already answered (`pergunta_ja_respondida`)"),
                    BODY_ERRORS[0],
                    BODY_ERRORS[1],
                    BODY_ERRORS[2],
                    (
                        "422",
                        "neither, both, empty, or accepts a suggestion that does not exist (`sugestao_inexistente`)",
                    ),
                ]),
                "200",
                ok(
                    "the answered question and its decisionEventId",
                    schema("Question"),
                ),
            ),
        ),
        schema("AnswerInput"),
    );
    if let Some(params) = answer["parameters"].as_array_mut() {
        params.push(json!({ "name": "Idempotency-Key", "in": "header", "required": false,
            "description": "1–100 letters, digits, - _ . : @; the same key from the same person returns the first answer",
            "schema": { "type": "string" } }));
    }

    let dismiss = op(
        "Dismiss a question without answering it (only the session's author); for a question that lives upstream, it is rejected there",
        "the author of the question's session",
        &["questionId"],
        with(
            project_errors(&[
                (
                    "403",
                    "the caller is not the session's author (`so_o_autor_da_sessao`)",
                ),
                (
                    "409",
                    "already answered (`pergunta_ja_respondida`) or closed (`question_closed`)",
                ),
            ]),
            "200",
            ok("the closed question", schema("Question")),
        ),
    );

    let question = op(
        "One question, with canAnswer and reason for the caller",
        "a member or an agent of the project",
        &["questionId"],
        with(
            project_errors(&[]),
            "200",
            ok("the question", schema("Question")),
        ),
    );

    let session = with_body(
        op(
            "Start a session; the caller is its author",
            "a member (person)",
            &[],
            with(
                project_errors(
                    &[
                        ("403", "an agent (`role_not_allowed`)"),
                        (
                            "409",
                            "the project already has a session of that name (`session_exists`)",
                        ),
                    ]
                    .iter()
                    .chain(BODY_ERRORS.iter())
                    .copied()
                    .collect::<Vec<_>>(),
                ),
                "201",
                ok("the session", schema("Session")),
            ),
        ),
        json!({ "type": "object", "additionalProperties": false, "required": ["kind"],
                "properties": { "kind": { "type": "string", "enum": ["conversation", "execution"] },
                                "sessionId": { "type": "string", "description": "a name inside this project: `<name>` or `<projectId>.<name>` (no dot in the name, not starting with `oc-`); the server makes an unguessable id when absent" } } }),
    );

    let readiness = op(
        "How many questions are still open",
        "a member (person)",
        &[],
        with(
            project_errors(&[("403", "an agent (`role_not_allowed`)")]),
            "200",
            ok("never blocks", schema("Readiness")),
        ),
    );
    let record_readiness = op(
        "Record \"I'm ready\" (im-ready) or \"Confirm architecture ready\" (architecture-ready); warns, never blocks",
        "a member (person)",
        &["gate"],
        with(
            project_errors(&[
                ("403", "an agent (`role_not_allowed`)"),
                ("422", "an unknown gate (`invalid_gate`)"),
            ]),
            "200",
            ok("recorded", schema("Readiness")),
        ),
    );

    let revision = op(
        "The project's newest change: poll it to know when to reload",
        "a member or an agent of the project",
        &[],
        with(
            project_errors(&[]),
            "200",
            ok(
                "the revision; it only grows",
                json!({ "type": "object", "required": ["revision"],
                        "properties": { "revision": { "type": "integer" } } }),
            ),
        ),
    );

    let po_only = [("403", "not the po agent (`role_not_allowed`)")];
    let story_create = with_body(
        op(
            "Create a story (draft)",
            "the po agent",
            &[],
            with(
                project_errors(
                    &po_only
                        .iter()
                        .chain(BODY_ERRORS.iter())
                        .copied()
                        .collect::<Vec<_>>(),
                ),
                "201",
                ok("the story", schema("Story")),
            ),
        ),
        json!({ "type": "object", "additionalProperties": false, "required": ["title"], "properties": { "title": { "type": "string", "maxLength": 200 } } }),
    );
    let story_state = with_body(
        op(
            "Move a story; archiving only from draft",
            "the po agent",
            &["storyId"],
            with(
                project_errors(
                    &po_only
                        .iter()
                        .chain(BODY_ERRORS.iter())
                        .chain([("409", "a refused transition (`invalid_transition`)")].iter())
                        .copied()
                        .collect::<Vec<_>>(),
                ),
                "200",
                ok("the story", schema("Story")),
            ),
        ),
        schema("StateBody"),
    );
    let correction = with_body(
        op(
            "Correct a story (ADR 0212 as revised by ADR 0214 §8)",
            "the po agent",
            &["storyId"],
            with(
                project_errors(&po_only.iter().chain(BODY_ERRORS.iter()).chain([("409", "refused: `tarefa_em_andamento`, `historia_pronta_sem_resposta`, `pergunta_nao_respondida`, `historia_nao_corrigivel`")].iter()).copied().collect::<Vec<_>>()),
                "200",
                ok("accepted", json!({ "type": "object", "properties": { "accepted": { "type": "boolean" }, "story": schema("Story"), "questionId": { "type": ["string", "null"] } } })),
            ),
        ),
        json!({ "type": "object", "additionalProperties": false, "properties": { "questionId": { "type": "string" } } }),
    );

    let task_roles = [("403", "not the po or dev-lead agent (`role_not_allowed`)")];
    let task_create = with_body(
        op(
            "Create a task in an execution session",
            "the po or dev-lead agent",
            &[],
            with(
                project_errors(
                    &task_roles
                        .iter()
                        .chain(BODY_ERRORS.iter())
                        .copied()
                        .collect::<Vec<_>>(),
                ),
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
                ("403", "an agent (`role_not_allowed`)"),
                ("422", "waiting is not `me`"),
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
    let task_state = with_body(
        op(
            "Move a task",
            "the po or dev-lead agent",
            &["taskId"],
            with(
                project_errors(
                    &task_roles
                        .iter()
                        .chain(BODY_ERRORS.iter())
                        .copied()
                        .collect::<Vec<_>>(),
                ),
                "200",
                ok("the task", schema("Task")),
            ),
        ),
        schema("StateBody"),
    );
    let verdict = with_body(
        op(
            "emit_qa_verdict; needs_user_decision parks the gate without spending a correction",
            "the qa-agent agent",
            &["taskId"],
            with(
                project_errors(&[("403", "not qa-agent (`role_not_allowed`)")].iter().chain(BODY_ERRORS.iter()).chain([("409", "the gate is parked or closed (`gate_parked`, `gate_closed`), or the cited question is answered")].iter()).copied().collect::<Vec<_>>()),
                "200",
                ok("the task after the verdict", json!({ "type": "object", "properties": {
                    "verdict": { "type": "string" }, "task": schema("Task"), "openQuestionId": { "type": ["string", "null"] } } })),
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
    let events = op(
        "Server-Sent Events: a tip {type, revision} per change, id = revision; Last-Event-ID resumes; a heartbeat comment at least every 15 s",
        "a member or an agent of the project",
        &[],
        with(
            with(
                project_errors(&[(
                    "422",
                    "a Last-Event-ID that is not a revision, or beyond the project's (`invalid_last_event_id`)",
                )]),
                "429",
                err(
                    "too many failed authentications from this address (`too_many_auth_failures`), or this token holds `[limits] max_streams_per_token` streams already (`too_many_streams`)",
                ),
            ),
            "200",
            json!({ "description": "the stream", "content": { "text/event-stream": { "schema": schema("Tip") } } }),
        ),
    );

    let delegate = delegate_ops();
    let delegate_blocking = json!({
        "summary": "Whether an OpenCode session is blocked by a question that is not settled (counting, paused, disabled, submitting or uncertain), walking subagent sessions up to their root; ask it right before prompting the session",
        "description": "Who: a person who is a member of the upstream's project; anyone else gets 404.",
        "security": [{ "bearer": [] }],
        "parameters": [param("sessionId")],
        "responses": {
            "200": ok("{sessionID, root, blocking, upstream, userTakeover}", json!({ "type": "object", "properties": {
                "sessionID": { "type": "string" }, "root": { "type": "string" },
                "blocking": { "type": "boolean" }, "upstream": { "type": ["string", "null"] },
                "userTakeover": { "type": "boolean" } } })),
            "401": err("no token, or a token this server does not know (`unauthorized`)"),
            "404": err("no bridge of the caller's projects")
        }
    });
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "oq",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The questions AI agents leave for people (ADR 0214): a durable queue, an author-only answer, the answer back to the work. Every error is {\"code\", \"message\"}."
        },
        "paths": {
            "/healthz": { "get": { "summary": "Liveness and the store's standing; no token needed", "responses": {
                "200": ok("up: the store is sound, or damaged (reads served, writes refused, with the reason)", health_schema()),
                "503": ok("the store failed (a write or flush hit an I/O error): nothing is served until a restart", health_schema())
            } } },
            "/openapi.json": { "get": { "summary": "This document; no token needed", "responses": { "200": ok("OpenAPI 3.1", json!({ "type": "object" })) } } },
            "/me": { "get": {
                "summary": "Who this token is and the projects it belongs to",
                "security": [{ "bearer": [] }],
                "responses": {
                    "200": ok("the caller", json!({ "type": "object", "properties": {
                        "user": { "type": "string" }, "kind": { "type": "string", "enum": ["person", "agent"] },
                        "role": { "type": ["string", "null"] }, "projects": { "type": "array", "items": { "type": "string" } } } })),
                    "401": err("no token, or a token this server does not know (`unauthorized`)")
                }
            } },
            "/projects/{projectId}/open-questions": { "get": list, "post": declare },
            "/projects/{projectId}/open-questions/{questionId}": { "get": question },
            "/projects/{projectId}/open-questions/{questionId}/answer": { "post": answer },
            "/projects/{projectId}/open-questions/{questionId}/dismiss": { "post": dismiss },
            "/projects/{projectId}/sessions": { "post": session },
            "/projects/{projectId}/readiness": { "get": readiness },
            "/projects/{projectId}/readiness/{gate}": { "post": record_readiness },
            "/projects/{projectId}/revision": { "get": revision },
            "/projects/{projectId}/stories": { "post": story_create },
            "/projects/{projectId}/stories/{storyId}/state": { "post": story_state },
            "/projects/{projectId}/stories/{storyId}/corrections": { "post": correction },
            "/projects/{projectId}/tasks": { "get": waiting, "post": task_create },
            "/projects/{projectId}/tasks/{taskId}": { "get": task_show },
            "/projects/{projectId}/tasks/{taskId}/state": { "post": task_state },
            "/projects/{projectId}/tasks/{taskId}/qa-verdicts": { "post": verdict },
            "/projects/{projectId}/tasks/{taskId}/dev-context": { "get": dev_context },
            "/projects/{projectId}/events": { "get": events },
            "/api/question-auto-delegate": { "get": delegate.snapshot },
            "/api/question-auto-delegate/requests/{requestId}/pause": { "post": delegate.pause },
            "/api/question-auto-delegate/requests/{requestId}/resume": { "post": delegate.resume },
            "/api/question-auto-delegate/requests/{requestId}/delegate": { "post": delegate.delegate },
            "/api/question-auto-delegate/settings": { "put": delegate.settings },
            "/api/question-auto-delegate/sessions/{sessionId}/blocking": { "get": delegate_blocking },
            "/mcp": mcp::path_item(),
        },
        "components": {
            "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer" } },
            "schemas": schemas::all()
        }
    })
}

/// `GET /healthz`'s body.
fn health_schema() -> Value {
    json!({ "type": "object", "required": ["status"], "properties": {
        "status": { "enum": ["ok", "damaged", "failed"] },
        "writes": { "type": "boolean" },
        "reason": { "type": "string" }
    } })
}
