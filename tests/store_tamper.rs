//! An edited log is not believed (issue 15): a store whose guards were dropped by hand
//! is refused for writing (reads go on); the edits themselves are found by
//! `oq store verify` (the hash chain): edited, deleted, inserted or reordered by plain
//! SQL, each named at its first position.
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

/// Plain SQL on the store, the append-only guards dropped first (as a forger would).
fn forge(dir: &Path, sql: &str) {
    let conn = rusqlite::Connection::open(store_file(dir)).unwrap();
    conn.execute_batch(&format!(
        "DROP TRIGGER IF EXISTS events_refuse_update; DROP TRIGGER IF EXISTS events_refuse_delete; {sql}"
    ))
    .unwrap();
}

fn verify(dir: &Path) -> (i32, serde_json::Value) {
    let out = door(dir, &["store", "verify", "--json"]);
    (out.code, out.json())
}

/// The store's seeded history (a session, then three questions: positions 1–4), and
/// the break `verify` reports after `sql`.
fn tampered(sql: &str) -> serde_json::Value {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    seeded(dir, 3);
    let (code, clean) = verify(dir);
    assert_eq!(code, 0, "{clean}");
    assert_eq!(clean["intact"], true);
    forge(dir, sql);
    let (code, v) = verify(dir);
    assert_eq!(code, 14, "{v}");
    assert_eq!(v["intact"], false, "{v}");
    let check = door(dir, &["store", "check"]);
    assert_eq!(check.code, 14, "check finds it too: {check:?}");
    v["firstBreak"].clone()
}

#[test]
fn an_edited_event_is_found_at_its_position() {
    let b = tampered(
        "UPDATE events SET payload = json_set(payload, '$.pergunta', 'Forged?')
          WHERE project_seq = 3",
    );
    assert_eq!(b["kind"], "edited", "{b}");
    assert_eq!(b["position"], 3);
    assert_eq!(b["projectId"], "loja");
}

#[test]
fn a_deleted_event_is_found_where_it_was() {
    let b = tampered("DELETE FROM events WHERE project_seq = 2");
    assert_eq!(b["kind"], "deleted", "{b}");
    assert_eq!(b["position"], 2);
}

#[test]
fn an_inserted_event_is_found_whether_at_the_end_or_in_the_middle() {
    let at_end = tampered(
        "INSERT INTO events (event_id, type, project_id, project_seq, session_id, question_id, actor, at, payload)
         SELECT 'e-forged', type, project_id, 5, session_id, 'q-forged', actor, at,
                json_set(payload, '$.questionId', 'q-forged')
           FROM events WHERE project_seq = 4",
    );
    assert_eq!(at_end["kind"], "inserted", "{at_end}");
    assert_eq!(at_end["position"], 5);
    // In the middle, the positions after it renumbered and a link copied from another
    // event, so nothing looks out of place but the chain.
    let middle = tampered(
        "UPDATE events SET project_seq = -project_seq WHERE project_seq >= 3;
         UPDATE events SET project_seq = 1 - project_seq WHERE project_seq < 0;
         INSERT INTO events (event_id, type, project_id, project_seq, session_id, question_id, actor, at, payload, chain)
         SELECT 'e-forged', type, project_id, 3, session_id, 'q-forged', actor, at,
                json_set(payload, '$.questionId', 'q-forged'), chain
           FROM events WHERE project_seq = 2",
    );
    assert_eq!(middle["kind"], "inserted", "{middle}");
    assert_eq!(middle["position"], 3);
}

#[test]
fn reordered_events_are_found_at_the_first_moved_position() {
    let b = tampered(
        "UPDATE events SET project_seq = -1 WHERE project_seq = 2;
         UPDATE events SET project_seq = 2 WHERE project_seq = 3;
         UPDATE events SET project_seq = 3 WHERE project_seq = -1",
    );
    assert_eq!(b["kind"], "reordered", "{b}");
    assert_eq!(b["position"], 2);
}

#[test]
fn head_prints_each_projects_newest_link_and_it_moves_with_each_event() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    let q = seeded(dir, 2);
    let head = |dir: &Path| door(dir, &["store", "head", "--json"]).json()["projects"][0].clone();
    let before = head(dir);
    assert_eq!(before["projectId"], "loja");
    assert_eq!(before["events"], 3);
    assert_eq!(before["head"].as_str().unwrap().len(), 64, "{before}");
    assert_eq!(door(dir, &["answer", &q[0], "--accept"]).code, 0);
    let after = head(dir);
    assert_eq!(after["events"], 5);
    assert_ne!(after["head"], before["head"]);
    let (_, v) = verify(dir);
    assert_eq!(
        v["projects"][0]["head"], after["head"],
        "verify ends where head says"
    );
}

#[test]
fn a_store_from_before_the_chain_is_chained_once_on_open() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    seeded(dir, 3);
    let heads = door(dir, &["store", "head", "--json"]).json();
    // The store as version 6 wrote it: no chain column.
    let conn = rusqlite::Connection::open(store_file(dir)).unwrap();
    // (and without the search index of version 8, the settlement index of version 9,
    // the open set's asker of version 10, the settlements by time of version 11 and the
    // search's batches of version 12 (its table goes with its triggers), which come
    // after it; v10 replaces the two
    // triggers that read the asker, so stand-ins are enough for it to drop)
    conn.execute_batch(
        "DROP TABLE search_indexed;
         DROP TABLE question_search; DROP INDEX events_settled_by_project;
         DROP INDEX events_settled_at; DROP INDEX events_snoozed;
         DROP TRIGGER events_derive_declared; DROP TRIGGER open_questions_guard_insert;
         DROP INDEX open_questions_by_asker; ALTER TABLE open_questions DROP COLUMN autor;
         CREATE TRIGGER events_derive_declared AFTER INSERT ON events WHEN 0 BEGIN SELECT 1; END;
         CREATE TRIGGER open_questions_guard_insert BEFORE INSERT ON open_questions WHEN 0 BEGIN SELECT 1; END;
         ALTER TABLE events DROP COLUMN chain; PRAGMA user_version = 6;",
    )
    .unwrap();
    drop(conn);
    let (code, v) = verify(dir);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["events"], 4);
    // The same canonical bytes give the same chain as the writer's.
    assert_eq!(
        door(dir, &["store", "head", "--json"]).json(),
        heads,
        "the migration's chain is the writer's"
    );
    assert_eq!(door(dir, &["store", "check"]).code, 0);
}
