//! An `oq serve` server as a source: the HTTP API of SPEC §3 with a bearer token.
//!
//! Refusals come back as `{code, message}` and are rebuilt into the same [`OqError`] the
//! local engine gives, so the doors print the same line and exit with the same code.
//! A server that cannot be reached, or refuses the token, is a `Source` error (exit 10).

use std::collections::HashMap;
use std::time::Duration;

use reqwest::{Client, Method, StatusCode};
use tokio::sync::OnceCell;

use super::http_call::seg;
use super::http_feed::{self, Feed};
use super::{Identity, Source};
use crate::domain::readiness::ReadinessGate;
use crate::domain::{AnswerInput, DeclareInput, ErrorCode, OqError, Role, SessionKind};
use crate::engine::sqlite::now_ms;
use crate::engine::{DecisionQuery, ListQuery, VerdictInput};
use crate::wire::auto_delegate::CommandReply;
use crate::wire::{
    AutoCommand, AutoDelegate, DelegateSnapshot, DevContext, QuestionItem, QuestionList, Readiness,
    SessionItem, VerdictReply, WaitingItem, WaitingList,
};

/// Long enough for a loaded server, short enough that a dead one is reported while the
/// person still waits at the prompt.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Clone)]
pub struct HttpSource {
    pub(super) base: String,
    pub(super) token: String,
    pub(super) client: Client,
    identity: std::sync::Arc<OnceCell<Identity>>,
    /// The followed event streams, one per project, with the revision last returned.
    feeds: std::sync::Arc<std::sync::Mutex<Feeds>>,
}

/// Per project: its followed event stream and the revision this source last returned.
type Feeds = HashMap<String, (Feed, Option<i64>)>;

/// `GET /me`: who the token is and which projects it sees.
#[derive(Debug, serde::Deserialize)]
struct Me {
    user: String,
    projects: Vec<String>,
}

#[derive(Debug, serde::Deserialize)]
struct RevisionBody {
    revision: i64,
}

impl HttpSource {
    /// `base` is `http://host:port` (a trailing slash is fine).
    pub fn new(base: &str, token: &str) -> Result<Self, OqError> {
        HttpSource::with_ca(base, token, None)
    }

    /// [`HttpSource::new`]; an `https://` server is checked against the CA certificate
    /// in the PEM file `ca` alone when given, else against the system's roots.
    pub fn with_ca(base: &str, token: &str, ca: Option<&std::path::Path>) -> Result<Self, OqError> {
        let base = base.trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(OqError::invalid(
                ErrorCode::UnknownSource,
                format!("source {base:?}: expected http://HOST:PORT"),
            ));
        }
        if token.is_empty() {
            return Err(OqError::Source {
                code: ErrorCode::Unauthorized,
                message: format!(
                    "{base} needs a token: --token, OQ_TOKEN, or a profile in the config file"
                ),
            });
        }
        let client = client_builder(ca)?
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| OqError::Internal(format!("http client: {e}")))?;
        Ok(HttpSource {
            base,
            token: token.to_string(),
            client,
            identity: Default::default(),
            feeds: Default::default(),
        })
    }

    /// The project's followed event stream (started on first use) and the revision this
    /// source last returned for it.
    fn feed(&self, project: &str) -> (tokio::sync::watch::Receiver<Option<i64>>, Option<i64>) {
        let mut feeds = self.feeds.lock().unwrap_or_else(|p| p.into_inner());
        let (feed, seen) = feeds.entry(project.to_string()).or_insert_with(|| {
            let url = format!("{}/projects/{}/events", self.base, seg(project));
            (
                Feed::start(self.client.clone(), url, self.token.clone()),
                None,
            )
        });
        (feed.latest.clone(), *seen)
    }

    /// `POST …/open-questions/{id}/answer`, with an `Idempotency-Key` when given.
    async fn post_answer(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
        key: Option<&str>,
    ) -> Result<QuestionItem, OqError> {
        let project = self.project(project).await?;
        let path = format!(
            "/projects/{}/open-questions/{}/answer",
            seg(&project),
            seg(question_id)
        );
        let mut req = self.request(Method::POST, &path).json(input);
        if let Some(key) = key {
            req = req.header("idempotency-key", key);
        }
        self.send(req).await
    }

    fn remember(&self, project: &str, revision: i64) {
        let mut feeds = self.feeds.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, seen)) = feeds.get_mut(project) {
            *seen = Some(revision);
        }
    }

    /// A project-scoped route needs a project: the one given, else the caller's only one.
    async fn project(&self, project: Option<&str>) -> Result<String, OqError> {
        if let Some(p) = project {
            return Ok(p.to_string());
        }
        let id = self.identity().await?;
        match id.projects.as_slice() {
            [only] => Ok(only.clone()),
            [] => Err(OqError::invalid(
                ErrorCode::ProjectRequired,
                "this token belongs to no project on the server",
            )),
            many => Err(OqError::invalid(
                ErrorCode::ProjectRequired,
                format!(
                    "several projects on the server; name one with --project ({})",
                    many.join(", ")
                ),
            )),
        }
    }
}

/// A client for an `oq serve`: TLS by ring, an `https://` server checked against the CA
/// certificate in the PEM file `ca` alone when given, else the system's roots. No
/// timeout: each caller sets its own (`oq mcp --source` waits as long as a tool may).
pub fn client_builder(ca: Option<&std::path::Path>) -> Result<reqwest::ClientBuilder, OqError> {
    // reqwest needs a TLS provider even for plain http: one process-wide, ring (no
    // OpenSSL on the hosts users SSH into, no cmake to build). Already installed is fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = Client::builder();
    if let Some(ca) = ca {
        let bad = |e: String| {
            OqError::invalid(
                ErrorCode::InvalidConfig,
                format!("ca {}: {e}", ca.display()),
            )
        };
        let pem = std::fs::read(ca).map_err(|e| bad(e.to_string()))?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| bad(e.to_string()))?;
        if certs.is_empty() {
            return Err(bad("no certificate in it".into()));
        }
        builder = builder.tls_certs_only(certs);
    }
    Ok(builder)
}

impl Source for HttpSource {
    fn describe(&self) -> String {
        self.base.clone()
    }

    async fn identity(&self) -> Result<Identity, OqError> {
        let id = self
            .identity
            .get_or_try_init(|| async {
                let me: Me = self.get("/me").await?;
                Ok::<_, OqError>(Identity {
                    user: me.user,
                    projects: me.projects,
                })
            })
            .await?;
        Ok(id.clone())
    }

    async fn list(&self, project: Option<&str>, list: &ListQuery) -> Result<QuestionList, OqError> {
        let project = self.project(project).await?;
        let query = super::http_query::list_params(list);
        self.send(
            self.request(
                Method::GET,
                &format!("/projects/{}/open-questions", seg(&project)),
            )
            .query(&query),
        )
        .await
    }

    async fn decisions(
        &self,
        project: Option<&str>,
        q: &DecisionQuery,
    ) -> Result<QuestionList, OqError> {
        let project = self.project(project).await?;
        let query = super::http_query::decisions_params(q);
        self.send(
            self.request(
                Method::GET,
                &format!("/projects/{}/decisions", seg(&project)),
            )
            .query(&query),
        )
        .await
    }

    async fn question(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> Result<QuestionItem, OqError> {
        let project = self.project(project).await?;
        self.get(&format!(
            "/projects/{}/open-questions/{}",
            seg(&project),
            seg(question_id)
        ))
        .await
    }

    async fn declare(
        &self,
        project: &str,
        _agent: Option<Role>,
        input: &DeclareInput,
    ) -> Result<QuestionItem, OqError> {
        // The server knows the agent from the token; a local role flag does not apply.
        let path = format!("/projects/{}/open-questions", seg(project));
        let mut req = self.request(Method::POST, &path).json(input);
        if let Some(key) = &input.idempotency_key {
            req = req.header("idempotency-key", key);
        }
        self.send(req).await
    }

    async fn answer(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
    ) -> Result<QuestionItem, OqError> {
        self.post_answer(project, question_id, input, None).await
    }

    /// The same POST with an `Idempotency-Key` header: the server returns the first
    /// answer to a retry with the same key from the same person.
    async fn answer_once(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
        key: &str,
    ) -> Result<QuestionItem, OqError> {
        self.post_answer(project, question_id, input, Some(key))
            .await
    }

    async fn dismiss(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> Result<QuestionItem, OqError> {
        let project = self.project(project).await?;
        let path = super::http_query::question_path(&project, question_id, "dismiss");
        self.post(&path, &serde_json::json!({})).await
    }

    async fn snooze(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &crate::domain::snooze::SnoozeInput,
    ) -> Result<QuestionItem, OqError> {
        let project = self.project(project).await?;
        let path = super::http_query::question_path(&project, question_id, "snooze");
        self.post(&path, input).await
    }

    async fn unsnooze(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> Result<QuestionItem, OqError> {
        let project = self.project(project).await?;
        let path = super::http_query::question_path(&project, question_id, "unsnooze");
        self.post(&path, &serde_json::json!({})).await
    }

    async fn readiness(
        &self,
        project: &str,
        record: Option<ReadinessGate>,
    ) -> Result<Readiness, OqError> {
        match record {
            None => {
                self.get(&format!("/projects/{}/readiness", seg(project)))
                    .await
            }
            Some(gate) => {
                self.post(
                    &format!("/projects/{}/readiness/{}", seg(project), gate.as_str()),
                    &serde_json::json!({}),
                )
                .await
            }
        }
    }

    async fn verdict(
        &self,
        project: &str,
        _agent: Option<Role>,
        task_id: &str,
        input: &VerdictInput,
    ) -> Result<VerdictReply, OqError> {
        self.post(
            &format!(
                "/projects/{}/tasks/{}/qa-verdicts",
                seg(project),
                seg(task_id)
            ),
            input,
        )
        .await
    }

    async fn waiting(&self, project: Option<&str>) -> Result<Vec<WaitingItem>, OqError> {
        let project = self.project(project).await?;
        let list: WaitingList = self
            .get(&format!("/projects/{}/tasks?waiting=me", seg(&project)))
            .await?;
        Ok(list.items)
    }

    async fn dev_context(&self, project: &str, task_id: &str) -> Result<DevContext, OqError> {
        self.get(&format!(
            "/projects/{}/tasks/{}/dev-context",
            seg(project),
            seg(task_id)
        ))
        .await
    }

    async fn start_session(
        &self,
        project: &str,
        kind: SessionKind,
        session_id: Option<&str>,
    ) -> Result<SessionItem, OqError> {
        let mut body = serde_json::json!({ "kind": kind.as_str() });
        if let Some(id) = session_id {
            body["sessionId"] = id.into();
        }
        self.post(&format!("/projects/{}/sessions", seg(project)), &body)
            .await
    }

    async fn default_session(&self, _project: &str) -> Result<Option<String>, OqError> {
        Ok(None)
    }

    /// The next revision the project's event stream announces (waiting up to
    /// [`http_feed::LONG_POLL`] for one), or `GET …/revision` while the stream is not live.
    async fn revision(&self, project: Option<&str>) -> Result<i64, OqError> {
        let project = self.project(project).await?;
        let (mut latest, seen) = self.feed(&project);
        if let Some(revision) = http_feed::next_revision(&mut latest, seen).await {
            self.remember(&project, revision);
            return Ok(revision);
        }
        let body: RevisionBody = self
            .get(&format!("/projects/{}/revision", seg(&project)))
            .await?;
        Ok(body.revision)
    }

    /// `GET /api/question-auto-delegate`; a 404 (no bridge for this caller, or a server
    /// without the route) is `None`.
    async fn auto_delegate(&self) -> Result<Option<AutoDelegate>, OqError> {
        let (status, bytes) = self
            .fetch(self.request(Method::GET, "/api/question-auto-delegate"))
            .await?;
        if status == StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let body: DelegateSnapshot = self.decode(status, &bytes)?;
        Ok(Some(body.into_view(now_ms())))
    }

    async fn pause_auto(
        &self,
        question_id: &str,
        reason: crate::domain::delegation::PauseReason,
    ) -> Result<AutoCommand, OqError> {
        let path = format!(
            "/api/question-auto-delegate/requests/{}/pause",
            seg(question_id)
        );
        let body: CommandReply = self
            .post(&path, &serde_json::json!({ "reason": reason.as_str() }))
            .await?;
        Ok(body.into())
    }

    async fn resume_auto(&self, question_id: &str) -> Result<AutoCommand, OqError> {
        let path = format!(
            "/api/question-auto-delegate/requests/{}/resume",
            seg(question_id)
        );
        let body: CommandReply = self.post(&path, &serde_json::json!({})).await?;
        Ok(body.into())
    }

    async fn delegate_now(&self, question_id: &str) -> Result<AutoCommand, OqError> {
        let path = format!(
            "/api/question-auto-delegate/requests/{}/delegate",
            seg(question_id)
        );
        let body: CommandReply = self.post(&path, &serde_json::json!({})).await?;
        Ok(body.into())
    }
}
