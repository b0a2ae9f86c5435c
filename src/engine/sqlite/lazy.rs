//! The store's writer, started on the first write, and the connection the open left.
//!
//! Opening a store needs one connection (the header, the migration, the schema digest).
//! A process that only reads (`oq status` in a shell prompt, `oq list`, `oq show`, the
//! TUI until its first answer) should pay for no more: each further connection is SQLite
//! parsing the whole schema again, and the writer is two threads. So the open's
//! connection is kept [`Spare`], and whichever needs a connection first takes it — the
//! first reader (made `query_only` by `readers.rs`) or the writer; the other opens its
//! own. Invariant: the writer, once started, is the only one of this process; a failed
//! start leaves none, and the next write tries again.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use rusqlite::Connection;

use super::health::Health;
use super::open_connection;
use super::writer::Writer;
use crate::domain::OqError;

/// The open's connection until a reader or the writer takes it.
#[derive(Clone, Default)]
pub struct Spare(Arc<Mutex<Option<Connection>>>);

impl Spare {
    pub fn new(conn: Connection) -> Self {
        Spare(Arc::new(Mutex::new(Some(conn))))
    }

    #[cfg(test)]
    fn is_left(&self) -> bool {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    /// The spare connection if nobody took it yet, else a new one to `path`.
    pub fn take_or_open(&self, path: &Path) -> Result<Connection, OqError> {
        let taken = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        match taken {
            Some(conn) => Ok(conn),
            None => open_connection(path),
        }
    }
}

pub struct LazyWriter {
    writer: OnceLock<Writer>,
    /// Held while the writer starts, so two first writes start one.
    starting: Mutex<()>,
    spare: Spare,
    path: PathBuf,
    health: Arc<Health>,
}

impl LazyWriter {
    pub fn new(path: &Path, spare: Spare, health: Arc<Health>) -> Self {
        LazyWriter {
            writer: OnceLock::new(),
            starting: Mutex::new(()),
            spare,
            path: path.to_path_buf(),
            health,
        }
    }

    /// A writer started already (the server's pipelined one, `SqliteStore::flushing`).
    pub fn started(path: &Path, spare: Spare, health: Arc<Health>, writer: Writer) -> Self {
        let lazy = LazyWriter::new(path, spare, health);
        let _ = lazy.writer.set(writer);
        lazy
    }

    /// The writer, started now if this is the first write.
    pub fn get(&self) -> Result<&Writer, OqError> {
        if let Some(w) = self.writer.get() {
            return Ok(w);
        }
        let _starting = self.starting.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(w) = self.writer.get() {
            return Ok(w);
        }
        let conn = self.spare.take_or_open(&self.path)?;
        let writer = Writer::new(conn, None, self.health.clone())?;
        Ok(self.writer.get_or_init(|| writer))
    }

    /// The writer if one was started: a read waits for its flushes, and there are none
    /// before it starts.
    pub fn if_started(&self) -> Option<&Writer> {
        self.writer.get()
    }

    #[cfg(test)]
    pub fn spare_left(&self) -> bool {
        self.spare.is_left()
    }

    /// Ends this writer if it started (its queue drains, as `Writer`'s drop does), for a
    /// replacement; what is left is the spare connection.
    pub fn into_spare(self) -> Spare {
        drop(self.writer);
        self.spare
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::engine::sqlite::SqliteStore;
    use crate::engine::store::Store;

    fn store() -> (tempfile::TempDir, SqliteStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open_in(dir.path()).unwrap();
        (dir, store)
    }

    fn write(store: &SqliteStore) {
        store.transact(|_| Ok((Vec::new(), ()))).unwrap();
    }

    /// (writer started, open's connection unclaimed, readers open)
    fn state(store: &SqliteStore) -> (bool, bool, usize) {
        let (started, spare) = store.writer_state();
        (started, spare, store.readers_open())
    }

    #[test]
    fn a_process_that_only_reads_starts_no_writer_and_reads_on_the_opens_connection() {
        let (_dir, store) = store();
        assert_eq!(state(&store), (false, true, 0));
        for _ in 0..3 {
            store.read(|view| view.revision()).unwrap();
        }
        assert_eq!(
            state(&store),
            (false, false, 1),
            "the reader took the spare"
        );
        write(&store);
        assert_eq!(state(&store), (true, false, 1), "the writer opened its own");
        store.read(|view| view.revision()).unwrap();
        assert_eq!(state(&store), (true, false, 1));
    }

    #[test]
    fn a_first_write_takes_the_opens_connection_and_first_writes_at_once_start_one_writer() {
        let (_dir, store) = store();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| write(&store));
            }
        });
        assert_eq!(state(&store), (true, false, 0));
        store.read(|view| view.revision()).unwrap();
        assert_eq!(state(&store), (true, false, 1));
    }
}
