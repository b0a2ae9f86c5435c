//! Private files: every directory oq creates is 0700 and every file 0600, whatever the
//! process umask (a 022 umask would leave answers world-readable, a 000 one the data dir
//! world-writable). Every writer of files in oq goes through here: the stores (SQLite
//! copies the database file's mode to its `-wal` and `-shm`, so creating the database
//! file first is enough), logs, the bridge's settings, the outbox, the offline mirror,
//! drafts and the editor's temp file.
//!
//! Existing files and directories keep their mode (an operator may have chosen it); a
//! data dir that others can read is reported by [`exposed`] so `oq serve` warns at start.
//! On other platforms than Unix these are the plain `std::fs` calls.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};

const DIR_MODE: u32 = 0o700;
const FILE_MODE: u32 = 0o600;

/// Creates `path` and any missing parents; the directories created are 0700.
pub fn create_dir(path: &Path) -> std::io::Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    builder.mode(DIR_MODE);
    builder.create(path)?;
    // The umask may only have taken bits away; give the owner back what 0700 means.
    #[cfg(unix)]
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(DIR_MODE))?;
    Ok(())
}

fn options() -> OpenOptions {
    let mut o = OpenOptions::new();
    #[cfg(unix)]
    o.mode(FILE_MODE);
    o
}

/// Opens `path` for appending, creating it 0600 (logs).
pub fn append(path: &Path) -> std::io::Result<File> {
    let existed = path.exists();
    let f = options().create(true).append(true).open(path)?;
    if !existed {
        owner_only(&f)?;
    }
    Ok(f)
}

/// Creates an empty `path` 0600 unless it exists: a SQLite store is opened after this,
/// so it and its `-wal` and `-shm` files are private.
pub fn ensure_file(path: &Path) -> std::io::Result<()> {
    match options().create_new(true).write(true).open(path) {
        Ok(f) => owner_only(&f),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Writes `bytes` to `path` as a whole: a 0600 temp file beside it, synced, renamed over
/// it, the directory synced. A reader sees the old content or the new, never a mix.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    create_dir(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    {
        let mut f = create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Creates (truncating) `path` 0600 for writing.
pub fn create(path: &Path) -> std::io::Result<File> {
    let f = options()
        .create(true)
        .write(true)
        .truncate(true)
        .open(path)?;
    owner_only(&f)?;
    Ok(f)
}

/// Creates `path` 0600 for writing; refused if it exists (a file never written over).
pub fn create_new(path: &Path) -> std::io::Result<File> {
    let f = options().create_new(true).write(true).open(path)?;
    owner_only(&f)?;
    Ok(f)
}

/// The permission bits others hold on `path` (group and world), when there are any.
pub fn exposed(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o777;
        (mode & 0o077 != 0).then_some(mode)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

fn owner_only(f: &File) -> std::io::Result<()> {
    #[cfg(unix)]
    f.set_permissions(std::fs::Permissions::from_mode(FILE_MODE))?;
    #[cfg(not(unix))]
    let _ = f;
    Ok(())
}
