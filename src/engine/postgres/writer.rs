//! Group commit on one writer thread per server: the decisions queued by then share one
//! PostgreSQL transaction, one advisory lock turn and one WAL flush.
//!
//! Every batch is `BEGIN; pg_advisory_xact_lock(WRITE_LOCK); max(seq)` in one round trip,
//! and is whatever queued by the time that returned (so with several servers a writer
//! that waited for the lock takes all that arrived meanwhile); then each queued decision
//! reads, decides and appends in turn on the same connection (each sees the writes of
//! those before it), then `pg_notify` and `COMMIT` go in one more. The lock makes the
//! writers of every server on the database decide one batch at a time, as SQLite's write
//! lock does, so positions are handed out in commit order: a reader never sees position
//! n+1 before n, which is what lets `Last-Event-ID` resume on any server without a gap. Callers are told only after COMMIT returned: "saved" means flushed.
//!
//! A refused decision writes nothing and spoils nothing. A database error inside the
//! transaction (a unique index: a bug or tampering; a lost connection) ends the batch:
//! every member is told nothing of it was saved — or, when the connection died during
//! COMMIT, that its fate is unknown (a retry with the same idempotency key is safe).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;

use postgres::SimpleQueryMessage;

use super::conn::{Backoff, Conn, PgTarget, Slot, UNAVAILABLE, is_unavailable};
use super::schema::{CHANNEL, WRITE_LOCK, quote_literal};
use super::view::PgView;
use super::{chain, listen};
use crate::domain::{OqError, StoredEvent};
use crate::engine::ids;
use crate::engine::sqlite::chain::Link;
use crate::engine::store::{LogHead, NewEvent, StoreView};

/// A batch stops taking jobs at this size, so its first members are not kept waiting.
const MAX_BATCH: usize = 256;
pub(super) const COLUMNS: usize = 13;

/// The transaction a batch's decisions run in, the next free position, and each
/// project's newest `project_seq` and chain link as far as this batch wrote them.
pub struct Tx<'c> {
    conn: &'c mut Conn,
    next_seq: i64,
    projects: Vec<(String, i64, Link)>,
    /// What the batch appended, as the NOTIFY carries it to every server's feed.
    heads: Vec<LogHead>,
}

impl Tx<'_> {
    /// The newest position and link of `project`, read once per batch (under the write
    /// lock no other writer appends to it meanwhile), with the read-ahead when it read a
    /// question of the project.
    fn newest(&mut self, project: &str) -> Result<&mut (String, i64, Link), OqError> {
        let i = match self.projects.iter().position(|(p, ..)| p == project) {
            Some(i) => i,
            None => {
                let (seq, link) = match self.conn.ahead.head(project) {
                    Some(head) => head,
                    None => chain::newest(self.conn, project)?,
                };
                self.projects.push((project.to_string(), seq, link));
                self.projects.len() - 1
            }
        };
        Ok(&mut self.projects[i])
    }
}

/// Tells a caller its outcome once the batch's end is known.
type Deliver = Box<dyn FnOnce(Result<(), OqError>) + Send>;
/// A queued write: decides and appends inside the batch (or, given the reason no
/// transaction could begin, does not run).
type Job = Box<dyn FnOnce(Result<&mut Tx<'_>, OqError>) -> Deliver + Send>;
/// A job and the question it will read, if it said (read ahead with the batch's others).
type Queued = (Option<String>, Job);

pub struct Writer {
    jobs: Option<Sender<Queued>>,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    pub fn start(target: PgTarget, backoff: Arc<Backoff>) -> Result<Writer, OqError> {
        let (jobs, queue) = mpsc::channel::<Queued>();
        let thread = std::thread::Builder::new()
            .name("oq-pg-writer".into())
            .spawn(move || run(&target, &backoff, &queue))
            .map_err(|e| OqError::Internal(format!("cannot start the store writer: {e}")))?;
        Ok(Writer {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// Queues `decide`; `reply` gets the outcome after the batch committed (or failed).
    /// `reads` names the question `decide` will read, so the batch reads it ahead.
    pub fn submit<T: Send + 'static>(
        &self,
        reads: Option<String>,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
        reply: impl FnOnce(Result<(Vec<StoredEvent>, T), OqError>) + Send + 'static,
    ) {
        let job: Job = Box::new(move |tx| {
            let outcome = match tx {
                Err(e) => Err(e),
                Ok(tx) => run_decision(tx, decide),
            };
            Box::new(move |batch: Result<(), OqError>| match outcome {
                Err(e) => reply(Err(e)),
                Ok(v) => reply(batch.map(|()| v)),
            })
        });
        let sent = self.jobs.as_ref().map(|j| j.send((reads, job)));
        if let Some(Err(mpsc::SendError((_, job)))) = sent {
            job(Err(writer_gone()))(Err(writer_gone()));
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub fn writer_gone() -> OqError {
    OqError::Internal("the store's writer has stopped".into())
}

fn run_decision<T>(
    tx: &mut Tx<'_>,
    decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError>,
) -> Result<(Vec<StoredEvent>, T), OqError> {
    if let Some(e) = &tx.conn.failed {
        return Err(e.clone());
    }
    let decided = catch_unwind(AssertUnwindSafe(|| decide(&PgView::new(tx.conn))))
        .unwrap_or_else(|_| Err(OqError::Internal("a decision panicked".into())));
    let (events, value) = decided?;
    let stored = append(tx, events)?;
    Ok((stored, value))
}

fn run(target: &PgTarget, backoff: &Backoff, queue: &Receiver<Queued>) {
    let mut slot = Slot::empty();
    while let Ok(first) = queue.recv() {
        // A connection idle since the database went away fails at BEGIN, before anything
        // of the batch ran: start once more on a new one.
        let held = slot.is_connected();
        let mut begun = slot.get(target, backoff).and_then(begin);
        if held && matches!(&begun, Err(e) if is_unavailable(e)) {
            slot.reset();
            begun = slot.get(target, backoff).and_then(begin);
        }
        // The batch is what queued by the time the lock was ours: while another server's
        // batch held it, this server's requests kept arriving, and they join this turn
        // instead of waiting for the next (the busier the database, the larger the turns).
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let next_seq = match begun {
            Ok(n) => n,
            Err(e) => {
                slot.reset();
                for (_, job) in batch {
                    job(Err(e.clone()))(Err(e.clone()));
                }
                continue;
            }
        };
        let conn = match slot.get(target, backoff) {
            Ok(c) => c,
            Err(e) => {
                for (_, job) in batch {
                    job(Err(e.clone()))(Err(e.clone()));
                }
                continue;
            }
        };
        read_ahead(conn, &batch);
        let mut tx = Tx {
            conn,
            next_seq,
            projects: Vec::new(),
            heads: Vec::new(),
        };
        let deliveries: Vec<Deliver> = batch.into_iter().map(|(_, job)| job(Ok(&mut tx))).collect();
        let appended = (tx.next_seq > next_seq).then_some(tx.next_seq - 1);
        // What is still held back goes before the COMMIT; a refusal of it fails the batch.
        if let Err(e) = tx.conn.flush() {
            tx.conn.failed.get_or_insert(e);
        }
        tx.conn.ahead.clear();
        let outcome = match tx.conn.failed.take() {
            Some(e) => {
                let _ = tx.conn.batch("ROLLBACK");
                Err(nothing_saved(e))
            }
            None => commit(
                tx.conn,
                appended.map(|last| listen::payload(&tx.heads, last)),
            ),
        };
        if outcome.is_err() && tx.conn.is_closed() {
            slot.reset();
        }
        for deliver in deliveries {
            deliver(outcome.clone());
        }
    }
}

/// BEGIN, the write lock, and the newest position: one round trip.
fn begin(conn: &mut Conn) -> Result<i64, OqError> {
    conn.failed = None;
    conn.ahead.clear();
    let messages = conn.simple(&format!(
        "BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK}); SELECT coalesce(max(seq), 0) FROM oq.events"
    ))?;
    let max = messages
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => r.get(0).and_then(|v| v.parse::<i64>().ok()),
            _ => None,
        })
        .next_back()
        .ok_or_else(|| OqError::Internal("store: no position read".into()))?;
    Ok(max + 1)
}

/// Notifies the servers listening when something was appended (delivered only if the
/// COMMIT lands, in commit order; `notify` from [`listen::payload`]) and commits, in one
/// round trip.
fn commit(conn: &mut Conn, notify: Option<String>) -> Result<(), OqError> {
    let sql = match notify {
        Some(payload) => format!(
            "SELECT pg_notify('{CHANNEL}', {}); COMMIT",
            quote_literal(&payload)
        ),
        None => "COMMIT".to_string(),
    };
    conn.batch(&sql)
        .map_err(|e| match e {
            OqError::Store { code, .. } if code == UNAVAILABLE => OqError::store(
                UNAVAILABLE,
                "the database connection was lost during COMMIT: whether this write was saved is unknown; a retry with the same Idempotency-Key is safe",
            ),
            other => nothing_saved(other),
        })
}

fn nothing_saved(e: OqError) -> OqError {
    match e {
        OqError::Store { code, message } => OqError::Store {
            code,
            message: format!("{message}; nothing of this write was saved"),
        },
        other => other,
    }
}

/// Appends `events` at `tx`'s next positions: all of them or (the transaction failing)
/// none.
fn append(tx: &mut Tx<'_>, events: Vec<NewEvent>) -> Result<Vec<StoredEvent>, OqError> {
    let at = crate::engine::sqlite::now_ms();
    let mut stored = Vec::with_capacity(events.len());
    let mut payloads = Vec::with_capacity(events.len());
    let mut links = Vec::with_capacity(events.len());
    for e in events {
        let seq = tx.next_seq + stored.len() as i64;
        let newest = tx.newest(&e.project_id)?;
        let s = StoredEvent {
            seq,
            project_seq: newest.1 + 1,
            event_id: ids::event_id(),
            project_id: e.project_id,
            actor: e.actor,
            at,
            event: e.event,
        };
        let payload =
            serde_json::to_string(&s.event).map_err(|e| OqError::Internal(e.to_string()))?;
        let link = chain::link_stored(&newest.2, &s, &payload);
        (newest.1, newest.2) = (s.project_seq, link);
        stored.push(s);
        payloads.push(payload);
        links.push(link);
    }
    // Sent with the connection's next query (`ahead.rs`): the decisions after this one
    // read through that connection, so each still sees this append.
    for ((s, payload), link) in stored.iter().zip(payloads).zip(links) {
        tx.heads.push(LogHead {
            seq: s.seq,
            project_id: s.project_id.clone(),
            project_seq: s.project_seq,
            kind: s.event.type_name().to_string(),
        });
        tx.conn.ahead.hold(s.clone(), payload, link);
    }
    tx.next_seq += stored.len() as i64;
    Ok(stored)
}

/// Reads the questions the batch's jobs named, in one query, before any of them decides.
/// A failure here is the transaction's (`failed`): every job of the batch is told.
fn read_ahead(conn: &mut Conn, batch: &[Queued]) {
    let ids: Vec<String> = batch.iter().filter_map(|(id, _)| id.clone()).collect();
    if ids.is_empty() {
        return;
    }
    if let Ok(reads) = super::ahead::read(conn, &ids) {
        conn.ahead.remember(reads);
    }
}

/// The rows held back, sent as one INSERT of column arrays whatever their number (one
/// statement shape, one round trip), in position order.
pub(super) fn insert_pending(
    conn: &mut Conn,
    pending: &[(StoredEvent, String, Link)],
) -> Result<(), OqError> {
    let col = |f: fn(&StoredEvent) -> Option<&str>| -> Vec<Option<&str>> {
        pending.iter().map(|(s, ..)| f(s)).collect()
    };
    let seq: Vec<i64> = pending.iter().map(|(s, ..)| s.seq).collect();
    let project_seq: Vec<i64> = pending.iter().map(|(s, ..)| s.project_seq).collect();
    let at: Vec<i64> = pending.iter().map(|(s, ..)| s.at).collect();
    let event_id = col(|s| Some(s.event_id.as_str()));
    let kind = col(|s| Some(s.event.type_name()));
    let project = col(|s| Some(s.project_id.as_str()));
    let session = col(|s| s.event.session_id());
    let question = col(|s| s.event.question_id());
    let task = col(|s| s.event.task_id());
    let story = col(|s| s.event.story_id());
    let actor = col(|s| Some(s.actor.as_str()));
    let payload: Vec<&str> = pending.iter().map(|(_, p, _)| p.as_str()).collect();
    let chain: Vec<&[u8]> = pending.iter().map(|(.., l)| l.as_slice()).collect();
    conn.query(
        UNNEST_INSERT,
        &[
            &seq,
            &project_seq,
            &event_id,
            &kind,
            &project,
            &session,
            &question,
            &task,
            &story,
            &actor,
            &at,
            &payload,
            &chain,
        ],
    )
    .map(|_| ())
}

/// [`insert_pending`]'s statement: the columns as arrays, unnested in their order.
const UNNEST_INSERT: &str = "INSERT INTO oq.events (seq, project_seq, event_id, type, project_id, session_id, question_id, task_id, story_id, actor, at, payload, chain)
    SELECT seq, project_seq, event_id, type, project_id, session_id, question_id, task_id, story_id, actor, at, payload::json, chain
      FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::bigint[], $12::text[], $13::bytea[])
           WITH ORDINALITY AS r(seq, project_seq, event_id, type, project_id, session_id, question_id, task_id, story_id, actor, at, payload, chain, n)
     ORDER BY n";

/// The INSERT of `rows` whole rows (every column, the payload as JSON text, the link):
/// `oq store copy`'s, [`COLUMNS`] parameters a row.
pub(super) fn insert_sql(rows: usize) -> String {
    let tuples: Vec<String> = (0..rows)
        .map(|i| {
            let b = i * COLUMNS;
            let params: Vec<String> = (b + 1..b + COLUMNS - 1).map(|n| format!("${n}")).collect();
            format!(
                "({}, (${}::text)::json, ${})",
                params.join(", "),
                b + COLUMNS - 1,
                b + COLUMNS
            )
        })
        .collect();
    format!(
        "INSERT INTO oq.events (seq, project_seq, event_id, type, project_id, session_id, question_id, task_id, story_id, actor, at, payload, chain) VALUES {}",
        tuples.join(", ")
    )
}
