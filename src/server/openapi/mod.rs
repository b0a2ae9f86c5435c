//! The OpenAPI 3.1 document served at `GET /openapi.json`, written by hand to say what the
//! handlers do; a test checks it names exactly the routes the router serves.

mod claude_code;
mod delegate;
mod list;
mod mcp;
mod parts;
mod refusals;
mod schemas;
mod snooze;
mod work;

use crate::domain::{CENTRAL_INSTRUCTION, ErrorCode as C};
use serde_json::{Value, json};

use delegate::delegate_ops;
use parts::*;
use refusals::*;

pub fn document() -> Value {
    let list = list::list_op();

    let declare = with_body(
        op(
            "declare_open_question",
            "an agent criativo, po, arquiteto or dev-lead",
            &[],
            with(
                project_errors(&body_errors(
                    &[(
                        "403",
                        "another role (`role_not_allowed`)",
                        &[C::RoleNotAllowed],
                    )],
                    "malformed JSON, a wrong type, an unknown field, a text empty, too long or with a bidirectional override, a bad id, an `afeta` naming work outside the project, or an Idempotency-Key reused with another body",
                    &DECLARE_422,
                )),
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
            "schema": id_schema() }));
    }

    let mut answer = with_body(
        op(
            "Answer a question (only the session's author). With an Idempotency-Key header, a retry carrying the same key gets the first answer back (200) instead of 409",
            "the author of the question's session",
            &["questionId"],
            with(
                project_errors(&body_errors(
                    &[
                        AUTHOR_ONLY,
                        (
                            "409",
                            "already answered (`pergunta_ja_respondida`), closed (`question_closed`), a bridged question another path holds or settled, or a Claude Code question its hook handed to Claude Code's own dialog (`handed_to_claude_code`: answer it there)",
                            &ANSWER_409,
                        ),
                        UPSTREAM_502,
                    ],
                    "neither, both, empty, too long, choices that do not fit the options, accepts a suggestion that does not exist (`sugestao_inexistente`), or an Idempotency-Key that is no id or was used for another answer",
                    &ANSWER_422,
                )),
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
            "schema": id_schema() }));
    }

    let dismiss = op(
        "Dismiss a question without answering it (only the session's author); for a question that lives upstream, it is rejected there",
        "the author of the question's session",
        &["questionId"],
        with(
            project_errors(&[
                AUTHOR_ONLY,
                (
                    "409",
                    "already answered (`pergunta_ja_respondida`) or closed (`question_closed`)",
                    &SETTLED_409,
                ),
                UPSTREAM_502,
            ]),
            "200",
            ok("the closed question", schema("Question")),
        ),
    );

    let question = op(
        "One question, with canAnswer and reason for the caller, and (open) the earlier answer it resembles, similarAnswer",
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
                project_errors(&body_errors(
                    &[
                        PEOPLE_ONLY,
                        (
                            "409",
                            "the project already has a session of that name (`session_exists`)",
                            &[C::SessionExists],
                        ),
                    ],
                    "malformed JSON, a wrong type or kind, a bad id, a name outside the project (`session_id_outside_project`) or in the bridge's namespace (`session_id_reserved`)",
                    &[
                        C::InvalidBody,
                        C::InvalidKind,
                        C::InvalidId,
                        C::SessionIdOutsideProject,
                        C::SessionIdReserved,
                    ],
                )),
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
            project_errors(&[PEOPLE_ONLY]),
            "200",
            ok("never blocks", schema("Readiness")),
        ),
    );
    let mut record_readiness = op(
        "Record \"I'm ready\" (im-ready) or \"Confirm architecture ready\" (architecture-ready); warns, never blocks",
        "a member (person)",
        &["gate"],
        with(
            project_errors(&[
                PEOPLE_ONLY,
                ("422", "an unknown gate (`invalid_gate`)", &[C::InvalidGate]),
            ]),
            "200",
            ok("recorded", schema("Readiness")),
        ),
    );
    // The gate is one of two names, not any id.
    record_readiness["parameters"][1]["schema"] =
        json!({ "type": "string", "enum": ["im-ready", "architecture-ready"] });

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

    let w = work::work_ops();

    let events = op(
        "Server-Sent Events: a tip {type, revision} per change, id = revision; Last-Event-ID resumes; a heartbeat comment at least every 15 s",
        "a member or an agent of the project",
        &[],
        with(
            with(
                project_errors(&[(
                    "422",
                    "a Last-Event-ID that is not a revision, or beyond the project's (`invalid_last_event_id`)",
                    &[C::InvalidLastEventId],
                )]),
                "429",
                err(
                    "too many failed authentications from this address (`too_many_auth_failures`), or this token holds `[limits] max_streams_per_token` streams already (`too_many_streams`)",
                    &[C::TooManyAuthFailures, C::TooManyStreams],
                ),
            ),
            "200",
            json!({ "description": "the stream", "content": { "text/event-stream": { "schema": schema("Tip") } } }),
        ),
    );

    let delegate = delegate_ops();
    let (claude_declare, claude_settle, claude_hand_off) = claude_code::ops();
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
            "401": unauthorized(),
            "429": err("too many failed authentications from this address this minute (`too_many_auth_failures`)", &[C::TooManyAuthFailures]),
            "404": err("no bridge of the caller's projects", &[C::NotFound])
        }
    });
    let mut doc = json!({
        "openapi": "3.1.0",
        "info": {
            "title": "oq",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The questions AI agents leave for people (ADR 0214): a durable queue, an author-only answer, the answer back to the work. Every error is {\"code\", \"message\"}."
        },
        "paths": {
            "/healthz": { "get": { "summary": "Liveness and the store's standing; no token needed", "responses": {
                "200": ok("up: the store is sound, or damaged (reads served, writes refused, with the reason)", health_schema()),
                "503": ok("the store failed (a write or flush hit an I/O error): nothing is served until a restart; or it cannot be read now (`unavailable`: the database is unreachable)", health_schema())
            } } },
            "/openapi.json": { "get": { "summary": "This document; no token needed", "responses": { "200": ok("OpenAPI 3.1", json!({ "type": "object" })) } } },
            "/me": { "get": {
                "summary": "Who this token is and the projects it belongs to",
                "security": [{ "bearer": [] }],
                "responses": {
                    "200": ok("the caller", json!({ "type": "object", "properties": {
                        "user": { "type": "string" }, "kind": { "type": "string", "enum": ["person", "agent"] },
                        "role": { "type": ["string", "null"] }, "projects": { "type": "array", "items": { "type": "string" } } } })),
                    "401": unauthorized(),
                    "429": err("too many failed authentications from this address this minute (`too_many_auth_failures`)", &[C::TooManyAuthFailures])
                }
            } },
            "/projects/{projectId}/open-questions": { "get": list, "post": declare },
            "/projects/{projectId}/open-questions/{questionId}": { "get": question },
            "/projects/{projectId}/open-questions/{questionId}/answer": { "post": answer },
            "/projects/{projectId}/open-questions/{questionId}/dismiss": { "post": dismiss },
            "/projects/{projectId}/open-questions/{questionId}/snooze": { "post": snooze::snooze_op() },
            "/projects/{projectId}/open-questions/{questionId}/unsnooze": { "post": snooze::unsnooze_op() },
            "/projects/{projectId}/sessions": { "post": session },
            "/projects/{projectId}/readiness": { "get": readiness },
            "/projects/{projectId}/readiness/{gate}": { "post": record_readiness },
            "/projects/{projectId}/revision": { "get": revision },
            "/projects/{projectId}/stories": { "post": w.story_create },
            "/projects/{projectId}/stories/{storyId}/state": { "post": w.story_state },
            "/projects/{projectId}/stories/{storyId}/corrections": { "post": w.correction },
            "/projects/{projectId}/tasks": { "get": w.waiting, "post": w.task_create },
            "/projects/{projectId}/tasks/{taskId}": { "get": w.task_show },
            "/projects/{projectId}/tasks/{taskId}/state": { "post": w.task_state },
            "/projects/{projectId}/tasks/{taskId}/qa-verdicts": { "post": w.verdict },
            "/projects/{projectId}/tasks/{taskId}/dev-context": { "get": w.dev_context },
            "/projects/{projectId}/events": { "get": events },
            "/projects/{projectId}/decisions": { "get": list::decisions_op() },
            "/projects/{projectId}/claude-code/questions": { "post": claude_declare },
            "/projects/{projectId}/claude-code/questions/{questionId}/settlement": { "post": claude_settle },
            "/projects/{projectId}/claude-code/questions/{questionId}/handoff": { "post": claude_hand_off },
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
    });
    refuse_beyond_max_connections(&mut doc);
    link_created_ids(&mut doc);
    doc
}

/// What a created thing's id leads to (OpenAPI links on the 201): a client, or
/// schemathesis's stateful phase, reaches the answer, the dismissal and the moves with
/// the id just made rather than a guessed one.
fn link_created_ids(doc: &mut Value) {
    const Q: &str = "/projects/{projectId}/open-questions/{questionId}";
    const S: &str = "/projects/{projectId}/stories/{storyId}";
    const T: &str = "/projects/{projectId}/tasks/{taskId}";
    /// (link name, target path, target method)
    type Target<'a> = (&'a str, String, &'a str);
    let created: [(&str, &str, &[Target]); 3] = [
        (
            "/projects/{projectId}/open-questions",
            "questionId",
            &[
                ("question", Q.into(), "get"),
                ("answer", format!("{Q}/answer"), "post"),
                ("dismiss", format!("{Q}/dismiss"), "post"),
            ],
        ),
        (
            "/projects/{projectId}/stories",
            "storyId",
            &[
                ("state", format!("{S}/state"), "post"),
                ("correction", format!("{S}/corrections"), "post"),
            ],
        ),
        (
            "/projects/{projectId}/tasks",
            "taskId",
            &[
                ("task", T.into(), "get"),
                ("state", format!("{T}/state"), "post"),
                ("verdict", format!("{T}/qa-verdicts"), "post"),
                ("devContext", format!("{T}/dev-context"), "get"),
            ],
        ),
    ];
    for (from, id, targets) in created {
        let links: serde_json::Map<String, Value> = targets
            .iter()
            .map(|(name, path, method)| {
                let pointer = path.replace('~', "~0").replace('/', "~1");
                let link = json!({
                    "operationRef": format!("#/paths/{pointer}/{method}"),
                    "parameters": {
                        "projectId": "$request.path.projectId",
                        *id: format!("$response.body#/{id}"),
                    }
                });
                ((*name).to_string(), link)
            })
            .collect();
        if let Some(created) = doc["paths"][from]["post"]["responses"].get_mut("201") {
            created["links"] = Value::Object(links);
        }
    }
}

/// A connection beyond `[limits] max_connections` is answered 503 `too_many_connections`
/// before any route is chosen, so every operation names it: beside its own 503 codes, as
/// the alternative to `/healthz`'s health body, or as its only 503.
fn refuse_beyond_max_connections(doc: &mut Value) {
    const WHY: &str = "the server holds `[limits] max_connections` connections already (`too_many_connections`): the connection is closed";
    let refusal = err(WHY, &[C::TooManyConnections]);
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for op in paths
        .values_mut()
        .filter_map(Value::as_object_mut)
        .flat_map(|ops| ops.values_mut())
    {
        let Some(responses) = op["responses"].as_object_mut() else {
            continue;
        };
        let Some(own) = responses.get_mut("503") else {
            responses.insert("503".into(), refusal.clone());
            continue;
        };
        let Some(schema) = own.pointer_mut("/content/application~1json/schema") else {
            continue;
        };
        if let Some(codes) = schema
            .pointer_mut("/allOf/1/properties/code/enum")
            .and_then(Value::as_array_mut)
        {
            codes.push(json!(C::TooManyConnections.as_str()));
        } else {
            let alone = refusal["content"]["application/json"]["schema"].clone();
            *schema = json!({ "oneOf": [schema.take(), alone] });
        }
        if let Some(d) = own["description"].as_str() {
            own["description"] = json!(format!("{d}; or {WHY}"));
        }
    }
}

/// `GET /healthz`'s body.
fn health_schema() -> Value {
    json!({ "type": "object", "required": ["status"], "properties": {
        "status": { "enum": ["ok", "damaged", "failed", "unavailable"] },
        "writes": { "type": "boolean" },
        "reason": { "type": "string" },
        "store": { "type": "object", "properties": {
            "kind": { "type": "string", "enum": ["sqlite", "postgres"] },
            "reachable": { "type": "boolean" } } }
    } })
}
