//! The flush to disk, taken off the writer's path: a batch is committed to the WAL by the
//! writer thread and made durable here, while the writer already decides the next batch.
//!
//! With `synchronous=FULL`, SQLite fsyncs the WAL inside COMMIT, holding the write lock:
//! the writer sat idle through every flush, and under load a third of its time went there.
//! The writer connection now commits with `synchronous=NORMAL` (SQLite's own WAL
//! consistency, checkpoints still synced) and this thread `fdatasync`s the WAL file after
//! each commit, covering every batch committed before the call began. The rules that keep
//! "saved" meaning "on disk":
//! - a caller hears of its write only after a flush that started after its commit;
//! - a reader returns nothing a flush has not covered: commits are counted *before* they
//!   start, and a read waits until every commit counted by its end is flushed (the rule
//!   known as early lock release's, so nothing seen can vanish in a power cut);
//! - the WAL is a prefix log: a batch lost in a crash takes every later one with it,
//!   and none of them was acknowledged.
//!
//! When the WAL file cannot be opened for flushing, the writer keeps `synchronous=FULL`
//! and this thread only delivers.

use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Condvar, Mutex};

use super::health::Health;
use crate::domain::OqError;

/// Hands a job's outcome to its caller, given whether its batch is durable.
pub type Delivery = Box<dyn FnOnce(Result<(), OqError>) + Send>;

/// A batch the writer is done with: its members, and how its commit went.
pub struct Ended {
    pub deliveries: Vec<Delivery>,
    pub committed: Result<(), OqError>,
    /// Whether it wrote to the WAL (a failed or empty batch has nothing to flush).
    pub wrote: bool,
}

/// How far commits and flushes have gone, for readers that must not run ahead.
pub struct Durability {
    /// Whether commits are flushed here rather than inside COMMIT.
    flushed_apart: bool,
    /// Commits begun (counted before COMMIT is issued) and ended.
    begun: AtomicU64,
    ended: AtomicU64,
    /// Commits known to be on disk: every one counted in `ended` when a flush started.
    flushed: Mutex<u64>,
    flushed_more: Condvar,
}

impl Durability {
    pub fn new(flushed_apart: bool) -> Self {
        Durability {
            flushed_apart,
            begun: AtomicU64::new(0),
            ended: AtomicU64::new(0),
            flushed: Mutex::new(0),
            flushed_more: Condvar::new(),
        }
    }

    /// Whether commits are flushed here (`Flush::Pipelined`) rather than inside COMMIT.
    pub fn flushed_apart(&self) -> bool {
        self.flushed_apart
    }

    pub fn commit_begins(&self) {
        self.begun.fetch_add(1, Ordering::SeqCst);
    }

    pub fn commit_ended(&self) {
        self.ended.fetch_add(1, Ordering::SeqCst);
    }

    /// Blocks until every commit begun so far is on disk. Called at the end of a read:
    /// whatever its snapshot held was begun before.
    pub fn wait_for_commits_so_far(&self) {
        if !self.flushed_apart {
            return;
        }
        let target = self.begun.load(Ordering::SeqCst);
        let mut flushed = self.flushed.lock().unwrap_or_else(|p| p.into_inner());
        while *flushed < target {
            flushed = self
                .flushed_more
                .wait(flushed)
                .unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Whether a read ending now would have to wait.
    #[cfg(test)]
    fn unflushed(&self) -> bool {
        let flushed = *self.flushed.lock().unwrap_or_else(|p| p.into_inner());
        self.flushed_apart && flushed < self.begun.load(Ordering::SeqCst)
    }

    fn mark_flushed(&self, upto: u64) {
        let mut flushed = self.flushed.lock().unwrap_or_else(|p| p.into_inner());
        *flushed = (*flushed).max(upto);
        drop(flushed);
        self.flushed_more.notify_all();
    }
}

/// The WAL file beside `store`, opened for flushing; `None` when it cannot be.
pub fn open_wal(store: &Path) -> Option<File> {
    let mut name = store.as_os_str().to_owned();
    name.push("-wal");
    File::open(name).ok()
}

/// The flushing thread: takes every batch ended so far, flushes once for all of them,
/// then delivers, until the writer is gone.
pub fn run(wal: Option<File>, durability: &Durability, health: &Health, ended: Receiver<Ended>) {
    while let Ok(first) = ended.recv() {
        let mut batches = vec![first];
        batches.extend(ended.try_iter());
        let upto = durability.ended.load(Ordering::SeqCst);
        let flushed = match &wal {
            // Once a flush failed, no later one can vouch for what it covers: the kernel
            // may have dropped the pages whose write-back failed (see `health.rs`).
            _ if health.readable().is_err() => health.readable(),
            Some(wal) if batches.iter().any(|b| b.wrote) => wal
                .sync_data()
                .map_err(|e| health.fail(&format!("the flush of its WAL to disk failed ({e})"))),
            _ => Ok(()),
        };
        // Marked even when the flush failed, so readers do not hang on it: the store is
        // failed by then, and they refuse what they read (`SqliteStore::read`).
        durability.mark_flushed(upto);
        for batch in batches {
            let outcome = batch.committed.and_then(|()| flushed.clone());
            for deliver in batch.deliveries {
                deliver(outcome.clone());
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::mpsc;
    use std::sync::{Arc, Mutex};

    use super::*;

    type Heard = Arc<Mutex<Vec<Result<(), OqError>>>>;

    fn batch(heard: &Heard, committed: Result<(), OqError>, wrote: bool) -> Ended {
        let heard = heard.clone();
        Ended {
            deliveries: vec![Box::new(move |outcome| heard.lock().unwrap().push(outcome))],
            committed,
            wrote,
        }
    }

    #[test]
    fn a_commit_is_unread_and_unheard_until_a_flush_covers_it() {
        let dir = tempfile::tempdir().unwrap();
        let wal = File::create(dir.path().join("oq.sqlite3-wal")).unwrap();
        let durability = Durability::new(true);
        let heard: Heard = Arc::default();
        assert!(!durability.unflushed());
        durability.commit_begins();
        assert!(
            durability.unflushed(),
            "a read must wait for a commit under way"
        );
        durability.commit_ended();
        assert!(durability.unflushed(), "committed is not yet flushed");
        let (ended, flushing) = mpsc::channel();
        ended.send(batch(&heard, Ok(()), true)).unwrap();
        let failed = OqError::Internal("store: the commit failed".into());
        ended
            .send(batch(&heard, Err(failed.clone()), false))
            .unwrap();
        assert!(
            heard.lock().unwrap().is_empty(),
            "nobody hears before the flush"
        );
        drop(ended);
        run(Some(wal), &durability, &Health::new(dir.path()), flushing);
        assert!(!durability.unflushed());
        assert_eq!(*heard.lock().unwrap(), vec![Ok(()), Err(failed)]);
    }

    #[test]
    fn flushing_inside_commit_never_makes_a_reader_wait() {
        let durability = Durability::new(false);
        durability.commit_begins();
        assert!(!durability.unflushed());
        durability.wait_for_commits_so_far();
    }
}
