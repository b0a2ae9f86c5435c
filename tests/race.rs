//! Real processes racing on one store: exactly one answer wins, every other is refused
//! with `pergunta_ja_respondida`, and the log holds one answer.
//!
//! Two kinds of answering process: the `oq answer` door, and this test binary re-run as a
//! child (`race_child_entry`) that answers through the same engine the door uses — so the
//! multi-process race of the engine is covered apart from the door's own parsing.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::{Kill, answered_events, oq, run, spawn};
use oq::domain::error::exit;
use oq::domain::{Actor, AnswerInput};
use tempfile::TempDir;

const CHILD_DIR: &str = "OQ_RACE_CHILD_DIR";
const CHILD_QUESTION: &str = "OQ_RACE_CHILD_QUESTION";

/// In a child run (the env names a store), answers once and exits with the door's code;
/// in the normal suite, does nothing.
#[test]
fn race_child_entry() {
    let (Ok(dir), Ok(qid)) = (std::env::var(CHILD_DIR), std::env::var(CHILD_QUESTION)) else {
        return;
    };
    let engine = common::engine(Path::new(&dir));
    let code = match engine.answer(
        &Actor::person("alice"),
        None,
        &qid,
        &AnswerInput::text(format!("from {}", std::process::id())),
    ) {
        Ok(_) => exit::OK,
        Err(e) => e.exit_code(),
    };
    std::process::exit(code);
}

#[derive(Clone, Copy, Debug)]
enum Answerer {
    /// `oq answer ID --text …`
    Door,
    /// This test binary, re-run as `race_child_entry`.
    Engine,
}

fn answer_cmd(kind: Answerer, dir: &Path, qid: &str, n: usize) -> Command {
    match kind {
        Answerer::Door => {
            let mut c = oq(dir, "alice");
            c.args(["answer", qid, "--text", &format!("answer {n}")]);
            c
        }
        Answerer::Engine => {
            let mut c = Command::new(std::env::current_exe().unwrap());
            c.args([
                "race_child_entry",
                "--exact",
                "--test-threads=1",
                "--nocapture",
            ])
            .env(CHILD_DIR, dir)
            .env(CHILD_QUESTION, qid)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
            c
        }
    }
}

fn declare(dir: &Path, pergunta: &str) -> String {
    let out = run(oq(dir, "alice").args(["ask", pergunta, "--agent", "po"]));
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout.trim().to_string()
}

fn race(kind: Answerer) {
    let d = TempDir::new().unwrap();
    let dir = d.path();
    for round in 0..30 {
        let qid = declare(dir, &format!("Race {round}?"));
        let racers = if round % 5 == 4 { 8 } else { 2 };
        // Spawn every racer before waiting on any.
        let children: Vec<Kill> = (0..racers)
            .map(|n| spawn(&mut answer_cmd(kind, dir, &qid, n)))
            .collect();
        let outs: Vec<common::Out> = children.into_iter().map(Kill::wait).collect();
        let codes: Vec<i32> = outs.iter().map(|o| o.code).collect();
        assert_eq!(
            codes.iter().filter(|c| **c == exit::OK).count(),
            1,
            "round {round}: {outs:?}"
        );
        assert!(
            codes
                .iter()
                .all(|c| *c == exit::OK || *c == exit::ALREADY_ANSWERED),
            "round {round}: {outs:?}"
        );
        if let Answerer::Door = kind {
            for o in outs.iter().filter(|o| o.code == exit::ALREADY_ANSWERED) {
                assert!(
                    o.stderr.starts_with("oq: pergunta_ja_respondida: "),
                    "{o:?}"
                );
            }
        }
        assert_eq!(answered_events(dir, &qid), 1, "round {round}");
    }
}

#[test]
fn oq_answer_processes_race_and_exactly_one_wins() {
    race(Answerer::Door);
}

#[test]
fn engine_processes_race_and_exactly_one_wins() {
    race(Answerer::Engine);
}

/// The TUI's pattern: one process keeps the store open (a long `oq ask --wait`) while a
/// second declares and a third answers; the waiting one sees its answer.
fn reader_pattern(kind: Answerer) {
    let d = TempDir::new().unwrap();
    let dir = d.path();
    let first = declare(dir, "Held open?");
    let mut waiting = spawn(oq(dir, "alice").args([
        "ask",
        "Wait for me?",
        "--agent",
        "po",
        "--wait",
        "--json",
        "--timeout",
        "120",
    ]));
    // The waiting process's question shows up in the store.
    let waited = loop {
        let list = run(oq(dir, "alice").args(["list", "--json"])).json();
        let found = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["pergunta"] == "Wait for me?")
            .map(|q| q["questionId"].as_str().unwrap().to_string());
        if let Some(id) = found {
            break id;
        }
        assert!(
            waiting.child().try_wait().unwrap().is_none(),
            "ask --wait exited early"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    // A second process declares while the first holds the store open.
    let second = declare(dir, "Declared meanwhile?");
    let listed = run(oq(dir, "alice").args(["list", "--json"])).json();
    assert_eq!(listed["total"], 3);
    // A third answers the earlier question and then the waited one.
    for qid in [&first, &second] {
        let out = Kill::wait(spawn(&mut answer_cmd(kind, dir, qid, 0)));
        assert_eq!(out.code, 0, "{out:?}");
    }
    assert!(
        waiting.child().try_wait().unwrap().is_none(),
        "answered the wrong question"
    );
    let out = Kill::wait(spawn(&mut answer_cmd(kind, dir, &waited, 1)));
    assert_eq!(out.code, 0, "{out:?}");
    let done = waiting.wait();
    assert_eq!(done.code, 0, "{done:?}");
    let item = done.json();
    assert_eq!(item["questionId"], waited.as_str());
    assert_eq!(item["status"], "answered");
    for qid in [&first, &second, &waited] {
        assert_eq!(answered_events(dir, qid), 1);
    }
}

#[test]
fn reader_pattern_with_the_oq_answer_door() {
    reader_pattern(Answerer::Door);
}

#[test]
fn reader_pattern_with_an_engine_process() {
    reader_pattern(Answerer::Engine);
}
