//! The embedded store: the event log in one SQLite file (WAL) under the data dir.
//!
//! Opening checks before it writes: a file that is not SQLite, a SQLite file that is not an
//! oq store, and a store newer than this binary are refused untouched. Writers serialise
//! on SQLite's own write lock (`BEGIN IMMEDIATE`), so several processes share one store:
//! the TUI open while `oq ask` declares and another process answers. Within a process,
//! concurrent writers share one transaction and one fsync (`writer.rs`: group commit on
//! one writer thread), and reads go through their own connections.

mod append;
mod checkpoint;
mod flush;
mod schema;
mod view;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, TransactionBehavior};

use crate::domain::{ErrorCode, OqError, StoredEvent};
use crate::engine::store::{NewEvent, Store, StoreView};

use append::append_events;
pub use schema::{APPLICATION_ID, LATEST_VERSION, MIGRATIONS};
use view::SqliteView;
use writer::Writer;

/// The file name of the store inside the data dir.
pub const STORE_FILE: &str = "oq.sqlite3";

/// How long a writer waits for another process's write lock before giving up. Writes are
/// short (a few inserts), so reaching this means a stuck process, not load.
const BUSY_TIMEOUT: Duration = Duration::from_secs(15);

/// Read connections per process: reads never wait behind a write batch, and with WAL each
/// sees only committed data.
const READERS: usize = 3;

/// When a write's commit reaches the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flush {
    /// Inside COMMIT (`synchronous=FULL`): for processes that write now and then, like the
    /// doors and the TUI, and for any store other processes read at the same time.
    #[default]
    InCommit,
    /// On a thread of its own while the next batch is decided (`flush.rs`): for a server
    /// under concurrent writes. Callers and this process's readers still see only what is
    /// on disk; another process reading the same file may see a batch up to one flush
    /// (~1 ms) before it is.
    Pipelined,
}

pub struct SqliteStore {
    writer: Writer,
    readers: Vec<Mutex<Connection>>,
    next_reader: AtomicUsize,
    path: PathBuf,
}

impl From<rusqlite::Error> for OqError {
    fn from(e: rusqlite::Error) -> Self {
        OqError::Internal(format!("store: {e}"))
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the store in `data_dir`.
    pub fn open_in(data_dir: &Path) -> Result<Self, OqError> {
        std::fs::create_dir_all(data_dir).map_err(|e| {
            OqError::store(
                ErrorCode::DataDirNotWritable,
                format!("data dir {} cannot be created: {e}", data_dir.display()),
            )
        })?;
        Self::open(&data_dir.join(STORE_FILE))
    }

    /// [`SqliteStore::open_in`], choosing when commits are flushed.
    pub fn open_in_with(data_dir: &Path, flush: Flush) -> Result<Self, OqError> {
        let store = Self::open_in(data_dir)?;
        match flush {
            Flush::InCommit => Ok(store),
            Flush::Pipelined => store.flushed_apart(),
        }
    }

    pub fn open(path: &Path) -> Result<Self, OqError> {
        preflight(path)?;
        let mut conn = Connection::open(path).map_err(|e| not_writable(path, &e))?;
        configure(&conn).map_err(|e| classify_open_error(path, e))?;
        migrate(&mut conn, path)?;
        let mut readers = Vec::with_capacity(READERS);
        for _ in 0..READERS {
            let reader = Connection::open(path).map_err(|e| not_writable(path, &e))?;
            configure(&reader).map_err(|e| classify_open_error(path, e))?;
            reader.pragma_update(None, "query_only", "ON")?;
            readers.push(Mutex::new(reader));
        }
        Ok(SqliteStore {
            writer: Writer::new(conn, None)?,
            readers,
            next_reader: AtomicUsize::new(0),
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The same store with its writer flushing apart: the write connection is handed over
    /// (the old writer ends, its queue empty) to a writer with the WAL file to flush.
    fn flushed_apart(self) -> Result<Self, OqError> {
        let Some(wal) = flush::open_wal(&self.path) else {
            tracing::warn!("store: no WAL file to flush apart; flushing inside COMMIT");
            return Ok(self);
        };
        let open = || -> Result<Connection, OqError> {
            let conn = Connection::open(&self.path).map_err(|e| not_writable(&self.path, &e))?;
            configure(&conn).map_err(|e| classify_open_error(&self.path, e))?;
            Ok(conn)
        };
        let (conn, checkpoints) = (open()?, open()?);
        let SqliteStore {
            writer,
            readers,
            next_reader,
            path,
        } = self;
        drop(writer);
        Ok(SqliteStore {
            writer: Writer::new(conn, Some((wal, checkpoints)))?,
            readers,
            next_reader,
            path,
        })
    }

    /// A read connection, round robin; a poisoned one is still usable (reads hold no
    /// transaction across a panic that matters: `finish` ends it).
    fn reader(&self) -> std::sync::MutexGuard<'_, Connection> {
        let i = self.next_reader.fetch_add(1, Ordering::Relaxed) % self.readers.len();
        self.readers[i].lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Store for SqliteStore {
    fn read<T>(&self, f: impl FnOnce(&dyn StoreView) -> Result<T, OqError>) -> Result<T, OqError> {
        let mut conn = self.reader();
        // A deferred transaction gives every query of `f` the same snapshot.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let out = f(&SqliteView::new(&tx))?;
        tx.finish()?;
        // Nothing read leaves before it is on disk (see `flush.rs`).
        self.writer.durability().wait_for_commits_so_far();
        Ok(out)
    }

    fn transact<T: Send + 'static>(
        &self,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
    ) -> Result<(Vec<StoredEvent>, T), OqError> {
        self.writer.transact(decide, append_events)
    }

    fn transact_async<T: Send + 'static>(
        &self,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
    ) -> impl Future<Output = Result<(Vec<StoredEvent>, T), OqError>> + Send {
        let (reply, outcome) = tokio::sync::oneshot::channel();
        self.writer.submit(decide, append_events, move |result| {
            let _ = reply.send(result);
        });
        async move { outcome.await.map_err(|_| writer::writer_gone())? }
    }
}

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Reads the header of an existing file without writing to it.
/// Reads the 100-byte header of an existing file without opening it through SQLite:
/// opening a WAL database, even read-only, creates its `-wal` and `-shm` files, and a
/// refused store must be left exactly as it was. `migrate` checks again under the lock.
fn preflight(path: &Path) -> Result<(), OqError> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    if meta.is_dir() {
        return Err(OqError::store(
            ErrorCode::NotAnOqStore,
            format!("{} is a directory, not an oq store", path.display()),
        ));
    }
    if meta.len() == 0 {
        return Ok(());
    }
    let mut header = [0u8; 100];
    let read = std::fs::File::open(path).and_then(|mut f| {
        use std::io::Read;
        f.read_exact(&mut header)
    });
    if read.is_err() || &header[..16] != b"SQLite format 3\0" {
        return Err(OqError::store(
            ErrorCode::NotAnOqStore,
            format!(
                "{} is not an oq store (not a SQLite database); refusing to touch it",
                path.display()
            ),
        ));
    }
    let be32 = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    // Offsets from SQLite's file format: 40 schema cookie, 60 user_version, 68 application_id.
    let has_schema = be32(40) != 0;
    check_header(path, be32(68) as i32, i64::from(be32(60)), has_schema)
}

fn check_header(
    path: &Path,
    application_id: i32,
    version: i64,
    has_schema: bool,
) -> Result<(), OqError> {
    if application_id == 0 && version == 0 {
        return if has_schema {
            Err(OqError::store(
                ErrorCode::NotAnOqStore,
                format!(
                    "{} is a SQLite database but not an oq store; refusing to touch it",
                    path.display()
                ),
            ))
        } else {
            Ok(())
        };
    }
    if application_id != APPLICATION_ID {
        return Err(OqError::store(
            ErrorCode::NotAnOqStore,
            format!(
                "{} is a SQLite database of another application (id {application_id:#x}); refusing to touch it",
                path.display()
            ),
        ));
    }
    if version > LATEST_VERSION {
        return Err(OqError::store(
            ErrorCode::StoreTooNew,
            format!(
                "{} has schema version {version}, newer than this oq understands ({LATEST_VERSION}); upgrade oq — the store was not touched",
                path.display()
            ),
        ));
    }
    Ok(())
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // WAL: readers never block the writer; FULL: a committed answer survives a power cut.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // Statement journals of trigger-firing inserts stay in memory, not /var/tmp files.
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    Ok(())
}

fn migrate(conn: &mut Connection, path: &Path) -> Result<(), OqError> {
    // The write lock first: two processes opening a new store migrate it once, in turn.
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| classify_open_error(path, e))?;
    let app: i32 = tx.query_row(
        "SELECT application_id FROM pragma_application_id",
        [],
        |r| r.get(0),
    )?;
    let version: i64 = tx.query_row("SELECT user_version FROM pragma_user_version", [], |r| {
        r.get(0)
    })?;
    let tables: i64 = tx.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
    check_header(path, app, version, tables > 0)?;
    if version < LATEST_VERSION {
        for step in &MIGRATIONS[version as usize..] {
            tx.execute_batch(step)?;
        }
        tx.pragma_update(None, "application_id", APPLICATION_ID)?;
        tx.pragma_update(None, "user_version", LATEST_VERSION)?;
    }
    tx.commit().map_err(busy)?;
    Ok(())
}

fn classify_open_error(path: &Path, e: rusqlite::Error) -> OqError {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => OqError::store(
            ErrorCode::NotAnOqStore,
            format!(
                "{} is not an oq store (not a SQLite database); refusing to touch it",
                path.display()
            ),
        ),
        Some(
            rusqlite::ErrorCode::CannotOpen
            | rusqlite::ErrorCode::ReadOnly
            | rusqlite::ErrorCode::PermissionDenied,
        ) => not_writable(path, &e),
        _ => OqError::store(
            ErrorCode::StoreUnusable,
            format!("{} cannot be used: {e}", path.display()),
        ),
    }
}

fn not_writable(path: &Path, e: &rusqlite::Error) -> OqError {
    let dir = path.parent().unwrap_or(path);
    OqError::store(
        ErrorCode::DataDirNotWritable,
        format!("data dir {} is not writable: {e}", dir.display()),
    )
}

fn busy(e: rusqlite::Error) -> OqError {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked) => {
            OqError::store(
                ErrorCode::StoreBusy,
                format!(
                    "the store stayed locked by another process for {} s",
                    BUSY_TIMEOUT.as_secs()
                ),
            )
        }
        _ => e.into(),
    }
}
