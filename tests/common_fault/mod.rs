//! An `LD_PRELOAD` shim, built by the test with `gcc`, that makes the flush of a store's
//! WAL fail or hang on demand — the faults a disk gives and the real binary must face.
//!
//! It wraps `fsync` and `fdatasync`. For a descriptor whose file name ends in `-wal`, and
//! with `OQ_FAULT_DIR` set: when `$OQ_FAULT_DIR/fail` exists it is removed and the call
//! fails once with EIO, the way a failing disk reports a lost write-back; while
//! `$OQ_FAULT_DIR/hang` exists the call waits (after creating `$OQ_FAULT_DIR/hanging`), so
//! the process holds whatever lock it flushes under. Every other call goes to libc.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const SHIM: &str = r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_wal(int fd) {
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n < 4) return 0;
    path[n] = 0;
    return strcmp(path + n - 4, "-wal") == 0;
}

static int fault(int fd) {
    const char *dir = getenv("OQ_FAULT_DIR");
    if (!dir || !is_wal(fd)) return 0;
    char file[4096];
    snprintf(file, sizeof file, "%s/fail", dir);
    if (unlink(file) == 0) { errno = EIO; return -1; }
    snprintf(file, sizeof file, "%s/hang", dir);
    if (access(file, F_OK) == 0) {
        char mark[4096];
        snprintf(mark, sizeof mark, "%s/hanging", dir);
        FILE *m = fopen(mark, "w");
        if (m) fclose(m);
        while (access(file, F_OK) == 0) usleep(10000);
    }
    return 0;
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = dlsym(RTLD_NEXT, "fsync");
    if (fault(fd)) return -1;
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = dlsym(RTLD_NEXT, "fdatasync");
    if (fault(fd)) return -1;
    return real(fd);
}
"#;

/// The built shim, or why it cannot be built here (no gcc): the test skips with that
/// reason, except under `CI`, where it fails.
pub fn shim() -> Option<PathBuf> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fault-shim");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let source = dir.join("shim.c");
        let lib = dir.join(format!("oq-fault-{}.so", std::process::id()));
        std::fs::write(&source, SHIM).map_err(|e| e.to_string())?;
        let out = Command::new("gcc")
            .args(["-shared", "-fPIC", "-O2", "-o"])
            .arg(&lib)
            .arg(&source)
            .arg("-ldl")
            .output()
            .map_err(|e| format!("gcc: {e}"))?;
        if !out.status.success() {
            return Err(format!("gcc: {}", String::from_utf8_lossy(&out.stderr)));
        }
        Ok(lib)
    });
    match built {
        Ok(lib) => Some(lib.clone()),
        Err(why) if std::env::var_os("CI").is_some() => {
            panic!("CI must build the fault shim: {why}")
        }
        Err(why) => {
            eprintln!("skipped: the LD_PRELOAD fault shim cannot be built ({why})");
            None
        }
    }
}

/// The control directory of one faulty process.
pub struct Faults {
    pub dir: tempfile::TempDir,
    pub lib: PathBuf,
}

impl Faults {
    pub fn new() -> Option<Faults> {
        Some(Faults {
            dir: tempfile::tempdir().unwrap(),
            lib: shim()?,
        })
    }

    /// The environment that arms the shim in a child process.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("LD_PRELOAD", self.lib.to_string_lossy().into_owned()),
            (
                "OQ_FAULT_DIR",
                self.dir.path().to_string_lossy().into_owned(),
            ),
        ]
    }

    /// The next flush of a WAL fails with EIO.
    pub fn fail_next_flush(&self) {
        std::fs::write(self.dir.path().join("fail"), b"").unwrap();
    }

    /// Whether the armed failure was used.
    pub fn failure_used(&self) -> bool {
        !self.dir.path().join("fail").exists()
    }

    /// Flushes of a WAL wait until [`Faults::release`].
    pub fn hang_flushes(&self) {
        std::fs::write(self.dir.path().join("hang"), b"").unwrap();
    }

    /// Waits until a process is held in a flush.
    pub fn wait_until_hanging(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.dir.path().join("hanging").exists() {
            assert!(Instant::now() < deadline, "no flush was held");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn release(&self) {
        let _ = std::fs::remove_file(self.dir.path().join("hang"));
    }
}

impl Drop for Faults {
    fn drop(&mut self) {
        self.release();
    }
}
