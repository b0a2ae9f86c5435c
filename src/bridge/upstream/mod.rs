//! One bridged OpenCode upstream: the auto-delegate machine behind a lock, the runner of
//! its effects, the import of requests into the engine, what the log records of it, and
//! what the routes ask of it.
//!
//! Files: this one holds the types and the lock; `machine.rs` runs the machine's
//! effects; `record.rs` writes what the machine decided into the log (settlements and
//! the notes a restart needs); `sync.rs` keeps the engine in step with upstream and
//! restores the machine from the log at start; `commands.rs` is what the routes ask
//! (the setting, pause/resume/delegate, a person's answer or dismissal, the snapshot);
//! `forward.rs` carries those commands, when another server drives the upstream, to it
//! through the database.
//!
//! The machine decides, this module does: `ArmTimer` becomes a tokio sleep carrying the
//! timer id (and a countdown note in the log), `PostReply`/`PostReject` a submission
//! note then a POST whose raw result is fed back, `Resolved` wakes the route waiting on
//! the claim, `Settle` records the settlement as what it was, `Inspect` reads the
//! session's messages, `ResolveSession` a `GET /session/:id`, `RecoverViaList` a scoped
//! list, `NotifyTip` a tip on the project's event stream, `PersistSetting` the settings
//! file then `ApplyEnabled`. The lock is a plain mutex never held across an await:
//! every effect that waits runs in a task of its own and feeds its outcome back through
//! [`Upstream::feed`]; log writes decided under the lock are queued and run after it, in
//! order.
//!
//! Connection-bound resources (timer tasks, POST tasks, stream tasks, coverage) live in
//! [`Conn`] and are released only by [`super::connection`]'s one cleanup, which tells the
//! machine `Disconnected`: nothing counts, and nothing is posted, while the upstream is
//! unreachable; `Connected` after the next rehydrate starts fresh windows.
//!
//! Engine sync. Imported questions are recorded by the service actor `bridge:<name>` in
//! an oq session `oc-<name>-<sessionID>` authored by the upstream's answerer. Every
//! settlement is recorded as what it was (`record.rs`): a person's answer or dismissal as
//! theirs; an accepted continuation as an answer whose decision names the timer
//! (`auto_delegate`, by `bridge:<name>`) or the person who delegated (`delegate`), with
//! the text sent; an answer given in OpenCode itself as `upstream`; a request upstream
//! lost as `vanished` (a closure, not an answer).

mod commands;
mod forward;
mod lease;
mod machine;
mod manual;
mod record;
mod sync;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use super::delegate::{Claim, Delegate, DelegateConfig, Post, PostOutcome};
use super::{DelegateTip, Notifier, OpencodeUpstream, settings};
use crate::domain::{Actor, OqError};
use crate::engine::ServerEngine;
use crate::opencode::{Auth, Client};
use crate::wire::BridgeHealth;

pub use commands::refusal;
pub use manual::Answered;

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
    pub coverage: std::collections::BTreeSet<String>,
}

impl Conn {
    pub fn new(id: u64) -> Self {
        Conn {
            id,
            timers: HashMap::new(),
            posts: HashMap::new(),
            streams: Vec::new(),
            coverage: Default::default(),
        }
    }
}

/// Where an imported request lives.
#[derive(Debug, Clone)]
pub(crate) struct Known {
    pub session_id: String,
}

/// Who a claim's POST speaks for and what it carries: recorded in the log before it
/// leaves, and used to record its settlement as theirs.
#[derive(Debug, Clone)]
pub(crate) struct Submission {
    pub actor: Actor,
    pub post: Post,
    /// A person's idempotency key, recorded with their answer.
    pub key: Option<String>,
}

/// The connection as clients see it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Health {
    pub connected: bool,
    /// Since when (Unix ms); 0 before the first connection.
    pub since_unix_ms: i64,
}

pub(crate) struct Inner {
    pub delegate: Delegate,
    pub conn: Option<Conn>,
    pub next_conn: u64,
    /// Requests imported into the engine and still open there, as far as we know.
    pub known: HashMap<String, Known>,
    /// Routes waiting for the outcome of their claim, by claim id.
    pub waiters: HashMap<u64, oneshot::Sender<PostOutcome>>,
    /// Who each claim speaks for, by claim id.
    pub submissions: HashMap<u64, Submission>,
    /// oq sessions already created for OpenCode sessions.
    pub sessions: HashSet<String>,
    /// Root sessions a person took over (a manual claim, a user pause, the feature
    /// turned off), with when (machine clock): reported to whatever continues a session,
    /// since no goal loop runs inside oq serve to act on them.
    pub takeovers: HashMap<String, u64>,
    pub health: Health,
    /// The deadline last noted in the log per request (machine clock): a re-arm of the
    /// same deadline writes nothing.
    pub noted_deadlines: HashMap<String, u64>,
    /// Another server holds the upstream's lease (PostgreSQL): this one drives nothing.
    pub elsewhere: bool,
}

impl Inner {
    /// A machine that knows nothing yet: at start, and after the lease was lost (what
    /// another server then decided is read back from the log on the next take).
    fn new(cfg: &OpencodeUpstream, elsewhere: bool) -> Inner {
        let epoch = crate::engine::sqlite::now_ms().max(0) as u64;
        Inner {
            delegate: Delegate::new(DelegateConfig {
                window_ms: cfg.window_ms,
                epoch,
                settled_retention_ms: cfg.timing.settled_retention.as_millis() as u64,
            }),
            conn: None,
            next_conn: 1,
            known: HashMap::new(),
            waiters: HashMap::new(),
            submissions: HashMap::new(),
            sessions: HashSet::new(),
            takeovers: HashMap::new(),
            health: Health::default(),
            noted_deadlines: HashMap::new(),
            elsewhere,
        }
    }
}

pub struct Upstream {
    pub(crate) cfg: OpencodeUpstream,
    pub(crate) client: Client,
    pub(crate) engine: Arc<ServerEngine>,
    notify: Notifier,
    pub(crate) service: Actor,
    settings_path: PathBuf,
    clock: Instant,
    clock_unix_ms: i64,
    inner: Mutex<Inner>,
    /// Log writes decided under the lock, run after it in order.
    writes: Mutex<Vec<record::Write>>,
    /// One writer of the queue at a time, so the log keeps the order decided.
    writing: tokio::sync::Mutex<()>,
    pub stats: Stats,
    tips: tokio::sync::broadcast::Sender<DelegateTip>,
    /// Who drives the upstream among the servers on one database.
    pub(crate) lease: lease::Keeper,
}

impl Upstream {
    pub fn new(
        cfg: OpencodeUpstream,
        engine: Arc<ServerEngine>,
        notify: Notifier,
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
        let leases = match engine.store() {
            crate::engine::AnyStore::Postgres(pg) => Some(pg.leases()),
            crate::engine::AnyStore::Sqlite(_) => None,
        };
        Ok(Arc::new(Upstream {
            service: Actor::Service {
                id: format!("bridge:{}", cfg.name),
            },
            settings_path: settings::path_for(data_dir, &cfg.name),
            // On PostgreSQL nothing is driven before the lease is taken.
            inner: Mutex::new(Inner::new(&cfg, leases.is_some())),
            lease: lease::Keeper::new(leases),
            writes: Mutex::new(Vec::new()),
            writing: tokio::sync::Mutex::new(()),
            clock: Instant::now(),
            clock_unix_ms: crate::engine::sqlite::now_ms(),
            cfg,
            client,
            engine,
            notify,
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

    /// Whether `person` may change this upstream's settings.
    /// The person the upstream's questions are for.
    pub fn answerer(&self) -> &str {
        &self.cfg.answerer
    }

    pub fn is_admin(&self, person: &str) -> bool {
        self.cfg.admins.iter().any(|a| a == person)
    }

    /// The connection as the list and the status line show it.
    pub fn health(&self) -> BridgeHealth {
        let inner = self.lock();
        BridgeHealth {
            name: self.cfg.name.clone(),
            connected: inner.health.connected,
            since_unix_ms: inner.health.since_unix_ms,
            driven_elsewhere: inner.elsewhere,
        }
    }

    /// Whether the machine holds this request (any state).
    pub fn knows(&self, request_id: &str) -> bool {
        self.lock().delegate.request(request_id).is_some()
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

    /// A machine time on the wall clock.
    pub(crate) fn unix_of(&self, machine_ms: u64) -> i64 {
        self.clock_unix_ms + machine_ms as i64
    }

    /// A wall-clock time on the machine's clock (0 for a time before this upstream).
    pub(crate) fn machine_of(&self, unix_ms: i64) -> u64 {
        (unix_ms - self.clock_unix_ms).max(0) as u64
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the engine on the blocking pool; a write wakes the event streams.
    pub(crate) async fn on_engine<T, F>(&self, write: bool, f: F) -> Result<T, OqError>
    where
        T: Send + 'static,
        F: FnOnce(&ServerEngine) -> Result<T, OqError> + Send + 'static,
    {
        let engine = self.engine.clone();
        let out = tokio::task::spawn_blocking(move || f(&engine))
            .await
            .map_err(|e| OqError::Internal(format!("engine task: {e}")))?;
        if write && out.is_ok() {
            self.notify.changed();
        }
        out
    }
}
