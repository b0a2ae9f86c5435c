//! The PostgreSQL store on a real PostgreSQL: the engine's flows, the database's own
//! refusals (append-only by trigger AND by privilege, derived tables, one settlement),
//! migrations and a database newer than this binary, concurrent writers on one database.
#![allow(clippy::unwrap_used)]

mod common_pg;

use std::sync::{Arc, Barrier};

use oq::domain::{Actor, Afeta, AnswerInput, DeclareInput, OqError, Role, SessionKind};
use oq::engine::postgres::{self, PgStore, PgTarget, SchemaState, schema};
use oq::engine::{Engine, EngineConfig, ListQuery, StatusFilter};

fn engine(db: &common_pg::PgDb) -> Engine<PgStore> {
    Engine::new(
        PgStore::open(&db.app_target()).expect("open"),
        EngineConfig::default(),
    )
}

fn ask(e: &Engine<PgStore>, session: &str, pergunta: &str, afeta: Afeta) -> String {
    let input = DeclareInput {
        pergunta: pergunta.into(),
        sugestao: Some("the suggestion".into()),
        afeta,
        session_id: session.into(),
        idempotency_key: None,
    };
    e.declare(&Actor::agent(Role::Criativo), "p", &input)
        .unwrap()
        .question_id
}

fn reply(text: &str) -> AnswerInput {
    AnswerInput {
        resposta: Some(text.into()),
        ..Default::default()
    }
}

fn setup(test: &str) -> Option<(common_pg::PgDb, Engine<PgStore>)> {
    if !common_pg::or_skip(test) {
        return None;
    }
    let db = common_pg::shared().database();
    let e = engine(&db);
    e.start_session(
        &Actor::person("alice"),
        "p",
        SessionKind::Conversation,
        Some("s-alice"),
    )
    .unwrap();
    Some((db, e))
}

#[test]
fn declare_list_answer_and_the_log_on_postgres() {
    let Some((_db, e)) = setup("declare_list_answer_and_the_log_on_postgres") else {
        return;
    };
    let afeta = Afeta {
        regras: vec!["RN-1".into()],
        ..Afeta::default()
    };
    let q = ask(&e, "s-alice", "Which flow?", afeta);
    let open = e
        .list(Some("p"), &ListQuery::new(StatusFilter::Open))
        .unwrap();
    assert_eq!((open.items.len(), open.total), (1, 1));
    let answered = e
        .answer(&Actor::person("alice"), Some("p"), &q, &reply("One page"))
        .unwrap();
    assert_eq!(answered.answer.as_ref().unwrap().resposta, "One page");
    let open = e
        .list(Some("p"), &ListQuery::new(StatusFilter::Open))
        .unwrap();
    assert_eq!(open.total, 0);
    let all = e
        .list(Some("p"), &ListQuery::new(StatusFilter::Answered))
        .unwrap();
    assert_eq!(all.total, 1);
    // A second answer is the ADR's refusal.
    let again = e.answer(&Actor::person("alice"), Some("p"), &q, &reply("Two pages"));
    assert!(
        matches!(again, Err(OqError::AlreadyAnswered { .. })),
        "{again:?}"
    );
    // Positions are 1..n without a hole, in order.
    let events = e.events_after(None, 0, 100).unwrap();
    let seqs: Vec<i64> = events.iter().map(|s| s.seq).collect();
    assert_eq!(seqs, (1..=events.len() as i64).collect::<Vec<_>>());
    assert_eq!(e.revision().unwrap(), events.len() as i64);
}

#[test]
fn the_serving_role_cannot_alter_history_and_triggers_refuse_the_owner() {
    let Some((db, e)) =
        setup("the_serving_role_cannot_alter_history_and_triggers_refuse_the_owner")
    else {
        return;
    };
    let q = ask(&e, "s-alice", "Which flow?", Afeta::default());
    let mut app = db.client(&db.app);
    for sql in [
        "UPDATE oq.events SET actor = 'mallory'",
        "DELETE FROM oq.events",
        "TRUNCATE oq.events",
        "INSERT INTO oq.open_questions VALUES ('fake', 'p', 999)",
        "DELETE FROM oq.open_questions",
        "ALTER TABLE oq.events DISABLE TRIGGER ALL",
        "DROP TRIGGER events_refuse_change ON oq.events",
    ] {
        let err = app.batch_execute(sql).expect_err(sql);
        let code = err.code().map(|c| c.code().to_string()).unwrap_or_default();
        assert!(code == "42501", "{sql}: {err} ({code})");
    }
    // The owner is refused by the triggers.
    let mut owner = db.client(&db.owner);
    for sql in [
        "UPDATE oq.events SET actor = 'mallory'",
        "DELETE FROM oq.events",
        "TRUNCATE oq.events",
        "INSERT INTO oq.open_questions VALUES ('fake', 'p', 999)",
        "UPDATE oq.open_questions SET project_id = 'x'",
    ] {
        let err = owner.batch_execute(sql).expect_err(sql);
        let code = err.code().map(|c| c.code().to_string()).unwrap_or_default();
        assert!(code.starts_with("OQ"), "{sql}: {err} ({code})");
    }
    let delete_open = format!("DELETE FROM oq.open_questions WHERE question_id = '{q}'");
    assert!(
        owner.batch_execute(&delete_open).is_err(),
        "a still-open question stays"
    );
    // One settlement per question even for a hand-written insert.
    e.answer(&Actor::person("alice"), Some("p"), &q, &reply("yes"))
        .unwrap();
    let dup = format!(
        "INSERT INTO oq.events (seq, project_seq, event_id, type, project_id, question_id, actor, at, payload)
         VALUES (1000, 1000, 'ev-dup', 'open_question.closed', 'p', '{q}', 'x', 0, '{{}}')"
    );
    let err = app.batch_execute(&dup).expect_err("second settlement");
    assert_eq!(err.code().unwrap().code(), "23505", "{err}");
    // Nothing changed.
    assert_eq!(
        e.question(Some("p"), &q).unwrap().answer.unwrap().resposta,
        "yes"
    );
}

#[test]
fn a_role_that_could_alter_history_is_refused_and_so_is_an_unmigrated_database() {
    let Some((db, _e)) =
        setup("a_role_that_could_alter_history_is_refused_and_so_is_an_unmigrated_database")
    else {
        return;
    };
    let err = PgStore::open(&db.owner_target()).err().unwrap();
    assert_eq!(err.code(), "store_role_can_alter_history", "{err}");
    let fresh = common_pg::shared().database();
    let mut owner = fresh.client(&fresh.owner);
    owner.batch_execute("DROP SCHEMA oq CASCADE").unwrap();
    let err = PgStore::open(&fresh.app_target()).err().unwrap();
    assert_eq!(err.code(), "store_not_initialised", "{err}");
    // A schema named oq that is not ours is refused untouched.
    owner
        .batch_execute("CREATE SCHEMA oq; CREATE TABLE oq.mine (x int)")
        .unwrap();
    let err = postgres::migrate(&fresh.owner_target(), Some(&fresh.app))
        .err()
        .unwrap();
    assert_eq!(err.code(), "not_an_oq_store", "{err}");
    let left: i64 = owner
        .query_one(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'oq'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(left, 1);
}

#[test]
fn a_database_newer_than_this_binary_is_refused_untouched() {
    let Some((db, _e)) = setup("a_database_newer_than_this_binary_is_refused_untouched") else {
        return;
    };
    let mut admin = common_pg::shared().admin().unwrap();
    drop(admin.batch_execute("SELECT 1"));
    let mut owner = db.client(&db.owner);
    let newer = schema::LATEST_VERSION + 1;
    owner
        .batch_execute(&format!("UPDATE oq.meta SET version = {newer}"))
        .unwrap();
    let before: i64 = owner
        .query_one("SELECT count(*) FROM oq.events", &[])
        .unwrap()
        .get(0);
    let err = PgStore::open(&db.app_target()).err().unwrap();
    assert_eq!(err.code(), "store_too_new", "{err}");
    let err = postgres::migrate(&db.owner_target(), Some(&db.app))
        .err()
        .unwrap();
    assert_eq!(err.code(), "store_too_new", "{err}");
    let (after, version): (i64, i32) = {
        let r = owner
            .query_one(
                "SELECT (SELECT count(*) FROM oq.events), (SELECT version FROM oq.meta)",
                &[],
            )
            .unwrap();
        (r.get(0), r.get(1))
    };
    assert_eq!((after, version), (before, newer));
    // Migrating an up-to-date database again changes nothing and says where it was.
    owner
        .batch_execute(&format!(
            "UPDATE oq.meta SET version = {}",
            schema::LATEST_VERSION
        ))
        .unwrap();
    let found = postgres::migrate(&db.owner_target(), Some(&db.app)).unwrap();
    assert_eq!(found, SchemaState::At(schema::LATEST_VERSION));
}

#[test]
fn the_url_never_carries_the_password() {
    let err = PgTarget::parse("postgres://oq:secret@db/oq", None).unwrap_err();
    assert!(err.contains("password"), "{err}");
    assert!(!err.contains("secret"), "{err}");
    let t = PgTarget::parse("postgres://oq@db:5433/team", Some("s3cret".into())).unwrap();
    assert_eq!(t.shown(), "postgres://oq@db:5433/team");
    assert!(!format!("{t:?}").contains("s3cret"));
}

#[test]
fn threads_of_two_stores_racing_to_answer_one_question() {
    let Some((db, e)) = setup("threads_of_two_stores_racing_to_answer_one_question") else {
        return;
    };
    let q = ask(&e, "s-alice", "Race?", Afeta::default());
    let engines = Arc::new([e, engine(&db)]);
    let barrier = Arc::new(Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let (engines, barrier, q) = (engines.clone(), barrier.clone(), q.clone());
            std::thread::spawn(move || {
                barrier.wait();
                engines[i % 2].answer(
                    &Actor::person("alice"),
                    Some("p"),
                    &q,
                    &reply(&format!("answer {i}")),
                )
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let won = results.iter().filter(|r| r.is_ok()).count();
    let refused = results
        .iter()
        .filter(|r| matches!(r, Err(OqError::AlreadyAnswered { .. })))
        .count();
    assert_eq!((won, refused), (1, 7), "{results:?}");
}

fn submitted(question_id: &str) -> oq::domain::Event {
    use oq::domain::delegation::{Claimant, PostKind};
    oq::domain::Event::QuestionSubmitted {
        question_id: question_id.into(),
        claimant: Claimant::Auto,
        post: PostKind::Reply,
        answers: vec![vec!["go on".into()]],
        by: "bridge:oc".into(),
        idempotency_key: None,
    }
}

#[test]
fn a_claim_is_a_row_one_submission_across_servers_until_released() {
    let Some((db, e)) = setup("a_claim_is_a_row_one_submission_across_servers_until_released")
    else {
        return;
    };
    let q = ask(&e, "s-alice", "Claimed once?", Afeta::default());
    let bridge = Actor::Service {
        id: "bridge:oc".into(),
    };
    // Two servers' stores, eight threads each, noting a submission at once.
    let engines = [Arc::new(e), Arc::new(engine(&db))];
    let barrier = Arc::new(Barrier::new(16));
    let handles: Vec<_> = (0..16)
        .map(|i| {
            let (e, barrier, q, bridge) = (
                engines[i % 2].clone(),
                barrier.clone(),
                q.clone(),
                bridge.clone(),
            );
            std::thread::spawn(move || {
                barrier.wait();
                e.note(&bridge, "p", submitted(&q))
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let won = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(won, 1, "{results:?}");
    for r in results.iter().filter(|r| r.is_err()) {
        assert_eq!(
            r.as_ref().unwrap_err().code().as_str(),
            "question_submission_claimed"
        );
    }
    // A release (the bridge's pause after a refusal) lets the next claim through, once.
    engines[1]
        .note(
            &bridge,
            "p",
            oq::domain::Event::QuestionPaused {
                question_id: q.clone(),
                reason: oq::domain::delegation::PauseReason::Refused,
                by: "bridge:oc".into(),
            },
        )
        .unwrap();
    assert!(engines[0].note(&bridge, "p", submitted(&q)).unwrap());
    let again = engines[1].note(&bridge, "p", submitted(&q));
    assert_eq!(
        again.unwrap_err().code().as_str(),
        "question_submission_claimed"
    );
}

#[test]
fn an_upstreams_lease_has_one_holder_until_it_runs_out_or_is_given_up() {
    use oq::engine::postgres::lease::Lease;
    let Some((db, e)) = setup("an_upstreams_lease_has_one_holder_until_it_runs_out_or_is_given_up")
    else {
        return;
    };
    let other = engine(&db);
    let (a, b) = (e.store().leases(), other.store().leases());
    let term = std::time::Duration::from_millis(300);
    assert_eq!(a.take("oc", "A", term).unwrap(), Lease::Held);
    assert_eq!(
        b.take("oc", "B", term).unwrap(),
        Lease::Elsewhere(Some("A".into()))
    );
    // Renewed by its holder; another upstream's lease is apart.
    assert_eq!(a.take("oc", "A", term).unwrap(), Lease::Held);
    assert_eq!(b.take("other", "B", term).unwrap(), Lease::Held);
    // A holder that stops renewing loses it once its term ran out, and cannot renew.
    std::thread::sleep(term * 2);
    assert_eq!(b.take("oc", "B", term).unwrap(), Lease::Held);
    assert_eq!(
        a.take("oc", "A", term).unwrap(),
        Lease::Elsewhere(Some("B".into()))
    );
    // Given up: free at once.
    b.give_up("oc", "B").unwrap();
    assert_eq!(
        a.take("oc", "A", std::time::Duration::from_secs(60))
            .unwrap(),
        Lease::Held
    );
}

/// A database of schema v3 (the open set without its asker), migrated by this binary:
/// every open row takes its asker from its declaration, what is declared afterwards gets
/// its own from the trigger, and the queue by asker pages in (asker, position) order.
#[test]
fn a_version_3_database_sorts_by_asker_after_its_migration() {
    let test = "a_version_3_database_sorts_by_asker_after_its_migration";
    if !common_pg::or_skip(test) {
        return;
    }
    let db = common_pg::shared().database();
    let mut owner = db.client(&db.owner);
    owner
        .batch_execute(
            "DROP SCHEMA oq CASCADE; CREATE SCHEMA oq; REVOKE ALL ON SCHEMA oq FROM PUBLIC",
        )
        .unwrap();
    for step in &schema::MIGRATIONS[..3] {
        owner.batch_execute(step).unwrap();
    }
    owner
        .batch_execute(&format!(
            "INSERT INTO oq.meta (application, version) VALUES ({}, 3)",
            schema::APPLICATION_ID
        ))
        .unwrap();
    let insert = |owner: &mut ::postgres::Client,
                  n: i64,
                  kind: &str,
                  question: Option<&str>,
                  payload: serde_json::Value| {
        owner
            .execute(
                "INSERT INTO oq.events (seq, project_seq, event_id, type, project_id, session_id, question_id, actor, at, payload)
                 VALUES ($1, $1, $2, $3, 'p', 's-v3', $4, 'seed', $1, $5::text::json)",
                &[
                    &n as &(dyn ::postgres::types::ToSql + Sync),
                    &format!("e-{n}"),
                    &kind,
                    &question,
                    &payload.to_string(),
                ],
            )
            .unwrap();
    };
    let started = oq::domain::Event::SessionStarted {
        session_id: "s-v3".into(),
        kind: SessionKind::Conversation,
        author: "carol".into(),
    };
    insert(
        &mut owner,
        1,
        "session.started",
        None,
        serde_json::to_value(&started).unwrap(),
    );
    let askers = ["po", "criativo", "arquiteto", "po", "criativo"];
    let question = |n: usize, autor: &str| {
        let event = oq::domain::Event::OpenQuestion {
            question_id: format!("q-{n}"),
            pergunta: format!("Question {n}?"),
            sugestao: None,
            afeta: Afeta::default(),
            autor: autor.into(),
            session_id: "s-v3".into(),
            source: "oq".into(),
            prompts: Vec::new(),
            upstream: None,
        };
        serde_json::to_value(&event).unwrap()
    };
    for (n, autor) in askers.iter().enumerate() {
        let id = format!("q-{n}");
        insert(
            &mut owner,
            n as i64 + 2,
            "artifact.open_question",
            Some(&id),
            question(n, autor),
        );
    }
    assert_eq!(
        postgres::migrate(&db.owner_target(), Some(&db.app)).unwrap(),
        SchemaState::At(3)
    );
    insert(
        &mut owner,
        7,
        "artifact.open_question",
        Some("q-5"),
        question(5, "arquiteto"),
    );
    let e = engine(&db);
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let q = ListQuery::new(StatusFilter::Open)
            .sorted(oq::engine::Sort::Asker)
            .limit(2)
            .after(cursor.as_deref());
        let page = e.list(Some("p"), &q).unwrap();
        seen.extend(page.items.into_iter().map(|q| (q.autor, q.question_id)));
        match page.cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    let expected: Vec<(String, String)> = [
        ("arquiteto", "q-2"),
        ("arquiteto", "q-5"),
        ("criativo", "q-1"),
        ("criativo", "q-4"),
        ("po", "q-0"),
        ("po", "q-3"),
    ]
    .iter()
    .map(|(a, q)| (a.to_string(), q.to_string()))
    .collect();
    assert_eq!(seen, expected);
    let stored: i64 = owner
        .query_one(
            "SELECT count(*) FROM oq.open_questions WHERE autor = ''",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(stored, 0, "every open row carries its asker");
}

/// A text the writer puts into SQL as a constant (its NOTIFY's payload) arrives as it was,
/// quotes and backslashes included, whether the session takes backslashes as escapes or
/// not.
#[test]
fn a_quoted_literal_means_its_text_under_either_string_setting() {
    if !common_pg::or_skip("a_quoted_literal_means_its_text_under_either_string_setting") {
        return;
    }
    let db = common_pg::shared().database();
    let mut su = db.superuser();
    let text = r#"[[1,"it's","a\\b \" ''"]]"#;
    for setting in ["on", "off"] {
        su.batch_execute(&format!("SET standard_conforming_strings = {setting}"))
            .unwrap();
        let got: String = su
            .query_one(&format!("SELECT {}", schema::quote_literal(text)), &[])
            .unwrap()
            .get(0);
        assert_eq!(got, text, "standard_conforming_strings = {setting}");
    }
}

/// Quotes, backslashes, placeholders and escapes in what a person or an agent typed are
/// stored as typed through the writer's batch, and the chain hashed over them still holds.
#[test]
fn what_was_typed_is_stored_as_typed_and_its_chain_holds() {
    let Some((db, e)) = setup("what_was_typed_is_stored_as_typed_and_its_chain_holds") else {
        return;
    };
    let tricky = [
        r"it's a \ b \\ c",
        "E'x' $1:: $13::bytea[] '); DROP TABLE oq.events; --",
        "naïve — 日本 🦀 tab\tand\nnewline \"quoted\" \\u0000 \\x41",
    ];
    for text in tricky {
        let q = ask(&e, "s-alice", text, Afeta::default());
        let answered = e
            .answer(&Actor::person("alice"), Some("p"), &q, &reply(text))
            .unwrap();
        assert_eq!(answered.pergunta, text);
        assert_eq!(answered.answer.as_ref().unwrap().resposta, text);
        let read = e.question(Some("p"), &q).unwrap();
        assert_eq!(read.pergunta, text);
        assert_eq!(read.answer.unwrap().resposta, text);
    }
    let verified = postgres::chain::verify(&db.app_target()).unwrap();
    assert!(verified.first_break.is_none(), "{:?}", verified.first_break);
    assert_eq!(verified.events, e.revision().unwrap());
}
