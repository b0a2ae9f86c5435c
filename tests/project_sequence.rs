//! Each project's own event numbering (`project_seq`, schema v6): 1, 2, 3… per project with
//! no gap whatever the other projects write, kept by batches and long appends, given to
//! the rows of an older store in log order, and refused twice by the schema.
#![allow(clippy::unwrap_used)]

use oq::domain::{Actor, DeclareInput, Event, Role, SessionKind};
use oq::engine::sqlite::{APPLICATION_ID, LATEST_VERSION, MIGRATIONS, STORE_FILE};
use oq::engine::{EngineConfig, LocalEngine, NewEvent, SqliteStore, Store};
use rusqlite::Connection;
use tempfile::TempDir;

fn engine(dir: &TempDir) -> LocalEngine {
    LocalEngine::new(
        SqliteStore::open_in(dir.path()).unwrap(),
        EngineConfig::default(),
    )
}

fn numbering(conn: &Connection, project: &str) -> Vec<i64> {
    let mut stmt = conn
        .prepare("SELECT project_seq FROM events WHERE project_id = ?1 ORDER BY seq")
        .unwrap();
    stmt.query_map([project], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn session(id: &str) -> Event {
    Event::SessionStarted {
        session_id: id.into(),
        kind: SessionKind::Conversation,
        author: "ana".into(),
    }
}

fn new_event(project: &str, event: Event) -> NewEvent {
    NewEvent {
        project_id: project.into(),
        actor: "ana".into(),
        event,
    }
}

fn declare(e: &LocalEngine, project: &str, session: &str, text: &str) {
    e.declare(
        &Actor::agent(Role::Criativo),
        project,
        &DeclareInput {
            pergunta: text.into(),
            sugestao: None,
            afeta: Default::default(),
            session_id: session.into(),
            idempotency_key: None,
        },
    )
    .unwrap();
}

#[test]
fn each_project_counts_its_own_changes() {
    let d = TempDir::new().unwrap();
    let e = engine(&d);
    e.start_session(
        &Actor::person("ana"),
        "a",
        SessionKind::Conversation,
        Some("s-a"),
    )
    .unwrap();
    e.start_session(
        &Actor::person("ana"),
        "b",
        SessionKind::Conversation,
        Some("s-b"),
    )
    .unwrap();
    for i in 0..5 {
        declare(&e, "a", "s-a", &format!("a {i}?"));
        declare(&e, "b", "s-b", &format!("b {i}?"));
        declare(&e, "b", "s-b", &format!("b again {i}?"));
    }
    assert_eq!(e.project_revision(Some("a")).unwrap(), 6);
    assert_eq!(e.project_revision(Some("b")).unwrap(), 11);
    assert_eq!(e.project_revision(Some("nobody")).unwrap(), 0);
    assert_eq!(e.project_revision(None).unwrap(), 17, "the log counts all");

    let a = e.events_after(Some("a"), 2, 100).unwrap();
    assert_eq!(
        a.iter().map(|s| s.project_seq).collect::<Vec<_>>(),
        [3, 4, 5, 6]
    );
    assert!(a.iter().all(|s| s.project_id == "a"));
    let conn = Connection::open(d.path().join(STORE_FILE)).unwrap();
    assert_eq!(numbering(&conn, "b"), (1..=11).collect::<Vec<_>>());
}

/// One transaction with events of two projects, and one long enough to go in chunks.
#[test]
fn batches_and_long_appends_number_each_project_on() {
    let d = TempDir::new().unwrap();
    let e = engine(&d);
    e.start_session(
        &Actor::person("ana"),
        "a",
        SessionKind::Conversation,
        Some("s-a0"),
    )
    .unwrap();
    let mixed: Vec<NewEvent> = (1..=4)
        .map(|i| {
            new_event(
                if i % 2 == 0 { "a" } else { "b" },
                session(&format!("s-m{i}")),
            )
        })
        .collect();
    let (stored, ()) = e.store().transact(move |_| Ok((mixed, ()))).unwrap();
    let got: Vec<(String, i64)> = stored
        .iter()
        .map(|s| (s.project_id.clone(), s.project_seq))
        .collect();
    assert_eq!(
        got,
        [
            ("b".to_string(), 1),
            ("a".to_string(), 2),
            ("b".to_string(), 2),
            ("a".to_string(), 3)
        ]
    );
    // 150 events: three INSERT chunks, numbered on across them.
    let long: Vec<NewEvent> = (0..150)
        .map(|i| new_event("a", session(&format!("s-long-{i}"))))
        .collect();
    let (stored, ()) = e.store().transact(move |_| Ok((long, ()))).unwrap();
    assert_eq!(
        stored.iter().map(|s| s.project_seq).collect::<Vec<_>>(),
        (4..154).collect::<Vec<_>>()
    );
    let conn = Connection::open(d.path().join(STORE_FILE)).unwrap();
    assert_eq!(numbering(&conn, "a"), (1..154).collect::<Vec<_>>());
    // What the writer reported is what the file holds.
    let reread = e.events_after(Some("a"), 150, 10).unwrap();
    assert_eq!(
        reread.iter().map(|s| s.project_seq).collect::<Vec<_>>(),
        [151, 152, 153]
    );
}

#[test]
fn the_schema_refuses_a_position_taken_twice() {
    let d = TempDir::new().unwrap();
    let e = engine(&d);
    e.start_session(
        &Actor::person("ana"),
        "a",
        SessionKind::Conversation,
        Some("s-a"),
    )
    .unwrap();
    drop(e);
    let conn = Connection::open(d.path().join(STORE_FILE)).unwrap();
    let dup = conn.execute(
        "INSERT INTO events (event_id, type, project_id, project_seq, actor, at, payload)
         VALUES ('e-dup', 'readiness.recorded', 'a', 1, 'x', 0, '{}')",
        [],
    );
    assert!(dup.is_err(), "a second event at position 1 was accepted");
    let renumber = conn.execute("UPDATE events SET project_seq = 7", []);
    assert!(renumber.is_err(), "the log was renumbered");
}

/// A version-5 store (the numbering did not exist) is numbered in log order on open, per
/// project, and new events continue after it.
#[test]
fn a_version_5_store_is_numbered_in_log_order() {
    let d = TempDir::new().unwrap();
    let path = d.path().join(STORE_FILE);
    {
        let conn = Connection::open(&path).unwrap();
        for step in &MIGRATIONS[..5] {
            conn.execute_batch(step).unwrap();
        }
        conn.execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 5;"
        ))
        .unwrap();
        for (n, project) in ["a", "b", "b", "a", "c", "a"].iter().enumerate() {
            let event = session(&format!("s-old-{n}"));
            conn.execute(
                "INSERT INTO events (seq, event_id, type, project_id, session_id, actor, at, payload)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'seed', 0, ?6)",
                rusqlite::params![
                    10 + n as i64 * 3,
                    format!("e-old-{n}"),
                    event.type_name(),
                    project,
                    event.session_id(),
                    serde_json::to_string(&event).unwrap()
                ],
            )
            .unwrap();
        }
    }
    let e = LocalEngine::new(SqliteStore::open(&path).unwrap(), EngineConfig::default());
    let conn = Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, LATEST_VERSION);
    assert_eq!(numbering(&conn, "a"), [1, 2, 3]);
    assert_eq!(numbering(&conn, "b"), [1, 2]);
    assert_eq!(numbering(&conn, "c"), [1]);
    declare(&e, "a", "s-old-0", "after the migration?");
    assert_eq!(numbering(&conn, "a"), [1, 2, 3, 4]);
    assert_eq!(e.project_revision(Some("b")).unwrap(), 2);
    // Still append-only after the migration stepped its trigger aside.
    assert!(
        conn.execute("UPDATE events SET actor = 'x' WHERE seq = 10", [])
            .is_err()
    );
}
