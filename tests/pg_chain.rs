//! The hash chain on the PostgreSQL store, on a real PostgreSQL: every append is chained
//! (the SQLite store's chain, the same bytes), `oq store verify --store postgres://…`
//! walks it, and history altered by hand by a superuser — the one who can step over the
//! triggers and the grants — is named at its position: an edited row, a deleted one. A
//! database from before the chain is chained once by `oq store migrate`.
#![allow(clippy::unwrap_used)]

mod common_pg;

use std::process::Command;

use serde_json::Value;

use oq::domain::{Actor, AnswerInput, DeclareInput, Role, SessionKind};
use oq::engine::postgres::{self, PgStore};
use oq::engine::{Engine, EngineConfig};

/// A store with 3 questions declared in project `p`, the second answered: 6 events
/// (session, 3 declarations, the answer and its decision record).
fn filled(db: &common_pg::PgDb) -> Vec<String> {
    let e = Engine::new(
        PgStore::open(&db.app_target()).unwrap(),
        EngineConfig::default(),
    );
    e.start_session(
        &Actor::person("alice"),
        "p",
        SessionKind::Conversation,
        Some("s-alice"),
    )
    .unwrap();
    let ids: Vec<String> = (0..3)
        .map(|i| {
            let input = DeclareInput {
                pergunta: format!("Which checkout, {i}?"),
                sugestao: Some("the one-page one".into()),
                afeta: Default::default(),
                session_id: "s-alice".into(),
                idempotency_key: None,
            };
            e.declare(&Actor::agent(Role::Criativo), "p", &input)
                .unwrap()
                .question_id
        })
        .collect();
    let answer = AnswerInput {
        resposta: Some("go with the one-page checkout".into()),
        ..Default::default()
    };
    e.answer(&Actor::person("alice"), Some("p"), &ids[1], &answer)
        .unwrap();
    ids
}

/// `oq store verify --store URL --json` as the serving role: (exit code, report).
fn verify(db: &common_pg::PgDb) -> (i32, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_oq"))
        .args(["store", "verify", "--json", "--store", &db.app_url()])
        .env("OQ_STORE_PASSWORD", &db.password)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let report = serde_json::from_str(&text).unwrap_or_else(|_| {
        panic!(
            "not a report: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), report)
}

/// The project position of the answer of question `id`.
fn answer_position(db: &common_pg::PgDb, id: &str) -> i64 {
    db.client(&db.app)
        .query_one(
            "SELECT project_seq FROM oq.events WHERE type = 'open_question.answered' AND question_id = $1",
            &[&id],
        )
        .unwrap()
        .get(0)
}

#[test]
fn an_answer_edited_by_the_superuser_is_named_by_verify() {
    if !common_pg::or_skip("an_answer_edited_by_the_superuser_is_named_by_verify") {
        return;
    }
    let db = common_pg::shared().database();
    let ids = filled(&db);
    let (code, report) = verify(&db);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["intact"], true, "{report}");
    assert_eq!(report["events"], 6, "{report}");
    assert_eq!(report["projects"][0]["events"], 6, "{report}");

    let at = answer_position(&db, &ids[1]);
    db.superuser()
        .batch_execute(&format!(
            "ALTER TABLE oq.events DISABLE TRIGGER events_refuse_change;
             UPDATE oq.events SET payload = replace(payload::text, 'one-page', 'three-page')::json
              WHERE type = 'open_question.answered' AND question_id = '{}';
             ALTER TABLE oq.events ENABLE TRIGGER events_refuse_change;",
            ids[1]
        ))
        .unwrap();
    let (code, report) = verify(&db);
    assert_eq!(code, 14, "{report}");
    assert_eq!(report["intact"], false, "{report}");
    let b = &report["firstBreak"];
    assert_eq!(b["projectId"], "p", "{report}");
    assert_eq!(b["position"], at, "{report}");
    assert_eq!(b["kind"], "edited", "{report}");
}

#[test]
fn an_event_deleted_by_the_superuser_is_named_by_verify() {
    if !common_pg::or_skip("an_event_deleted_by_the_superuser_is_named_by_verify") {
        return;
    }
    let db = common_pg::shared().database();
    let ids = filled(&db);
    let at = answer_position(&db, &ids[1]);
    db.superuser()
        .batch_execute(&format!(
            "ALTER TABLE oq.events DISABLE TRIGGER events_refuse_change;
             DELETE FROM oq.events WHERE type = 'open_question.answered' AND question_id = '{}';
             ALTER TABLE oq.events ENABLE TRIGGER events_refuse_change;",
            ids[1]
        ))
        .unwrap();
    let (code, report) = verify(&db);
    assert_eq!(code, 14, "{report}");
    let b = &report["firstBreak"];
    assert_eq!(b["position"], at, "{report}");
    assert_eq!(b["kind"], "deleted", "{report}");
}

#[test]
fn a_database_from_before_the_chain_is_chained_once_by_migrate() {
    if !common_pg::or_skip("a_database_from_before_the_chain_is_chained_once_by_migrate") {
        return;
    }
    let db = common_pg::shared().database();
    filled(&db);
    // Back to version 2, as the binary of that version left it: no chain column (v3),
    // no asker column in the open set (v4), no index of the snoozes (v5).
    db.client(&db.owner)
        .batch_execute(
            "ALTER TABLE oq.events DROP COLUMN chain;
             ALTER TABLE oq.open_questions DROP COLUMN autor;
             DROP INDEX oq.events_snoozes;
             UPDATE oq.meta SET version = 2;",
        )
        .unwrap();
    postgres::migrate(&db.owner_target(), Some(&db.app)).unwrap();
    let (code, report) = verify(&db);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["events"], 6, "{report}");
    // The chain goes on from the backfilled head.
    filled_more(&db);
    let (code, report) = verify(&db);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["events"], 8, "{report}");
}

/// One more question in project `p` (a declaration and nothing else… plus its session
/// already there): 2 events with the new session.
fn filled_more(db: &common_pg::PgDb) {
    let e = Engine::new(
        PgStore::open(&db.app_target()).unwrap(),
        EngineConfig::default(),
    );
    e.start_session(
        &Actor::person("bob"),
        "p",
        SessionKind::Conversation,
        Some("s-bob"),
    )
    .unwrap();
    let input = DeclareInput {
        pergunta: "And the colour?".into(),
        sugestao: None,
        afeta: Default::default(),
        session_id: "s-bob".into(),
        idempotency_key: None,
    };
    e.declare(&Actor::agent(Role::Criativo), "p", &input)
        .unwrap();
}

/// `oq store head --store URL --json` as the serving role: (exit code, report).
fn head(db: &common_pg::PgDb) -> (i32, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_oq"))
        .args(["store", "head", "--json", "--store", &db.app_url()])
        .env("OQ_STORE_PASSWORD", &db.password)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let report = serde_json::from_str(&text).unwrap_or_else(|_| {
        panic!(
            "not a report: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), report)
}

#[test]
fn head_prints_each_projects_newest_link_as_verify_finds_it() {
    if !common_pg::or_skip("head_prints_each_projects_newest_link_as_verify_finds_it") {
        return;
    }
    let db = common_pg::shared().database();
    filled(&db);
    let (code, heads) = head(&db);
    assert_eq!(code, 0, "{heads}");
    let (_, verified) = verify(&db);
    // The heads read from the newest events are the heads the walk recomputed.
    assert_eq!(
        heads["projects"], verified["projects"],
        "{heads} {verified}"
    );
    assert_eq!(heads["projects"][0]["events"], 6, "{heads}");
    assert_eq!(
        heads["projects"][0]["head"].as_str().map(str::len),
        Some(64),
        "{heads}"
    );
    // The head moves with the next append, and stays what verify finds.
    filled_more(&db);
    let (_, moved) = head(&db);
    assert_ne!(moved["projects"][0]["head"], heads["projects"][0]["head"]);
    assert_eq!(moved["projects"], verify(&db).1["projects"], "{moved}");
}
