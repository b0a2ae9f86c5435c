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

/// Liveness, without a token: load balancers and `oq` clients probe it. It also says
/// when the store is damaged (200: reads are served, writes refused) or failed (503: a
/// write or flush failed, so the server serves nothing until it is restarted), with why.
pub async fn healthz(State(st): State<AppState>) -> (StatusCode, Json<Value>) {
    use crate::engine::sqlite::Standing;
    match st.engine().store().standing() {
        Standing::Sound => (StatusCode::OK, Json(json!({ "status": "ok" }))),
        Standing::Damaged { reason } => (
            StatusCode::OK,
            Json(json!({ "status": "damaged", "writes": false, "reason": reason })),
        ),
        Standing::Failed { reason } => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({ "status": "failed", "writes": false, "reason": reason })),
        ),
    }
}

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
