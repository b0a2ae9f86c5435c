//! Extractors that refuse in our error format: axum's own rejections are plain text, and a
//! client must be able to read every refusal as `{code, message}`.

use axum::body::Bytes;
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use crate::domain::ErrorCode;

/// The request body cap: the longest legal body (a 500-character question, a 300-character
/// suggestion, 150 ids) is a few KiB; anything near this is not a client of ours.
pub const BODY_LIMIT: usize = 64 * 1024;

/// A JSON body; wrong JSON, wrong types and unknown fields are 422 `invalid_body` naming
/// the problem, a missing JSON content type 415, an oversize body 413. The body must be a
/// JSON object: serde's derived structs would also read an array by position
/// (`["an answer"]` as `{resposta}`), which no client of ours means.
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        if !json_content_type(req.headers()) {
            return Err(json_rejection(JsonRejection::MissingJsonContentType(
                Default::default(),
            )));
        }
        // The accept loop says how long a body may take; a trickle is cut, not waited on.
        let timeout = req
            .extensions()
            .get::<super::listen::BodyReadTimeout>()
            .map(|t| t.0);
        let read = Bytes::from_request(req, state);
        let bytes = match timeout {
            None => read.await,
            Some(t) => tokio::time::timeout(t, read)
                .await
                .map_err(|_| body_timeout(t))?,
        }
        .map_err(|e| json_rejection(JsonRejection::from(e)))?;
        if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return Err(ApiError::invalid_body(
                "the body must be a JSON object ({…}), not an array, a string or a number",
            ));
        }
        match axum::Json::<T>::from_bytes(&bytes) {
            Ok(axum::Json(v)) => Ok(ApiJson(v)),
            Err(rejection) => Err(json_rejection(rejection)),
        }
    }
}

/// A body that did not arrive within `t` (`[limits] body_read_seconds`): 408, and the
/// connection is closed after it (the rest of the body is never read).
pub fn body_timeout(t: std::time::Duration) -> ApiError {
    ApiError::new(
        StatusCode::REQUEST_TIMEOUT,
        ErrorCode::BodyTimeout,
        format!(
            "the request body did not arrive within {} s (limits.body_read_seconds)",
            t.as_secs()
        ),
    )
}

/// A body over [`BODY_LIMIT`]: 413.
pub fn body_too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::BodyTooLarge,
        format!("the request body is larger than {BODY_LIMIT} bytes"),
    )
}

/// `application/json` or `application/…+json`, as axum's own `Json` accepts.
fn json_content_type(headers: &axum::http::HeaderMap) -> bool {
    let Some(value) = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

fn json_rejection(r: JsonRejection) -> ApiError {
    match r {
        JsonRejection::JsonDataError(e) => ApiError::invalid_body(e.body_text()),
        JsonRejection::JsonSyntaxError(e) => ApiError::invalid_body(e.body_text()),
        JsonRejection::MissingJsonContentType(_) => ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::UnsupportedMediaType,
            "send the body as JSON with Content-Type: application/json",
        ),
        other if other.status() == StatusCode::PAYLOAD_TOO_LARGE => body_too_large(),
        other => ApiError::new(
            StatusCode::BAD_REQUEST,
            ErrorCode::InvalidBody,
            other.body_text(),
        ),
    }
}

/// Path parameters; a malformed segment is a 404 like any unknown id.
pub struct ApiPath<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Path::<T>::from_request_parts(parts, state)
            .await
            .map(|Path(v)| ApiPath(v))
            .map_err(|e: PathRejection| {
                ApiError::new(StatusCode::NOT_FOUND, ErrorCode::NotFound, e.body_text())
            })
    }
}

/// Query parameters; a malformed query is 422 `invalid_query`.
pub struct ApiQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for ApiQuery<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(v)| ApiQuery(v))
            .map_err(|e: QueryRejection| {
                ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    ErrorCode::InvalidQuery,
                    e.body_text(),
                )
            })
    }
}
