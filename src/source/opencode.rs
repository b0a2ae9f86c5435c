//! A real OpenCode server as a source: `--source opencode+http://HOST:PORT` with one or
//! more `--directory DIR` (SPEC §5, direct).
//!
//! Every question is a pending OpenCode request of one of the directories
//! (`GET /question?directory=`), shown to the configured person (`--as`, else the OS
//! user), who alone answers here. The project of an item is its directory.
//!
//! - Answers are checked locally against the request's options (the same rules as the
//!   engine: [`crate::domain::question::decide_answer`]) before anything is posted —
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
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use futures_util::StreamExt;

use super::{Identity, Source};
use crate::domain::choices::{ClosedReason, Closure};
use crate::domain::question::decide_answer;
use crate::domain::readiness::ReadinessGate;
use crate::domain::{Actor, Answer, AnswerInput, DeclareInput, OqError, Role, SessionKind};
use crate::engine::sqlite::now_ms;
use crate::engine::{StatusFilter, VerdictInput};
use crate::opencode::{Auth, Client, Placement, Request, Scope, Settled, events};
use crate::wire::{
    DevContext, QuestionItem, QuestionList, Readiness, SessionItem, VerdictReply, WaitingItem,
};

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
        "not_supported",
        format!(
            "{what} is not available on an OpenCode source: OpenCode's agents ask, oq answers \
             or dismisses"
        ),
    )
}

impl OpencodeSource {
    /// `url` is `opencode+http://HOST:PORT` (or without the prefix); `directories` are
    /// absolute paths, as OpenCode scopes them; `person` answers their questions.
    pub fn new(
        url: &str,
        directories: Vec<String>,
        person: &str,
        auth: Option<Auth>,
    ) -> Result<Self, OqError> {
        let base = url.strip_prefix(SCHEME).unwrap_or(url);
        let client = Client::new(base, auth)?;
        if directories.is_empty() {
            return Err(OqError::invalid(
                "directory_required",
                "an OpenCode source needs at least one --directory DIR",
            ));
        }
        for d in &directories {
            if !d.starts_with('/') {
                return Err(OqError::invalid(
                    "invalid_directory",
                    format!("--directory {d:?}: OpenCode scopes questions by absolute path"),
                ));
            }
        }
        let mut dirs: Vec<String> = Vec::new();
        for d in directories {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
        Ok(OpencodeSource {
            client,
            directories: dirs,
            person: person.to_string(),
            state: Arc::default(),
        })
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn directories(&self) -> &[String] {
        &self.directories
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a panic elsewhere; the data is plain bookkeeping.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn scope(&self, project: Option<&str>) -> Result<Vec<&str>, OqError> {
        match project {
            None => Ok(self.directories.iter().map(String::as_str).collect()),
            Some(p) => self
                .directories
                .iter()
                .find(|d| d.as_str() == p)
                .map(|d| vec![d.as_str()])
                .ok_or_else(|| {
                    OqError::invalid(
                        "unknown_directory",
                        format!(
                            "{p:?} is not one of this source's directories ({})",
                            self.directories.join(", ")
                        ),
                    )
                }),
        }
    }

    /// Every pending request of the directories, oldest seen first.
    async fn pending(&self, dirs: &[&str]) -> Result<Vec<Pending>, OqError> {
        let mut out = Vec::new();
        for dir in dirs {
            let requests = self.client.list(dir).await?;
            // Which sessions are still working; an older server without the route just
            // gives no orphan hint.
            let busy = if requests.is_empty() {
                None
            } else {
                self.client.session_status(dir).await.ok()
            };
            let now = now_ms();
            let mut st = self.state();
            for request in requests {
                st.seen.entry(request.id.clone()).or_insert(now);
                let not_busy = busy
                    .as_ref()
                    .is_some_and(|b| !b.get(&request.session_id).is_some_and(|s| s.is_busy()));
                let orphaned = not_busy || st.aborted.contains(&request.session_id);
                out.push(Pending {
                    directory: dir.to_string(),
                    request,
                    orphaned,
                });
            }
        }
        let st = self.state();
        out.sort_by_key(|p| (st.seen.get(&p.request.id).copied(), p.request.id.clone()));
        Ok(out)
    }

    fn item(&self, p: &Pending) -> QuestionItem {
        let seen_at = self
            .state()
            .seen
            .get(&p.request.id)
            .copied()
            .unwrap_or_else(now_ms);
        p.request
            .to_item(&self.placement(&p.directory, seen_at), p.orphaned)
    }

    fn placement<'a>(&'a self, directory: &'a str, seen_at: i64) -> Placement<'a> {
        Placement {
            upstream_name: self.client.base(),
            directory,
            person: &self.person,
            seen_at,
        }
    }

    async fn find(&self, project: Option<&str>, id: &str) -> Result<Option<Pending>, OqError> {
        let dirs = self.scope(project)?;
        Ok(self
            .pending(&dirs)
            .await?
            .into_iter()
            .find(|p| p.request.id == id))
    }

    fn settled(&self, id: &str) -> Option<QuestionItem> {
        self.state()
            .settled
            .iter()
            .find(|q| q.question_id == id)
            .cloned()
    }

    fn missing(&self, id: &str) -> OqError {
        if let Some(done) = self.settled(id) {
            return if done.answer.is_some() {
                OqError::AlreadyAnswered {
                    question_id: id.into(),
                }
            } else {
                OqError::conflict(
                    "question_closed",
                    format!("question {id} was already dismissed"),
                )
            };
        }
        OqError::NotFound {
            message: format!(
                "question {id} is not pending in OpenCode at {} ({})",
                self.client.base(),
                self.directories.join(", ")
            ),
        }
    }

    fn settled_elsewhere(&self, id: &str) -> OqError {
        OqError::conflict(
            "question_closed",
            format!(
                "question {id} was already settled in OpenCode (answered, dismissed or gone \
                 elsewhere); nothing was changed"
            ),
        )
    }

    fn record(&self, item: QuestionItem) {
        let mut st = self.state();
        st.settled.retain(|q| q.question_id != item.question_id);
        st.settled.push(item);
        st.revision += 1;
    }

    /// Follows each directory's event stream in the background (once), to learn which
    /// sessions were aborted and to move the revision on question events. Needs a tokio
    /// runtime; without one, polling alone serves. Ends when the source is dropped.
    fn follow(&self) {
        {
            let mut st = self.state();
            if st.following {
                return;
            }
            st.following = true;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        for dir in &self.directories {
            let client = self.client.clone();
            let dir = dir.clone();
            let weak = Arc::downgrade(&self.state);
            handle.spawn(follow_directory(client, dir, weak));
        }
    }
}

async fn follow_directory(client: Client, dir: String, state: Weak<Mutex<State>>) {
    loop {
        if state.strong_count() == 0 {
            return;
        }
        if let Ok(mut stream) = events::subscribe(&client, Scope::Directory(&dir)).await {
            while let Some(Ok(env)) = stream.next().await {
                let Some(state) = state.upgrade() else {
                    return;
                };
                let mut st = state.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(session) = env.event.aborted_session() {
                    st.aborted.insert(session.to_string());
                    st.revision += 1;
                }
                match env.event {
                    events::Event::QuestionAsked(_)
                    | events::Event::QuestionReplied { .. }
                    | events::Event::QuestionRejected { .. } => st.revision += 1,
                    _ => {}
                }
            }
        }
        tokio::time::sleep(RECONNECT).await;
    }
}

fn fingerprint(pending: &[Pending]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for p in pending {
        p.request.id.hash(&mut h);
        p.orphaned.hash(&mut h);
    }
    h.finish()
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
        status: StatusFilter,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<QuestionList, OqError> {
        let dirs = self.scope(project)?;
        let mut items: Vec<QuestionItem> = Vec::new();
        if matches!(status, StatusFilter::Open | StatusFilter::All) {
            let pending = self.pending(&dirs).await?;
            items.extend(pending.iter().map(|p| self.item(p)));
        }
        if matches!(status, StatusFilter::Answered | StatusFilter::All) {
            let st = self.state();
            items.extend(
                st.settled
                    .iter()
                    .filter(|q| dirs.contains(&q.project_id.as_str()))
                    .filter(|q| status == StatusFilter::All || q.answer.is_some())
                    .cloned(),
            );
        }
        let start = match cursor {
            None => 0,
            Some(c) => c.parse::<usize>().map_err(|_| {
                OqError::invalid("invalid_cursor", format!("cursor {c:?} is not one of oq's"))
            })?,
        };
        let limit = limit.clamp(1, 50);
        let total = items.len() as u64;
        let page: Vec<QuestionItem> = items.into_iter().skip(start).take(limit).collect();
        let next = start + page.len();
        Ok(QuestionList {
            cursor: (u64::try_from(next).unwrap_or(u64::MAX) < total).then(|| next.to_string()),
            items: page,
            total,
        })
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
            return Err(self.missing(question_id));
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
            return Err(self.missing(question_id));
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
