//! `/mcp` on `oq serve`: the MCP tools (`crate::mcp`) over Streamable HTTP (rmcp's
//! transport) for agent tokens. Each request is authenticated as every route is (bearer
//! token → user) and carries its door before rmcp sees it: the project (`?project=`,
//! default the token's only one) and the session (`?session=`, required: a session a
//! person started in that project).
//!
//! Invariant: the door comes from each request's token, never from the MCP session, and
//! an MCP session is its opener's alone (another token naming its `Mcp-Session-Id` is
//! told it does not exist), so a leaked session id acts as nobody but its bearer.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use http_body_util::{BodyExt, LengthLimitError, Limited};

use axum::Router;
use axum::extract::{FromRequestParts, Query, Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::AppState;
use super::auth::{Access, Caller};
use super::error::{ApiError, ApiResult};
use super::extract::{BODY_LIMIT, body_timeout, body_too_large};
use super::listen::BodyReadTimeout;
use crate::domain::{ErrorCode, OqError};
use crate::engine::AnyStore;
use crate::mcp::{Door, OqMcp, Wake};

/// The path, and the methods Streamable HTTP uses on it (the OpenAPI document's).
pub const PATH: &str = "/mcp";
pub const METHODS: [&str; 3] = ["GET", "POST", "DELETE"];
const SESSION_HEADER: &str = "mcp-session-id";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DoorQuery {
    project: Option<String>,
    session: Option<String>,
}

use super::mcp_sessions::Named;
pub use super::mcp_sessions::Owners;

/// The `/mcp` route, authenticated, over `state`'s engine; its streams end when `stop`
/// is cancelled (the server stopping).
pub fn routes(state: &AppState, stop: CancellationToken) -> Router<AppState> {
    let notify_state = state.clone();
    let handler = OqMcp::new(state.engine(), None, Wake::Changes(state.changes()))
        .with_notify(Arc::new(move || notify_state.changed()));
    // Every request carries a bearer token, so a rebound DNS name gains a browser
    // nothing: the Host check (rmcp's default: loopback names only) would only refuse
    // the names a team serves under.
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_max_request_body_bytes(BODY_LIMIT)
        .with_cancellation_token(stop);
    let service: StreamableHttpService<OqMcp<AnyStore>, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(handler.clone()),
            state.mcp_owners().manager(),
            config,
        );
    Router::new()
        .route_service(PATH, service)
        .layer(from_fn_with_state(state.clone(), authorize))
}

/// The caller's door, checked — an agent of the project, in a session of the project —
/// and the MCP session bound to the token that opened it.
async fn authorize(
    State(st): State<AppState>,
    request: Request,
    next: Next,
) -> ApiResult<Response> {
    let (mut parts, body) = request.into_parts();
    let caller = Caller::from_request_parts(&mut parts, &st).await?;
    if caller.user.role.is_none() {
        return Err(OqError::forbidden(
            ErrorCode::RoleNotAllowed,
            "/mcp is for agent tokens; a person answers with oq",
        )
        .into());
    }
    let Query(q) = Query::<DoorQuery>::try_from_uri(&parts.uri).map_err(|e| {
        ApiError::from(OqError::invalid(
            ErrorCode::InvalidQuery,
            format!("/mcp takes ?project=P&session=S: {e}"),
        ))
    })?;
    let project = match q.project {
        Some(p) => p,
        None => match st.directory().projects_of(&caller.user).as_slice() {
            [only] => only.clone(),
            _ => {
                return Err(OqError::invalid(
                    ErrorCode::ProjectRequired,
                    "this token has several projects: /mcp?project=P&session=S",
                )
                .into());
            }
        },
    };
    if st.directory().access(&caller.user, &project) != Some(Access::Agent) {
        return Err(ApiError::project_not_found(&project));
    }
    let session = q.session.ok_or_else(|| {
        ApiError::from(OqError::invalid(
            ErrorCode::SessionRequired,
            "name the session the agent works in: /mcp?session=S (a session a person started)",
        ))
    })?;
    let (id, in_project) = (session.clone(), project.clone());
    let found = st
        .read(move |e| e.read(|v| v.session(&id)))
        .await?
        .filter(|s| s.project_id == in_project);
    if found.is_none() {
        return Err(OqError::not_found("session", &session).into());
    }
    let owners = st.mcp_owners();
    let named = parts
        .headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    if let Some(mcp_session) = &named
        && owners.named(mcp_session, &caller.user.id).await == Named::Gone
    {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::NotFound,
            "no such MCP session for this token (or it was idle too long); initialize a new one",
        ));
    }
    let deleting = parts.method == Method::DELETE;
    // rmcp reads a POST's body itself, with no clock: read here under the accept loop's
    // clock and the body cap, as every other route's body is.
    let body = if parts.method == Method::POST {
        let timeout = parts.extensions.get::<BodyReadTimeout>().map(|t| t.0);
        buffered(timeout, body).await?
    } else {
        body
    };
    parts.extensions.insert(Door {
        actor: caller.user.actor(),
        project,
        session,
    });
    let response = next.run(Request::from_parts(parts, body)).await;
    match (&named, response.headers().get(SESSION_HEADER)) {
        // A session opened now is its opener's.
        (None, Some(opened)) => {
            if let Ok(id) = opened.to_str() {
                owners.opened(id, &caller.user.id).await;
            }
        }
        (Some(closed), _) if deleting && response.status().is_success() => owners.ended(closed),
        (Some(used), _) => owners.touch(used),
        _ => {}
    }
    Ok(response)
}

/// The whole body, read within `timeout` and [`BODY_LIMIT`] bytes.
async fn buffered(timeout: Option<Duration>, body: Body) -> ApiResult<Body> {
    let read = Limited::new(body, BODY_LIMIT).collect();
    let got = match timeout {
        None => read.await,
        Some(t) => tokio::time::timeout(t, read)
            .await
            .map_err(|_| body_timeout(t))?,
    };
    match got {
        Ok(collected) => Ok(Body::from(collected.to_bytes())),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(body_too_large()),
        Err(e) => Err(ApiError::invalid_body(format!(
            "the request body could not be read: {e}"
        ))),
    }
}
