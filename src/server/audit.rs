//! The audit log: `<data_dir>/logs/audit.log` (0600), apart from the debug log and
//! whatever `OQ_LOG` says. One JSON line per request — its id (also the `X-Request-Id`
//! response header), the caller, the route, the status, the refusal's code, the remote
//! address — one per connection refused at the cap, and one per connection a clock cut
//! (`connection_cut` with its `clock`: `header_read`, `write`, or `idle` for one that never
//! sent a request). Bridge decisions (pause, resume, delegate, settings) are requests like
//! any other, so who made them is here too, as it is in the event log; an admin changing
//! an upstream's settings for its answerer is marked `onBehalfOf` that answerer.
//!
//! Invariant: a line is made only of ids, the route's template, codes and numbers. The
//! token, a password, a body or a query never reach it; a route that matched nothing is
//! logged without its path, which is whatever the client typed.

use std::fs::File;
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Mutex;

use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::header::{AUTHORIZATION, CACHE_CONTROL};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use serde::Serialize;

use super::AppState;
use crate::domain::ErrorCode;

/// Where audit lines go; `None` when the file could not be opened (said at start).
#[derive(Debug, Default)]
pub struct AuditLog(Option<Mutex<File>>);

/// One line.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Line<'a> {
    ts_ms: u128,
    event: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    caller: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    route: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<ErrorCode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    remote: Option<String>,
    /// The clock that cut a connection.
    #[serde(skip_serializing_if = "Option::is_none")]
    clock: Option<&'a str>,
    /// The people an admin's act was for (an upstream's answerer), when not the caller.
    #[serde(skip_serializing_if = "Option::is_none")]
    on_behalf_of: Option<&'a str>,
}

/// Set on a response by a handler whose caller acted for others (an admin changing an
/// upstream's settings for its answerer): their ids, comma-separated, for the audit line.
#[derive(Debug, Clone)]
pub struct OnBehalfOf(pub String);

impl AuditLog {
    /// Opens (appending) `<data_dir>/logs/audit.log`, 0600.
    pub fn open(data_dir: &Path) -> std::io::Result<AuditLog> {
        let dir = data_dir.join("logs");
        crate::private_fs::create_dir(&dir)?;
        let file = crate::private_fs::append(&dir.join("audit.log"))?;
        Ok(AuditLog(Some(Mutex::new(file))))
    }

    fn write(&self, line: &Line<'_>) {
        let Some(file) = &self.0 else { return };
        let Ok(mut text) = serde_json::to_string(line) else {
            return;
        };
        text.push('\n');
        let mut file = file.lock().unwrap_or_else(|p| p.into_inner());
        // A full disk loses audit lines, never requests.
        let _ = file.write_all(text.as_bytes());
    }

    /// A connection refused at `max_connections`.
    pub fn connection_refused(&self, remote: SocketAddr) {
        self.write(&Line {
            event: "connection_refused",
            code: Some(ErrorCode::TooManyConnections),
            status: Some(503),
            remote: Some(remote.to_string()),
            ..Line::new()
        });
    }

    /// A connection a clock cut (`header_read`, `write`, `idle`).
    pub fn connection_cut(&self, remote: SocketAddr, clock: &str) {
        self.write(&Line {
            event: "connection_cut",
            clock: Some(clock),
            remote: Some(remote.to_string()),
            ..Line::new()
        });
    }
}

impl Line<'_> {
    fn new() -> Self {
        Line {
            ts_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis()),
            event: "request",
            request_id: None,
            caller: None,
            method: None,
            route: None,
            status: None,
            code: None,
            remote: None,
            clock: None,
            on_behalf_of: None,
        }
    }
}

/// The middleware: a request id, `Cache-Control: no-store` on what a token fetched, and
/// the audit line once the response is made.
pub async fn audit(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let request_id = format!("r-{}", &crate::engine::ids::token()[..16]);
    let method = req.method().to_string();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_string());
    let remote = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.to_string());
    let token = req.headers().get(AUTHORIZATION).is_some();
    // Who called, as the extractor will decide it (the token itself goes no further).
    let caller = req
        .headers()
        .get(AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .and_then(|(_, t)| state.directory().authenticate(t.trim()))
        .map(|u| u.id.clone());
    let mut response = next.run(req).await;
    let status = response.status();
    let code = response.extensions().get::<ErrorCode>().copied();
    let behalf = response.extensions().get::<OnBehalfOf>().cloned();
    if status.is_server_error() {
        tracing::warn!(%method, route = route.as_deref().unwrap_or("-"), status = status.as_u16(), "request failed");
    } else {
        tracing::debug!(%method, route = route.as_deref().unwrap_or("-"), status = status.as_u16(), "request");
    }
    state.audit().write(&Line {
        request_id: Some(&request_id),
        caller: caller.as_deref(),
        method: Some(&method),
        route: Some(route.as_deref().unwrap_or("(no route)")),
        status: Some(status.as_u16()),
        code,
        remote,
        on_behalf_of: behalf.as_ref().map(|b| b.0.as_str()),
        ..Line::new()
    });
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&request_id) {
        headers.insert("x-request-id", v);
    }
    if token || caller.is_some() || status == StatusCode::UNAUTHORIZED {
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}
