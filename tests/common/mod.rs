//! Helpers shared by the integration tests: the built binary, child processes that are
//! killed on drop, and a look at the store file with plain SQL. `tui_app`: the whole TUI
//! in-process on a `TestBackend`.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use oq::engine::{EngineConfig, LocalEngine, SqliteStore};

pub mod tui_app;

pub const OQ: &str = env!("CARGO_BIN_EXE_oq");

/// The env vars the binary reads; cleared so a developer's shell cannot leak into a test.
const OQ_ENV: [&str; 6] = [
    "OQ_DATA_DIR",
    "OQ_USER",
    "OQ_PROJECT",
    "OQ_AGENT",
    "OQ_SOURCE",
    "OQ_CONFIG",
];

/// `oq --data-dir DIR --as USER`, with stdin closed and output captured.
pub fn oq(dir: &Path, user: &str) -> Command {
    let mut c = Command::new(OQ);
    for v in OQ_ENV {
        c.env_remove(v);
    }
    c.arg("--data-dir")
        .arg(dir)
        .arg("--as")
        .arg(user)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// A finished command: exit code (-1 when killed by a signal) and its text.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Out {
    fn from(o: Output) -> Self {
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Out {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}): {:?} / {:?}",
                self.stdout, self.stderr
            )
        })
    }
}

/// Runs to completion (through a [`Kill`] guard, so a panic elsewhere cannot leak it).
pub fn run(cmd: &mut Command) -> Out {
    spawn(cmd).wait()
}

pub fn spawn(cmd: &mut Command) -> Kill {
    Kill(Some(cmd.spawn().expect("spawn the child process")))
}

/// A child process killed and reaped when dropped, also when an assertion fails first.
pub struct Kill(pub Option<Child>);

impl Kill {
    pub fn child(&mut self) -> &mut Child {
        self.0.as_mut().expect("child still held")
    }
    pub fn wait(mut self) -> Out {
        let child = self.0.take().expect("child still held");
        child.wait_with_output().expect("wait for the child").into()
    }
}

impl Drop for Kill {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

pub fn store_file(dir: &Path) -> PathBuf {
    dir.join(oq::engine::sqlite::STORE_FILE)
}

/// A fresh data dir with the demo's store in it (`oq demo`), as dev-a.
pub fn demo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(oq(dir.path(), "dev-a").args(["demo", "--quiet"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    dir
}

/// The engine on the same store the binary uses (another connection, same file).
pub fn engine(dir: &Path) -> LocalEngine {
    LocalEngine::new(
        SqliteStore::open_in(dir).expect("open the store"),
        EngineConfig::default(),
    )
}

/// How many `open_question.answered` events the log holds for `question_id`.
pub fn answered_events(dir: &Path, question_id: &str) -> i64 {
    let conn = rusqlite::Connection::open(store_file(dir)).expect("open the store file");
    conn.query_row(
        "SELECT count(*) FROM events WHERE type = 'open_question.answered' AND question_id = ?1",
        [question_id],
        |r| r.get(0),
    )
    .expect("count answers")
}

/// Number of events in the log.
pub fn event_count(dir: &Path) -> i64 {
    let conn = rusqlite::Connection::open(store_file(dir)).expect("open the store file");
    conn.query_row("SELECT count(*) FROM events", [], |r| r.get(0))
        .expect("count events")
}
