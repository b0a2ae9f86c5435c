//! One bridged OpenCode upstream: the auto-delegate machine behind a lock, the runner of
//! its effects, the import of requests into the engine, and the answer routing.
//!
//! Files: this one holds the types and the lock; `machine.rs` runs the machine's
//! effects; `sync.rs` keeps the engine in step with upstream; `commands.rs` is what the
//! routes ask (the setting, pause/delegate, a person's answer or dismissal).
//!
//! The machine decides, this module does: `ArmTimer` becomes a tokio sleep carrying the
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

mod commands;
mod machine;
mod sync;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use super::delegate::{
    Claim, Delegate, DelegateConfig, QuestionInfo, QuestionOption, QuestionRequest, Refusal,
    UpstreamResult,
};
use super::{DelegateTip, TIP_TYPE, settings};
use crate::domain::choices::{ClosedReason, Upstream as UpstreamRef};
use crate::domain::question::decide_answer;
use crate::domain::{Actor, AnswerInput, DeclareInput, ErrorCode, OqError, Question, SessionKind};
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
    /// Root sessions a person took over (a manual claim, a user pause, the feature
    /// turned off), with when (machine clock): reported to whatever continues a session,
    /// since no goal loop runs inside oq serve to act on them.
    pub takeovers: HashMap<String, u64>,
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
fn upstream_error(status: u16, code: ErrorCode, message: String) -> ApiError {
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
                takeovers: HashMap::new(),
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
    pub fn blocking(&self, session_id: &str) -> (bool, String, Option<u64>) {
        let inner = self.lock();
        let root = inner.delegate.root_of(session_id);
        let taken_over = inner.takeovers.get(&root).copied();
        (
            inner.delegate.is_blocking_session(session_id),
            root,
            taken_over,
        )
    }

    /// The machine's clock: milliseconds since this upstream was created.
    pub fn now_ms(&self) -> u64 {
        self.clock.elapsed().as_millis() as u64
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
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
