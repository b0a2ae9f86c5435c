//! The pieces every operation of the document is built from.
//!
//! Invariant: every refusal a route documents names the typed codes it may carry (the
//! `code` enum of its body), so a client, schemathesis and the conformance test
//! (tests/openapi.rs) know exactly what each status can say.

use serde_json::{Value, json};

use crate::domain::ErrorCode;
use crate::domain::text::ID_MAX_CHARS;

/// A refusal: `{code, message}` with `code` one of `codes`.
pub(super) fn err(description: &str, codes: &[ErrorCode]) -> Value {
    let codes: Vec<&str> = codes.iter().map(|c| c.as_str()).collect();
    json!({
        "description": description,
        "content": { "application/json": { "schema": { "allOf": [
            { "$ref": "#/components/schemas/Error" },
            { "type": "object", "properties": { "code": { "enum": codes } } }
        ] } } }
    })
}

/// An id as the domain checks it (`check_id`): letters and digits of any script and
/// `- _ . : @`, not starting with a dot (a path segment `.`/`..` is no id).
pub(super) fn id_schema() -> Value {
    json!({ "type": "string", "pattern": format!("^[\\w:@-][\\w.:@-]{{0,{}}}$", ID_MAX_CHARS - 1) })
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
    json!({ "name": name, "in": "path", "required": true, "schema": id_schema() })
}

/// The token refusal every authenticated route gives.
pub(super) fn unauthorized() -> Value {
    err(
        "no token, or a token this server does not know (`unauthorized`)",
        &[ErrorCode::Unauthorized],
    )
}

/// A route's own refusal: status, what it means, the codes it carries.
pub(super) type Refusal<'a> = (&'a str, &'a str, &'a [ErrorCode]);

/// The refusals every project route can give, merged with the route's own.
pub(super) fn project_errors(extra: &[Refusal]) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("401".into(), unauthorized());
    m.insert(
        "429".into(),
        err("too many failed authentications from this address this minute (`too_many_auth_failures`, with `Retry-After`)", &[ErrorCode::TooManyAuthFailures]),
    );
    m.insert(
        "404".into(),
        err("the project does not exist or the caller is not in it; or the id is of another project (`not_found`)", &[ErrorCode::NotFound]),
    );
    m.insert(
        "503".into(),
        err(
            "the store cannot serve now (busy, failed, damaged on a write, unavailable); retry",
            &STORE_CODES,
        ),
    );
    for (status, what, codes) in extra {
        m.insert((*status).into(), err(what, codes));
    }
    m
}

/// What a store that cannot serve now answers (503), on any project route.
pub(super) const STORE_CODES: [ErrorCode; 4] = [
    ErrorCode::StoreBusy,
    ErrorCode::StoreFailed,
    ErrorCode::StoreDamaged,
    ErrorCode::StoreUnavailable,
];

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

pub(super) const BODY_ERRORS: [Refusal; 3] = [
    (
        "408",
        "the body did not arrive within `[limits] body_read_seconds` (`body_timeout`)",
        &[ErrorCode::BodyTimeout],
    ),
    (
        "413",
        "the body is larger than 64 KiB (`body_too_large`)",
        &[ErrorCode::BodyTooLarge],
    ),
    (
        "415",
        "the body is not sent as application/json (`unsupported_media_type`)",
        &[ErrorCode::UnsupportedMediaType],
    ),
];

/// The body refusals and a route's own 422, with its codes beside `invalid_body`.
pub(super) fn body_errors<'a>(
    own: &[Refusal<'a>],
    invalid: &'a str,
    codes: &'a [ErrorCode],
) -> Vec<Refusal<'a>> {
    let mut v: Vec<Refusal<'a>> = own.to_vec();
    v.extend(BODY_ERRORS);
    v.push(("422", invalid, codes));
    v
}
