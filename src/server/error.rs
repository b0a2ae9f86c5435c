//! Every refusal the server sends: `{"code", "message"}` with its status, never plain text.

use axum::Json;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::domain::{ErrorCode, OqError};
use crate::wire::ErrorBody;

/// A refusal on the wire. Built from an [`OqError`] (the domain's status and code) or for
/// what only HTTP can get wrong (no token, a body that is not JSON…).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: ErrorCode,
    pub message: String,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::UNAUTHORIZED, ErrorCode::Unauthorized, message)
    }

    pub fn invalid_body(message: impl Into<String>) -> Self {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::InvalidBody,
            message,
        )
    }

    /// The one answer for an unknown project and a project the caller is not in, so the
    /// response never tells them apart.
    pub fn project_not_found(project_id: &str) -> Self {
        OqError::not_found("project", project_id).into()
    }

    pub fn people_only(what: &str) -> Self {
        OqError::forbidden(
            ErrorCode::RoleNotAllowed,
            format!("{what} is for the project's members (people), not agents"),
        )
        .into()
    }
}

impl From<OqError> for ApiError {
    fn from(e: OqError) -> Self {
        ApiError {
            status: StatusCode::from_u16(e.http_status())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            code: e.code(),
            message: e.to_string(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Json(ErrorBody {
            code: self.code,
            message: self.message,
        });
        if self.status == StatusCode::UNAUTHORIZED {
            return (self.status, [(header::WWW_AUTHENTICATE, "Bearer")], body).into_response();
        }
        // Another process holds the store's write lock: worth retrying soon (issue 15).
        if self.code == ErrorCode::StoreBusy {
            return (self.status, [(header::RETRY_AFTER, "1")], body).into_response();
        }
        (self.status, body).into_response()
    }
}
