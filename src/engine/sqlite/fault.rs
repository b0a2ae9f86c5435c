//! What a failure of SQLite means for the person at the door: a full disk, a store
//! another process holds locked, a disk that failed to write, a damaged file — each its
//! own code with the path and what to do, never "internal" for what a disk did.
//!
//! | code | when | exit | HTTP |
//! |---|---|---|---|
//! | `disk_full` | `SQLITE_FULL`, or ENOSPC/EDQUOT behind an I/O error | 9 | 507 |
//! | `store_busy` | the write lock stayed taken past the busy timeout | 9 | 503 + Retry-After |
//! | `store_failed` | an I/O error while writing or flushing (the disk failed) | 9 | 503 |
//! | `store_damaged` | SQLite found the file corrupt | 9 | 503 |

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode as Sqlite};

use super::vfs;
use crate::domain::{ErrorCode, OqError};

/// How long a writer waits for another process's write lock before it reports
/// `store_busy`: writes are a few inserts, so this means a stuck holder, not load.
/// `OQ_STORE_BUSY_TIMEOUT_MS` overrides it (documented in the README).
pub fn busy_timeout() -> Duration {
    std::env::var("OQ_STORE_BUSY_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_millis)
        .unwrap_or(Duration::from_secs(5))
}

/// Whether `e` is the store's fault (its disk, its lock, its file) rather than a
/// refusal of the decision: the other writes of a batch that met it are told of it.
pub fn is_store_fault(e: &OqError) -> bool {
    matches!(
        e.code(),
        ErrorCode::DiskFull
            | ErrorCode::StoreFailed
            | ErrorCode::StoreBusy
            | ErrorCode::StoreDamaged
    )
}

/// The store file a connection works on (empty for an in-memory one).
fn store_path(conn: &Connection) -> PathBuf {
    conn.path().map(PathBuf::from).unwrap_or_default()
}

/// The directory a file lives in, for "no space left on …".
fn dir_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(path)
}

/// Maps the failure of a call on `conn` (read its errno before the next call).
pub fn classify(conn: &Connection, e: rusqlite::Error) -> OqError {
    let errno = vfs::system_errno(conn);
    classify_at(&store_path(conn), errno, e)
}

/// [`classify`] for a store at `path`, with the OS error behind it when known.
pub fn classify_at(path: &Path, errno: i32, e: rusqlite::Error) -> OqError {
    let Some(code) = e.sqlite_error_code() else {
        return OqError::Internal(format!("store: {e}"));
    };
    let no_space = matches!(errno, libc::ENOSPC | libc::EDQUOT);
    match code {
        Sqlite::DiskFull => disk_full(path),
        Sqlite::SystemIoFailure if no_space => disk_full(path),
        Sqlite::SystemIoFailure => failed(path, &e, errno),
        Sqlite::DatabaseBusy | Sqlite::DatabaseLocked => busy(path),
        Sqlite::DatabaseCorrupt | Sqlite::NotADatabase => damaged(path, &e),
        Sqlite::ReadOnly | Sqlite::CannotOpen | Sqlite::PermissionDenied => not_writable(path, &e),
        _ => OqError::Internal(format!("store: {e}")),
    }
}

pub fn disk_full(path: &Path) -> OqError {
    let place = if path.as_os_str().is_empty() {
        "the store's file system".to_string()
    } else {
        dir_of(path).display().to_string()
    };
    OqError::store(
        ErrorCode::DiskFull,
        format!(
            "no space left on {place}: nothing was written; reading still works, and \
             writing resumes once there is room"
        ),
    )
}

fn failed(path: &Path, e: &rusqlite::Error, errno: i32) -> OqError {
    let os = if errno != 0 {
        format!(" ({})", std::io::Error::from_raw_os_error(errno))
    } else {
        String::new()
    };
    store_failed(
        path,
        &format!("the disk failed under it: {e}{os}; whether the write reached it is unknown"),
    )
}

/// The store can no longer be trusted in this process: an I/O error while writing or
/// flushing. `why` says what failed.
pub fn store_failed(path: &Path, why: &str) -> OqError {
    OqError::store(
        ErrorCode::StoreFailed,
        format!(
            "the store {} failed: {why}. This process writes nothing more to it; restart \
             it, and run `oq store check`",
            path.display()
        ),
    )
}

/// Another process holds the write lock and kept it past the busy timeout.
pub fn busy(path: &Path) -> OqError {
    let holder = vfs::write_lock_holder(path)
        .map(|pid| format!(" by {}", describe_process(pid)))
        .unwrap_or_default();
    OqError::store(
        ErrorCode::StoreBusy,
        format!(
            "the store {} stayed locked{holder} for {} ms; nothing was written — try again, \
             or end the process holding it",
            path.display(),
            busy_timeout().as_millis()
        ),
    )
}

fn damaged(path: &Path, e: &rusqlite::Error) -> OqError {
    store_damaged(path, &format!("SQLite reports: {e}"))
}

/// The file is damaged (or was altered by hand): writing is refused, reading goes on.
pub fn store_damaged(path: &Path, why: &str) -> OqError {
    OqError::store(
        ErrorCode::StoreDamaged,
        format!(
            "the store {} is damaged: {why}. oq writes nothing into it; run `oq store check` \
             for a report, and restore a backup (README, \"Backup and restore\")",
            path.display()
        ),
    )
}

pub fn not_writable(path: &Path, e: &rusqlite::Error) -> OqError {
    OqError::store(
        ErrorCode::DataDirNotWritable,
        format!("data dir {} is not writable: {e}", dir_of(path).display()),
    )
}

/// "pid 4242 (oq serve --config x.toml)": the holder's command line where the system
/// shows it, so a stuck oq process is named and another program is told apart.
pub fn describe_process(pid: u32) -> String {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let args: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let Some(program) = args.first() else {
        return format!("pid {pid}");
    };
    let name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name == "oq" {
        format!("oq {} (pid {pid})", door(&args[1..]))
    } else {
        format!("pid {pid} ({name}, not an oq process)")
    }
}

/// The door of an `oq` command line: its first argument that is neither a flag nor the
/// value of one of the global flags that take a value (`cli/args.rs`).
fn door(args: &[String]) -> &str {
    const TAKES_VALUE: [&str; 8] = [
        "--data-dir",
        "--source",
        "--token",
        "--profile",
        "--as",
        "--project",
        "-p",
        "--directory",
    ];
    let mut rest = args.iter();
    while let Some(a) = rest.next() {
        if TAKES_VALUE.contains(&a.as_str()) {
            rest.next();
        } else if !a.starts_with('-') {
            return a;
        }
    }
    "(the terminal UI)"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_disk_full_whatever_sqlite_called_it() {
        let full = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(13), None);
        assert_eq!(classify_at(Path::new("/d/s"), 0, full).code(), "disk_full");
        let io = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(10), None);
        let e = classify_at(Path::new("/d/s"), libc::ENOSPC, io);
        assert_eq!(e.code(), "disk_full");
        assert!(e.to_string().contains("no space left on /d"), "{e}");
        let io = rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(10), None);
        assert_eq!(
            classify_at(Path::new("/d/s"), libc::EIO, io).code(),
            "store_failed"
        );
    }

    #[test]
    fn an_oq_door_is_found_among_its_flags() {
        let args = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(door(&args("--data-dir d --as ana -p loja ask Q")), "ask");
        assert_eq!(door(&args("--json serve --config c")), "serve");
        assert_eq!(door(&args("--as ana")), "(the terminal UI)");
    }

    #[test]
    fn this_process_is_named_by_its_command_line() {
        let me = describe_process(std::process::id());
        assert!(me.contains(&std::process::id().to_string()), "{me}");
    }
}
