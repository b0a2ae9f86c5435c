//! The auto-delegate routes' operations (seed 002's HTTP API).

use serde_json::{Value, json};

use super::parts::*;

/// The OpenCode bridges' auto-delegate routes (seed 002): not under a project; the caller
/// sees the upstreams of the projects they are a person of.
pub(super) fn delegate_ops() -> (Value, Value, Value, Value) {
    let who = "Who: a person who is a member of the upstream's project; anyone else gets 404.";
    let base = |summary: &str, params: &[&str], extra: &[(&str, &str)]| -> Value {
        let mut responses = serde_json::Map::new();
        responses.insert(
            "200".into(),
            ok(
                "the upstreams' snapshots, or the request's state after the command",
                json!({ "type": "object" }),
            ),
        );
        responses.insert(
            "401".into(),
            err("no token, or a token this server does not know (`unauthorized`)"),
        );
        responses.insert(
            "404".into(),
            err("no bridge of the caller's projects (or the request is unknown to them)"),
        );
        for (s, what) in extra {
            responses.insert((*s).into(), err(what));
        }
        json!({
            "summary": summary,
            "description": who,
            "security": [{ "bearer": [] }],
            "parameters": params.iter().map(|p| param(p)).collect::<Vec<_>>(),
            "responses": responses,
        })
    };
    let claims: [(&str, &str); 2] = [
        (
            "409",
            "`question_submission_claimed` (another submission holds it, or an uncertain tombstone), `question_identity_conflict` (sessionID/directory contradict the bound identity), `question_already_settled`",
        ),
        ("422", "a malformed body (`invalid_body`)"),
    ];
    let hints = json!({ "type": "object", "additionalProperties": false, "properties": {
        "sessionID": { "type": "string" }, "directory": { "type": "string" }, "upstream": { "type": "string" } } });
    let snapshot = base(
        "The auto-delegate snapshot of each OpenCode upstream: settings, coverage, and per request its state (waiting, counting with deadline and deadlineUnixMs, paused, disabled, submitting, uncertain, settled)",
        &[],
        &[],
    );
    let mut pause_body = hints.clone();
    pause_body["required"] = json!(["reason"]);
    pause_body["properties"]["reason"] =
        json!({ "type": "string", "enum": ["interaction", "user"] });
    let pause = with_body(
        base(
            "Pause a request's auto-delegate timer",
            &["requestId"],
            &claims,
        ),
        pause_body,
    );
    let mut delegate = base(
        "Answer a request now with the fixed continuation text (works with the feature off)",
        &["requestId"],
        &claims,
    );
    if let Some(o) = delegate.as_object_mut() {
        o.insert(
            "requestBody".into(),
            json!({ "required": false, "content": { "application/json": { "schema": hints } } }),
        );
    }
    let settings = with_body(
        base(
            "Turn auto-delegate on or off (persisted); `enabled` must be a JSON boolean",
            &[],
            &[(
                "400",
                "`enabled` is not a boolean (`invalid_setting`); nothing changed",
            )],
        ),
        json!({ "type": "object", "required": ["enabled"], "properties": {
            "enabled": { "type": "boolean" }, "upstream": { "type": "string" } } }),
    );
    (snapshot, pause, delegate, settings)
}
