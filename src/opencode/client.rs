//! OpenCode's HTTP API as oq uses it: the question routes, the session routes a test or
//! a bridge needs, and health. Every route is scoped by `?directory=`.
//!
//! A 404 on reply or reject means the request was already settled elsewhere (replied,
//! rejected, or gone with its session): [`Settled::Elsewhere`], not an error. A server
//! that cannot be reached or refuses the credentials is [`OqError::Source`] (exit 10).
//! The password is never logged nor put in a message; [`Auth`]'s `Debug` hides it.

use std::fmt;
use std::time::Duration;

use reqwest::{Method, RequestBuilder, StatusCode};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::types::{Message, Request, Session, SessionStatus, ToolPart};
use crate::domain::{ErrorCode, OqError};

/// Long enough for a loaded server, short enough that a dead one is reported while the
/// person still waits.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);

/// The user name OpenCode's basic auth expects unless `OPENCODE_SERVER_USERNAME` says
/// otherwise.
pub const DEFAULT_USERNAME: &str = "opencode";

/// Basic-auth credentials for `opencode serve` started with `OPENCODE_SERVER_PASSWORD`.
#[derive(Clone, PartialEq, Eq)]
pub struct Auth {
    pub username: String,
    pub password: String,
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Auth")
            .field("username", &self.username)
            .field("password", &"<hidden>")
            .finish()
    }
}

impl Auth {
    /// `password` (from a config file) or else the environment: `OPENCODE_SERVER_PASSWORD`,
    /// then `OC_PASSWORD`. The user name: `username`, else `OPENCODE_SERVER_USERNAME`,
    /// else `opencode`. No password anywhere: no auth.
    pub fn resolve(username: Option<&str>, password: Option<&str>) -> Option<Auth> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let password = password
            .map(str::to_string)
            .filter(|p| !p.is_empty())
            .or_else(|| env("OPENCODE_SERVER_PASSWORD"))
            .or_else(|| env("OC_PASSWORD"))?;
        let username = username
            .map(str::to_string)
            .filter(|u| !u.is_empty())
            .or_else(|| env("OPENCODE_SERVER_USERNAME"))
            .unwrap_or_else(|| DEFAULT_USERNAME.into());
        Some(Auth { username, password })
    }
}

/// How a reply or reject ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// OpenCode took it (`200 true`).
    Now,
    /// 404: the request was no longer pending — settled elsewhere before us.
    Elsewhere,
}

#[derive(Debug, Serialize)]
struct ReplyBody<'a> {
    answers: &'a [Vec<String>],
}

#[derive(Debug, Deserialize)]
struct Health {
    #[serde(default)]
    healthy: bool,
    #[serde(default)]
    version: String,
}

#[derive(Clone)]
pub struct Client {
    base: String,
    auth: Option<Auth>,
    http: reqwest::Client,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("opencode::Client")
            .field("base", &self.base)
            .field("auth", &self.auth)
            .finish()
    }
}

impl Client {
    /// `base` is `http://host:port` (a trailing slash is fine).
    pub fn new(base: &str, auth: Option<Auth>) -> Result<Self, OqError> {
        let base = base.trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(OqError::invalid(
                ErrorCode::UnknownSource,
                format!("OpenCode server {base:?}: expected http://HOST:PORT"),
            ));
        }
        // reqwest needs a TLS provider even for plain http (see source::http).
        let _ = rustls::crypto::ring::default_provider().install_default();
        // No overall timeout on the client: the event stream is long-lived. Each plain
        // request sets its own.
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|e| OqError::Internal(format!("http client: {e}")))?;
        Ok(Client { base, auth, http })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// A request to `path`, scoped to `directory` when given, with the credentials.
    pub(crate) fn request(
        &self,
        method: Method,
        path: &str,
        directory: Option<&str>,
    ) -> RequestBuilder {
        let mut req = self.http.request(method, format!("{}{path}", self.base));
        if let Some(d) = directory {
            req = req.query(&[("directory", d)]);
        }
        if let Some(a) = &self.auth {
            req = req.basic_auth(&a.username, Some(&a.password));
        }
        req
    }

    /// Sends with the plain timeout; returns the status and body of any answer.
    async fn exchange(&self, req: RequestBuilder) -> Result<(StatusCode, Vec<u8>), OqError> {
        self.exchange_within(req, REQUEST_TIMEOUT).await
    }

    async fn exchange_within(
        &self,
        req: RequestBuilder,
        timeout: Duration,
    ) -> Result<(StatusCode, Vec<u8>), OqError> {
        let resp = req
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| self.unreachable(&e))?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(|e| self.unreachable(&e))?;
        if status == StatusCode::UNAUTHORIZED {
            return Err(self.unauthorized());
        }
        Ok((status, bytes.to_vec()))
    }

    async fn json<T: DeserializeOwned>(&self, req: RequestBuilder) -> Result<T, OqError> {
        self.json_within(req, REQUEST_TIMEOUT).await
    }

    async fn json_within<T: DeserializeOwned>(
        &self,
        req: RequestBuilder,
        timeout: Duration,
    ) -> Result<T, OqError> {
        let (status, bytes) = self.exchange_within(req, timeout).await?;
        if !status.is_success() {
            return Err(self.refused(status, &bytes));
        }
        serde_json::from_slice(&bytes).map_err(|e| OqError::Source {
            code: ErrorCode::BadResponse,
            message: format!(
                "OpenCode at {} answered something oq does not understand: {e}",
                self.base
            ),
        })
    }

    pub(crate) fn unreachable(&self, e: &reqwest::Error) -> OqError {
        OqError::Source {
            code: ErrorCode::Unreachable,
            message: format!("cannot reach OpenCode at {}: {}", self.base, root_cause(e)),
        }
    }

    pub(crate) fn unauthorized(&self) -> OqError {
        OqError::Source {
            code: ErrorCode::Unauthorized,
            message: match &self.auth {
                Some(a) => format!(
                    "OpenCode at {} refused the credentials of user {:?}",
                    self.base, a.username
                ),
                None => format!(
                    "OpenCode at {} needs a password: OPENCODE_SERVER_PASSWORD, OC_PASSWORD, \
                     or `password` in a profile",
                    self.base
                ),
            },
        }
    }

    /// A refusal: OpenCode's `{message}` or `{data: {message}}` when it has one.
    fn refused(&self, status: StatusCode, bytes: &[u8]) -> OqError {
        let detail = serde_json::from_slice::<serde_json::Value>(bytes)
            .ok()
            .and_then(|v| {
                v.get("message")
                    .or_else(|| v.get("data").and_then(|d| d.get("message")))
                    .and_then(|m| m.as_str())
                    .map(str::to_string)
            })
            .unwrap_or_else(|| String::from_utf8_lossy(bytes).chars().take(200).collect());
        let message = format!("OpenCode at {} answered {status}: {detail}", self.base);
        match status.as_u16() {
            400 | 422 => OqError::invalid(ErrorCode::UpstreamRefused, message),
            404 => OqError::NotFound { message },
            409 => OqError::conflict(ErrorCode::UpstreamConflict, message),
            _ => OqError::Source {
                code: ErrorCode::UpstreamError,
                message,
            },
        }
    }

    /// `GET /global/health`: the server's version when healthy. A probe: it gives up
    /// after 2 s (a server still starting may accept and not answer yet).
    pub async fn health(&self) -> Result<String, OqError> {
        let h: Health = self
            .json_within(
                self.request(Method::GET, "/global/health", None),
                HEALTH_TIMEOUT,
            )
            .await?;
        if !h.healthy {
            return Err(OqError::Source {
                code: ErrorCode::Unhealthy,
                message: format!("OpenCode at {} says it is not healthy", self.base),
            });
        }
        Ok(h.version)
    }

    /// `GET /question?directory=`: the requests pending in that exact directory.
    pub async fn list(&self, directory: &str) -> Result<Vec<Request>, OqError> {
        self.json(self.request(Method::GET, "/question", Some(directory)))
            .await
    }

    /// `POST /question/:id/reply` with `{answers}`: one array per question of the request.
    /// OpenCode validates nothing; the caller checks the answers first.
    pub async fn reply(
        &self,
        request_id: &str,
        directory: &str,
        answers: &[Vec<String>],
    ) -> Result<Settled, OqError> {
        let req = self
            .request(
                Method::POST,
                &format!("/question/{}/reply", seg(request_id)),
                Some(directory),
            )
            .json(&ReplyBody { answers });
        self.settle(req).await
    }

    /// `POST /question/:id/reject`: the agent is told the user dismissed the question.
    pub async fn reject(&self, request_id: &str, directory: &str) -> Result<Settled, OqError> {
        let req = self.request(
            Method::POST,
            &format!("/question/{}/reject", seg(request_id)),
            Some(directory),
        );
        self.settle(req).await
    }

    async fn settle(&self, req: RequestBuilder) -> Result<Settled, OqError> {
        let (status, bytes) = self.exchange(req).await?;
        if status == StatusCode::NOT_FOUND {
            return Ok(Settled::Elsewhere);
        }
        if !status.is_success() {
            return Err(self.refused(status, &bytes));
        }
        Ok(Settled::Now)
    }

    /// `GET /session/:id`.
    pub async fn get_session(&self, id: &str, directory: &str) -> Result<Session, OqError> {
        self.json(self.request(
            Method::GET,
            &format!("/session/{}", seg(id)),
            Some(directory),
        ))
        .await
    }

    /// `GET /session/status`: the sessions of the directory that are not idle, by id.
    pub async fn session_status(
        &self,
        directory: &str,
    ) -> Result<std::collections::HashMap<String, SessionStatus>, OqError> {
        self.json(self.request(Method::GET, "/session/status", Some(directory)))
            .await
    }

    /// The `question` tool part of `call_id` in the session's messages
    /// (`GET /session/:id/message`): what became of a request once it is no longer
    /// pending. `Ok(None)`: no such session (404) or no such part.
    pub async fn tool_part(
        &self,
        session_id: &str,
        directory: &str,
        call_id: &str,
    ) -> Result<Option<ToolPart>, OqError> {
        let req = self.request(
            Method::GET,
            &format!("/session/{}/message", seg(session_id)),
            Some(directory),
        );
        let (status, bytes) = self.exchange(req).await?;
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        if !status.is_success() {
            return Err(self.refused(status, &bytes));
        }
        let messages: Vec<Message> =
            serde_json::from_slice(&bytes).map_err(|e| OqError::Source {
                code: ErrorCode::BadResponse,
                message: format!(
                    "OpenCode at {} sent messages oq does not understand: {e}",
                    self.base
                ),
            })?;
        Ok(messages
            .into_iter()
            .flat_map(|m| m.parts)
            .find(|p| p.kind == "tool" && p.call_id.as_deref() == Some(call_id)))
    }

    /// `POST /session`: a new session in the directory.
    pub async fn create_session(&self, directory: &str, title: &str) -> Result<Session, OqError> {
        self.json(
            self.request(Method::POST, "/session", Some(directory))
                .json(&serde_json::json!({ "title": title })),
        )
        .await
    }

    /// `POST /session/:id/prompt_async`: one text part; returns once OpenCode accepted it.
    pub async fn prompt_async(
        &self,
        session_id: &str,
        directory: &str,
        text: &str,
    ) -> Result<(), OqError> {
        let req = self
            .request(
                Method::POST,
                &format!("/session/{}/prompt_async", seg(session_id)),
                Some(directory),
            )
            .json(&serde_json::json!({ "parts": [{ "type": "text", "text": text }] }));
        let (status, bytes) = self.exchange(req).await?;
        if !status.is_success() {
            return Err(self.refused(status, &bytes));
        }
        Ok(())
    }

    /// `POST /session/:id/abort`: stops the agent; a pending question stays listed.
    pub async fn abort(&self, session_id: &str, directory: &str) -> Result<bool, OqError> {
        self.json(self.request(
            Method::POST,
            &format!("/session/{}/abort", seg(session_id)),
            Some(directory),
        ))
        .await
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// Ids go into the path; encode anything unusual so a typo cannot reach another route.
pub(crate) fn seg(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_never_shows_in_debug() {
        let a = Auth {
            username: "opencode".into(),
            password: "s3cret".into(),
        };
        let c = Client::new("http://127.0.0.1:1", Some(a)).expect("client");
        let shown = format!("{c:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("opencode"));
    }

    #[test]
    fn a_given_password_beats_the_environment_and_the_user_defaults() {
        let a = Auth::resolve(None, Some("p")).expect("auth");
        assert_eq!(a.password, "p");
        let a = Auth::resolve(Some("bob"), Some("p")).expect("auth");
        assert_eq!(a.username, "bob");
    }

    #[test]
    fn a_base_without_a_scheme_is_refused() {
        assert!(Client::new("127.0.0.1:4096", None).is_err());
    }
}
