//! One call of the HTTP source: built with the token, sent, and its answer read — a
//! success body, the server's own refusal rebuilt as the same [`OqError`] the engine
//! gives, or a failure to reach the server.
//!
//! The one line drawn here: only "the server cannot be reached" (a connection that
//! fails or times out, or a gateway's bare 502/503/504) is `Source{Unreachable}`, what
//! takes a remote source offline and queues answers. A server that answered — even a
//! 5xx about its upstream (`upstream_unreachable`, `upstream_refused`,
//! `upstream_uncertain`: [`OqError::Upstream`]) — is reachable, and what it said is what
//! the doors report. [`gateway_status`] reads a gateway's status back out of such an
//! `unreachable`, so the TUI can name it ("bad gateway (502)") instead of "offline".

use reqwest::{Method, RequestBuilder, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::http::HttpSource;
use crate::domain::{ErrorCode, OqError};
use crate::wire::ErrorBody;

impl HttpSource {
    pub(super) fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.token)
    }

    pub(super) async fn send<T: DeserializeOwned>(
        &self,
        req: RequestBuilder,
    ) -> Result<T, OqError> {
        let (status, bytes) = self.fetch(req).await?;
        self.decode(status, &bytes)
    }

    /// The status and body of one call; only "could not reach" is an error here.
    pub(super) async fn fetch(
        &self,
        req: RequestBuilder,
    ) -> Result<(StatusCode, Vec<u8>), OqError> {
        let resp = req.send().await.map_err(|e| self.unreachable(e))?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(|e| self.unreachable(e))?;
        Ok((status, bytes.to_vec()))
    }

    /// A success body as `T`; a refusal rebuilt from its `{code, message}`.
    pub(super) fn decode<T: DeserializeOwned>(
        &self,
        status: StatusCode,
        bytes: &[u8],
    ) -> Result<T, OqError> {
        if status.is_success() {
            return serde_json::from_slice(bytes).map_err(|e| OqError::Source {
                code: ErrorCode::BadResponse,
                message: format!(
                    "{} answered something oq does not understand: {e}",
                    self.base
                ),
            });
        }
        if status == StatusCode::UNAUTHORIZED {
            return Err(OqError::Source {
                code: ErrorCode::Unauthorized,
                message: format!("{} refused the token", self.base),
            });
        }
        match serde_json::from_slice::<ErrorBody>(bytes) {
            // The server itself answered: its refusal, or its upstream's (`upstream_*`,
            // a 502 about a bridged OpenCode — not an outage of the server).
            Ok(body) => Err(OqError::from_wire(
                status.as_u16(),
                body.code,
                &body.message,
            )),
            // A gateway's own 502/503/504 without oq's body: whatever stands in front of
            // the server cannot reach it, so neither can we.
            Err(_) if matches!(status.as_u16(), 502..=504) => Err(OqError::Source {
                code: ErrorCode::Unreachable,
                message: format!(
                    "{} answered {status}{GATEWAY}: the server behind it cannot be reached",
                    self.base
                ),
            }),
            Err(_) => Err(OqError::Source {
                code: ErrorCode::BadResponse,
                message: format!("{} answered {status} without an error body", self.base),
            }),
        }
    }

    pub(super) async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, OqError> {
        self.send(self.request(Method::GET, path)).await
    }

    pub(super) async fn post<T: DeserializeOwned, B: Serialize + ?Sized>(
        &self,
        path: &str,
        body: &B,
    ) -> Result<T, OqError> {
        self.send(self.request(Method::POST, path).json(body)).await
    }

    pub(super) fn unreachable(&self, e: reqwest::Error) -> OqError {
        OqError::Source {
            code: ErrorCode::Unreachable,
            message: format!("cannot reach {}: {}", self.base, root_cause(&e)),
        }
    }
}

/// What marks a gateway's bare 5xx in its message, after the status.
const GATEWAY: &str = " without oq's error body";

/// The status of a gateway's bare 502/503/504 in front of the server, when `e` is one
/// (an `unreachable` like a failed connection, but the screen names the gateway).
pub fn gateway_status(e: &OqError) -> Option<u16> {
    let OqError::Source {
        code: ErrorCode::Unreachable,
        message,
    } = e
    else {
        return None;
    };
    let (head, _) = message.split_once(GATEWAY)?;
    let (_, status) = head.rsplit_once(" answered ")?;
    status
        .split(' ')
        .next()?
        .parse()
        .ok()
        .filter(|s| (502..=504).contains(s))
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// Path segments are ids checked by the domain; encode anyway so a typo cannot reach
/// another route.
pub(super) fn seg(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
