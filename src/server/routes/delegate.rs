//! The auto-delegate of the OpenCode bridges (seed 002's HTTP API):
//!
//! - `GET /api/question-auto-delegate`: `{upstreams: [{name, project, connected, nowMs,
//!   …snapshot}]}` for the upstreams of the caller's projects; each counting request has
//!   its `deadline` (machine clock, compare with `nowMs`) and `deadlineUnixMs`.
//! - `POST /api/question-auto-delegate/requests/{requestId}/pause` `{sessionID?,
//!   directory?, reason: interaction|user}` and `…/delegate` `{sessionID?, directory?}`.
//! - `GET /api/question-auto-delegate/sessions/{sessionId}/blocking`: whether a session's
//!   tree is blocked by a question, for whatever continues it.
//! - `PUT /api/question-auto-delegate/settings` `{enabled, upstream?}`: a real boolean is
//!   persisted then applied; anything else is 400 `invalid_setting` and changes nothing.
//!
//! Who: people who are members of the upstream's project. Anyone else gets 404, as for
//! a project they are not in. Refusals of the machine: 409 `question_submission_claimed`,
//! `question_identity_conflict`, `question_already_settled`.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::AppState;
use super::super::auth::{Access, Caller};
use super::super::error::{ApiError, ApiResult};
use super::super::extract::{ApiJson, ApiPath};
use crate::bridge::Upstream;
use crate::bridge::delegate::{Effect, Hints, Input, PauseReason};
use crate::domain::{ErrorCode, OqError};

/// The upstreams whose project the caller is a person of.
fn mine(st: &AppState, caller: &Caller) -> Vec<Arc<Upstream>> {
    st.bridges()
        .all()
        .into_iter()
        .filter(|u| st.directory().access(&caller.user, u.project()) == Some(Access::Member))
        .collect()
}

fn nothing_here() -> ApiError {
    OqError::NotFound {
        message: "no OpenCode bridge here for this caller".into(),
    }
    .into()
}

/// The upstream a request belongs to: the one named, else the one whose machine knows the
/// request, else the caller's only upstream (it will recover the request by listing).
fn pick(
    st: &AppState,
    caller: &Caller,
    named: Option<&str>,
    request_id: &str,
) -> ApiResult<Arc<Upstream>> {
    let ups = mine(st, caller);
    if let Some(name) = named {
        return ups
            .into_iter()
            .find(|u| u.name() == name)
            .ok_or_else(nothing_here);
    }
    if let Some(u) = ups.iter().find(|u| u.knows(request_id)) {
        return Ok(u.clone());
    }
    match ups.as_slice() {
        [only] => Ok(only.clone()),
        _ => Err(OqError::NotFound {
            message: format!("request {request_id} is not known to any OpenCode bridge here"),
        }
        .into()),
    }
}

pub async fn snapshot(State(st): State<AppState>, caller: Caller) -> ApiResult<Json<Value>> {
    let ups = mine(&st, &caller);
    if ups.is_empty() {
        return Err(nothing_here());
    }
    Ok(Json(json!({
        "upstreams": ups.iter().map(|u| u.snapshot_json()).collect::<Vec<_>>()
    })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PauseBody {
    #[serde(default, rename = "sessionID")]
    session_id: Option<String>,
    #[serde(default)]
    directory: Option<String>,
    reason: String,
    #[serde(default)]
    upstream: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelegateBody {
    #[serde(default, rename = "sessionID")]
    session_id: Option<String>,
    #[serde(default)]
    directory: Option<String>,
    #[serde(default)]
    upstream: Option<String>,
}

/// The request's state after a command; `recovering` when the bridge did not know it yet
/// and is listing upstream to find it (retry shortly).
fn command_reply(up: &Upstream, request_id: &str, fx: &[Effect]) -> Value {
    let recovering = fx
        .iter()
        .any(|e| matches!(e, Effect::RecoverViaList { .. }));
    let snap = up.snapshot_json();
    let request = snap["requests"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["requestID"] == request_id).cloned())
        .unwrap_or(Value::Null);
    json!({ "upstream": up.name(), "requestID": request_id, "recovering": recovering, "request": request })
}

pub async fn pause(
    State(st): State<AppState>,
    caller: Caller,
    ApiPath(request_id): ApiPath<String>,
    ApiJson(body): ApiJson<PauseBody>,
) -> ApiResult<Json<Value>> {
    let reason = match body.reason.as_str() {
        "interaction" => PauseReason::Interaction,
        "user" => PauseReason::User,
        other => {
            return Err(OqError::invalid(
                ErrorCode::InvalidBody,
                format!("reason {other:?}: expected interaction or user"),
            )
            .into());
        }
    };
    let up = pick(&st, &caller, body.upstream.as_deref(), &request_id)?;
    let fx = up
        .command(Input::Pause {
            request_id: request_id.clone(),
            reason,
            hints: Hints {
                session_id: body.session_id,
                directory: body.directory,
            },
        })
        .await?;
    Ok(Json(command_reply(&up, &request_id, &fx)))
}

pub async fn delegate(
    State(st): State<AppState>,
    caller: Caller,
    ApiPath(request_id): ApiPath<String>,
    raw: axum::body::Bytes,
) -> ApiResult<Json<Value>> {
    // The body is optional: an empty one means no hints.
    let body: DelegateBody = if raw.iter().all(u8::is_ascii_whitespace) {
        DelegateBody::default()
    } else {
        serde_json::from_slice(&raw).map_err(|e| ApiError::invalid_body(e.to_string()))?
    };
    let up = pick(&st, &caller, body.upstream.as_deref(), &request_id)?;
    let fx = up
        .command(Input::Delegate {
            request_id: request_id.clone(),
            hints: Hints {
                session_id: body.session_id,
                directory: body.directory,
            },
        })
        .await?;
    Ok(Json(command_reply(&up, &request_id, &fx)))
}

pub async fn settings(
    State(st): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<Json<Value>> {
    let Some(obj) = body.as_object() else {
        return Err(ApiError::new(
            axum::http::StatusCode::BAD_REQUEST,
            ErrorCode::InvalidSetting,
            "send {\"enabled\": true|false}",
        ));
    };
    if let Some(k) = obj.keys().find(|k| *k != "enabled" && *k != "upstream") {
        return Err(ApiError::invalid_body(format!("unknown field {k:?}")));
    }
    let named = obj.get("upstream").and_then(|v| v.as_str());
    let ups: Vec<Arc<Upstream>> = mine(&st, &caller)
        .into_iter()
        .filter(|u| named.is_none_or(|n| u.name() == n))
        .collect();
    if ups.is_empty() {
        return Err(nothing_here());
    }
    let value = obj.get("enabled").cloned().unwrap_or(Value::Null);
    for up in &ups {
        up.set_enabled(value.clone()).await?;
    }
    Ok(Json(json!({
        "upstreams": ups.iter().map(|u| u.snapshot_json()).collect::<Vec<_>>()
    })))
}

/// `GET /api/question-auto-delegate/sessions/{sessionId}/blocking`: whether an OpenCode
/// session is blocked by a question (counting, paused, disabled, submitting, uncertain —
/// anything not settled), walking subagent sessions up to their root. A continuation
/// loop or another client asks this right before it prompts the session.
pub async fn blocking(
    State(st): State<AppState>,
    caller: Caller,
    ApiPath(session_id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    let ups = mine(&st, &caller);
    if ups.is_empty() {
        return Err(nothing_here());
    }
    let mut root = session_id.clone();
    let mut blocked_by = None;
    let mut taken_over = false;
    for up in &ups {
        let (blocking, up_root, takeover) = up.blocking(&session_id);
        if up_root != session_id {
            root = up_root;
        }
        if blocking {
            blocked_by = Some(up.name().to_string());
        }
        taken_over |= takeover.is_some();
    }
    Ok(Json(json!({
        "sessionID": session_id,
        "root": root,
        "blocking": blocked_by.is_some(),
        "upstream": blocked_by,
        // A person took this session's tree over (answered or dismissed by hand, paused
        // a timer, or turned the feature off): a continuation loop should yield to them.
        "userTakeover": taken_over,
    })))
}
