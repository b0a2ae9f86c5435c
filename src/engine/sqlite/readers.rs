//! The read connections of one open store, each opened on first need.
//!
//! A process that reads once (`oq status` in a shell prompt, `oq show`) opens one read
//! connection, not [`READERS`]: each open is a file open, its locks, and SQLite parsing
//! the schema, a few hundred microseconds each on every start. A reader is taken free
//! and already open if one is; else a free slot is opened; only when every slot is busy
//! does a caller wait for one, so concurrent reads (the server) still reach all of them.
//! Invariant: every connection handed out is `query_only` and configured as the writer's
//! (`open_connection`); a slot whose open failed stays empty and is tried again.

use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, TryLockError};

use rusqlite::Connection;

use super::lazy::Spare;
use crate::domain::OqError;

/// Read connections per process at most: reads never wait behind a write batch, and with
/// WAL each sees only committed data.
pub const READERS: usize = 3;

pub struct Readers {
    path: PathBuf,
    /// The open's connection, the first reader unless the writer took it (`lazy.rs`).
    spare: Spare,
    slots: Vec<Mutex<Option<Connection>>>,
    /// Where a caller that found every slot busy waits next (round robin).
    next: AtomicUsize,
}

/// A read connection, held until dropped.
pub struct Reader<'a>(MutexGuard<'a, Option<Connection>>);

impl Readers {
    /// The pool for the store at `path`, none open yet but the `spare` it may take.
    pub fn new(path: &Path, spare: Spare) -> Self {
        Readers {
            path: path.to_path_buf(),
            spare,
            slots: (0..READERS).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
        }
    }

    /// How many read connections are open and not in use now.
    #[cfg(test)]
    pub fn opened(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| lock(s).is_some_and(|c| c.is_some()))
            .count()
    }

    /// A free open reader, else a free slot opened, else the next slot once it is free.
    pub fn get(&self) -> Result<Reader<'_>, OqError> {
        let open = self.slots.iter().filter_map(lock).find(|g| g.is_some());
        let mut guard = match open.or_else(|| self.slots.iter().find_map(lock)) {
            Some(guard) => guard,
            None => {
                let i = self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len();
                self.slots[i].lock().unwrap_or_else(|p| p.into_inner())
            }
        };
        if guard.is_none() {
            let conn = self.spare.take_or_open(&self.path)?;
            conn.pragma_update(None, "query_only", "ON")
                .map_err(OqError::from)?;
            *guard = Some(conn);
        }
        Ok(Reader(guard))
    }
}

/// The slot if nobody holds it; a poisoned one is still usable (reads hold no
/// transaction across a panic that matters: `finish` ends it).
fn lock(slot: &Mutex<Option<Connection>>) -> Option<MutexGuard<'_, Option<Connection>>> {
    match slot.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

impl Deref for Reader<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.0
            .as_ref()
            .expect("a reader is opened before it is handed out")
    }
}

impl DerefMut for Reader<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.0
            .as_mut()
            .expect("a reader is opened before it is handed out")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::sqlite::SqliteStore;
    use crate::engine::store::Store;

    fn store() -> (tempfile::TempDir, SqliteStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open_in(dir.path()).unwrap();
        (dir, store)
    }

    #[test]
    fn a_process_that_reads_one_at_a_time_opens_one_reader() {
        let (_dir, store) = store();
        assert_eq!(store.readers_open(), 0, "opening reads nothing");
        for _ in 0..5 {
            store.read(|view| view.revision()).unwrap();
        }
        assert_eq!(store.readers_open(), 1);
    }

    #[test]
    fn readers_held_at_once_each_get_a_connection_up_to_the_cap() {
        let (dir, _store) = store();
        let readers = Readers::new(
            &dir.path().join(crate::engine::sqlite::STORE_FILE),
            Spare::default(),
        );
        let (a, b) = (readers.get().unwrap(), readers.get().unwrap());
        assert_eq!(readers.opened(), 0, "held slots are not counted as free");
        drop((a, b));
        assert_eq!(readers.opened(), 2);
        let held: Vec<_> = (0..READERS).map(|_| readers.get().unwrap()).collect();
        drop(held);
        assert_eq!(readers.opened(), READERS);
        // Past the cap a caller waits for a slot rather than opening a fourth.
        let held: Vec<_> = (0..READERS).map(|_| readers.get().unwrap()).collect();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| readers.get().map(|r| r.is_autocommit()));
            drop(held);
            assert!(waiter.join().unwrap().unwrap());
        });
        assert_eq!(readers.opened(), READERS);
    }

    #[test]
    fn every_reader_refuses_writes() {
        let (dir, _store) = store();
        let readers = Readers::new(
            &dir.path().join(crate::engine::sqlite::STORE_FILE),
            Spare::default(),
        );
        let reader = readers.get().unwrap();
        let err = reader.execute("DELETE FROM events", []).unwrap_err();
        assert!(err.to_string().contains("readonly"), "{err}");
    }
}
