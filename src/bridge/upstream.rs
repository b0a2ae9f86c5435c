//! One bridged OpenCode upstream: the auto-delegate machine behind a lock, the runner of
//! its effects, the import of requests into the engine, and the answer routing.
//!
//! The machine decides, this file does: `ArmTimer` becomes a tokio sleep carrying the
//! timer id, `PostReply`/`PostReject` a POST whose [`super::post`] outcome is fed back,
//! `ResolveSession` a `GET /session/:id`, `RecoverViaList` a scoped list, `NotifyTip` a
//! wake of the server's event streams, `PersistSetting` the settings file then
//! `ApplyEnabled`. The lock is a plain mutex never held across an await: every effect
//! that waits runs in a task of its own and feeds its outcome back through [`Upstream::feed`].
//!
//! Connection-bound resources (timer tasks, POST tasks, stream tasks, coverage) live in
//! [`Conn`] and are released only by [`super::connection`]'s one cleanup. What the
//! machine decided outlives a connection: the armed deadlines (`armed`) are re-spawned
//! after the next rehydrate, so no timer fires, and nothing is posted, while the upstream
//! is unreachable.
//!
//! Engine sync. Imported questions are recorded by the service actor `bridge:<name>` in
//! an oq session `oc-<name>-<sessionID>` authored by the upstream's answerer. A request
//! the machine settles (event, list, 404, our own auto/delegate reply) is closed
//! `External` in the engine — except while a person's manual POST for it is in flight:
//! that route records the person's answer (or dismissal) itself once upstream took it.
//!
//! Decision (auto-delegate in the log): when the timer's or a delegate's continuation is
//! accepted upstream, the question is closed `External` by the service — not recorded as
//! an answer. The engine's rule is that only the session's author answers, and the
//! person did not; a decision record "by ana" would be false. The snapshot keeps
//! `claimant: auto|delegate` for the request, and the closure names `bridge:<name>`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use super::delegate::{
    Claim, Delegate, DelegateConfig, Effect, Hints, Input, ListError, ListToken, QuestionInfo,
    QuestionOption, QuestionRequest, Refusal, UpstreamResult,
};
use super::{DelegateTip, TIP_TYPE, settings};
use crate::domain::choices::{ClosedReason, Upstream as UpstreamRef};
use crate::domain::question::decide_answer;
use crate::domain::{Actor, AnswerInput, DeclareInput, OqError, Question, SessionKind};
use crate::engine::NewQuestion;
use crate::engine::StatusFilter;
use crate::opencode::types::OPENCODE_AUTHOR;
use crate::opencode::{Auth, Client, Request};
use crate::server::AppState;
use crate::server::config::OpencodeUpstream;
use crate::server::error::ApiError;

/// Counters a test (or an operator's log) reads.
#[derive(Debug, Default)]
pub struct Stats {
    /// Upstream POSTs actually attempted (a reply or reject left for the network).
    pub posts: AtomicU64,
    /// Cleanups that released a connection (each connection at most once).
    pub releases: AtomicU64,
    /// Connection rounds begun (each must end in exactly one release).
    pub opened: AtomicU64,
    /// Connections that got their event streams (subscribed).
    pub connects: AtomicU64,
    /// Rehydrates completed (every directory listed, successfully or not).
    pub rehydrates: AtomicU64,
    /// User takeovers the machine reported (no goal loop runs here to act on them).
    pub takeovers: AtomicU64,
}

/// What one connection holds; dropped whole by the cleanup.
pub(crate) struct Conn {
    pub id: u64,
    /// Timer tasks by timer id.
    pub timers: HashMap<u64, AbortHandle>,
    /// POSTs in flight by claim id: the request and the claim they carry.
    pub posts: HashMap<u64, (String, Claim, AbortHandle)>,
    /// The event stream readers, one per directory.
    pub streams: Vec<AbortHandle>,
    /// Directories whose list succeeded on this connection.
    pub coverage: BTreeSet<String>,
}

impl Conn {
    pub fn new(id: u64) -> Self {
        Conn {
            id,
            timers: HashMap::new(),
            posts: HashMap::new(),
            streams: Vec::new(),
            coverage: BTreeSet::new(),
        }
    }
}

/// Where an imported request lives.
#[derive(Debug, Clone)]
pub(crate) struct Known {
    pub session_id: String,
}

pub(crate) struct Inner {
    pub delegate: Delegate,
    /// The machine's armed timers: timer id → (request id, due at). Kept across
    /// connections; a task runs for each only while connected.
    pub armed: BTreeMap<u64, (String, u64)>,
    pub conn: Option<Conn>,
    pub next_conn: u64,
    /// Requests imported into the engine and still open there, as far as we know.
    pub known: HashMap<String, Known>,
    /// Requests with a person's POST in flight: their route records the outcome.
    pub manual: HashSet<String>,
    /// Routes waiting for the outcome of their claim, by claim id.
    pub waiters: HashMap<u64, oneshot::Sender<UpstreamResult>>,
    /// oq sessions already created for OpenCode sessions.
    pub sessions: HashSet<String>,
}

pub struct Upstream {
    pub(crate) cfg: OpencodeUpstream,
    pub(crate) client: Client,
    pub(crate) app: AppState,
    pub(crate) service: Actor,
    settings_path: PathBuf,
    clock: Instant,
    clock_unix_ms: i64,
    inner: Mutex<Inner>,
    /// Questions to close `External` in the engine, queued under the lock, run after it.
    pending_closes: Mutex<Vec<String>>,
    pub stats: Stats,
    tips: tokio::sync::broadcast::Sender<DelegateTip>,
}

/// A route's refusal when upstream did not take a person's answer.
fn upstream_error(status: u16, code: &'static str, message: String) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::from_u16(status).unwrap_or(axum::http::StatusCode::BAD_GATEWAY),
        code,
        message,
    )
}

pub fn refusal_error(r: Refusal) -> ApiError {
    upstream_error(r.http_status(), r.code(), r.to_string())
}

impl Upstream {
    pub fn new(
        cfg: OpencodeUpstream,
        app: AppState,
        data_dir: &std::path::Path,
        tips: tokio::sync::broadcast::Sender<DelegateTip>,
    ) -> Result<Arc<Self>, OqError> {
        let auth = cfg.password.as_ref().map(|p| Auth {
            username: cfg
                .username
                .clone()
                .unwrap_or_else(|| crate::opencode::client::DEFAULT_USERNAME.into()),
            password: p.clone(),
        });
        let client = Client::new(&cfg.url, auth)?;
        let epoch = crate::engine::sqlite::now_ms().max(0) as u64;
        Ok(Arc::new(Upstream {
            service: Actor::Service {
                id: format!("bridge:{}", cfg.name),
            },
            settings_path: settings::path_for(data_dir, &cfg.name),
            inner: Mutex::new(Inner {
                delegate: Delegate::new(DelegateConfig {
                    window_ms: cfg.window_ms,
                    epoch,
                }),
                armed: BTreeMap::new(),
                conn: None,
                next_conn: 1,
                known: HashMap::new(),
                manual: HashSet::new(),
                waiters: HashMap::new(),
                sessions: HashSet::new(),
            }),
            pending_closes: Mutex::new(Vec::new()),
            clock: Instant::now(),
            clock_unix_ms: crate::engine::sqlite::now_ms(),
            cfg,
            client,
            app,
            stats: Stats::default(),
            tips,
        }))
    }

    pub fn name(&self) -> &str {
        &self.cfg.name
    }

    pub fn project(&self) -> &str {
        &self.cfg.project
    }

    pub fn config(&self) -> &OpencodeUpstream {
        &self.cfg
    }

    /// Whether the machine holds this request (any state).
    pub fn knows(&self, request_id: &str) -> bool {
        self.lock()
            .delegate
            .snapshot()
            .requests
            .iter()
            .any(|r| r.request_id == request_id)
    }

    /// Whether `session_id`'s tree (walked up to its root through subagent sessions) is
    /// blocked by a request that is not settled, and that root: what anything that
    /// continues a session asks right before it prompts (seed 002's goal linkage).
    pub fn blocking(&self, session_id: &str) -> (bool, String) {
        let inner = self.lock();
        (
            inner.delegate.is_blocking_session(session_id),
            inner.delegate.root_of(session_id),
        )
    }

    /// The machine's clock: milliseconds since this upstream was created.
    pub fn now_ms(&self) -> u64 {
        self.clock.elapsed().as_millis() as u64
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    // ---- the machine ----------------------------------------------------------------

    /// Applies one input and runs its effects; returns them (a route looks for its claim).
    pub fn feed(self: &Arc<Self>, input: Input) -> Result<Vec<Effect>, Refusal> {
        let mut inner = self.lock();
        self.feed_locked(&mut inner, input)
    }

    pub(crate) fn feed_locked(
        self: &Arc<Self>,
        inner: &mut Inner,
        input: Input,
    ) -> Result<Vec<Effect>, Refusal> {
        let now = self.now_ms();
        let fx = inner.delegate.handle(now, input)?;
        self.run_effects(inner, fx.clone());
        self.settle_in_engine(inner);
        Ok(fx)
    }

    fn run_effects(self: &Arc<Self>, inner: &mut Inner, fx: Vec<Effect>) {
        for effect in fx {
            match effect {
                Effect::ArmTimer {
                    request_id,
                    timer_id,
                    at_ms,
                } => {
                    inner.armed.insert(timer_id, (request_id.clone(), at_ms));
                    if let Some(conn) = inner.conn.as_mut() {
                        let h = self.spawn_timer(request_id, timer_id, at_ms);
                        if let Some(old) = conn.timers.insert(timer_id, h) {
                            old.abort();
                        }
                    }
                }
                Effect::CancelTimer { timer_id, .. } => {
                    inner.armed.remove(&timer_id);
                    if let Some(h) = inner.conn.as_mut().and_then(|c| c.timers.remove(&timer_id)) {
                        h.abort();
                    }
                }
                Effect::PostReply {
                    request_id,
                    directory,
                    answers,
                    claim,
                } => self.start_post(inner, request_id, directory, Some(answers), claim),
                Effect::PostReject {
                    request_id,
                    directory,
                    claim,
                } => self.start_post(inner, request_id, directory, None, claim),
                Effect::ResolveSession { session_id } => {
                    let me = self.clone();
                    tokio::spawn(async move { me.resolve_session(session_id).await });
                }
                Effect::RecoverViaList { directory, .. } => {
                    let me = self.clone();
                    let dirs = match directory {
                        Some(d) if self.cfg.directories.contains(&d) => vec![d],
                        _ => self.cfg.directories.clone(),
                    };
                    tokio::spawn(async move {
                        for d in dirs {
                            me.list_and_sync(&d).await;
                        }
                    });
                }
                Effect::UserTakeover { .. } => {
                    // No session-goal loop runs inside oq serve: nothing to pause. Counted.
                    self.stats.takeovers.fetch_add(1, Ordering::Relaxed);
                }
                Effect::PersistSetting(enabled) => {
                    let me = self.clone();
                    tokio::spawn(async move {
                        let _ = me.persist_and_apply(enabled).await;
                    });
                }
                Effect::NotifyTip { epoch, revision } => {
                    let _ = self.tips.send(DelegateTip {
                        project: self.cfg.project.clone(),
                        kind: TIP_TYPE,
                        upstream: self.cfg.name.clone(),
                        epoch,
                        revision,
                    });
                }
            }
        }
    }

    fn spawn_timer(self: &Arc<Self>, request_id: String, timer_id: u64, at_ms: u64) -> AbortHandle {
        let me = self.clone();
        let wait = Duration::from_millis(at_ms.saturating_sub(self.now_ms()));
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            let mut inner = me.lock();
            if let Some(conn) = inner.conn.as_mut() {
                conn.timers.remove(&timer_id);
            }
            let _ = me.feed_locked(
                &mut inner,
                Input::TimerFired {
                    request_id,
                    timer_id,
                },
            );
        })
        .abort_handle()
    }

    /// Re-spawns a task for every armed deadline (after a rehydrate): a deadline that
    /// passed while disconnected fires now, against an upstream we just listed.
    pub(crate) fn respawn_timers(self: &Arc<Self>, inner: &mut Inner) {
        let armed: Vec<(u64, String, u64)> = inner
            .armed
            .iter()
            .map(|(id, (r, at))| (*id, r.clone(), *at))
            .collect();
        for (timer_id, request_id, at_ms) in armed {
            let Some(conn) = inner.conn.as_mut() else {
                return;
            };
            if conn.timers.contains_key(&timer_id) {
                continue;
            }
            let h = self.spawn_timer(request_id, timer_id, at_ms);
            if let Some(conn) = inner.conn.as_mut() {
                conn.timers.insert(timer_id, h);
            }
        }
    }

    fn start_post(
        self: &Arc<Self>,
        inner: &mut Inner,
        request_id: String,
        directory: Option<String>,
        answers: Option<Vec<Vec<String>>>,
        claim: Claim,
    ) {
        let me = self.clone();
        let Some(conn) = inner.conn.as_mut() else {
            // Disconnected: nothing is sent; the claim is released and the request paused.
            tokio::spawn(async move {
                me.finish_post(None, request_id, claim, UpstreamResult::not_sent())
                    .await
            });
            return;
        };
        let conn_id = conn.id;
        let rid = request_id.clone();
        let timeout = self.cfg.timing.post_timeout;
        let task = tokio::spawn(async move {
            me.stats.posts.fetch_add(1, Ordering::Relaxed);
            let result = super::post::send(
                &me.client,
                &rid,
                directory.as_deref(),
                answers.as_deref(),
                timeout,
            )
            .await;
            me.finish_post(Some(conn_id), rid, claim, result).await;
        });
        conn.posts
            .insert(claim.id, (request_id, claim, task.abort_handle()));
    }

    /// Feeds a POST's outcome, wakes the route waiting for it, and for an accepted
    /// continuation (auto or delegate) closes the question in the engine.
    pub(crate) async fn finish_post(
        self: &Arc<Self>,
        conn_id: Option<u64>,
        request_id: String,
        claim: Claim,
        result: UpstreamResult,
    ) {
        {
            let mut inner = self.lock();
            if let Some(conn) = inner.conn.as_mut()
                && Some(conn.id) == conn_id
            {
                conn.posts.remove(&claim.id);
            }
            self.resolve_claim(&mut inner, &request_id, claim, result);
        }
        self.flush_closes().await;
    }

    /// Applies the outcome of `claim` to the machine and hands it to its waiter (if any).
    pub(crate) fn resolve_claim(
        self: &Arc<Self>,
        inner: &mut Inner,
        request_id: &str,
        claim: Claim,
        result: UpstreamResult,
    ) {
        let _ = self.feed_locked(
            inner,
            Input::UpstreamResult {
                request_id: request_id.to_string(),
                claim,
                result,
            },
        );
        if let Some(tx) = inner.waiters.remove(&claim.id) {
            let _ = tx.send(result);
        }
    }

    // ---- engine sync ----------------------------------------------------------------

    /// Requests the machine settled and the engine still holds open (and no person's
    /// POST is deciding): queued for an `External` close.
    fn settle_in_engine(&self, inner: &mut Inner) {
        if inner.known.is_empty() {
            return;
        }
        let settled: Vec<String> = inner
            .delegate
            .snapshot()
            .requests
            .into_iter()
            .filter(|r| r.state == "settled" && !inner.manual.contains(&r.request_id))
            .map(|r| r.request_id)
            .filter(|id| inner.known.contains_key(id))
            .collect();
        for id in settled {
            inner.known.remove(&id);
            self.pending_closes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(id);
        }
    }

    /// Runs the queued `External` closes.
    pub(crate) async fn flush_closes(&self) {
        let ids: Vec<String> = std::mem::take(
            &mut *self
                .pending_closes
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
        for id in ids {
            self.close_external(&id).await;
        }
    }

    async fn close_external(&self, question_id: &str) {
        let (actor, project, id) = (
            self.service.clone(),
            self.cfg.project.clone(),
            question_id.to_string(),
        );
        let _ = self
            .app
            .write(move |e| e.close_question(&actor, Some(&project), &id, ClosedReason::External))
            .await;
    }

    /// Imports `request` (seen in `directory`) as an open question, once.
    pub(crate) async fn import(&self, request: &Request, directory: &str) {
        if self.lock().known.contains_key(&request.id) {
            return;
        }
        let session = format!("oc-{}-{}", self.cfg.name, request.session_id);
        let project = self.cfg.project.clone();
        let person = self.cfg.answerer.clone();
        let service = self.service.clone();
        let upstream_name = self.cfg.name.clone();
        let request_c = request.clone();
        let directory_c = directory.to_string();
        let need_session = !self.lock().sessions.contains(&session);
        let session_c = session.clone();
        let out = self
            .app
            .write(move |e| {
                if need_session {
                    let exists = e.read(|v| v.session(&session_c))?.is_some();
                    if !exists {
                        match e.start_session(
                            &Actor::person(&person),
                            &project,
                            SessionKind::Conversation,
                            Some(&session_c),
                        ) {
                            Ok(_) | Err(OqError::Conflict { .. }) => {}
                            Err(other) => return Err(other),
                        }
                    }
                }
                let q = request_c.to_question(&crate::opencode::Placement {
                    upstream_name: &upstream_name,
                    directory: &directory_c,
                    person: &person,
                    seen_at: 0,
                });
                let input = DeclareInput {
                    pergunta: q.pergunta.clone(),
                    sugestao: None,
                    afeta: Default::default(),
                    session_id: session_c.clone(),
                };
                let recorded = e.record_question(
                    &service,
                    &project,
                    NewQuestion {
                        input: &input,
                        autor: OPENCODE_AUTHOR,
                        source: "opencode",
                        question_id: Some(&request_c.id),
                        prompts: q.prompts,
                        upstream: Some(UpstreamRef {
                            kind: "opencode".into(),
                            name: upstream_name.clone(),
                            directory: directory_c.clone(),
                            request_id: request_c.id.clone(),
                            session_id: request_c.session_id.clone(),
                        }),
                    },
                );
                match recorded {
                    Ok(q) => Ok(q.is_open()),
                    Err(OqError::Conflict {
                        code: "question_exists",
                        ..
                    }) => Ok(e.question(Some(&project), &request_c.id)?.is_open()),
                    Err(other) => Err(other),
                }
            })
            .await;
        let mut inner = self.lock();
        inner.sessions.insert(session);
        if let Ok(true) = out {
            inner.known.insert(
                request.id.clone(),
                Known {
                    session_id: request.session_id.clone(),
                },
            );
        }
    }

    /// The open engine questions of this upstream in `directory`: (question id, session).
    pub(crate) async fn engine_open(&self, directory: &str) -> Vec<(String, String)> {
        let (project, name, dir) = (
            self.cfg.project.clone(),
            self.cfg.name.clone(),
            directory.to_string(),
        );
        self.app
            .read(move |e| {
                let mut out = Vec::new();
                let mut cursor: Option<String> = None;
                loop {
                    let page = e.list(Some(&project), StatusFilter::Open, cursor.as_deref(), 50)?;
                    for q in &page.items {
                        if let Some(up) = &q.upstream
                            && up.kind == "opencode"
                            && up.name == name
                            && up.directory == dir
                        {
                            out.push((q.question_id.clone(), up.session_id.clone()));
                        }
                    }
                    match page.cursor {
                        Some(c) if !page.items.is_empty() => cursor = Some(c),
                        _ => break,
                    }
                }
                Ok(out)
            })
            .await
            .unwrap_or_default()
    }

    /// `GET /question?directory=`: imports what is pending, feeds the machine, and closes
    /// in the engine what upstream no longer holds — only for a list that succeeded, and
    /// only what the machine settled or never saw this run (imported by an earlier run).
    pub(crate) async fn list_and_sync(self: &Arc<Self>, directory: &str) -> bool {
        let token: ListToken = self.lock().delegate.list_token();
        let listed = self.client.list(directory).await;
        let ok = listed.is_ok();
        match listed {
            Ok(requests) => {
                for r in &requests {
                    self.import(r, directory).await;
                }
                let present: HashSet<&str> = requests.iter().map(|r| r.id.as_str()).collect();
                let engine_open = self.engine_open(directory).await;
                {
                    let mut inner = self.lock();
                    if let Some(conn) = inner.conn.as_mut() {
                        conn.coverage.insert(directory.to_string());
                    }
                    let _ = self.feed_locked(
                        &mut inner,
                        Input::ListResult {
                            directory: Some(directory.to_string()),
                            token,
                            result: Ok(requests.iter().map(to_machine).collect()),
                        },
                    );
                    let snapshot = inner.delegate.snapshot();
                    for (id, _) in engine_open {
                        if present.contains(id.as_str()) || inner.manual.contains(&id) {
                            continue;
                        }
                        let unseen = !snapshot.requests.iter().any(|r| r.request_id == id);
                        if unseen {
                            inner.known.remove(&id);
                            self.pending_closes
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .push(id);
                        }
                    }
                }
                self.flush_closes().await;
            }
            Err(e) => {
                let _ = self.feed(Input::ListResult {
                    directory: Some(directory.to_string()),
                    token,
                    result: Err(ListError(e.to_string())),
                });
            }
        }
        ok
    }

    /// `question.asked`: import, then let the machine arm its window.
    pub(crate) async fn asked(self: &Arc<Self>, request: Request, directory: Option<String>) {
        let dir = directory
            .clone()
            .unwrap_or_else(|| self.cfg.directories[0].clone());
        self.import(&request, &dir).await;
        let _ = self.feed(Input::Asked {
            request: to_machine(&request),
            directory,
        });
        self.flush_closes().await;
    }

    /// `session.error` with `MessageAbortedError`: its pending questions are orphans,
    /// and its tree's timers pause (reason `goal`): nobody will read a continuation.
    pub(crate) async fn session_aborted(self: &Arc<Self>, session_id: &str) {
        let ids: Vec<String> = self
            .lock()
            .known
            .iter()
            .filter(|(_, k)| k.session_id == session_id)
            .map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            let (actor, project) = (self.service.clone(), self.cfg.project.clone());
            let _ = self
                .app
                .write(move |e| e.mark_orphaned(&actor, Some(&project), &id))
                .await;
        }
        let _ = self.feed(Input::GoalPaused {
            root_session: session_id.to_string(),
        });
    }

    async fn resolve_session(self: &Arc<Self>, session_id: String) {
        for dir in self.cfg.directories.clone() {
            if let Ok(s) = self.client.get_session(&session_id, &dir).await {
                let directory = if s.directory.is_empty() {
                    dir
                } else {
                    s.directory
                };
                let _ = self.feed(Input::SessionDirectoryResolved {
                    session_id: session_id.clone(),
                    directory,
                });
                if let Some(parent) = s.parent_id {
                    let _ = self.feed(Input::SessionParent {
                        session_id,
                        parent_id: parent,
                    });
                }
                self.flush_closes().await;
                return;
            }
        }
    }

    // ---- settings -------------------------------------------------------------------

    /// Loads the persisted toggle at the machine's current generation.
    pub async fn load_settings(self: &Arc<Self>) {
        let generation = self.lock().delegate.settings_generation();
        let (path, default) = (self.settings_path.clone(), self.cfg.auto_delegate);
        let value = tokio::task::spawn_blocking(move || settings::read(&path, default))
            .await
            .ok()
            .flatten();
        let _ = self.feed(Input::SettingsLoaded { generation, value });
        self.flush_closes().await;
    }

    async fn persist_and_apply(self: &Arc<Self>, enabled: bool) -> Result<(), ApiError> {
        let path = self.settings_path.clone();
        let written = tokio::task::spawn_blocking(move || settings::write(&path, enabled)).await;
        match written {
            Ok(Ok(())) => {
                let _ = self.feed(Input::ApplyEnabled(Value::Bool(enabled)));
                self.flush_closes().await;
                Ok(())
            }
            Ok(Err(e)) => Err(OqError::Internal(format!("cannot save the setting: {e}")).into()),
            Err(e) => Err(OqError::Internal(format!("settings task: {e}")).into()),
        }
    }

    /// `PUT …/settings {enabled}`: a real boolean is persisted, then applied; anything
    /// else changes nothing (400 `invalid_setting`). A failed save applies nothing.
    pub async fn set_enabled(self: &Arc<Self>, value: Value) -> Result<(), ApiError> {
        let fx = {
            let mut inner = self.lock();
            let now = self.now_ms();
            inner
                .delegate
                .handle(now, Input::RequestEnabled(value))
                .map_err(refusal_error)?
        };
        for effect in fx {
            if let Effect::PersistSetting(enabled) = effect {
                self.persist_and_apply(enabled).await?;
            }
        }
        Ok(())
    }

    // ---- commands from routes ---------------------------------------------------------

    /// Pause or delegate (`input` built by the route).
    pub async fn command(self: &Arc<Self>, input: Input) -> Result<Vec<Effect>, ApiError> {
        let fx = self.feed(input).map_err(refusal_error)?;
        self.flush_closes().await;
        Ok(fx)
    }

    /// The snapshot as `GET /api/question-auto-delegate` shows it, with the clock a client
    /// needs: `nowMs` on the machine's clock, and per counting request `deadlineUnixMs`.
    pub fn snapshot_json(&self) -> Value {
        let inner = self.lock();
        let snap = inner.delegate.snapshot();
        let mut v = serde_json::to_value(&snap).unwrap_or(Value::Null);
        let connected = inner.conn.is_some();
        let coverage: Vec<String> = inner
            .conn
            .as_ref()
            .map(|c| c.coverage.iter().cloned().collect())
            .unwrap_or_default();
        drop(inner);
        if let Some(obj) = v.as_object_mut() {
            obj.insert("name".into(), Value::String(self.cfg.name.clone()));
            obj.insert("project".into(), Value::String(self.cfg.project.clone()));
            obj.insert("connected".into(), Value::Bool(connected));
            obj.insert("listedDirectories".into(), serde_json::json!(coverage));
            obj.insert("nowMs".into(), serde_json::json!(self.now_ms()));
            if let Some(reqs) = obj.get_mut("requests").and_then(|r| r.as_array_mut()) {
                for r in reqs {
                    if let Some(d) = r.get("deadline").and_then(|d| d.as_u64()) {
                        r["deadlineUnixMs"] = serde_json::json!(self.clock_unix_ms + d as i64);
                    }
                }
            }
        }
        v
    }

    /// A person answers (`reply = Some(input)`) or dismisses (`None`) an imported question:
    /// checked like any answer, claimed (a loser gets 409 `question_submission_claimed`),
    /// POSTed upstream, and recorded in the engine only when upstream took it.
    pub async fn manual(
        self: &Arc<Self>,
        actor: Actor,
        question: Question,
        reply: Option<AnswerInput>,
        key: Option<String>,
    ) -> Result<Question, ApiError> {
        let project = self.cfg.project.clone();
        let id = question.question_id.clone();
        if let Some(input) = &reply {
            // A retry with the same key gets the first result, without a second POST.
            let retried = question.answer.as_ref().is_some_and(|a| {
                key.is_some() && a.idempotency_key == key && a.respondida_por == actor.id()
            });
            if retried {
                let (actor, input) = (actor.clone(), input.clone());
                return self
                    .app
                    .write(move |e| {
                        e.answer_once(&actor, Some(&project), &id, &input, key.as_deref())
                    })
                    .await;
            }
        }
        // The engine's rules first: shape and options (422), author (403), open (409).
        let answers = match &reply {
            Some(input) => {
                let decided = decide_answer(&question, &actor, input)?;
                Some(if decided.choices.is_empty() {
                    vec![vec![decided.resposta]]
                } else {
                    decided.choices
                })
            }
            None => {
                crate::domain::question::check_author_and_open(&question, &actor)?;
                None
            }
        };
        let what = if reply.is_some() {
            "answer"
        } else {
            "dismissal"
        };
        let up = question.upstream.clone();
        let hints = Hints {
            session_id: up.as_ref().map(|u| u.session_id.clone()),
            directory: up.as_ref().map(|u| u.directory.clone()),
        };
        let request_id = up
            .as_ref()
            .map(|u| u.request_id.clone())
            .unwrap_or_else(|| id.clone());
        let rx = {
            let mut inner = self.lock();
            let now = self.now_ms();
            let input = match answers {
                Some(answers) => Input::ManualReply {
                    request_id: request_id.clone(),
                    answers,
                    hints,
                },
                None => Input::ManualReject {
                    request_id: request_id.clone(),
                    hints,
                },
            };
            let fx = inner.delegate.handle(now, input).map_err(refusal_error)?;
            let claim = fx.iter().find_map(|e| match e {
                Effect::PostReply { claim, .. } | Effect::PostReject { claim, .. } => Some(*claim),
                _ => None,
            });
            let (tx, rx) = oneshot::channel();
            if let Some(claim) = claim {
                inner.waiters.insert(claim.id, tx);
            }
            inner.manual.insert(request_id.clone());
            self.run_effects(&mut inner, fx);
            rx
        };
        let result = rx.await.unwrap_or_else(|_| UpstreamResult::uncertain());
        self.lock().manual.remove(&request_id);
        let out = if result.ok {
            self.lock().known.remove(&request_id);
            let (actor, id) = (actor.clone(), id.clone());
            match reply {
                Some(input) => {
                    self.app
                        .write(move |e| {
                            e.answer_once(&actor, Some(&project), &id, &input, key.as_deref())
                        })
                        .await
                }
                None => {
                    self.app
                        .write(move |e| {
                            e.close_question(&actor, Some(&project), &id, ClosedReason::Rejected)
                        })
                        .await
                }
            }
        } else if result.not_sent {
            Err(upstream_error(
                502,
                "upstream_unreachable",
                format!(
                    "OpenCode at {} could not be reached; nothing was sent, nothing recorded; \
                     the question is paused for you to retry",
                    self.cfg.url
                ),
            ))
        } else if result.status == 404 {
            Err(upstream_error(
                409,
                "question_closed",
                format!("question {id} was already settled upstream (OpenCode answered 404)"),
            ))
        } else if !result.uncertain && (400..500).contains(&result.status) {
            Err(upstream_error(
                502,
                "upstream_refused",
                format!(
                    "OpenCode refused the {} with status {}; nothing recorded; the question is \
                     paused for you to retry",
                    what, result.status
                ),
            ))
        } else {
            Err(upstream_error(
                502,
                "upstream_uncertain",
                format!(
                    "OpenCode did not say whether it took it (status {}); it is not retried and \
                     the question stays blocked until OpenCode settles it",
                    result.status
                ),
            ))
        };
        // Whatever upstream said may have settled it (a 404): sync the engine.
        {
            let mut inner = self.lock();
            self.settle_in_engine(&mut inner);
        }
        self.flush_closes().await;
        out
    }
}

/// OpenCode's request in the machine's vocabulary.
pub(crate) fn to_machine(r: &Request) -> QuestionRequest {
    QuestionRequest {
        id: r.id.clone(),
        session_id: r.session_id.clone(),
        questions: r
            .questions
            .iter()
            .map(|q| QuestionInfo {
                question: q.question.clone(),
                header: q.header.clone(),
                options: q
                    .options
                    .iter()
                    .map(|o| QuestionOption {
                        label: o.label.clone(),
                        description: o.description.clone(),
                    })
                    .collect(),
                multiple: q.multiple,
            })
            .collect(),
    }
}
