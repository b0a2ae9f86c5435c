//! A small real file system for the full-disk tests: an ext4 image made by the test,
//! loop-mounted, filled to a chosen number of KiB free; unmounted and removed on drop.
//!
//! ext4 this small gets 1 KiB blocks (smaller than a memory page), the layout in which
//! SQLite's `-shm` map used to meet a hole and die with SIGBUS. Mounting needs root; a
//! test calls [`SmallDisk::new`] and skips with the reason when it is not root — except
//! under `CI`, where it fails instead (CI runs as root).
#![allow(dead_code, clippy::unwrap_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct SmallDisk {
    pub mount: PathBuf,
    _dir: tempfile::TempDir,
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Skips (returns `None` after saying why) or, under CI, fails.
fn skip(why: &str) -> Option<SmallDisk> {
    if std::env::var_os("CI").is_some() {
        panic!("CI must run the small-disk tests: {why}");
    }
    eprintln!("skipped: {why}");
    None
}

impl SmallDisk {
    /// A fresh ext4 of `mib` MiB, mounted; `None` (skipped) when it cannot be made here.
    pub fn new(mib: u64) -> Option<SmallDisk> {
        if !is_root() {
            return skip("mounting a small ext4 needs root (run the suite as root, as CI does)");
        }
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("disk.img");
        let mount = dir.path().join("mnt");
        std::fs::create_dir(&mount).unwrap();
        std::fs::File::create(&image)
            .unwrap()
            .set_len(mib * 1024 * 1024)
            .unwrap();
        // -m 0: no blocks kept for root, who runs this; the space left is the space free.
        if let Err(e) = run(Command::new("mkfs.ext4")
            .args(["-q", "-F", "-m", "0"])
            .arg(&image))
        {
            return skip(&format!("no mkfs.ext4 ({e})"));
        }
        if let Err(e) = run(Command::new("mount")
            .arg("-o")
            .arg("loop")
            .arg(&image)
            .arg(&mount))
        {
            return skip(&format!("cannot loop-mount an image ({e})"));
        }
        Some(SmallDisk { mount, _dir: dir })
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.mount.join(name)
    }

    /// KiB free for an unprivileged writer.
    pub fn free_kib(&self) -> u64 {
        let out = Command::new("df")
            .args(["-k", "--output=avail"])
            .arg(&self.mount)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Fills the disk until `kib` KiB are left: a reserve of that size is written, the
    /// rest filled until ENOSPC, and the reserve removed.
    pub fn fill_to(&self, kib: u64) {
        self.release();
        let reserve = self.path("reserve");
        if kib > 0 {
            std::fs::write(&reserve, vec![0u8; (kib * 1024) as usize]).unwrap();
        }
        let mut filler = std::fs::File::create(self.path("filler")).unwrap();
        let block = vec![0u8; 1024];
        while filler.write_all(&block).is_ok() {}
        let _ = filler.sync_all();
        drop(filler);
        let _ = std::fs::remove_file(&reserve);
        sync(&self.mount);
    }

    /// Gives the space back.
    pub fn release(&self) {
        let _ = std::fs::remove_file(self.path("filler"));
        sync(&self.mount);
    }
}

fn sync(path: &Path) {
    let _ = Command::new("sync").arg("-f").arg(path).status();
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // Lazy: a file still open by a process that has not been reaped yet does not keep
        // the mount (and the test's temporary directory) behind.
        let _ = Command::new("umount").arg("-l").arg(&self.mount).status();
    }
}
