//! Logs go to a file, never to the screen (SPEC §4): `<data dir>/logs/<name>.log`,
//! appended, plain text. The level comes from `OQ_LOG` (`error`, `warn`, `info` — the
//! default — `debug`, `trace`). Tokens, passwords and answer texts are never logged:
//! callers log ids, routes, states and error codes.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracing::Level;

/// The log file, whose write errors (a full disk) are dropped: tracing would print them
/// to stderr, which is the TUI's screen.
struct Quiet(std::fs::File);

impl std::io::Write for Quiet {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = self.0.write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = self.0.flush();
        Ok(())
    }
}

/// Starts logging to `<data_dir>/logs/<name>.log` for this process. A log that cannot be
/// opened is not a reason to stop working: the error is returned for the caller to
/// mention, and nothing is logged.
pub fn init(data_dir: &Path, name: &str) -> Result<PathBuf, std::io::Error> {
    let dir = data_dir.join("logs");
    crate::private_fs::create_dir(&dir)?;
    let path = dir.join(format!("{name}.log"));
    let file = crate::private_fs::append(&path)?;
    let level = match std::env::var("OQ_LOG").as_deref() {
        Ok("error") => Level::ERROR,
        Ok("warn") => Level::WARN,
        Ok("debug") => Level::DEBUG,
        Ok("trace") => Level::TRACE,
        _ => Level::INFO,
    };
    // A second init in one process (tests) keeps the first subscriber.
    let _ = tracing_subscriber::fmt()
        .with_writer(Mutex::new(Quiet(file)))
        .with_ansi(false)
        .with_max_level(level)
        .with_target(false)
        .try_init();
    Ok(path)
}
