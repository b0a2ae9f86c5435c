//! The durable outbox: answers that must reach a source, kept in
//! `<data dir>/outbox.sqlite3` until the source has them.
//!
//! Every answer through a remote source is written here first (write-ahead), synced to
//! disk (WAL + `synchronous=FULL`) before anything is sent or the screen says "queued",
//! then delivered with its random idempotency key. Whatever kills the client — kill -9,
//! a power cut, a panic — the entry is either still `pending` (and the next delivery
//! sends it again under the same key, which the server answers with the first result,
//! so it is never applied twice) or already settled. Settled entries are kept, never
//! deleted, so a user's text is never dropped:
//!
//! - `delivered`: the source has it (200, or the first result of a retried key);
//! - `conflict`: the question was answered or closed elsewhere meanwhile
//!   (`pergunta_ja_respondida`, `question_closed`); the text stays here and `oq outbox`
//!   shows it;
//! - `refused`: any other refusal, with its reason; the text stays here too;
//! - `uncertain` (not settled): the server answered that its upstream (a bridged
//!   OpenCode) may have the answer (`upstream_uncertain`). It is never sent upstream
//!   again by the server; delivering it again under its key asks the server how it
//!   ended: the first answer (it became the person's: `delivered`), still unknown
//!   (`question_submission_claimed`: stays `uncertain`), or settled otherwise
//!   (`conflict`).
//!
//! An unreachable source settles nothing: delivery stops and is tried again later. A
//! reachable server whose upstream cannot be reached right now leaves an entry pending
//! too (nothing was sent), without stopping the others. The outbox knows nothing of
//! HTTP: it delivers through
//! [`Source::answer_once`](crate::source::Source::answer_once).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::domain::{AnswerInput, ErrorCode, OqError};
use crate::engine::sqlite::now_ms;

mod delivery;

pub use delivery::Delivery;

pub const OUTBOX_FILE: &str = "outbox.sqlite3";

/// Where an entry stands. `Pending` and `Uncertain` are delivered (again); the others
/// are settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Pending,
    /// The server's upstream may have it; its fate is asked again on delivery.
    Uncertain,
    Delivered,
    Conflict,
    Refused,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Uncertain => "uncertain",
            State::Delivered => "delivered",
            State::Conflict => "conflict",
            State::Refused => "refused",
        }
    }
    fn parse(s: &str) -> State {
        match s {
            "uncertain" => State::Uncertain,
            "delivered" => State::Delivered,
            "conflict" => State::Conflict,
            "refused" => State::Refused,
            _ => State::Pending,
        }
    }
}

/// One answer on its way (or settled), as `oq outbox --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The idempotency key, random, sent with every delivery of this entry.
    pub key: String,
    /// The source it is for (`describe()`: the base URL, or `local`).
    pub source: String,
    pub project: Option<String>,
    pub question_id: String,
    pub body: AnswerInput,
    pub created_at: i64,
    pub state: State,
    /// Why it is not delivered (a conflict's or a refusal's one line).
    pub detail: Option<String>,
}

#[derive(Clone)]
pub struct Outbox {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

/// The outbox's schema, by `PRAGMA user_version`: 0 is the first (no `uncertain`
/// state), 1 adds it. The table is made, or rebuilt in one transaction (a CHECK cannot be
/// altered) with every row kept, only when it is not at version 1: an outbox already
/// there opens without a write (on a full disk, say).
fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    const TABLE: &str = "(
        key TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        project TEXT,
        question_id TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending'
            CHECK (state IN ('pending', 'uncertain', 'delivered', 'conflict', 'refused')),
        detail TEXT,
        settled_at INTEGER
    )";
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version >= 1 {
        return Ok(());
    }
    conn.execute_batch(&format!(
        "BEGIN IMMEDIATE;
         CREATE TABLE IF NOT EXISTS outbox {TABLE};
         CREATE TABLE outbox_v1 {TABLE};
         INSERT INTO outbox_v1 SELECT key, source, project, question_id, body, created_at,
                state, detail, settled_at FROM outbox;
         DROP TABLE outbox;
         ALTER TABLE outbox_v1 RENAME TO outbox;
         CREATE INDEX IF NOT EXISTS outbox_pending ON outbox (source, state, created_at);
         PRAGMA user_version = 1;
         COMMIT;"
    ))
}

/// How long an outbox open waits on another process's lock before it fails.
const BUSY_WAIT: Duration = Duration::from_secs(30);

/// Switches a new outbox file to WAL. Two processes making the same fresh file WAL at once
/// can get SQLITE_BUSY without the busy handler being called (SQLite refuses to wait
/// where waiting could deadlock), so the switch is retried for as long as the busy
/// timeout would have waited.
fn wal_mode(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + BUSY_WAIT;
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

fn db(e: rusqlite::Error) -> OqError {
    OqError::store(ErrorCode::Outbox, format!("the outbox: {e}"))
}

/// A fresh key: 128 random bits, so two clients never share one.
pub fn new_key() -> Result<String, OqError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| OqError::Internal(format!("random key: {e}")))?;
    Ok(format!("ob-{}", hex::encode(bytes)))
}

impl Outbox {
    /// Opens (creating) `<data_dir>/outbox.sqlite3`.
    pub fn open(data_dir: &Path) -> Result<Outbox, OqError> {
        let path = data_dir.join(OUTBOX_FILE);
        crate::private_fs::create_dir(data_dir)
            .and_then(|()| crate::private_fs::ensure_file(&path))
            .map_err(|e| {
                OqError::store(
                    ErrorCode::Outbox,
                    format!("cannot create {}: {e}", path.display()),
                )
            })?;
        let conn = Connection::open(&path).map_err(db)?;
        // Many `oq answer` processes may share the file: wait on a lock, never fail on it.
        conn.busy_timeout(BUSY_WAIT).map_err(db)?;
        wal_mode(&conn).map_err(db)?;
        // The row is on disk before the caller is told "queued".
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(db)?;
        migrate(&conn).map_err(db)?;
        Ok(Outbox {
            conn: Arc::new(Mutex::new(conn)),
            path,
        })
    }

    /// An outbox that lives in memory only, for the local source when the data dir's
    /// cannot be opened (a full disk): the local engine never queues an answer, so
    /// nothing it would hold could outlive the process anyway.
    pub fn in_memory() -> Result<Outbox, OqError> {
        let conn = Connection::open_in_memory().map_err(db)?;
        migrate(&conn).map_err(db)?;
        Ok(Outbox {
            conn: Arc::new(Mutex::new(conn)),
            path: PathBuf::from(":memory:"),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, OqError> {
        let conn = self
            .conn
            .lock()
            .map_err(|_| OqError::Internal("the outbox lock is poisoned".into()))?;
        f(&conn).map_err(db)
    }

    /// Writes a pending entry and syncs it. The same key twice is one entry (the TUI's
    /// cleanup may hand over a submission the source already wrote ahead).
    pub fn enqueue(
        &self,
        key: &str,
        source: &str,
        project: Option<&str>,
        question_id: &str,
        body: &AnswerInput,
    ) -> Result<(), OqError> {
        let json = serde_json::to_string(body).map_err(|e| OqError::Internal(e.to_string()))?;
        self.with(|c| {
            c.execute(
                "INSERT OR IGNORE INTO outbox (key, source, project, question_id, body, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![key, source, project, question_id, json, now_ms()],
            )
            .map(|_| ())
        })
    }

    fn settle(&self, key: &str, state: State, detail: Option<&str>) -> Result<(), OqError> {
        self.with(|c| {
            c.execute(
                "UPDATE outbox SET state = ?2, detail = ?3, settled_at = ?4
                 WHERE key = ?1 AND state IN ('pending', 'uncertain')",
                params![key, state.as_str(), detail, now_ms()],
            )
            .map(|_| ())
        })
    }

    pub fn mark_delivered(&self, key: &str) -> Result<(), OqError> {
        self.settle(key, State::Delivered, None)
    }
    pub fn mark_conflict(&self, key: &str, detail: &str) -> Result<(), OqError> {
        self.settle(key, State::Conflict, Some(detail))
    }
    pub fn mark_refused(&self, key: &str, detail: &str) -> Result<(), OqError> {
        self.settle(key, State::Refused, Some(detail))
    }
    /// Not settled: the server's upstream may have it (its detail says why).
    pub fn mark_uncertain(&self, key: &str, detail: &str) -> Result<(), OqError> {
        self.with(|c| {
            c.execute(
                "UPDATE outbox SET state = 'uncertain', detail = ?2
                 WHERE key = ?1 AND state IN ('pending', 'uncertain')",
                params![key, detail],
            )
            .map(|_| ())
        })
    }

    /// Forgets a pending entry whose refusal the person saw at once (the door printed it,
    /// the TUI kept the form and its draft): nothing is left to reconcile.
    pub fn discard(&self, key: &str) -> Result<(), OqError> {
        self.with(|c| {
            c.execute(
                "DELETE FROM outbox WHERE key = ?1 AND state = 'pending'",
                params![key],
            )
            .map(|_| ())
        })
    }

    /// The entries still to deliver for `source` (pending and uncertain), oldest first.
    pub fn pending(&self, source: &str) -> Result<Vec<Entry>, OqError> {
        self.query(
            "WHERE source = ?1 AND state IN ('pending', 'uncertain') ORDER BY created_at, key",
            Some(source),
        )
    }

    /// Every entry, oldest first.
    pub fn list(&self) -> Result<Vec<Entry>, OqError> {
        self.query("ORDER BY created_at, key", None)
    }

    pub fn get(&self, key: &str) -> Result<Option<Entry>, OqError> {
        Ok(self.query("WHERE key = ?1", Some(key))?.into_iter().next())
    }

    /// How many entries are not settled for `source` (pending or uncertain: the TUI's
    /// status line), or for any source.
    pub fn count_pending(&self, source: Option<&str>) -> Result<usize, OqError> {
        self.with(|c| {
            c.query_row(
                "SELECT count(*) FROM outbox WHERE state IN ('pending', 'uncertain')
                   AND (?1 IS NULL OR source = ?1)",
                params![source],
                |r| r.get::<_, i64>(0),
            )
            .optional()
            .map(|n| n.unwrap_or(0).max(0) as usize)
        })
    }

    fn query(&self, tail: &str, arg: Option<&str>) -> Result<Vec<Entry>, OqError> {
        let sql = format!(
            "SELECT key, source, project, question_id, body, created_at, state, detail FROM outbox {tail}"
        );
        type Row = (
            String,
            String,
            Option<String>,
            String,
            String,
            i64,
            String,
            Option<String>,
        );
        let rows: Vec<Row> = self.with(|c| {
            let mut stmt = c.prepare(&sql)?;
            let map = |r: &rusqlite::Row<'_>| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, i64>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, Option<String>>(7)?,
                ))
            };
            let rows: rusqlite::Result<Vec<Row>> = match arg {
                Some(a) => stmt.query_map(params![a], map)?.collect(),
                None => stmt.query_map([], map)?.collect(),
            };
            rows
        })?;
        rows.into_iter()
            .map(
                |(key, source, project, question_id, body, created_at, state, detail)| {
                    let body = serde_json::from_str(&body).map_err(|e| {
                        OqError::store(ErrorCode::Outbox, format!("entry {key}: {e}"))
                    })?;
                    Ok(Entry {
                        key,
                        source,
                        project,
                        question_id,
                        body,
                        created_at,
                        state: State::parse(&state),
                        detail,
                    })
                },
            )
            .collect()
    }
}

/// A failure that says nothing about the answer: the source was not reached, refused our
/// identity, replied with something unreadable, or a store was busy. The entry stays
/// pending. (A server that answered about its upstream is not among them: that is an
/// answer, [`OqError::Upstream`].)
pub fn retry_later(e: &OqError) -> bool {
    matches!(
        e,
        OqError::Source { .. }
            | OqError::Store { .. }
            | OqError::Internal(_)
            | OqError::Queued { .. }
    )
}
