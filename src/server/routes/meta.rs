//! The routes about the server itself, and the refusals for routes it does not have.

use axum::Json;
use axum::http::{Method, StatusCode, Uri};
use serde_json::{Value, json};

use super::super::AppState;
use super::super::auth::Caller;
use super::super::error::ApiError;
use super::super::openapi;
use crate::domain::ErrorCode;
use axum::extract::State;

/// Liveness, without a token: load balancers and `oq` clients probe it, and it says what
/// the store is and whether it serves. 200 `{status: "ok", store: {kind, reachable:
/// true}}`; 200 `damaged` (reads served, writes refused); 503 `failed` (a write or flush
/// failed: nothing is served until a restart); 503 `unavailable` while a read of the
/// store fails (the database is unreachable: a load balancer sends requests elsewhere).
/// Nothing about where the store is: this route needs no token.
pub async fn healthz(State(st): State<AppState>) -> (StatusCode, Json<Value>) {
    use crate::engine::sqlite::Standing;
    let kind = st.store_kind();
    match st.engine().store().standing() {
        Standing::Sound => {}
        Standing::Damaged { reason } => {
            return (
                StatusCode::OK,
                Json(
                    json!({ "status": "damaged", "writes": false, "reason": reason, "store": { "kind": kind, "reachable": true } }),
                ),
            );
        }
        Standing::Failed { reason } => {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(
                    json!({ "status": "failed", "writes": false, "reason": reason, "store": { "kind": kind } }),
                ),
            );
        }
    }
    let read = tokio::time::timeout(HEALTH_TIMEOUT, st.read(|e| e.revision())).await;
    match read {
        Ok(Ok(_)) => (
            StatusCode::OK,
            Json(json!({ "status": "ok", "store": { "kind": kind, "reachable": true } })),
        ),
        _ => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({ "status": "unavailable", "store": { "kind": kind, "reachable": false } })),
        ),
    }
}

/// How long `/healthz` waits for the store before calling it unreachable.
const HEALTH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);

pub async fn openapi() -> Json<Value> {
    Json(openapi::document())
}

pub async fn no_route(uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        ErrorCode::NotFound,
        format!("no route {}", uri.path()),
    )
}

pub async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        ErrorCode::MethodNotAllowed,
        format!("{method} is not served on {}", uri.path()),
    )
}

/// Who the token is, and the projects it may see: what a client shows and picks from.
pub async fn me(State(st): State<AppState>, caller: Caller) -> Json<Value> {
    let user = &caller.user;
    Json(json!({
        "user": user.id,
        "kind": if user.role.is_some() { "agent" } else { "person" },
        "role": user.role.map(|r| r.as_str()),
        "projects": st.directory().projects_of(user),
    }))
}
