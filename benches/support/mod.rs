//! What the benchmarks share: where they write, and how they describe the disk they
//! measured on.

use std::path::{Path, PathBuf};

use anyhow::Result;

/// `OQ_BENCH_DIR`, else `./target` (cargo runs benches from the package root), else the
/// system temp dir.
pub fn bench_base() -> Result<PathBuf> {
    let base = match std::env::var_os("OQ_BENCH_DIR") {
        Some(d) => PathBuf::from(d),
        None if Path::new("target").is_dir() => PathBuf::from("target"),
        None => std::env::temp_dir(),
    };
    std::fs::create_dir_all(&base)?;
    Ok(base.canonicalize()?)
}

/// The mount holding `path`, from /proc/self/mounts: "device on /mount type fstype".
pub fn describe_fs(path: &Path) -> String {
    let Ok(path) = path.canonicalize() else {
        return "unknown".into();
    };
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") else {
        return "unknown (no /proc/self/mounts)".into();
    };
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (dev, mnt, fs) = (f.next()?, f.next()?, f.next()?);
            path.starts_with(mnt).then_some((mnt.len(), dev, mnt, fs))
        })
        .max_by_key(|m| m.0)
        .map_or_else(
            || "unknown".into(),
            |(_, dev, mnt, fs)| format!("{dev} on {mnt} type {fs}"),
        )
}
