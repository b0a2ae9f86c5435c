//! Group commit on one writer thread: the writes of a process share one SQLite
//! transaction and one fsync.
//!
//! Every write is `BEGIN IMMEDIATE … COMMIT` with `synchronous=FULL`, so a lone writer
//! pays one fsync per answer; under load that fsync, serialised, would be the whole cost.
//! Here one thread owns the write connection. Callers queue a *job* (their decision) and
//! wait; the thread takes the first job, begins a transaction, runs every job that is
//! queued by then (up to [`MAX_BATCH`]) back to back, commits once, and only then hands
//! each caller its result — so "saved" still means on disk. Jobs that arrive during a
//! commit form the next batch.
//!
//! The flush to disk is taken off this path too (`flush.rs`): after a commit the batch
//! goes to the flushing thread, which tells its callers once it is on disk, while this
//! thread already decides the next batch.
//!
//! Why a thread and not callers taking turns on a lock: the decisions are serial either
//! way (they read what the ones before them wrote), and handing a lock from one blocked
//! thread to the next costs a wake-up each time, during which nobody decides. The thread
//! runs the queue without a single switch. A lone write where COMMIT flushes (the doors,
//! the TUI) skips the thread: with nothing queued it runs on the caller's own thread.
//!
//! A refusal is decided before anything is written and an append is all-or-nothing (see
//! `append.rs`), so a refused decision spoils nothing of the others' in the batch, and
//! none needs a savepoint of its own. A refusal by the schema itself (only a bug or
//! tampering reaches it) rolls the whole transaction back: the batch fails whole, and
//! each member is told (`run_batch`). Decisions read through the same connection
//! inside the transaction, so each sees the writes of those before it: the order is the
//! serial order.

use std::fs::File;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use rusqlite::Connection;

use super::checkpoint::{self, Checkpointer};
use super::flush::{self, Delivery, Durability, Ended};
use super::health::Health;
use super::view::SqliteView;
use super::{fault, search, vfs};
use crate::domain::{OqError, StoredEvent};
use crate::engine::store::{NewEvent, StoreView};

/// A batch stops taking jobs at this size, so a steady stream of writers cannot keep its
/// first members waiting for the commit indefinitely.
const MAX_BATCH: usize = 256;

/// A queued write: runs its decision and append on the writer's connection (or, given
/// none because no transaction could begin, does not run), and returns how to deliver
/// the outcome once the batch's end is known, with the fault of the store it met, if any
/// (a full disk, a failed disk), which the rest of its batch is then told of.
type Job = Box<dyn FnOnce(Option<&Connection>) -> (Delivery, Option<OqError>) + Send>;

pub struct Writer {
    /// Taken by the writer thread for each batch, and by a lone caller (see `run_inline`).
    conn: Arc<Mutex<Connection>>,
    jobs: Option<Sender<Job>>,
    /// Jobs queued for the writer thread and not yet taken by it.
    queued: Arc<AtomicUsize>,
    threads: Vec<JoinHandle<()>>,
    durability: Arc<Durability>,
    health: Arc<Health>,
}

impl Writer {
    /// The writer over `conn`. `apart` is the WAL file, flushed by a thread of its own
    /// (`flush.rs`), and a connection for the checkpoints, run by another
    /// (`checkpoint.rs`); without it each COMMIT flushes, and checkpoints, as SQLite does.
    /// `health` refuses every batch once the store failed or was found damaged.
    pub fn new(
        conn: Connection,
        apart: Option<(File, Connection)>,
        health: Arc<Health>,
    ) -> Result<Self, OqError> {
        let (wal, checkpoints) = match apart {
            Some((wal, checkpoints)) => {
                conn.pragma_update(None, "synchronous", "NORMAL")?;
                conn.pragma_update(None, "wal_autocheckpoint", checkpoint::WRITER_BACKSTOP)?;
                (
                    Some(wal),
                    Some(Checkpointer::start(checkpoints, health.clone())?),
                )
            }
            None => (None, None),
        };
        let durability = Arc::new(Durability::new(wal.is_some()));
        let (jobs, queue) = mpsc::channel::<Job>();
        let (ended, flushing) = mpsc::channel::<Ended>();
        let spawn = |name: &str, work: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(name.into())
                .spawn(work)
                .map_err(|e| OqError::Internal(format!("store: no {name} thread: {e}")))
        };
        let (counts, failures) = (durability.clone(), health.clone());
        let flusher = spawn(
            "oq-store-flush",
            Box::new(move || flush::run(wal, &counts, &failures, flushing)),
        )?;
        let conn = Arc::new(Mutex::new(conn));
        let queued = Arc::new(AtomicUsize::new(0));
        let (counts, shared, waiting) = (durability.clone(), conn.clone(), queued.clone());
        let standing = health.clone();
        let writer = spawn(
            "oq-store-writer",
            Box::new(move || {
                let turn = Turn {
                    durability: &counts,
                    health: &standing,
                };
                run(&shared, &queue, &waiting, turn, &ended, checkpoints)
            }),
        )?;
        Ok(Writer {
            conn,
            queued,
            jobs: Some(jobs),
            // The writer first: its end closes the flusher's queue.
            threads: vec![writer, flusher],
            durability,
            health,
        })
    }

    pub fn durability(&self) -> &Durability {
        &self.durability
    }

    /// Runs `decide` in the shared transaction, appends its events with `append`, and
    /// returns once they are on disk (or the refusal, once the batch ended).
    pub fn transact<T: Send + 'static>(
        &self,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
        append: fn(&Connection, Vec<NewEvent>) -> Result<Vec<StoredEvent>, OqError>,
    ) -> Result<(Vec<StoredEvent>, T), OqError> {
        let (reply, outcome) = mpsc::sync_channel(1);
        let job = make_job(decide, append, move |result| {
            // The caller may have gone (a panic on its side): nothing to tell.
            let _ = reply.send(result);
        });
        if let Some(job) = self.run_inline(job) {
            self.queue(job);
        }
        outcome.recv().map_err(|_| writer_gone())?
    }

    /// A lone write where COMMIT flushes (the doors, the TUI) runs on the caller's own
    /// thread: handing it to the writer thread and back would cost two wake-ups, a third
    /// of a fast disk's write. Only when nothing is queued and nobody holds the
    /// connection; otherwise the job is given back to be queued.
    fn run_inline(&self, job: Job) -> Option<Job> {
        if self.durability.flushed_apart() || self.queued.load(Ordering::SeqCst) > 0 {
            return Some(job);
        }
        let Ok(conn) = self.conn.try_lock() else {
            return Some(job);
        };
        let turn = Turn {
            durability: &self.durability,
            health: &self.health,
        };
        let batch = run_batch(&conn, job, || None, turn);
        drop(conn);
        for deliver in batch.deliveries {
            deliver(batch.committed.clone());
        }
        None
    }

    fn queue(&self, job: Job) {
        self.queued.fetch_add(1, Ordering::SeqCst);
        let refused = match &self.jobs {
            Some(jobs) => jobs.send(job).err().map(|mpsc::SendError(job)| job),
            None => Some(job),
        };
        // No writer to run it: the job runs against nothing and is told why.
        if let Some(job) = refused {
            self.queued.fetch_sub(1, Ordering::SeqCst);
            job(None).0(Err(writer_gone()));
        }
    }

    /// Queues `decide` and returns at once; `reply` gets the outcome once it is on disk
    /// (or refused), on the flusher's thread. For callers that must not block a thread.
    pub fn submit<T: Send + 'static>(
        &self,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
        append: fn(&Connection, Vec<NewEvent>) -> Result<Vec<StoredEvent>, OqError>,
        reply: impl FnOnce(Result<(Vec<StoredEvent>, T), OqError>) + Send + 'static,
    ) {
        self.queue(make_job(decide, append, reply));
    }
}

fn make_job<T: Send + 'static>(
    decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
    append: fn(&Connection, Vec<NewEvent>) -> Result<Vec<StoredEvent>, OqError>,
    reply: impl FnOnce(Result<(Vec<StoredEvent>, T), OqError>) + Send + 'static,
) -> Job {
    Box::new(move |conn: Option<&Connection>| {
        let decided = conn.map(|conn| decide_and_append(conn, decide, append));
        let fault = match &decided {
            Some(Err(e)) if fault::is_store_fault(e) => Some(e.clone()),
            _ => None,
        };
        (deliver_after_commit(reply, decided), fault)
    })
}

pub fn writer_gone() -> OqError {
    OqError::Internal("store: the writer stopped before answering".into())
}

impl Drop for Writer {
    /// Closing the queue ends the writer after the jobs already queued, then the flusher
    /// after their flush; joining them closes the write connection before the store is gone.
    fn drop(&mut self) {
        drop(self.jobs.take());
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn deliver_after_commit<T: Send + 'static>(
    reply: impl FnOnce(Result<(Vec<StoredEvent>, T), OqError>) + Send + 'static,
    decided: Option<Result<(Vec<StoredEvent>, T), OqError>>,
) -> Delivery {
    Box::new(move |committed: Result<(), OqError>| {
        // A refusal stands whatever the batch did; a write stands only if it committed.
        reply(match (decided, committed) {
            (Some(Err(refused)), _) => Err(refused),
            (Some(Ok(done)), Ok(())) => Ok(done),
            (_, Err(failed)) => Err(failed),
            (None, Ok(())) => Err(OqError::Internal("store: the write was not run".into())),
        })
    })
}

/// The writer thread: one batch per turn until the queue is closed; each ended batch goes
/// to the flusher, which tells its members (or, where COMMIT flushed, they are told here).
fn run(
    conn: &Mutex<Connection>,
    queue: &Receiver<Job>,
    queued: &AtomicUsize,
    turn: Turn<'_>,
    ended: &Sender<Ended>,
    // Dropped when this thread ends: its last checkpoint runs before the flusher's end.
    checkpoints: Option<Checkpointer>,
) {
    let take = || {
        let job = queue.try_recv().ok();
        if job.is_some() {
            queued.fetch_sub(1, Ordering::SeqCst);
        }
        job
    };
    while let Ok(first) = queue.recv() {
        queued.fetch_sub(1, Ordering::SeqCst);
        let guard = conn.lock().unwrap_or_else(|p| p.into_inner());
        let batch = run_batch(&guard, first, take, turn);
        drop(guard);
        if let Some(checkpoints) = checkpoints.as_ref().filter(|_| batch.wrote) {
            checkpoints.committed();
        }
        if !turn.durability.flushed_apart() {
            // COMMIT flushed already: tell the callers now, without a hop to the flusher.
            for deliver in batch.deliveries {
                deliver(batch.committed.clone());
            }
            continue;
        }
        if let Err(mpsc::SendError(batch)) = ended.send(batch) {
            // No flusher (it panicked): nobody may hear "saved" without a flush.
            let gone = OqError::Internal("store: the flusher has stopped".into());
            for deliver in batch.deliveries {
                deliver(Err(gone.clone()));
            }
        }
    }
}

/// What a batch answers to: how far flushes went, and whether the store may be written.
#[derive(Clone, Copy)]
struct Turn<'a> {
    durability: &'a Durability,
    health: &'a Health,
}

/// One transaction: `first`, then the jobs `more` yields (up to [`MAX_BATCH`]), back to
/// back, and one COMMIT. Its members are told by whoever takes the returned batch.
fn run_batch(
    conn: &Connection,
    first: Job,
    mut more: impl FnMut() -> Option<Job>,
    turn: Turn<'_>,
) -> Ended {
    // A failed or damaged store is written no more: the batch is refused before it begins.
    let began = turn.health.writable().and_then(|()| begin(conn));
    let mut deliveries: Vec<Delivery> = Vec::new();
    let mut failed: Option<OqError> = None;
    let mut next = Some(first);
    let internal = |why: &str| OqError::Internal(format!("store: {why}"));
    while let Some(job) = next {
        let usable = (began.is_ok() && failed.is_none()).then_some(conn);
        let mut met = None;
        match catch_unwind(AssertUnwindSafe(|| job(usable))) {
            Ok((delivery, fault)) => {
                deliveries.push(delivery);
                met = fault;
            }
            // That job's caller learns of it from its reply channel, closed by the
            // unwinding; the batch's other members from the batch's failure.
            Err(_) => {
                failed = Some(internal("a writer panicked; its batch was rolled back"));
                let _ = conn.execute_batch("ROLLBACK");
            }
        }
        // The schema refused an append (its guards and inserts roll back the whole
        // transaction, see `append_events`), or the disk did: that job has its refusal,
        // the others of the batch are told nothing of it was saved, and why.
        if began.is_ok() && failed.is_none() && (conn.is_autocommit() || met.is_some()) {
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            failed = Some(met.unwrap_or_else(|| {
                internal("the log refused a write of this batch; nothing of it was saved")
            }));
        }
        next = if deliveries.len() < MAX_BATCH && failed.is_none() {
            more()
        } else {
            None
        };
    }
    let (committed, wrote) = match (began, failed) {
        (Err(e), _) => (Err(e), false),
        (Ok(()), Some(why)) => {
            turn.health.note(&why);
            (Err(why), false)
        }
        (Ok(()), None) => {
            // The search index's share, in this transaction; its failure is only logged
            // (the tail stays unindexed longer, searched at read): never the events'.
            if let Err(e) = search::catch_up(conn, search::INDEX_EVERY) {
                tracing::warn!("store: the search index is behind: {e}");
            }
            turn.durability.commit_begins();
            let committed = commit(conn);
            turn.durability.commit_ended();
            if let Err(e) = &committed {
                turn.health.note(e);
            }
            (committed, true)
        }
    };
    Ended {
        deliveries,
        committed,
        wrote,
    }
}

/// rusqlite's `Transaction` borrows the connection for its lifetime; a batch outlives
/// any one borrow, so its statements are issued by hand. IMMEDIATE takes SQLite's write
/// lock at once, serialising against other processes before any read.
/// The wal-index region a commit may grow into is allocated first (`vfs.rs`), so a full
/// disk refuses the batch here, before any of it is in the WAL.
fn begin(conn: &Connection) -> Result<(), OqError> {
    let path = conn
        .path()
        .map(std::path::Path::new)
        .unwrap_or(std::path::Path::new(""));
    vfs::reserve_ahead(path).map_err(|()| fault::disk_full(path))?;
    conn.prepare_cached("BEGIN IMMEDIATE")
        .and_then(|mut begin| begin.execute([]))
        .map(drop)
        .map_err(|e| fault::classify(conn, e))
}

fn commit(conn: &Connection) -> Result<(), OqError> {
    let committed = conn
        .prepare_cached("COMMIT")
        .and_then(|mut commit| commit.execute([]))
        .map(drop);
    if let Err(e) = committed {
        let failed = fault::classify(conn, e);
        let _ = conn.execute_batch("ROLLBACK");
        return Err(failed);
    }
    Ok(())
}

fn decide_and_append<T>(
    conn: &Connection,
    decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError>,
    append: fn(&Connection, Vec<NewEvent>) -> Result<Vec<StoredEvent>, OqError>,
) -> Result<(Vec<StoredEvent>, T), OqError> {
    let (events, out) = decide(&SqliteView::new(conn))?;
    Ok((append(conn, events)?, out))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::domain::Event;

    fn answered(question_id: &str) -> NewEvent {
        NewEvent {
            project_id: "p".into(),
            actor: "alice".into(),
            event: Event::QuestionAnswered {
                question_id: question_id.into(),
                resposta: "yes".into(),
                aceitou_sugestao: false,
                decision_event_id: format!("d-{question_id}"),
                respondida_por: "alice".into(),
                answers: Vec::new(),
                idempotency_key: None,
                decision_source: None,
            },
        }
    }

    type Heard = Arc<Mutex<Vec<Result<usize, String>>>>;

    fn job(heard: &Heard, events: Vec<NewEvent>) -> Job {
        let heard = heard.clone();
        make_job(
            move |_: &dyn StoreView| Ok((events, ())),
            super::super::append_events,
            move |outcome| {
                let outcome = outcome.map(|(stored, ())| stored.len());
                heard
                    .lock()
                    .unwrap()
                    .push(outcome.map_err(|e| e.code().to_string()));
            },
        )
    }

    fn events(conn: &Connection) -> i64 {
        conn.query_row("SELECT count(*) FROM events", [], |r| r.get(0))
            .unwrap()
    }

    /// The schema's refusals roll the whole transaction back (so SQLite keeps no statement
    /// journal): the refused job gets its reason, the jobs before it in the batch are told
    /// nothing was saved, none of it is in the log, and the next batch works.
    #[test]
    fn a_refusal_by_the_schema_fails_its_whole_batch_and_keeps_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = super::super::SqliteStore::open_in(dir.path())
            .unwrap()
            .path()
            .to_path_buf();
        let conn = Connection::open(&path).unwrap();
        let durability = Durability::new(false);
        let health = Health::new(&path);
        let turn = Turn {
            durability: &durability,
            health: &health,
        };
        let heard: Heard = Arc::default();
        let before = events(&conn);
        let mut rest = vec![
            job(&heard, vec![answered("q-2"), answered("q-1")]),
            job(&heard, vec![answered("q-3")]),
        ]
        .into_iter();
        let first = job(&heard, vec![answered("q-1")]);
        let batch = run_batch(&conn, first, || rest.next(), turn);
        assert!(!batch.wrote);
        for deliver in batch.deliveries {
            deliver(batch.committed.clone());
        }
        assert_eq!(
            *heard.lock().unwrap(),
            vec![
                Err("internal".to_string()),
                Err("duplicate_event".to_string())
            ]
        );
        assert_eq!(events(&conn), before, "nothing of the batch is in the log");
        // The job after the refusal was left for the next batch, which commits.
        let next = rest.next().unwrap();
        assert!(rest.next().is_none());
        let batch = run_batch(&conn, next, || None, turn);
        for deliver in batch.deliveries {
            deliver(batch.committed.clone());
        }
        assert_eq!(heard.lock().unwrap().last(), Some(&Ok(1)));
        assert_eq!(events(&conn), before + 1);
    }
}
