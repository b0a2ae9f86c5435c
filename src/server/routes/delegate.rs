//! The auto-delegate of the OpenCode bridges (seed 002's HTTP API):
//!
//! - `GET /api/question-auto-delegate`: `{upstreams: [UpstreamSnapshot…]}` for the
//!   upstreams of the caller's projects; each counting request has its `deadline`
//!   (machine clock, compare with `nowMs`) and `deadlineUnixMs`.
//! - `POST /api/question-auto-delegate/requests/{requestId}/pause` `{reason:
//!   interaction|user, sessionID?, directory?, upstream?}`, `…/resume` and `…/delegate`
//!   `{sessionID?, directory?, upstream?}`: the request's state after it.
//! - `GET /api/question-auto-delegate/sessions/{sessionId}/blocking`: whether a session's
//!   tree is blocked by a question, for whatever continues it.
//! - `PUT /api/question-auto-delegate/settings` `{enabled, upstream?}`: a real boolean is
//!   persisted then applied; anything else is 422 `invalid_setting` and changes nothing.
//!
//! Who (decided by the bridge, like answering): pause, resume and delegate are the
//! question's session author's alone (its upstream's answerer): another member or an
//! agent of the project gets 403 `so_o_autor_da_sessao`. The settings are its admins'
//! (`admins` in `[[opencode]]`, the answerer by default): 403 `not_an_admin`. Reading
//! (the snapshot, blocking) is for the project's members and agents. Anyone outside the
//! project gets 404, as for a project they are not in; a request id that is no bridged
//! question of theirs is 404 too. Refusals of the machine: 409
//! `question_submission_claimed`, `question_identity_conflict`,
//! `question_already_settled`; 502 `upstream_unreachable` for a delegate while the
//! upstream is away.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::response::IntoResponse;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::AppState;
use super::super::auth::Caller;
use super::super::error::{ApiError, ApiResult};
use super::super::extract::{ApiJson, ApiPath};
use crate::bridge::Upstream;
use crate::bridge::delegate::PauseReason;
use crate::domain::{ErrorCode, OqError, Question};
use crate::wire::auto_delegate::{CommandReply, DelegateSnapshot, RequestSnapshot};

/// The upstreams whose project the caller belongs to (person or agent).
fn mine(st: &AppState, caller: &Caller) -> Vec<Arc<Upstream>> {
    st.bridges()
        .all()
        .into_iter()
        .filter(|u| st.directory().access(&caller.user, u.project()).is_some())
        .collect()
}

fn nothing_here() -> ApiError {
    OqError::NotFound {
        message: "no OpenCode bridge here for this caller".into(),
    }
    .into()
}

/// The upstream and the imported question behind `request_id`, among the caller's (the
/// one named, when named).
async fn find(
    st: &AppState,
    caller: &Caller,
    named: Option<&str>,
    request_id: &str,
) -> ApiResult<(Arc<Upstream>, Question)> {
    for up in mine(st, caller) {
        if named.is_some_and(|n| n != up.name()) {
            continue;
        }
        let (project, id) = (up.project().to_string(), request_id.to_string());
        let found = st.read(move |e| e.question(Some(&project), &id)).await;
        match found {
            Ok(q)
                if q.upstream
                    .as_ref()
                    .is_some_and(|u| u.kind == "opencode" && u.name == up.name()) =>
            {
                return Ok((up, q));
            }
            Ok(_) => {}
            Err(e) if e.code == "not_found" => {}
            Err(e) => return Err(e),
        }
    }
    Err(OqError::NotFound {
        message: format!("request {request_id} is no OpenCode question of a bridge here"),
    }
    .into())
}

/// A client's `sessionID`/`directory` must match the question's bound identity.
fn check_hints(q: &Question, session: Option<&str>, directory: Option<&str>) -> ApiResult<()> {
    let up = q.upstream.as_ref();
    let clash = |hint: Option<&str>, bound: Option<&str>| {
        hint.filter(|h| !h.is_empty())
            .is_some_and(|h| Some(h) != bound)
    };
    if clash(session, up.map(|u| u.session_id.as_str()))
        || clash(directory, up.map(|u| u.directory.as_str()))
    {
        return Err(OqError::conflict(
            ErrorCode::QuestionIdentityConflict,
            "the session or directory given does not match this question",
        )
        .into());
    }
    Ok(())
}

pub async fn snapshot(
    State(st): State<AppState>,
    caller: Caller,
) -> ApiResult<Json<DelegateSnapshot>> {
    let ups = mine(&st, &caller);
    if ups.is_empty() {
        return Err(nothing_here());
    }
    Ok(Json(DelegateSnapshot {
        upstreams: ups.iter().map(|u| u.snapshot()).collect(),
    }))
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
pub struct CommandBody {
    #[serde(default, rename = "sessionID")]
    session_id: Option<String>,
    #[serde(default)]
    directory: Option<String>,
    #[serde(default)]
    upstream: Option<String>,
}

/// An optional JSON object body: empty means no hints.
fn command_body(raw: &[u8]) -> ApiResult<CommandBody> {
    if raw.iter().all(u8::is_ascii_whitespace) {
        return Ok(CommandBody::default());
    }
    serde_json::from_slice(raw).map_err(|e| ApiError::invalid_body(e.to_string()))
}

/// The request as the server that drives the upstream shows it after the command (this
/// one, or the one a command was forwarded to).
fn reply(up: &Upstream, request_id: &str, request: Option<RequestSnapshot>) -> Json<CommandReply> {
    Json(CommandReply {
        upstream: up.name().to_string(),
        request_id: request_id.to_string(),
        request,
    })
}

pub async fn pause(
    State(st): State<AppState>,
    caller: Caller,
    ApiPath(request_id): ApiPath<String>,
    ApiJson(body): ApiJson<PauseBody>,
) -> ApiResult<Json<CommandReply>> {
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
    let (up, q) = find(&st, &caller, body.upstream.as_deref(), &request_id).await?;
    check_hints(&q, body.session_id.as_deref(), body.directory.as_deref())?;
    let request = up.pause(&caller.user.actor(), &q, reason).await?;
    Ok(reply(&up, &request_id, request))
}

pub async fn resume(
    State(st): State<AppState>,
    caller: Caller,
    ApiPath(request_id): ApiPath<String>,
    raw: axum::body::Bytes,
) -> ApiResult<Json<CommandReply>> {
    let body = command_body(&raw)?;
    let (up, q) = find(&st, &caller, body.upstream.as_deref(), &request_id).await?;
    check_hints(&q, body.session_id.as_deref(), body.directory.as_deref())?;
    let request = up.resume(&caller.user.actor(), &q).await?;
    Ok(reply(&up, &request_id, request))
}

pub async fn delegate(
    State(st): State<AppState>,
    caller: Caller,
    ApiPath(request_id): ApiPath<String>,
    raw: axum::body::Bytes,
) -> ApiResult<Json<CommandReply>> {
    let body = command_body(&raw)?;
    let (up, q) = find(&st, &caller, body.upstream.as_deref(), &request_id).await?;
    check_hints(&q, body.session_id.as_deref(), body.directory.as_deref())?;
    let request = up.delegate(&caller.user.actor(), &q).await?;
    Ok(reply(&up, &request_id, request))
}

pub async fn settings(
    State(st): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<axum::response::Response> {
    let Some(obj) = body.as_object() else {
        return Err(
            OqError::invalid(ErrorCode::InvalidSetting, "send {\"enabled\": true|false}").into(),
        );
    };
    if let Some(k) = obj.keys().find(|k| *k != "enabled" && *k != "upstream") {
        return Err(ApiError::invalid_body(format!("unknown field {k:?}")));
    }
    let named = match obj.get("upstream") {
        None => None,
        Some(Value::String(n)) => Some(n.as_str()),
        Some(_) => return Err(ApiError::invalid_body("upstream must be a name")),
    };
    let ups: Vec<Arc<Upstream>> = mine(&st, &caller)
        .into_iter()
        .filter(|u| named.is_none_or(|n| u.name() == n))
        .collect();
    if ups.is_empty() {
        return Err(nothing_here());
    }
    let value = obj.get("enabled").cloned().unwrap_or(Value::Null);
    let actor = caller.user.actor();
    // All or none: every named upstream must let this caller change it.
    for up in &ups {
        if !matches!(&actor, crate::domain::Actor::Person { id } if up.is_admin(id)) {
            up.set_enabled(&actor, value.clone()).await?;
        }
    }
    for up in &ups {
        up.set_enabled(&actor, value.clone()).await?;
    }
    // An admin who is not the upstream's answerer decided for the answerer.
    let mut behalf: Vec<&str> = ups
        .iter()
        .map(|u| u.answerer())
        .filter(|a| *a != caller.user.id)
        .collect();
    behalf.dedup();
    let mut response = Json(DelegateSnapshot {
        upstreams: ups.iter().map(|u| u.snapshot()).collect(),
    })
    .into_response();
    if !behalf.is_empty() {
        response
            .extensions_mut()
            .insert(crate::server::audit::OnBehalfOf(behalf.join(",")));
    }
    Ok(response)
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
