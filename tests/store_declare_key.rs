//! Declaring is idempotent under a key (issue 15): `oq ask --key K` run again — after a
//! kill -9 at any moment, a lost reply — returns the first question, never a second;
//! the key with another question is refused and changes nothing.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::time::Duration;

use common::{Out, oq, run, spawn};

const DEV: &str = "dev-a";

fn ask(dir: &Path, agent: &str, pergunta: &str, key: &str) -> Out {
    run(oq(dir, DEV).args(["ask", pergunta, "--agent", agent, "--key", key]))
}

fn total(dir: &Path) -> u64 {
    let out = run(oq(dir, DEV).args(["list", "--status", "all", "--json"]));
    assert_eq!(out.code, 0, "{out:?}");
    out.json()["total"].as_u64().unwrap()
}

#[test]
fn the_same_key_is_the_same_question_and_another_body_is_refused() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let first = ask(dir, "po", "Ship on Friday?", "run-1");
    assert_eq!(first.code, 0, "{first:?}");
    let again = ask(dir, "po", "Ship on Friday?", "run-1");
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(again.stdout, first.stdout, "the first questionId");
    assert_eq!(total(dir), 1);
    let other = ask(dir, "po", "Ship on Monday?", "run-1");
    assert_ne!(other.code, 0, "{other:?}");
    assert!(other.stderr.contains("idempotency_key_reused"), "{other:?}");
    assert_eq!(total(dir), 1, "nothing recorded");
    // Another agent's key is its own; a new key is a new question.
    let theirs = ask(dir, "arquiteto", "Ship on Friday?", "run-1");
    assert_eq!(theirs.code, 0, "{theirs:?}");
    assert_ne!(theirs.stdout, first.stdout);
    assert_eq!(ask(dir, "po", "Ship on Friday?", "run-2").code, 0);
    assert_eq!(total(dir), 3);
    let bad = ask(dir, "po", "Ship on Friday?", "a key");
    assert!(bad.stderr.contains("invalid_id"), "{bad:?}");
    assert_eq!(total(dir), 3);
}

const KEYED_ASK: [&str; 8] = [
    "ask",
    "Which queue?",
    "--agent",
    "po",
    "--session",
    "s1",
    "--key",
    "agent-42",
];

#[test]
fn oq_ask_killed_at_any_moment_and_retried_with_its_key_declares_once() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    // The session exists first, so every kill falls inside the declaration itself.
    assert_eq!(
        run(oq(dir, DEV).args(["session", "start", "--id", "s1"])).code,
        0
    );
    // Kills spread over an `oq ask`'s life (~100 ms here): before, during and after
    // its commit. Once one of them committed, every later run is a retry.
    let mut killed_after_commit = 0;
    for i in 0..40u64 {
        let before = total(dir);
        let mut child = spawn(oq(dir, DEV).args(KEYED_ASK));
        std::thread::sleep(Duration::from_millis(i * 6));
        let _ = child.child().kill(); // SIGKILL
        let out = child.wait();
        let after = total(dir);
        if out.code == -1 && after > before {
            killed_after_commit += 1;
        }
        assert!(after <= 1, "run {i}: a second question: {out:?}");
    }
    let last = run(oq(dir, DEV).args(KEYED_ASK).arg("--json"));
    assert_eq!(last.code, 0, "{last:?}");
    let listed = run(oq(dir, DEV).args(["list", "--json"])).json();
    assert_eq!(listed["total"], 1);
    assert_eq!(listed["items"][0]["questionId"], last.json()["questionId"]);
    eprintln!("{killed_after_commit} killed run(s) had committed the declaration");
}
