//! The embedded store: the event log in one SQLite file (WAL) under the data dir.
//!
//! Opening checks before it writes (`open.rs`): a file that is not SQLite, a SQLite file
//! that is not an oq store, a store newer than this binary, an empty file or a log
//! without its store are refused untouched; only a store whose schema is behind takes
//! the write lock on open. Writers serialise on SQLite's own write lock (`BEGIN
//! IMMEDIATE`), so several processes share one store: the TUI open while `oq ask`
//! declares and another process answers. Within a process, concurrent writers share one
//! transaction and one fsync (`writer.rs`: group commit on one writer thread), and reads
//! go through their own connections. Faults have names (`fault.rs`: a full disk, a
//! stuck lock holder, a failed disk, a damaged file), and once a write or flush failed
//! the store is refused in this process (`health.rs`). Every connection goes through
//! `vfs.rs`, so a full disk is an error and never a SIGBUS.

mod append;
mod backup;
pub(crate) mod chain;
mod check;
mod checkpoint;
mod fault;
mod flush;
mod health;
mod init;
mod lazy;
mod open;
pub mod raw;
mod readers;
mod schema;
mod search;
pub(crate) mod verify;
mod vfs;
mod view;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, TransactionBehavior};

use crate::domain::{ErrorCode, OqError, StoredEvent};
use crate::engine::store::{NewEvent, Store, StoreView};

use append::append_events;
pub use check::{Depth, Report};
pub use checkpoint::EVERY_COMMITS as CHECKPOINT_EVERY_COMMITS;
pub use fault::busy_timeout;
use health::Health;
pub use health::Standing;
pub use init::Initialised;
use lazy::{LazyWriter, Spare};
use readers::Readers;
pub use schema::{APPLICATION_ID, LATEST_VERSION, MIGRATIONS};
pub use verify::{Break, Head, Tamper, Verified};
use view::SqliteView;
use writer::Writer;

/// The file name of the store inside the data dir.
pub const STORE_FILE: &str = "oq.sqlite3";

/// The WAL file's size past which it is cut back (`journal_size_limit`, and a TRUNCATE
/// checkpoint in `checkpoint.rs`); `OQ_STORE_WAL_LIMIT_BYTES` overrides it.
pub fn wal_limit() -> u64 {
    std::env::var("OQ_STORE_WAL_LIMIT_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8 * 1024 * 1024)
}

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
    /// Started on the first write (`lazy.rs`): a process that only reads has none.
    writer: LazyWriter,
    readers: Readers,
    path: PathBuf,
    health: Arc<Health>,
    /// `(from, to)` when this open brought the schema forward.
    migrated: Option<(i64, i64)>,
}

/// A failure without its connection at hand (no errno): its code decides.
impl From<rusqlite::Error> for OqError {
    fn from(e: rusqlite::Error) -> Self {
        fault::classify_at(Path::new(""), 0, e)
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the store in `data_dir`.
    pub fn open_in(data_dir: &Path) -> Result<Self, OqError> {
        Self::make_data_dir(data_dir)?;
        Self::open(&data_dir.join(STORE_FILE))
    }

    /// `oq store init`: a new, empty store in `data_dir`, replacing a lost one (its
    /// leftovers moved aside); an oq store already there is left as it is.
    pub fn init_in(data_dir: &Path) -> Result<Initialised, OqError> {
        Self::make_data_dir(data_dir)?;
        init::init(&data_dir.join(STORE_FILE))
    }

    fn make_data_dir(data_dir: &Path) -> Result<(), OqError> {
        let path = data_dir.join(STORE_FILE);
        crate::private_fs::create_dir(data_dir).map_err(|e| match e.raw_os_error() {
            Some(libc::ENOSPC | libc::EDQUOT) => fault::disk_full(&path),
            _ => OqError::store(
                ErrorCode::DataDirNotWritable,
                format!("data dir {} cannot be created: {e}", data_dir.display()),
            ),
        })
    }

    /// [`SqliteStore::open_in`], choosing when commits are flushed.
    pub fn open_in_with(data_dir: &Path, flush: Flush) -> Result<Self, OqError> {
        Self::open_in(data_dir)?.flushing(flush)
    }

    pub fn open(path: &Path) -> Result<Self, OqError> {
        if open::preflight(path)? == open::Found::Nothing {
            open::create(path)?;
        }
        let sidecars = open::Sidecars::look(path);
        let opened = Self::open_existing(path);
        if opened.is_err() {
            sidecars.remove_new(path);
        }
        opened
    }

    fn open_existing(path: &Path) -> Result<Self, OqError> {
        let mut conn = open_connection(path)?;
        let migrated = open::migrate_if_behind(&mut conn, path)?;
        let health = Arc::new(Health::new(path));
        // Guards dropped or altered by hand: oq does not write into such a store.
        let altered = check::schema::differences(&conn).map_err(|e| fault::classify(&conn, e))?;
        if !altered.is_empty() {
            health.damage(&format!("its schema was altered ({})", altered.join("; ")));
        }
        let spare = Spare::new(conn);
        Ok(SqliteStore {
            writer: LazyWriter::new(path, spare.clone(), health.clone()),
            readers: Readers::new(path, spare),
            path: path.to_path_buf(),
            health,
            migrated,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `(from, to)` schema versions when opening migrated the store.
    pub fn migrated(&self) -> Option<(i64, i64)> {
        self.migrated
    }

    /// `oq store check`: the file, the schema and the indexes against the log (and, in
    /// full, the chains), in one read snapshot. Damage found also stops this process
    /// writing.
    pub fn check(&self, depth: Depth) -> Result<Report, OqError> {
        let report = self.snapshot(|conn| Ok(check::run(conn, depth)))?;
        if !report.is_clean() {
            self.health.damage(&report.findings().join("; "));
        }
        Ok(report)
    }

    /// `oq store verify`: every project's chain walked, the first break named.
    pub fn verify(&self) -> Result<Verified, OqError> {
        self.snapshot(|conn| verify::verify(conn).map_err(|e| fault::classify(conn, e)))
    }

    /// `oq store head`: each project's newest link.
    pub fn heads(&self) -> Result<Vec<Head>, OqError> {
        self.snapshot(|conn| verify::heads(conn).map_err(|e| fault::classify(conn, e)))
    }

    fn snapshot<T>(&self, f: impl FnOnce(&Connection) -> Result<T, OqError>) -> Result<T, OqError> {
        self.health.readable()?;
        let mut conn = self.reader()?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let out = f(&tx)?;
        tx.finish()?;
        Ok(out)
    }

    /// Whether this process still writes (and reads) the store, and why not.
    pub fn standing(&self) -> Standing {
        self.health.standing()
    }

    /// The store with its writer flushing as `flush` says. For `Flush::Pipelined` the
    /// write connection is handed over (the old writer ends, its queue empty) to a writer
    /// with the WAL file to flush.
    fn flushing(self, flush: Flush) -> Result<Self, OqError> {
        if flush == Flush::InCommit {
            return Ok(self);
        }
        let Some(wal) = flush::open_wal(&self.path) else {
            tracing::warn!("store: no WAL file to flush apart; flushing inside COMMIT");
            return Ok(self);
        };
        // What an earlier process left in the page cache reaches the disk before this one
        // tells anyone it is saved.
        if let Err(e) = wal.sync_data() {
            return Err(self
                .health
                .fail(&format!("the WAL could not be flushed ({e})")));
        }
        let (conn, checkpoints) = (open_connection(&self.path)?, open_connection(&self.path)?);
        let SqliteStore {
            writer,
            readers,
            path,
            health,
            migrated,
        } = self;
        let spare = writer.into_spare();
        Ok(SqliteStore {
            writer: LazyWriter::started(
                &path,
                spare,
                health.clone(),
                Writer::new(conn, Some((wal, checkpoints)), health.clone())?,
            ),
            readers,
            path,
            health,
            migrated,
        })
    }

    /// A read connection (`readers.rs`: opened on first need).
    fn reader(&self) -> Result<readers::Reader<'_>, OqError> {
        self.readers.get()
    }

    /// Whether this process started its writer (`lazy.rs`), and whether the open's
    /// connection is still unclaimed.
    #[cfg(test)]
    pub fn writer_state(&self) -> (bool, bool) {
        (self.writer.if_started().is_some(), self.writer.spare_left())
    }

    /// How many read connections this process has open and idle.
    #[cfg(test)]
    pub fn readers_open(&self) -> usize {
        self.readers.opened()
    }
}

impl Store for SqliteStore {
    fn read<T>(&self, f: impl FnOnce(&dyn StoreView) -> Result<T, OqError>) -> Result<T, OqError> {
        self.health.readable()?;
        let mut conn = self.reader()?;
        // A deferred transaction gives every query of `f` the same snapshot.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let out = f(&SqliteView::new(&tx))?;
        // Committed, not rolled back: it wrote nothing of the store, and this
        // connection's cover of the search index's tail (`search.rs`) is kept.
        tx.commit()?;
        // Nothing read leaves before it is on disk (see `flush.rs`), and nothing at all
        // once a flush failed.
        if let Some(writer) = self.writer.if_started() {
            writer.durability().wait_for_commits_so_far();
        }
        self.health.readable()?;
        Ok(out)
    }

    fn transact<T: Send + 'static>(
        &self,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
    ) -> Result<(Vec<StoredEvent>, T), OqError> {
        self.writer.get()?.transact(decide, append_events)
    }

    fn transact_async<T: Send + 'static>(
        &self,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
    ) -> impl Future<Output = Result<(Vec<StoredEvent>, T), OqError>> + Send {
        let (reply, outcome) = tokio::sync::oneshot::channel();
        match self.writer.get() {
            Ok(writer) => writer.submit(decide, append_events, move |result| {
                let _ = reply.send(result);
            }),
            Err(e) => {
                let _ = reply.send(Err(e));
            }
        }
        async move { outcome.await.map_err(|_| writer::writer_gone())? }
    }
}

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A connection to the store through oq's VFS (`vfs.rs`: no SIGBUS on a full disk).
fn connect(path: &Path) -> rusqlite::Result<Connection> {
    let vfs = vfs::register().map_err(rusqlite::Error::InvalidParameterName)?;
    Connection::open_with_flags_and_vfs(path, rusqlite::OpenFlags::default(), vfs)
}

/// [`connect`] and [`configure`], failures named.
fn open_connection(path: &Path) -> Result<Connection, OqError> {
    let conn = connect(path).map_err(|e| fault::classify_at(path, 0, e))?;
    configure(&conn).map_err(|e| fault::classify(&conn, e))?;
    Ok(conn)
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(busy_timeout())?;
    // WAL: readers never block the writer; FULL: a committed answer survives a power cut.
    // Already WAL for every store but one that migrates: no write lock here.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // Statement journals of trigger-firing inserts stay in memory, not /var/tmp files.
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    // Pages are read with read(2), never through a map of the file (whose faults on a
    // full or failing disk are signals, not errors).
    conn.pragma_update(None, "mmap_size", 0)?;
    // The WAL is cut back to this size whenever it restarts.
    conn.pragma_update(None, "journal_size_limit", wal_limit() as i64)?;
    vfs::persist_wal(conn)?;
    Ok(())
}
