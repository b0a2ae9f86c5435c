//! Checkpoints off the writer's path, for a store whose commits are flushed apart
//! (`flush.rs`).
//!
//! A checkpoint copies the WAL's pages back into the database file and syncs it. SQLite
//! runs one inside the COMMIT that takes the WAL past `wal_autocheckpoint` pages, on the
//! committing connection: under load that was a stall of a few milliseconds every few
//! dozen batches, during which every caller of the process waited, and 8% of the
//! writer's time. Here a thread of its own, on its own connection, runs a PASSIVE
//! checkpoint every [`EVERY_COMMITS`] commits: it never blocks the writer nor a reader,
//! and does whatever they leave it.
//!
//! The writer keeps its own automatic checkpoint as a backstop, at [`WRITER_BACKSTOP`]
//! pages: SQLite restarts the WAL from its beginning only when a checkpoint has copied
//! all of it, which a checkpoint running beside a busy writer never quite does. The
//! writer's finds almost everything copied already (a tail and a sync), and the WAL file
//! stays bounded and is rewritten in place rather than grown.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use rusqlite::Connection;

use crate::domain::OqError;

/// Commits between two checkpoints: a batch of answers is a few dozen WAL pages.
pub const EVERY_COMMITS: u64 = 16;

/// The writer connection's own `wal_autocheckpoint` (pages, 4 KiB each) when the
/// checkpoints run here; SQLite's default is 1,000.
pub const WRITER_BACKSTOP: i64 = 4_000;

#[derive(Default)]
struct Due {
    commits: u64,
    closing: bool,
}

/// The checkpointing thread; dropping it runs a last checkpoint and ends it.
pub struct Checkpointer {
    due: Arc<(Mutex<Due>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread over `conn`, a connection of its own to the store.
    pub fn start(conn: Connection) -> Result<Self, OqError> {
        let due = Arc::new((Mutex::new(Due::default()), Condvar::new()));
        let shared = due.clone();
        let thread = std::thread::Builder::new()
            .name("oq-store-ckpt".into())
            .spawn(move || run(&conn, &shared))
            .map_err(|e| OqError::Internal(format!("store: no checkpoint thread: {e}")))?;
        Ok(Checkpointer {
            due,
            thread: Some(thread),
        })
    }

    /// Counts a commit; every [`EVERY_COMMITS`]th wakes the thread.
    pub fn committed(&self) {
        let (lock, wake) = &*self.due;
        let mut due = lock.lock().unwrap_or_else(|p| p.into_inner());
        due.commits += 1;
        if due.commits >= EVERY_COMMITS {
            wake.notify_one();
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        let (lock, wake) = &*self.due;
        lock.lock().unwrap_or_else(|p| p.into_inner()).closing = true;
        wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(conn: &Connection, due: &(Mutex<Due>, Condvar)) {
    let (lock, wake) = due;
    loop {
        let closing = {
            let mut due = lock.lock().unwrap_or_else(|p| p.into_inner());
            while due.commits < EVERY_COMMITS && !due.closing {
                due = wake.wait(due).unwrap_or_else(|p| p.into_inner());
            }
            due.commits = 0;
            due.closing
        };
        if let Err(e) = checkpoint(conn) {
            // Nothing is lost: the pages stay in the WAL, and the writer's own
            // checkpoint (or the next one here) copies them.
            tracing::warn!("store: a background checkpoint failed: {e}");
        }
        if closing {
            return;
        }
    }
}

/// One PASSIVE checkpoint: copies what no reader still needs, waits for nobody.
fn checkpoint(conn: &Connection) -> rusqlite::Result<()> {
    // The pragma answers with a row (busy, WAL pages, pages copied) that nothing here needs.
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
}
