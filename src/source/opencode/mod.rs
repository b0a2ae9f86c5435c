//! A real OpenCode server as a source: `--source opencode+http://HOST:PORT` with one or
//! more `--directory DIR` (SPEC §5, direct).
//!
//! Every question is a pending OpenCode request of one of the directories
//! (`GET /question?directory=`), shown to the configured person (`--as`, else the OS
//! user), who alone answers here. The project of an item is its directory.
//!
//! - Answers are checked locally against the request's options (the same rules as the
//!   engine: [`crate::domain::answering::decide_answer`]) before anything is posted —
//!   OpenCode validates nothing. A lone question with free text also takes `resposta`.
//! - A 404 on reply or reject means someone settled the request elsewhere first: a
//!   conflict `question_closed` saying so.
//! - Orphans: a request whose session was aborted (a `MessageAbortedError` seen on the
//!   event stream while following), or whose session is no longer busy
//!   (`GET /session/status`), is listed with `orphaned: true`; dismiss it to clear it.
//! - Status filters: `open` is what OpenCode lists as pending now. OpenCode keeps no
//!   history of settled requests, so `answered` (and the settled part of `all`) is what
//!   *this process* answered or dismissed during its run — empty for a fresh `oq list`.
//! - Declaring, readiness, verdicts, waiting, dev-context and sessions are oq's own
//!   notions: refused as `not_supported`.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{Identity, Source};

mod follow;

use crate::domain::DecisionSource;
use crate::domain::answering::decide_answer;
use crate::domain::choices::{ClosedReason, Closure};
use crate::domain::readiness::ReadinessGate;
use crate::domain::{
    Actor, Answer, AnswerInput, DeclareInput, ErrorCode, OqError, Role, SessionKind,
};
use crate::engine::sqlite::now_ms;
use crate::engine::{ListQuery, StatusFilter, VerdictInput};
use crate::opencode::{Client, Request, Settled};
use crate::source::filter;
use crate::wire::{
    DevContext, QuestionItem, QuestionList, Readiness, SessionItem, VerdictReply, WaitingItem,
};
use follow::fingerprint;

/// The scheme prefix that selects this source.
pub const SCHEME: &str = "opencode+";

/// How long the event follower waits before reconnecting.
const RECONNECT: Duration = Duration::from_secs(1);

#[derive(Clone)]
pub struct OpencodeSource {
    client: Client,
    directories: Vec<String>,
    person: String,
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    /// When this process first saw each request (OpenCode's list carries no time).
    seen: HashMap<String, i64>,
    /// What this process answered or dismissed, in order.
    settled: Vec<QuestionItem>,
    /// Sessions seen aborted (`session.error` `MessageAbortedError`) on the event stream.
    aborted: HashSet<String>,
    /// The pending set as last seen, and the revision that grows when it changes.
    fingerprint: u64,
    revision: i64,
    following: bool,
}

/// A pending request and where it lives.
struct Pending {
    directory: String,
    request: Request,
    orphaned: bool,
}

fn not_supported(what: &str) -> OqError {
    OqError::invalid(
        ErrorCode::NotSupported,
        format!(
            "{what} is not available on an OpenCode source: OpenCode's agents ask, oq answers \
             or dismisses"
        ),
    )
}

impl Source for OpencodeSource {
    fn describe(&self) -> String {
        format!("{SCHEME}{}", self.client.base())
    }

    async fn identity(&self) -> Result<Identity, OqError> {
        Ok(Identity {
            user: self.person.clone(),
            projects: self.directories.clone(),
        })
    }

    async fn list(
        &self,
        project: Option<&str>,
        query: &ListQuery,
    ) -> Result<QuestionList, OqError> {
        let dirs = self.scope(project)?;
        let status = query.status;
        let mut items: Vec<QuestionItem> = Vec::new();
        if status.admits(None) {
            let pending = self.pending(&dirs).await?;
            items.extend(pending.iter().map(|p| self.item(p)));
        }
        if status != StatusFilter::Open {
            let st = self.state();
            items.extend(
                st.settled
                    .iter()
                    .filter(|q| dirs.contains(&q.project_id.as_str()))
                    .cloned(),
            );
        }
        // OpenCode lists everything pending at once: filter, search, sort and page here.
        filter::apply(items, query)
    }

    async fn question(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> Result<QuestionItem, OqError> {
        if let Some(p) = self.find(project, question_id).await? {
            return Ok(self.item(&p));
        }
        self.settled(question_id)
            .ok_or_else(|| self.missing(question_id))
    }

    async fn declare(
        &self,
        _project: &str,
        _agent: Option<Role>,
        _input: &DeclareInput,
    ) -> Result<QuestionItem, OqError> {
        Err(not_supported("declaring a question"))
    }

    async fn answer(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
    ) -> Result<QuestionItem, OqError> {
        let Some(p) = self.find(project, question_id).await? else {
            return Err(self.not_settleable(question_id));
        };
        let seen_at = self.item(&p).created_at;
        let mut q = p
            .request
            .to_question(&self.placement(&p.directory, seen_at));
        q.orphaned = p.orphaned;
        // The engine's rules: one form of answer, labels and `multiple` checked, free text
        // where allowed. A refusal here posts nothing.
        let decided = decide_answer(&q, &Actor::person(&self.person), input)?;
        match self
            .client
            .reply(&p.request.id, &p.directory, &decided.choices)
            .await?
        {
            Settled::Elsewhere => Err(self.settled_elsewhere(question_id)),
            Settled::Now => {
                let at = now_ms();
                q.answer = Some(Answer {
                    resposta: decided.resposta,
                    aceitou_sugestao: false,
                    decision_event_id: format!("opencode:{}", p.request.id),
                    respondida_por: self.person.clone(),
                    answered_at: at,
                    choices: decided.choices,
                    idempotency_key: None,
                    decision_source: DecisionSource::Person,
                });
                let item = QuestionItem::from_question(&q, &Actor::person(&self.person));
                self.record(item.clone());
                Ok(item)
            }
        }
    }

    async fn dismiss(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> Result<QuestionItem, OqError> {
        let Some(p) = self.find(project, question_id).await? else {
            return Err(self.not_settleable(question_id));
        };
        let seen_at = self.item(&p).created_at;
        match self.client.reject(&p.request.id, &p.directory).await? {
            Settled::Elsewhere => Err(self.settled_elsewhere(question_id)),
            Settled::Now => {
                let mut q = p
                    .request
                    .to_question(&self.placement(&p.directory, seen_at));
                q.orphaned = p.orphaned;
                q.closure = Some(Closure {
                    reason: ClosedReason::Rejected,
                    by: self.person.clone(),
                    at: now_ms(),
                    decision_source: DecisionSource::Dismissed,
                });
                let item = QuestionItem::from_question(&q, &Actor::person(&self.person));
                self.record(item.clone());
                Ok(item)
            }
        }
    }

    async fn readiness(
        &self,
        _project: &str,
        _record: Option<ReadinessGate>,
    ) -> Result<Readiness, OqError> {
        Err(not_supported("readiness"))
    }

    async fn verdict(
        &self,
        _project: &str,
        _agent: Option<Role>,
        _task_id: &str,
        _input: &VerdictInput,
    ) -> Result<VerdictReply, OqError> {
        Err(not_supported("a QA verdict"))
    }

    async fn waiting(&self, _project: Option<&str>) -> Result<Vec<WaitingItem>, OqError> {
        Err(not_supported("\"waiting for you\" (tasks)"))
    }

    async fn dev_context(&self, _project: &str, _task_id: &str) -> Result<DevContext, OqError> {
        Err(not_supported("the dev-context"))
    }

    async fn start_session(
        &self,
        _project: &str,
        _kind: SessionKind,
        _session_id: Option<&str>,
    ) -> Result<SessionItem, OqError> {
        Err(not_supported("starting a session"))
    }

    async fn default_session(&self, _project: &str) -> Result<Option<String>, OqError> {
        Ok(None)
    }

    /// Polls the pending set of the directories (and follows their event streams in the
    /// background): the number grows whenever the set or an orphan mark changes, and
    /// whenever this process answers or dismisses.
    async fn revision(&self, project: Option<&str>) -> Result<i64, OqError> {
        self.follow();
        let dirs = self.scope(project)?;
        let pending = self.pending(&dirs).await?;
        let fp = fingerprint(&pending);
        let mut st = self.state();
        if st.fingerprint != fp {
            st.fingerprint = fp;
            st.revision += 1;
        }
        Ok(st.revision)
    }
}
