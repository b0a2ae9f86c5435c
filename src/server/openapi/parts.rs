//! The pieces every operation of the document is built from.

use serde_json::{Value, json};

pub(super) fn err(description: &str) -> Value {
    json!({
        "description": description,
        "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } }
    })
}

pub(super) fn ok(description: &str, schema: Value) -> Value {
    json!({ "description": description, "content": { "application/json": { "schema": schema } } })
}

pub(super) fn body(schema: Value) -> Value {
    json!({ "required": true, "content": { "application/json": { "schema": schema } } })
}

pub(super) fn schema(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

pub(super) fn param(name: &str) -> Value {
    json!({ "name": name, "in": "path", "required": true, "schema": { "type": "string" } })
}

/// The refusals every project route can give, merged with the route's own.
pub(super) fn project_errors(extra: &[(&str, &str)]) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert(
        "401".into(),
        err("no token, or a token this server does not know (`unauthorized`)"),
    );
    m.insert(
        "429".into(),
        err("too many failed authentications from this address this minute (`too_many_auth_failures`, with `Retry-After`)"),
    );
    m.insert(
        "404".into(),
        err("the project does not exist or the caller is not in it; or the id is of another project (`not_found`)"),
    );
    for (status, what) in extra {
        m.insert((*status).into(), err(what));
    }
    m
}

pub(super) fn op(
    summary: &str,
    who: &str,
    params: &[&str],
    responses: serde_json::Map<String, Value>,
) -> Value {
    let mut params: Vec<Value> = params.iter().map(|p| param(p)).collect();
    params.insert(0, param("projectId"));
    json!({
        "summary": summary,
        "description": format!("Who: {who}."),
        "security": [{ "bearer": [] }],
        "parameters": params,
        "responses": responses,
    })
}

pub(super) fn with(
    mut responses: serde_json::Map<String, Value>,
    status: &str,
    v: Value,
) -> serde_json::Map<String, Value> {
    responses.insert(status.into(), v);
    responses
}

pub(super) fn with_body(mut op: Value, schema: Value) -> Value {
    if let Some(o) = op.as_object_mut() {
        o.insert("requestBody".into(), body(schema));
    }
    op
}

pub(super) const BODY_ERRORS: [(&str, &str); 4] = [
    (
        "408",
        "the body did not arrive within `[limits] body_read_seconds` (`body_timeout`)",
    ),
    ("413", "the body is larger than 64 KiB (`body_too_large`)"),
    (
        "415",
        "the body is not sent as application/json (`unsupported_media_type`)",
    ),
    (
        "422",
        "malformed JSON, a wrong type, an unknown field, or a value over the limits",
    ),
];
