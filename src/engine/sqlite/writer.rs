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

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

use rusqlite::Connection;

use super::view::SqliteView;
use crate::domain::{OqError, StoredEvent};
use crate::engine::store::{NewEvent, StoreView};

/// A batch stops taking followers at this size, so a steady stream of writers cannot
/// keep its first members waiting for the commit indefinitely.
const MAX_BATCH: usize = 256;

pub struct Writer {
    state: Mutex<State>,
    committed: Condvar,
    /// Writers blocked on `state`: the leader commits when none are left.
    queued: AtomicUsize,
}

struct State {
    conn: Connection,
    /// The open batch: its number and how many writers joined it.
    open: Option<(u64, usize)>,
    next_batch: u64,
    /// The newest batch that ended, and whether its commit failed (the message).
    ended: u64,
    failure: Option<(u64, String)>,
}

impl Writer {
    pub fn new(conn: Connection) -> Self {
        Writer {
            state: Mutex::new(State {
                conn,
                open: None,
                next_batch: 1,
                ended: 0,
                failure: None,
            }),
            committed: Condvar::new(),
            queued: AtomicUsize::new(0),
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
                guard.ended = batch;
                guard.failure =
                    Some((batch, "a writer panicked; the batch was rolled back".into()));
                self.committed.notify_all();
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
                        .committed
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
            while state.ended < batch {
                state = self
                    .committed
                    .wait(state)
                    .unwrap_or_else(|p| p.into_inner());
            }
            return match &state.failure {
                Some((failed, message)) if *failed == batch => {
                    Err(OqError::Internal(message.clone()))
                }
                _ => Ok(done),
            };
        }
        // The leader: let the writers queued behind it join, then commit for all.
        while self.queued.load(Ordering::SeqCst) > 0
            && state.open.is_some_and(|(_, m)| m < MAX_BATCH)
        {
            drop(state);
            std::thread::yield_now();
            state = self.lock();
        }
        let committed = state
            .conn
            .prepare_cached("COMMIT")
            .and_then(|mut commit| commit.execute([]))
            .map(drop);
        state.open = None;
        state.ended = batch;
        state.failure = match &committed {
            Ok(()) => None,
            Err(e) => {
                let _ = state.conn.execute_batch("ROLLBACK");
                Some((batch, format!("store: the commit failed: {e}")))
            }
        };
        self.committed.notify_all();
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
