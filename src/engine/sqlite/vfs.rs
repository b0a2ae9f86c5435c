//! SQLite's own "unix" VFS with one thing added: the blocks of the `-shm` file are
//! allocated before SQLite writes to them through its memory map, so a full disk is an
//! error (`SQLITE_FULL`) and never a SIGBUS. The only `unsafe` code of the crate.
//!
//! Why: in WAL mode every connection maps the wal-index (`<store>-shm`) with `mmap` and
//! writes to it as memory. SQLite grows that file by writing one byte at the end of each
//! 4 KiB page; on a file system whose blocks are smaller than a page (ext4 below 512 MiB
//! uses 1 KiB blocks; XFS may) that leaves holes, and the first store to a hole through the
//! map must allocate a block inside a page fault. With no block free the kernel has no
//! error to return and sends SIGBUS: seen as `oq list` dying with exit 135 on a nearly full
//! disk, right after a commit had reached the WAL. Here every region SQLite maps is
//! allocated with `fallocate` before SQLite sees the pointer, and a writer reserves the
//! next region before it begins (`reserve_ahead`), so the map never meets a hole.
//!
//! How: the VFS is a copy of the default one whose `xOpen` calls the original and, for a
//! main database file, points the file at a copy of its method table in which `xShmMap`
//! and `xClose` are wrapped; everything else is SQLite's own code on SQLite's own struct.
//! This process's handle on each `-shm` file is kept in a registry and closed only when no
//! descriptor of SQLite's still refers to that file: closing any descriptor of a file drops
//! every POSIX lock the process holds on it, and SQLite's locks live on the `-shm` file.
//!
//! Limits: copy-on-write file systems (btrfs, ZFS) may still need a block for a write into
//! an allocated page; on those only free space prevents the fault.
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use rusqlite::{Connection, ffi};

/// The VFS's registered name (also made the process's default VFS).
pub const NAME: &str = "oq-unix";
const NAME_C: &CStr = c"oq-unix";

/// Bytes of one wal-index region (SQLite's `WALINDEX_PGSZ`).
const REGION: u64 = 32 * 1024;

/// Byte offset of the WAL write lock in the `-shm` file (SQLite's WAL file format:
/// the locks start at 120, the write lock first).
const WAL_WRITE_LOCK_OFFSET: i64 = 120;
/// The "dead man switch" byte every attached connection holds a shared lock on.
const DMS_LOCK_OFFSET: i64 = 128;

/// What this process knows of one store's `-shm` file.
struct Shm {
    path: PathBuf,
    state: Mutex<ShmState>,
}

#[derive(Default)]
struct ShmState {
    /// Main database files of this process open on the store.
    users: usize,
    fd: Option<File>,
    /// Bytes known allocated from offset 0 (valid while `users > 0`: SQLite truncates the
    /// file only when no connection anywhere has it attached).
    allocated: u64,
    /// Bytes of the file mapped by this process's connections.
    mapped: u64,
}

/// The `-shm` files of the stores this process has open, by database path.
fn registry() -> &'static Mutex<HashMap<PathBuf, Arc<Shm>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<PathBuf, Arc<Shm>>>> = OnceLock::new();
    REGISTRY.get_or_init(Mutex::default)
}

/// What the wrapped methods need, kept in the file object after SQLite's own struct.
#[repr(C)]
struct Extra {
    original: *const ffi::sqlite3_io_methods,
    shm: *const Shm,
}

struct Installed {
    /// Where [`Extra`] starts inside a file object.
    extra_at: usize,
}

fn installed() -> &'static Result<Installed, String> {
    static INSTALLED: OnceLock<Result<Installed, String>> = OnceLock::new();
    INSTALLED.get_or_init(install)
}

/// Registers the VFS (once per process) and makes it the default, so every connection
/// of the process — the store's and any other — goes through it.
pub fn register() -> Result<&'static str, String> {
    match installed() {
        Ok(_) => Ok(NAME),
        Err(e) => Err(e.clone()),
    }
}

fn install() -> Result<Installed, String> {
    // SAFETY: sqlite3_vfs_find and sqlite3_vfs_register are thread-safe; the base VFS
    // lives for the whole process, and the new one is leaked so it does too.
    unsafe {
        if ffi::sqlite3_initialize() != ffi::SQLITE_OK {
            return Err("SQLite could not initialise".into());
        }
        let base = ffi::sqlite3_vfs_find(std::ptr::null());
        if base.is_null() {
            return Err("SQLite has no default VFS".into());
        }
        let mut vfs: ffi::sqlite3_vfs = *base;
        let extra_at = (vfs.szOsFile as usize).next_multiple_of(std::mem::align_of::<Extra>());
        vfs.szOsFile = (extra_at + std::mem::size_of::<Extra>()) as c_int;
        vfs.zName = NAME_C.as_ptr();
        vfs.pAppData = base.cast();
        vfs.pNext = std::ptr::null_mut();
        vfs.xOpen = Some(x_open);
        let vfs = Box::leak(Box::new(vfs));
        if ffi::sqlite3_vfs_register(vfs, 1) != ffi::SQLITE_OK {
            return Err("SQLite refused to register oq's VFS".into());
        }
        Ok(Installed { extra_at })
    }
}

/// Method tables with the wrapped entries, one per distinct original table, leaked.
fn wrapped_methods(original: *const ffi::sqlite3_io_methods) -> *const ffi::sqlite3_io_methods {
    static TABLES: OnceLock<Mutex<Vec<(usize, usize)>>> = OnceLock::new();
    let mut tables = TABLES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some((_, wrapped)) = tables.iter().find(|(o, _)| *o == original as usize) {
        return *wrapped as *const ffi::sqlite3_io_methods;
    }
    // SAFETY: `original` is the table SQLite's xOpen just installed; it is static.
    let mut table = unsafe { *original };
    table.xClose = Some(x_close);
    if table.iVersion >= 2 && table.xShmMap.is_some() {
        table.xShmMap = Some(x_shm_map);
    }
    let wrapped = Box::leak(Box::new(table)) as *const ffi::sqlite3_io_methods;
    tables.push((original as usize, wrapped as usize));
    wrapped
}

/// # Safety
/// Called by SQLite with a file object of `szOsFile` bytes.
unsafe fn extra(file: *mut ffi::sqlite3_file) -> *mut Extra {
    let at = match installed() {
        Ok(i) => i.extra_at,
        Err(_) => 0,
    };
    // SAFETY: the object is `extra_at + size_of::<Extra>()` bytes, aligned by SQLite.
    unsafe { file.cast::<u8>().add(at).cast::<Extra>() }
}

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: pAppData holds the base VFS (set in `install`), alive for the process.
    unsafe {
        let base = (*vfs).pAppData.cast::<ffi::sqlite3_vfs>();
        let Some(open) = (*base).xOpen else {
            return ffi::SQLITE_ERROR;
        };
        let rc = open(base, name, file, flags, out_flags);
        if rc != ffi::SQLITE_OK || (*file).pMethods.is_null() || name.is_null() {
            return rc;
        }
        if flags & ffi::SQLITE_OPEN_MAIN_DB == 0 {
            return rc;
        }
        use std::os::unix::ffi::OsStrExt;
        let db = PathBuf::from(std::ffi::OsStr::from_bytes(
            CStr::from_ptr(name as *const c_char).to_bytes(),
        ));
        let shm = attach(&db);
        let original = (*file).pMethods;
        extra(file).write(Extra {
            original,
            shm: Arc::into_raw(shm),
        });
        (*file).pMethods = wrapped_methods(original);
        rc
    }
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: only files patched in `x_open` have this method, so `Extra` is there.
    unsafe {
        let extra = extra(file).read();
        let rc = match (*extra.original).xClose {
            Some(close) => close(file),
            None => ffi::SQLITE_OK,
        };
        detach(Arc::from_raw(extra.shm));
        rc
    }
}

unsafe extern "C" fn x_shm_map(
    file: *mut ffi::sqlite3_file,
    region: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    // SAFETY: as in `x_close`; `out` is SQLite's.
    unsafe {
        let extra = &*extra(file);
        let Some(map) = (*extra.original).xShmMap else {
            return ffi::SQLITE_IOERR;
        };
        let rc = map(file, region, size, extend, out);
        if rc != ffi::SQLITE_OK || (*out).is_null() {
            return rc;
        }
        let upto = (region as u64 + 1) * size as u64;
        match (*extra.shm).mapped_upto(upto) {
            Ok(()) => rc,
            Err(()) => {
                // SQLite keeps the region mapped but gets no pointer: the next call comes
                // back here and tries again, so space freed meanwhile is used.
                *out = std::ptr::null_mut();
                ffi::SQLITE_FULL
            }
        }
    }
}

/// The registry's key for a store: its path with links resolved, as SQLite names it.
fn key(db: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(db) {
        return p;
    }
    match (db.parent().map(std::fs::canonicalize), db.file_name()) {
        (Some(Ok(dir)), Some(name)) => dir.join(name),
        _ => db.to_path_buf(),
    }
}

fn lookup(db: &Path) -> Option<Arc<Shm>> {
    registry()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&key(db))
        .cloned()
}

fn attach(db: &Path) -> Arc<Shm> {
    let db = key(db);
    let mut shm_path = db.as_os_str().to_owned();
    shm_path.push("-shm");
    let mut all = registry().lock().unwrap_or_else(|p| p.into_inner());
    let shm = all
        .entry(db)
        .or_insert_with(|| {
            Arc::new(Shm {
                path: shm_path.into(),
                state: Mutex::default(),
            })
        })
        .clone();
    let mut state = shm.state.lock().unwrap_or_else(|p| p.into_inner());
    if state.users == 0 {
        // Another process may have truncated it while nobody here was attached.
        state.allocated = 0;
        state.mapped = 0;
    }
    state.users += 1;
    drop(state);
    shm
}

fn detach(shm: Arc<Shm>) {
    let mut state = shm.state.lock().unwrap_or_else(|p| p.into_inner());
    state.users = state.users.saturating_sub(1);
    if state.users == 0 {
        state.allocated = 0;
        state.mapped = 0;
        // Closing ours drops the process's POSIX locks on the file: only once no
        // descriptor of SQLite's refers to it any more (a connection opened before this
        // VFS was registered may still hold one).
        if state.fd.as_ref().is_some_and(|fd| !shared_with_others(fd)) {
            state.fd = None;
        }
    }
}

impl Shm {
    /// Notes that this process mapped the file up to `upto` bytes and makes sure those
    /// bytes are allocated. `Err` when the disk has no room for them.
    fn mapped_upto(&self, upto: u64) -> Result<(), ()> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.mapped = state.mapped.max(upto);
        self.allocate(&mut state, upto)
    }

    fn allocate(&self, state: &mut ShmState, upto: u64) -> Result<(), ()> {
        if state.allocated >= upto {
            return Ok(());
        }
        if state.fd.is_none() {
            state.fd = File::options().read(true).write(true).open(&self.path).ok();
        }
        let Some(fd) = &state.fd else {
            // Not there to allocate (SQLite keeps it in memory, or it vanished): SQLite's
            // own behaviour stands.
            return Ok(());
        };
        match preallocate(fd, upto) {
            Ok(()) => {
                state.allocated = upto;
                Ok(())
            }
            Err(Preallocate::NoSpace) => Err(()),
            Err(Preallocate::Unsupported) => {
                // The file system cannot preallocate (some FUSE, NFS): nothing to add to
                // SQLite's own extension, and no point asking again.
                state.allocated = upto;
                Ok(())
            }
        }
    }
}

enum Preallocate {
    NoSpace,
    Unsupported,
}

#[cfg(target_os = "linux")]
fn preallocate(fd: &File, upto: u64) -> Result<(), Preallocate> {
    use rustix::io::Errno;
    match rustix::fs::fallocate(fd, rustix::fs::FallocateFlags::empty(), 0, upto) {
        Ok(()) => Ok(()),
        Err(Errno::NOSPC | Errno::DQUOT) => Err(Preallocate::NoSpace),
        Err(_) => Err(Preallocate::Unsupported),
    }
}

#[cfg(not(target_os = "linux"))]
fn preallocate(_fd: &File, _upto: u64) -> Result<(), Preallocate> {
    Err(Preallocate::Unsupported)
}

/// Whether a descriptor of this process other than `fd` refers to the same file.
#[cfg(target_os = "linux")]
fn shared_with_others(fd: &File) -> bool {
    let Ok(ours) = fd.metadata() else {
        return true;
    };
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return true;
    };
    let same = entries
        .flatten()
        .filter_map(|e| std::fs::metadata(e.path()).ok())
        .filter(|m| m.dev() == ours.dev() && m.ino() == ours.ino())
        .count();
    same > 1
}

#[cfg(not(target_os = "linux"))]
fn shared_with_others(_fd: &File) -> bool {
    true
}

/// Before a write transaction on `db`: the wal-index region after the ones mapped is
/// allocated too, so a commit that fills the current region never has to grow the file
/// after its frames are in the WAL (where a failure would leave them to a later recovery).
/// `Err` when the disk has no room for it.
pub fn reserve_ahead(db: &Path) -> Result<(), ()> {
    let Some(shm) = lookup(db) else {
        return Ok(());
    };
    let mut state = shm.state.lock().unwrap_or_else(|p| p.into_inner());
    if state.users == 0 || state.mapped == 0 {
        return Ok(());
    }
    let upto = state.mapped + REGION;
    shm.allocate(&mut state, upto)
}

/// The process holding `db`'s WAL write lock, when another process holds it.
#[cfg(target_os = "linux")]
pub fn write_lock_holder(db: &Path) -> Option<u32> {
    let shm = lookup(db)?;
    let state = shm.state.lock().unwrap_or_else(|p| p.into_inner());
    lock_holder(state.fd.as_ref()?, WAL_WRITE_LOCK_OFFSET)
}

/// Another process's POSIX lock that would conflict with an exclusive lock on the
/// byte at `offset` of `fd`'s file: its pid.
#[cfg(target_os = "linux")]
fn lock_holder(fd: &File, offset: i64) -> Option<u32> {
    use std::os::fd::AsRawFd;
    // SAFETY: `flock` is a plain C struct, valid zeroed; F_GETLK only reads the kernel's
    // lock table into it, and the descriptor is open for the call.
    let mut probe: libc::flock = unsafe { std::mem::zeroed() };
    probe.l_type = libc::F_WRLCK as libc::c_short;
    probe.l_whence = libc::SEEK_SET as libc::c_short;
    probe.l_start = offset;
    probe.l_len = 1;
    let rc = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETLK, &mut probe) };
    (rc == 0 && probe.l_type != libc::F_UNLCK as libc::c_short).then_some(probe.l_pid as u32)
}

#[cfg(not(target_os = "linux"))]
fn lock_holder(_fd: &File, _offset: i64) -> Option<u32> {
    None
}

/// Whether any connection has `db` open: one of this process (through this VFS or not),
/// or another process (it holds a lock on the `-shm` file's "DMS" byte, 128, while
/// attached).
pub fn in_use(db: &Path) -> bool {
    let shm = lookup(db);
    if let Some(shm) = &shm {
        let state = shm.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.users > 0 {
            return true;
        }
        if let Some(fd) = &state.fd {
            return shared_with_others(fd) || lock_holder(fd, DMS_LOCK_OFFSET).is_some();
        }
    }
    let mut shm_path = key(db).into_os_string();
    shm_path.push("-shm");
    let Ok(fd) = File::options().read(true).write(true).open(&shm_path) else {
        return false;
    };
    if shared_with_others(&fd) {
        // Closing it would drop this process's locks on the file: keep it.
        std::mem::forget(fd);
        return true;
    }
    lock_holder(&fd, DMS_LOCK_OFFSET).is_some()
}

#[cfg(not(target_os = "linux"))]
pub fn write_lock_holder(_db: &Path) -> Option<u32> {
    None
}

/// The OS error behind the connection's last failure (`errno`), 0 when none.
pub fn system_errno(conn: &Connection) -> i32 {
    // SAFETY: the handle is valid while `conn` is borrowed; the call only reads it.
    unsafe { ffi::sqlite3_system_errno(conn.handle()) }
}

/// Keeps the WAL and `-shm` files when the last connection closes (the WAL emptied): a
/// store reopened on a full disk then finds the blocks it needs to read already its own
/// (the first connection truncates the `-shm` file and allocates it again in place).
pub fn persist_wal(conn: &Connection) -> rusqlite::Result<()> {
    let mut on: c_int = 1;
    // SAFETY: SQLITE_FCNTL_PERSIST_WAL takes a pointer to an int, valid for the call.
    let rc = unsafe {
        ffi::sqlite3_file_control(
            conn.handle(),
            c"main".as_ptr(),
            ffi::SQLITE_FCNTL_PERSIST_WAL,
            (&mut on as *mut c_int).cast(),
        )
    };
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_mapped_region_of_the_shm_file_is_allocated() {
        register().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("t.sqlite3");
        let conn = Connection::open(&db).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            .unwrap();
        let meta = std::fs::metadata(dir.path().join("t.sqlite3-shm")).unwrap();
        // 512-byte blocks: a region of 32 KiB is 64 of them, no hole.
        assert!(meta.blocks() * 512 >= REGION, "{} blocks", meta.blocks());
        reserve_ahead(&db).unwrap();
        let meta = std::fs::metadata(dir.path().join("t.sqlite3-shm")).unwrap();
        assert!(
            meta.blocks() * 512 >= 2 * REGION,
            "{} blocks",
            meta.blocks()
        );
        drop(conn);
    }
}
