//! The team store: the event log in PostgreSQL, shared by several `oq serve`.
//!
//! Why `postgres` (the synchronous face of `tokio-postgres`) and not sqlx: the engine's
//! decisions are synchronous closures over [`StoreView`], run on a thread of the store's
//! own, and `postgres` runs each query on the calling thread's own small runtime — no
//! hand-off per query, no second async runtime, no macros, and a lean build (one crate
//! family, no TLS stack of its own, no compile-time database).
//!
//! - `conn.rs`: where to connect (password apart, never logged), a connection with its
//!   prepared statements, errors mapped to the domain's, reconnection backoff.
//! - `schema.rs`: versioned migrations, run by `oq store migrate` as the owner; the
//!   serving role is granted reading and appending only.
//! - `view.rs`: the reads, as the SQLite store's, over `engine::fold`.
//! - `writer.rs`: group commit under one advisory lock, positions allocated in order.
//! - `chain.rs`: the per-project hash chain (the SQLite store's), and `verify`.
//! - `listen.rs`: LISTEN/NOTIFY, so every server hears every other's commits.
//! - `lease.rs`: which server drives each bridged OpenCode upstream (a lease row).
//! - `commands.rs`: what the other servers leave for that one (a person's pause,
//!   delegate, answer or setting arriving elsewhere), and its outcome.
//!
//! Opening checks before it serves: a database without an oq schema, of another
//! application, older or newer than this binary, or a role that could alter history are
//! refused, and nothing is written.

mod ahead;
pub mod chain;
pub mod commands;
mod conn;
mod decisions;
pub mod lease;
mod list;
mod listen;
pub mod raw;
mod rows;
pub mod schema;
mod similar;
mod snoozes;
mod view;
mod writer;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::domain::{ErrorCode, OqError, StoredEvent};
use crate::engine::store::{NewEvent, Store, StoreView};

use conn::{Backoff, Slot};
pub use conn::{Conn, PgTarget, UNAVAILABLE, is_postgres_url, is_unavailable, read_password};
pub use listen::Listener;
use view::PgView;
use writer::Writer;
/// The statements the plan tests read (`tests/pg_batch.rs`).
pub use {ahead::sql as read_ahead_sql, snoozes::newest_sql as newest_snooze_sql};

/// The newest `bridge.settings_changed` of one upstream (index `events_bridge_settings`).
const BRIDGE_SETTING: &str = "SELECT (payload->>'enabled')::boolean FROM oq.events
     WHERE project_id = $1 AND type = 'bridge.settings_changed' AND payload->>'upstream' = $2
     ORDER BY seq DESC LIMIT 1";

/// Read connections per server: reads never wait behind a write batch.
const READERS: usize = 6;

pub struct PgStore {
    target: PgTarget,
    backoff: Arc<Backoff>,
    writer: Writer,
    readers: Vec<Mutex<Slot>>,
    next_reader: AtomicUsize,
}

impl PgStore {
    /// Connects, checks the schema and the role, and starts the writer.
    pub fn open(target: &PgTarget) -> Result<PgStore, OqError> {
        blocking(|| Self::open_here(target))
    }

    fn open_here(target: &PgTarget) -> Result<PgStore, OqError> {
        let mut conn = target.connect()?;
        schema_state(&mut conn, target)?.ready(target)?;
        check_role(&mut conn, target)?;
        let backoff = Arc::new(Backoff::default());
        Ok(PgStore {
            target: target.clone(),
            writer: Writer::start(target.clone(), backoff.clone())?,
            backoff,
            readers: (0..READERS).map(|_| Mutex::new(Slot::empty())).collect(),
            next_reader: AtomicUsize::new(0),
        })
    }

    pub fn target(&self) -> &PgTarget {
        &self.target
    }

    /// The bridges' leases of this server, on a connection of their own.
    pub fn leases(&self) -> lease::Leases {
        lease::Leases::new(self.target.clone())
    }

    /// Follows the commits of every server on this database: `on_change` runs after each,
    /// with the heads it appended when its notification carried them (and once, with
    /// none, after a lost listening connection is back, for what it may have missed).
    pub fn listen(
        &self,
        on_change: impl Fn(Option<Vec<crate::engine::store::LogHead>>) + Send + 'static,
    ) -> Result<Listener, OqError> {
        Listener::start(self.target.clone(), on_change)
    }

    /// An upstream's auto-delegate setting as the log says (its newest
    /// `bridge.settings_changed`); `None` when it was never changed. On PostgreSQL this
    /// is the one setting every server reads, whichever drives the upstream.
    pub fn bridge_setting(&self, project: &str, upstream: &str) -> Result<Option<bool>, OqError> {
        blocking(|| {
            let mut slot = self.reader();
            let rows = slot.get(&self.target, &self.backoff).and_then(|conn| {
                conn.failed = None;
                conn.query(BRIDGE_SETTING, &[&project, &upstream])
            });
            if rows.is_err() {
                slot.reset();
            }
            Ok(rows?.first().and_then(|r| r.get::<_, Option<bool>>(0)))
        })
    }

    fn reader(&self) -> std::sync::MutexGuard<'_, Slot> {
        let n = self.readers.len();
        let start = self.next_reader.fetch_add(1, Ordering::Relaxed);
        for i in 0..n {
            if let Ok(slot) = self.readers[(start + i) % n].try_lock() {
                return slot;
            }
        }
        self.readers[start % n]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }
}

/// Runs blocking database work from wherever it is called. `postgres` drives each
/// connection on a small runtime of its own, which tokio forbids inside an async task; on
/// a worker of a multi-threaded runtime (a caller that did not move to the blocking pool)
/// the work is moved out of the runtime's way first.
pub(crate) fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

impl Store for PgStore {
    fn read<T>(&self, f: impl FnOnce(&dyn StoreView) -> Result<T, OqError>) -> Result<T, OqError> {
        blocking(|| self.read_here(f))
    }

    fn transact<T: Send + 'static>(
        &self,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
    ) -> Result<(Vec<StoredEvent>, T), OqError> {
        let (reply, outcome) = std::sync::mpsc::sync_channel(1);
        self.writer.submit(None, decide, move |r| {
            let _ = reply.send(r);
        });
        blocking(|| outcome.recv()).map_err(|_| writer::writer_gone())?
    }

    fn transact_async<T: Send + 'static>(
        &self,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
    ) -> impl Future<Output = Result<(Vec<StoredEvent>, T), OqError>> + Send {
        self.submit_async(None, decide)
    }

    fn transact_async_on<T: Send + 'static>(
        &self,
        question_id: &str,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
    ) -> impl Future<Output = Result<(Vec<StoredEvent>, T), OqError>> + Send {
        self.submit_async(Some(question_id.to_string()), decide)
    }
}

impl PgStore {
    /// Queues `decide` on the writer (`reads`: the question it reads, read ahead).
    fn submit_async<T: Send + 'static>(
        &self,
        reads: Option<String>,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
    ) -> impl Future<Output = Result<(Vec<StoredEvent>, T), OqError>> + Send {
        let (reply, outcome) = tokio::sync::oneshot::channel();
        self.writer.submit(reads, decide, move |r| {
            let _ = reply.send(r);
        });
        async move { outcome.await.map_err(|_| writer::writer_gone())? }
    }
}

impl Drop for PgStore {
    /// Closing a connection runs on its own small runtime too (see [`blocking`]).
    fn drop(&mut self) {
        blocking(|| {
            for slot in &self.readers {
                slot.lock().unwrap_or_else(|p| p.into_inner()).reset();
            }
        });
    }
}

impl PgStore {
    fn read_here<T>(
        &self,
        f: impl FnOnce(&dyn StoreView) -> Result<T, OqError>,
    ) -> Result<T, OqError> {
        let mut slot = self.reader();
        // An idle connection learns that the database went away only when next used: a
        // read that finds its connection dead starts once more on a new one (reads are
        // safe to repeat; `f` has not run yet when BEGIN fails).
        let fresh = !slot.is_connected();
        let conn = slot.get(&self.target, &self.backoff)?;
        conn.failed = None;
        let begun = conn.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
        let conn = match begun {
            Ok(()) => conn,
            Err(e) if is_unavailable(&e) && !fresh => {
                slot.reset();
                let conn = slot.get(&self.target, &self.backoff)?;
                conn.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
                conn
            }
            Err(e) => {
                slot.reset();
                return Err(e);
            }
        };
        // One snapshot for every query of `f`.
        let out = f(&PgView::new(conn));
        conn.failed = None;
        let out = conn.batch("COMMIT").and(out);
        if let Err(e) = &out
            && is_unavailable(e)
        {
            slot.reset();
        }
        out
    }
}

/// What a database holds, as far as oq is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaState {
    /// No schema `oq`: a database to migrate.
    Empty,
    /// A schema `oq` that is not an oq store's (no mark, or another application's).
    Foreign,
    /// An oq store at this version.
    At(i32),
}

impl SchemaState {
    /// Refuses anything but a store at this binary's version.
    fn ready(self, target: &PgTarget) -> Result<(), OqError> {
        let db = target.shown();
        match self {
            SchemaState::At(v) if v == schema::LATEST_VERSION => Ok(()),
            SchemaState::At(v) if v > schema::LATEST_VERSION => Err(too_new(db, v)),
            SchemaState::At(v) => Err(OqError::store(
                ErrorCode::StoreOutdated,
                format!(
                    "{db} holds an oq store at schema version {v}; this oq needs {}: run `oq store migrate --to {db} --grant <role>` as its owner",
                    schema::LATEST_VERSION
                ),
            )),
            SchemaState::Empty => Err(OqError::store(
                ErrorCode::StoreNotInitialised,
                format!(
                    "{db} holds no oq store yet: run `oq store migrate --to {db} --grant <role>` as the database's owner"
                ),
            )),
            SchemaState::Foreign => Err(foreign(db)),
        }
    }
}

fn too_new(db: &str, v: i32) -> OqError {
    OqError::store(
        ErrorCode::StoreTooNew,
        format!(
            "{db} has schema version {v}, newer than this oq understands ({}); upgrade oq — the database was not touched",
            schema::LATEST_VERSION
        ),
    )
}

fn foreign(db: &str) -> OqError {
    OqError::store(
        ErrorCode::NotAnOqStore,
        format!("{db} has a schema \"oq\" that is not an oq store's; refusing to touch it"),
    )
}

/// Reads (never writes) what the database holds.
pub fn schema_state(conn: &mut Conn, target: &PgTarget) -> Result<SchemaState, OqError> {
    let rows = conn.query(
        "SELECT to_regnamespace('oq') IS NOT NULL, to_regclass('oq.meta') IS NOT NULL",
        &[],
    )?;
    let (schema, meta): (bool, bool) = rows
        .first()
        .map(|r| (r.get(0), r.get(1)))
        .unwrap_or((false, false));
    if !schema {
        return Ok(SchemaState::Empty);
    }
    if !meta {
        return Ok(SchemaState::Foreign);
    }
    let rows = conn
        .query("SELECT application, version FROM oq.meta", &[])
        .map_err(|e| match e {
            OqError::Internal(m) => OqError::store(
                ErrorCode::StoreUnusable,
                format!("{} cannot be read: {m}", target.shown()),
            ),
            other => other,
        })?;
    match rows
        .first()
        .map(|r| (r.get::<_, i32>(0), r.get::<_, i32>(1)))
    {
        Some((app, v)) if app == schema::APPLICATION_ID => Ok(SchemaState::At(v)),
        _ => Ok(SchemaState::Foreign),
    }
}

/// The role that serves must not be able to alter history: not a superuser, not the
/// log's owner (who could drop its triggers), no UPDATE, DELETE or TRUNCATE on it, no
/// write on the derived tables.
fn check_role(conn: &mut Conn, target: &PgTarget) -> Result<(), OqError> {
    let rows = conn.query(
        "SELECT r.rolsuper, pg_has_role(current_user, c.relowner, 'USAGE'),
                has_table_privilege('oq.events', 'UPDATE') OR has_table_privilege('oq.events', 'DELETE')
                  OR has_table_privilege('oq.events', 'TRUNCATE'),
                has_table_privilege('oq.open_questions', 'INSERT') OR has_table_privilege('oq.open_questions', 'DELETE')
                  OR has_table_privilege('oq.question_links', 'INSERT')
           FROM pg_roles r, pg_class c
          WHERE r.rolname = current_user AND c.oid = 'oq.events'::regclass",
        &[],
    )?;
    let Some(r) = rows.first() else {
        return Err(OqError::Internal(
            "store: the role could not be read".into(),
        ));
    };
    let (superuser, owner, alter, derived): (bool, bool, bool, bool) =
        (r.get(0), r.get(1), r.get(2), r.get(3));
    let why = if superuser {
        "is a superuser"
    } else if owner {
        "owns the log (it could drop its triggers)"
    } else if alter {
        "may UPDATE, DELETE or TRUNCATE the log"
    } else if derived {
        "may write the derived tables"
    } else {
        return Ok(());
    };
    Err(OqError::store(
        ErrorCode::StoreRoleCanAlterHistory,
        format!(
            "the role {} {why}: serve with a role that cannot alter history — the one `oq store migrate --grant <role>` set up",
            target.user()
        ),
    ))
}

/// `oq store migrate`: brings the database to this binary's schema (creating it when
/// empty) and grants `grant` what serving needs. Run as the owner. Returns the version
/// it found.
pub fn migrate(target: &PgTarget, grant: Option<&str>) -> Result<SchemaState, OqError> {
    blocking(|| migrate_here(target, grant))
}

fn migrate_here(target: &PgTarget, grant: Option<&str>) -> Result<SchemaState, OqError> {
    let mut conn = target.connect()?;
    if let Some(role) = grant
        && role == target.user()
    {
        return Err(OqError::invalid(
            ErrorCode::InvalidRole,
            format!(
                "--grant {role}: that is the role migrating (the owner); grant a role of its own that serves"
            ),
        ));
    }
    conn.batch(&format!(
        "BEGIN; SELECT pg_advisory_xact_lock({})",
        schema::MIGRATE_LOCK
    ))?;
    let result = (|| {
        let found = schema_state(&mut conn, target)?;
        let from = match found {
            SchemaState::Foreign => return Err(foreign(target.shown())),
            SchemaState::At(v) if v > schema::LATEST_VERSION => {
                return Err(too_new(target.shown(), v));
            }
            SchemaState::At(v) => v,
            SchemaState::Empty => {
                conn.batch("CREATE SCHEMA oq; REVOKE ALL ON SCHEMA oq FROM PUBLIC")?;
                0
            }
        };
        for step in &schema::MIGRATIONS[from as usize..] {
            conn.batch(step)?;
        }
        if from < schema::CHAINED_FROM {
            chain::backfill(&mut conn)?;
        }
        conn.batch(&format!(
            "INSERT INTO oq.meta (application, version) VALUES ({}, {})
             ON CONFLICT (singleton) DO UPDATE SET version = EXCLUDED.version",
            schema::APPLICATION_ID,
            schema::LATEST_VERSION
        ))?;
        if let Some(role) = grant {
            conn.batch(&schema::grants(role))?;
        }
        Ok(found)
    })();
    match result {
        Ok(found) => {
            conn.batch("COMMIT")?;
            Ok(found)
        }
        Err(e) => {
            let _ = conn.batch("ROLLBACK");
            Err(e)
        }
    }
}
