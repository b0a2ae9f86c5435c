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
//! - `conflict`: the question was answered elsewhere meanwhile (`pergunta_ja_respondida`);
//!   the text stays here and `oq outbox` shows it;
//! - `refused`: any other refusal, with its reason; the text stays here too.
//!
//! An unreachable source settles nothing: delivery stops and is tried again later. The
//! outbox knows nothing of HTTP: it delivers through [`Source::answer_once`].

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::Source;
use crate::domain::{AnswerInput, ErrorCode, OqError};
use crate::engine::sqlite::now_ms;

pub const OUTBOX_FILE: &str = "outbox.sqlite3";

/// Where an entry stands. Only `Pending` is ever sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Pending,
    Delivered,
    Conflict,
    Refused,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Delivered => "delivered",
            State::Conflict => "conflict",
            State::Refused => "refused",
        }
    }
    fn parse(s: &str) -> State {
        match s {
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

/// What one delivery attempt did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    pub delivered: Vec<String>,
    pub conflicts: Vec<String>,
    pub refused: Vec<String>,
    /// Set when the source could not be reached: the rest stays pending.
    pub stopped: Option<String>,
}

#[derive(Clone)]
pub struct Outbox {
    conn: Arc<Mutex<Connection>>,
    path: PathBuf,
}

/// The table, made only when missing: an existing outbox opens without a write (on a
/// full disk, say).
fn create_schema(conn: &Connection) -> Result<(), OqError> {
    let present: bool = conn
        .query_row(
            "SELECT count(*) > 0 FROM sqlite_schema WHERE name = 'outbox'",
            [],
            |r| r.get(0),
        )
        .map_err(db)?;
    if present {
        return Ok(());
    }
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS outbox (
                key TEXT PRIMARY KEY,
                source TEXT NOT NULL,
                project TEXT,
                question_id TEXT NOT NULL,
                body TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                state TEXT NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'delivered', 'conflict', 'refused')),
                detail TEXT,
                settled_at INTEGER
            );
            CREATE INDEX IF NOT EXISTS outbox_pending ON outbox (source, state, created_at);",
    )
    .map_err(db)
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
        conn.busy_timeout(Duration::from_secs(30)).map_err(db)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(db)?;
        // The row is on disk before the caller is told "queued".
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(db)?;
        create_schema(&conn)?;
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
        create_schema(&conn)?;
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
                 WHERE key = ?1 AND state = 'pending'",
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

    /// The pending entries for `source`, oldest first.
    pub fn pending(&self, source: &str) -> Result<Vec<Entry>, OqError> {
        self.query(
            "WHERE source = ?1 AND state = 'pending' ORDER BY created_at, key",
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

    /// How many entries wait for `source` (the TUI's status line), or for any source.
    pub fn count_pending(&self, source: Option<&str>) -> Result<usize, OqError> {
        self.with(|c| {
            c.query_row(
                "SELECT count(*) FROM outbox WHERE state = 'pending' AND (?1 IS NULL OR source = ?1)",
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

    /// Sends one entry and settles it by the outcome; `Err` only when the source is
    /// unreachable (the entry stays pending) or the outbox itself fails.
    pub async fn deliver_one<S: Source>(
        &self,
        source: &S,
        entry: &Entry,
    ) -> Result<State, OqError> {
        let sent = source
            .answer_once(
                entry.project.as_deref(),
                &entry.question_id,
                &entry.body,
                &entry.key,
            )
            .await;
        match sent {
            Ok(_) => {
                self.mark_delivered(&entry.key)?;
                Ok(State::Delivered)
            }
            Err(e) if retry_later(&e) => Err(e),
            Err(e @ OqError::AlreadyAnswered { .. }) => {
                self.mark_conflict(&entry.key, &format!("answered elsewhere meanwhile: {e}"))?;
                Ok(State::Conflict)
            }
            Err(e) => {
                self.mark_refused(&entry.key, &format!("{}: {e}", e.code()))?;
                Ok(State::Refused)
            }
        }
    }

    /// Delivers every pending entry for `source` (named `name`), oldest first, stopping
    /// at the first sign that the source is unreachable.
    pub async fn deliver_all<S: Source>(
        &self,
        source: &S,
        name: &str,
    ) -> Result<Delivery, OqError> {
        self.deliver_all_except(source, name, |_| false).await
    }

    /// [`Outbox::deliver_all`] leaving out the keys `skip` names (answers this process is
    /// sending right now: they settle themselves).
    pub async fn deliver_all_except<S: Source>(
        &self,
        source: &S,
        name: &str,
        skip: impl Fn(&str) -> bool,
    ) -> Result<Delivery, OqError> {
        let mut report = Delivery::default();
        for entry in self.pending(name)?.into_iter().filter(|e| !skip(&e.key)) {
            match self.deliver_one(source, &entry).await {
                Ok(State::Delivered) => report.delivered.push(entry.key),
                Ok(State::Conflict) => report.conflicts.push(entry.key),
                Ok(_) => report.refused.push(entry.key),
                Err(e) if retry_later(&e) => {
                    report.stopped = Some(e.to_string());
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(report)
    }
}

/// A failure that says nothing about the answer: the source was not reached, refused our
/// identity, replied with something unreadable, or its store was busy. The entry stays
/// pending.
pub fn retry_later(e: &OqError) -> bool {
    matches!(
        e,
        OqError::Source { .. }
            | OqError::Store { .. }
            | OqError::Internal(_)
            | OqError::Queued { .. }
    )
}
