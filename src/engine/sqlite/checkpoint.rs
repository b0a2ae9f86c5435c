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
//!
//! The WAL file's size is bounded too: SQLite cuts it back to `journal_size_limit`
//! ([`super::wal_limit`]) whenever it restarts, and when a long reader kept it from
//! restarting and it outgrew the limit, this thread runs a TRUNCATE checkpoint as soon as
//! the readers let it. That one waits for them, holding the write lock, so it waits at
//! most [`TRUNCATE_WAIT`] and tries again after the next commits rather than stall the
//! writer behind a stuck reader.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

use super::health::Health;
use super::{fault, open};
use crate::domain::{ErrorCode, OqError};

/// How long a TRUNCATE checkpoint waits for readers and the writer.
const TRUNCATE_WAIT: Duration = Duration::from_millis(100);

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
    /// An I/O error in a checkpoint fails the store through `health`.
    pub fn start(conn: Connection, health: Arc<Health>) -> Result<Self, OqError> {
        let due = Arc::new((Mutex::new(Due::default()), Condvar::new()));
        let shared = due.clone();
        let thread = std::thread::Builder::new()
            .name("oq-store-ckpt".into())
            .spawn(move || run(&conn, &shared, &health))
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

fn run(conn: &Connection, due: &(Mutex<Due>, Condvar), health: &Health) {
    let wal = conn
        .path()
        .map(|p| open::sidecar(std::path::Path::new(p), "-wal"))
        .unwrap_or_default();
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
        let done = checkpoint(conn, "PASSIVE").and_then(|()| {
            let size = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
            if size <= super::wal_limit() {
                return Ok(());
            }
            conn.busy_timeout(TRUNCATE_WAIT)?;
            let truncated = checkpoint(conn, "TRUNCATE");
            conn.busy_timeout(fault::busy_timeout())?;
            truncated
        });
        match done.map_err(|e| fault::classify(conn, e)) {
            Ok(()) => {}
            // An I/O error here is the disk failing under the store, as in a flush.
            Err(e) if e.code() == ErrorCode::StoreFailed => health.note(&e),
            // Nothing is lost: the pages stay in the WAL, and the writer's own
            // checkpoint (or the next one here) copies them.
            Err(e) => tracing::warn!("store: a background checkpoint failed: {e}"),
        }
        if closing {
            return;
        }
    }
}

/// One checkpoint: PASSIVE copies what no reader still needs and waits for nobody;
/// TRUNCATE waits (its busy timeout) to copy everything and empty the file.
fn checkpoint(conn: &Connection, mode: &str) -> rusqlite::Result<()> {
    // The pragma answers with a row (busy, WAL pages, pages copied) that nothing here needs.
    conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |_| Ok(()))
}
