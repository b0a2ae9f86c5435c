//! An edited log is not believed (issue 15): a store whose guards were dropped by hand
//! is refused for writing (reads go on); the edits themselves are found by
//! `oq store verify` (the hash chain).
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use common::{Out, engine, oq, run, store_file};
use oq::domain::{Actor, DeclareInput, Role, SessionKind};

const DEV: &str = "dev-a";

fn door(dir: &Path, args: &[&str]) -> Out {
    run(oq(dir, DEV).args(["-p", "loja"]).args(args))
}

fn seeded(dir: &Path, n: usize) -> Vec<String> {
    let e = engine(dir);
    e.start_session(
        &Actor::person(DEV),
        "loja",
        SessionKind::Conversation,
        Some("s1"),
    )
    .unwrap();
    (0..n)
        .map(|i| {
            e.declare(
                &Actor::agent(Role::Po),
                "loja",
                &DeclareInput {
                    pergunta: format!("Question {i}?"),
                    sugestao: Some("yes".into()),
                    session_id: "s1".into(),
                    ..Default::default()
                },
            )
            .unwrap()
            .question_id
        })
        .collect()
}

#[test]
fn a_store_whose_guards_were_dropped_is_read_but_never_written() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let q = seeded(dir, 2);
    rusqlite::Connection::open(store_file(dir))
        .unwrap()
        .execute_batch("DROP TRIGGER events_refuse_update; DROP TRIGGER events_refuse_delete;")
        .unwrap();
    let out = door(dir, &["answer", &q[0], "--accept"]);
    assert_eq!(out.code, 9, "{out:?}");
    assert!(out.stderr.contains("store_damaged"), "{out:?}");
    assert!(
        out.stderr.contains("events_refuse_update is missing"),
        "{out:?}"
    );
    let listed = door(dir, &["list", "--json"]);
    assert_eq!(listed.code, 0, "{listed:?}");
    assert_eq!(listed.json()["total"], 2);
}
