//! A real peer installed by one of the repo's own `.ci/*.sh` scripts (under `target/`,
//! once; later runs keep it), for the harnesses of the real-client tests. Where the
//! install fails, a test skips with the reason outside CI and fails in CI (`CI=true`).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// `target/` of this build (the built `oq` is `target/debug/oq`).
pub fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_oq"))
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Runs `.ci/SCRIPT target/`; what it printed (the installed program), or why not.
pub fn install(script: &str) -> Result<PathBuf, String> {
    let out = Command::new("bash")
        .arg(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(".ci")
                .join(script),
        )
        .arg(target_dir())
        .output()
        .map_err(|e| format!("cannot run .ci/{script}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            ".ci/{script} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// The installed program, or `None` with the reason on stderr — but a panic in CI.
pub fn or_skip(got: &Result<PathBuf, String>, what: &str) -> Option<PathBuf> {
    match got {
        Ok(p) => Some(p.clone()),
        Err(why) if std::env::var("CI").as_deref() == Ok("true") => panic!("{why}"),
        Err(why) => {
            use std::io::Write;
            // Straight to the stderr handle: a passing test's eprintln! is captured.
            let _ = writeln!(std::io::stderr(), "SKIPPED: {what} is not available: {why}");
            None
        }
    }
}
