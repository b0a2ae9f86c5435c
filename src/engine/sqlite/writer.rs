//! Group commit: the writers of one process share one SQLite transaction and one fsync.
//!
//! Every write is `BEGIN IMMEDIATE … COMMIT` with `synchronous=FULL`, so a lone writer
//! pays one fsync per answer. Under load that fsync, serialised, is the whole cost. Here
//! the first writer to find no transaction open becomes the *leader*: it begins one,
//! runs its own decision inside a savepoint, then keeps the transaction open while other
//! writers are queued for the connection; each *follower* runs its decision in its own
//! savepoint of the same transaction. The leader commits once for all of them and wakes
//! them. A decision that refuses rolls back to its savepoint and spoils nothing else; a
//! follower's result is returned only after the commit that made it durable succeeded,
//! so "saved" still means on disk. A lone writer sees no difference.
//!
//! Decisions read through the same connection inside the transaction, so each sees the
//! writes of those before it in the batch: the order is the serial order.
//!
//! A follower gives the connection back as soon as its decision is in the batch and waits
//! for the commit on a separate lock (`settled`): the next writers decide while the
//! earlier ones are being woken, instead of queueing behind each wake-up for the
//! connection.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use rusqlite::Connection;

use super::view::SqliteView;
use crate::domain::{OqError, StoredEvent};
use crate::engine::store::{NewEvent, StoreView};

/// A batch stops taking followers at this size, so a steady stream of writers cannot
/// keep its first members waiting for the commit indefinitely.
const MAX_BATCH: usize = 256;
/// Failed batches remembered for their late-waking members (failures are rare; a member
/// wakes long before this many batches have ended after its own).
const FAILURES_KEPT: usize = 64;

pub struct Writer {
    state: Mutex<State>,
    /// Signalled when a batch ends, for writers waiting to start the next one.
    batch_ended: Condvar,
    /// Writers blocked on `state`: the leader commits when none are left.
    queued: AtomicUsize,
    settled: Mutex<Settled>,
    /// Signalled with `settled`, for members waiting for their batch's commit.
    commit_done: Condvar,
}

struct State {
    conn: Connection,
    /// The open batch: its number and how many writers joined it.
    open: Option<(u64, usize)>,
    next_batch: u64,
}

/// How batches ended, apart from the connection so members can wait without it.
#[derive(Default)]
struct Settled {
    /// The newest batch that ended (batches end in order).
    ended: u64,
    /// Batches whose commit failed, with the message, newest last.
    failed: VecDeque<(u64, String)>,
}

impl Writer {
    pub fn new(conn: Connection) -> Self {
        Writer {
            state: Mutex::new(State {
                conn,
                open: None,
                next_batch: 1,
            }),
            batch_ended: Condvar::new(),
            queued: AtomicUsize::new(0),
            settled: Mutex::new(Settled::default()),
            commit_done: Condvar::new(),
        }
    }

    /// Records how `batch` ended and wakes its members and the writers waiting to start.
    fn end_batch(&self, batch: u64, failure: Option<String>) {
        let mut settled = self.settled.lock().unwrap_or_else(|p| p.into_inner());
        settled.ended = batch;
        if let Some(message) = failure {
            settled.failed.push_back((batch, message));
            if settled.failed.len() > FAILURES_KEPT {
                settled.failed.pop_front();
            }
        }
        drop(settled);
        self.commit_done.notify_all();
        self.batch_ended.notify_all();
    }

    /// Blocks until `batch` ended; its commit's failure, if it failed.
    fn wait_for(&self, batch: u64) -> Result<(), OqError> {
        let mut settled = self.settled.lock().unwrap_or_else(|p| p.into_inner());
        while settled.ended < batch {
            settled = self
                .commit_done
                .wait(settled)
                .unwrap_or_else(|p| p.into_inner());
        }
        match settled.failed.iter().find(|(b, _)| *b == batch) {
            Some((_, message)) => Err(OqError::Internal(message.clone())),
            None => Ok(()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.queued.fetch_add(1, Ordering::SeqCst);
        let guard = self.state.lock().unwrap_or_else(|poisoned| {
            // A decision panicked mid-batch: end that batch as failed so its members are
            // told, and go on with a clean connection.
            let mut guard = poisoned.into_inner();
            if let Some((batch, _)) = guard.open.take() {
                let _ = guard.conn.execute_batch("ROLLBACK");
                self.end_batch(
                    batch,
                    Some("a writer panicked; the batch was rolled back".into()),
                );
            }
            guard
        });
        self.queued.fetch_sub(1, Ordering::SeqCst);
        guard
    }

    /// Runs `decide` in the shared transaction, appends its events with `append`, and
    /// returns once they are committed (or the refusal, at once).
    pub fn transact<T>(
        &self,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError>,
        append: impl FnOnce(&Connection, Vec<NewEvent>) -> Result<Vec<StoredEvent>, OqError>,
    ) -> Result<(Vec<StoredEvent>, T), OqError> {
        let mut state = self.lock();
        let (batch, leader) = match state.open {
            Some((batch, members)) if members < MAX_BATCH => {
                state.open = Some((batch, members + 1));
                (batch, false)
            }
            _ => {
                // Wait for a full batch to end before starting the next.
                while state.open.is_some() {
                    state = self
                        .batch_ended
                        .wait(state)
                        .unwrap_or_else(|p| p.into_inner());
                }
                begin(&state.conn)?;
                let batch = state.next_batch;
                state.next_batch += 1;
                state.open = Some((batch, 1));
                (batch, true)
            }
        };
        let outcome = in_savepoint(&state.conn, decide, append);
        if !leader {
            // Refused: nothing of it is in the batch; no need to wait for the commit.
            let done = outcome?;
            drop(state);
            return self.wait_for(batch).map(|()| done);
        }
        // The leader: let the writers queued behind it join, then commit for all.
        loop {
            match state.open {
                Some((open, members)) if open == batch => {
                    if self.queued.load(Ordering::SeqCst) == 0 || members >= MAX_BATCH {
                        break;
                    }
                    drop(state);
                    std::thread::yield_now();
                    state = self.lock();
                }
                // A member panicked meanwhile and its batch was rolled back (see `lock`).
                _ => {
                    drop(state);
                    let done = outcome?;
                    return self.wait_for(batch).map(|()| done);
                }
            }
        }
        let committed = state
            .conn
            .prepare_cached("COMMIT")
            .and_then(|mut commit| commit.execute([]))
            .map(drop);
        state.open = None;
        let failure = match &committed {
            Ok(()) => None,
            Err(e) => {
                let _ = state.conn.execute_batch("ROLLBACK");
                Some(format!("store: the commit failed: {e}"))
            }
        };
        // Under the connection lock, so no next batch can end before this one.
        self.end_batch(batch, failure);
        drop(state);
        committed.map_err(super::busy)?;
        outcome
    }
}

/// rusqlite's `Transaction` borrows the connection for its lifetime; a batch outlives
/// any one borrow, so its statements are issued by hand. IMMEDIATE takes SQLite's write
/// lock at once, serialising against other processes before any read.
fn begin(conn: &Connection) -> Result<(), OqError> {
    conn.prepare_cached("BEGIN IMMEDIATE")
        .and_then(|mut begin| begin.execute([]))
        .map(drop)
        .map_err(super::busy)
}

fn in_savepoint<T>(
    conn: &Connection,
    decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError>,
    append: impl FnOnce(&Connection, Vec<NewEvent>) -> Result<Vec<StoredEvent>, OqError>,
) -> Result<(Vec<StoredEvent>, T), OqError> {
    // Cached statements: these run for every write, and preparing them is measurable.
    conn.prepare_cached("SAVEPOINT oq_write")?.execute([])?;
    let result =
        decide(&SqliteView::new(conn)).and_then(|(events, out)| Ok((append(conn, events)?, out)));
    if result.is_err() {
        conn.prepare_cached("ROLLBACK TO oq_write")?.execute([])?;
    }
    conn.prepare_cached("RELEASE oq_write")?.execute([])?;
    result
}
