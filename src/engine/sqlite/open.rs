//! Opening the store: what is on disk is looked at before anything is written, a new
//! store appears whole or not at all, the schema migrates only when it is behind (the
//! only time an open takes the write lock), and a failed open leaves nothing behind.

use std::fs::File;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, TransactionBehavior};

use super::schema::{self, APPLICATION_ID, LATEST_VERSION};
use super::{fault, vfs};
use crate::domain::{ErrorCode, OqError};

/// `<store>-wal` / `<store>-shm` beside the store.
pub fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    name.into()
}

/// What the directory holds before the open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// No store and nothing of one: a new store may be made here.
    Nothing,
    /// A file with an oq store's header (or an empty SQLite file of none yet).
    Store,
}

/// Reads the 100-byte header of an existing file without opening it through SQLite:
/// opening a WAL database, even read-only, creates its `-wal` and `-shm` files, and a
/// refused store must be left exactly as it was. `migrate_if_behind` checks again.
pub fn preflight(path: &Path) -> Result<Found, OqError> {
    let Ok(meta) = std::fs::metadata(path) else {
        return orphans(path).map(|()| Found::Nothing);
    };
    if meta.is_dir() {
        return Err(OqError::store(
            ErrorCode::NotAnOqStore,
            format!("{} is a directory, not an oq store", path.display()),
        ));
    }
    if meta.len() == 0 {
        return Err(OqError::store(
            ErrorCode::StoreFileEmpty,
            format!(
                "{} is an empty file (0 bytes), not a store; oq did not make a new store in \
                 its place. If the store was lost, restore a backup there (README, \"Backup \
                 and restore\"); to start an empty store, run `oq store init`",
                path.display()
            ),
        ));
    }
    let mut header = [0u8; 100];
    let read = File::open(path).and_then(|mut f| {
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
    check_header(path, be32(68) as i32, i64::from(be32(60)), has_schema)?;
    Ok(Found::Store)
}

/// No store file: refused when its write-ahead log or index is still here (the main
/// file was lost or moved, and what the log holds would be lost with a new store).
fn orphans(path: &Path) -> Result<(), OqError> {
    for suffix in ["-wal", "-shm"] {
        let file = sidecar(path, suffix);
        if let Ok(meta) = std::fs::metadata(&file) {
            return Err(OqError::store(
                ErrorCode::StoreFileMissing,
                format!(
                    "{} is missing but {} ({} bytes) is here: the store's main file was lost \
                     or moved, and oq did not make a new store over what is left. Put the \
                     store (or a backup) back; to start an empty store, run `oq store init`, \
                     which moves the leftovers aside",
                    path.display(),
                    file.display(),
                    meta.len()
                ),
            ));
        }
    }
    Ok(())
}

pub fn check_header(
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

/// Makes a new store at `path` in one step: the schema is written to a file of its own
/// beside it, flushed, and linked into place, so `path` is either absent or a whole
/// store — never the empty file a crash or a full disk half-way would leave (which is
/// refused as a lost store). Losing the race to another process is fine: its store is
/// the same.
pub fn create(path: &Path) -> Result<(), OqError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(
        ".{name}.new-{}-{}",
        std::process::id(),
        super::now_ms()
    ));
    let made = write_schema(&temp, path).and_then(|()| {
        File::open(&temp)
            .and_then(|f| f.sync_all())
            .map_err(|e| io_error(path, &e))
    });
    let linked = made.and_then(|()| match std::fs::hard_link(&temp, path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        // No hard links here (some FUSE, FAT): a rename, checked first.
        Err(_) if !path.exists() => std::fs::rename(&temp, path).map_err(|e| io_error(path, &e)),
        Err(e) => Err(io_error(path, &e)),
    });
    for leftover in [
        temp.clone(),
        sidecar(&temp, "-wal"),
        sidecar(&temp, "-shm"),
        sidecar(&temp, "-journal"),
    ] {
        let _ = std::fs::remove_file(leftover);
    }
    linked.map_err(|e| match e.code() {
        ErrorCode::DiskFull => OqError::store(
            ErrorCode::DiskFull,
            format!(
                "no space left on {} to create the store; nothing was left behind",
                dir.display()
            ),
        ),
        _ => e,
    })?;
    // The new name is durable once the directory is.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

fn io_error(path: &Path, e: &std::io::Error) -> OqError {
    match e.raw_os_error() {
        Some(libc::ENOSPC | libc::EDQUOT) => fault::disk_full(path),
        _ => OqError::store(
            ErrorCode::DataDirNotWritable,
            format!("the store {} cannot be created: {e}", path.display()),
        ),
    }
}

fn write_schema(temp: &Path, store: &Path) -> Result<(), OqError> {
    let fail = |conn: Option<&Connection>, e: rusqlite::Error| {
        let errno = conn.map(vfs::system_errno).unwrap_or(0);
        fault::classify_at(store, errno, e)
    };
    // 0600 before SQLite creates it with the umask's mode; the store is this file
    // linked into place, and SQLite gives its -wal and -shm the database file's mode.
    crate::private_fs::ensure_file(temp).map_err(|e| io_error(store, &e))?;
    let mut conn = super::connect(temp).map_err(|e| fail(None, e))?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(|e| fail(Some(&conn), e))?;
    let tx = conn.transaction().map_err(|e| fail(None, e))?;
    let steps = || -> rusqlite::Result<()> {
        schema::migrate(&tx, 0)?;
        tx.pragma_update(None, "application_id", APPLICATION_ID)?;
        tx.pragma_update(None, "user_version", LATEST_VERSION)
    };
    let written = steps();
    let errno = vfs::system_errno(&tx);
    written.map_err(|e| fault::classify_at(store, errno, e))?;
    tx.commit().map_err(|e| fail(None, e))?;
    // Closing the last connection checkpoints the WAL into the file and removes it.
    conn.close().map_err(|(_, e)| fail(None, e))
}

/// The schema version, read without a write lock.
fn header(conn: &Connection) -> rusqlite::Result<(i32, i64, bool)> {
    let app = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))?;
    Ok((app, version, tables > 0))
}

/// Brings the schema forward when it is behind, and only then takes the write lock (a
/// reader must not wait behind another process's write). Returns `(from, to)` when it
/// migrated, for the door to say so.
pub fn migrate_if_behind(
    conn: &mut Connection,
    path: &Path,
) -> Result<Option<(i64, i64)>, OqError> {
    let (app, version, tables) = header(conn).map_err(|e| fault::classify(conn, e))?;
    check_header(path, app, version, tables)?;
    if version >= LATEST_VERSION {
        return Ok(None);
    }
    tracing::info!(store = %path.display(), from = version, to = LATEST_VERSION, "migrating the store");
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| fault::classify_at(path, 0, e))?;
    // Under the lock: another process may have migrated it meanwhile.
    let (app, version, tables) = header(&tx).map_err(|e| fault::classify(&tx, e))?;
    check_header(path, app, version, tables)?;
    if version < LATEST_VERSION {
        let steps = || -> rusqlite::Result<()> {
            schema::migrate(&tx, version as usize)?;
            tx.pragma_update(None, "application_id", APPLICATION_ID)?;
            tx.pragma_update(None, "user_version", LATEST_VERSION)
        };
        steps().map_err(|e| fault::classify(&tx, e))?;
    }
    tx.commit().map_err(|e| fault::classify_at(path, 0, e))?;
    Ok((version < LATEST_VERSION).then_some((version, LATEST_VERSION)))
}

/// Which of the store's `-wal` and `-shm` files were there before an open, so a failed
/// open removes the ones it made — unless some connection, here or in another process,
/// has the store open meanwhile.
pub struct Sidecars {
    had: [bool; 2],
}

const SIDECARS: [&str; 2] = ["-wal", "-shm"];

impl Sidecars {
    pub fn look(path: &Path) -> Self {
        Sidecars {
            had: SIDECARS.map(|s| sidecar(path, s).exists()),
        }
    }

    pub fn remove_new(&self, path: &Path) {
        if self.had.iter().all(|h| *h) || vfs::in_use(path) {
            return;
        }
        for (suffix, had) in SIDECARS.iter().zip(self.had) {
            if !had {
                let _ = std::fs::remove_file(sidecar(path, suffix));
            }
        }
    }
}
