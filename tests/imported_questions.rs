//! Questions with options (an OpenCode request imported by a bridge): the answer is
//! checked against the options here, a question can be dismissed by its author or
//! settled upstream, once, and the schema refuses a second settlement.
#![allow(clippy::unwrap_used)]

use oq::domain::choices::{ClosedReason, Prompt, PromptOption, Upstream, validate_choices};
use oq::domain::{Actor, AnswerInput, DeclareInput, OqError, SessionKind};
use oq::engine::{EngineConfig, ListQuery, LocalEngine, NewQuestion, SqliteStore, StatusFilter};

fn prompt(header: &str, labels: &[&str], multiple: bool, custom: bool) -> Prompt {
    Prompt {
        header: header.into(),
        question: format!("Pick {header}"),
        options: labels
            .iter()
            .map(|l| PromptOption {
                label: l.to_string(),
                description: String::new(),
            })
            .collect(),
        multiple,
        custom,
    }
}

fn answers(parts: &[&[&str]]) -> Vec<Vec<String>> {
    parts
        .iter()
        .map(|p| p.iter().map(|s| s.to_string()).collect())
        .collect()
}

fn code(r: Result<impl std::fmt::Debug, OqError>) -> &'static str {
    r.expect_err("should be refused").code().as_str()
}

#[test]
fn answers_are_checked_against_the_options() {
    let db = prompt("Database", &["Postgres", "SQLite"], false, false);
    let colours = prompt("Colours", &["Red", "Blue"], true, true);
    let both = [db.clone(), colours.clone()];
    assert_eq!(
        validate_choices(&both, &answers(&[&["SQLite"], &["Red", "Blue"]])).unwrap(),
        answers(&[&["SQLite"], &["Red", "Blue"]])
    );
    // one array per part
    assert_eq!(
        code(validate_choices(&both, &answers(&[&["SQLite"]]))),
        "invalid_answers"
    );
    // every part answered
    assert_eq!(
        code(validate_choices(&both, &answers(&[&["SQLite"], &[]]))),
        "invalid_answers"
    );
    // a single-choice part takes one
    assert_eq!(
        code(validate_choices(
            &both,
            &answers(&[&["SQLite", "Postgres"], &["Red"]])
        )),
        "invalid_answers"
    );
    // labels only where free text is off
    assert_eq!(
        code(validate_choices(&both, &answers(&[&["MySQL"], &["Red"]]))),
        "invalid_answers"
    );
    // free text where it is on, checked like any answer
    assert!(validate_choices(&both, &answers(&[&["SQLite"], &["Green"]])).is_ok());
    assert_eq!(
        code(validate_choices(&both, &answers(&[&["SQLite"], &["   "]]))),
        "empty_text"
    );
    // no entry twice
    assert_eq!(
        code(validate_choices(
            &both,
            &answers(&[&["SQLite"], &["Red", "Red"]])
        )),
        "invalid_answers"
    );
}

struct World {
    _dir: tempfile::TempDir,
    engine: LocalEngine,
    bridge: Actor,
    dev: Actor,
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let engine = LocalEngine::new(
        SqliteStore::open_in(dir.path()).unwrap(),
        EngineConfig::default(),
    );
    let dev = Actor::person("dev-a");
    engine
        .start_session(&dev, "loja", SessionKind::Conversation, Some("oc-ses"))
        .unwrap();
    World {
        _dir: dir,
        engine,
        bridge: Actor::Service {
            id: "bridge:local".into(),
        },
        dev,
    }
}

fn import(w: &World, id: &str, prompts: Vec<Prompt>) -> String {
    let input = DeclareInput {
        pergunta: "Which database?".into(),
        session_id: "oc-ses".into(),
        ..Default::default()
    };
    let q = w
        .engine
        .record_question(
            &w.bridge,
            "loja",
            NewQuestion {
                input: &input,
                autor: "opencode",
                source: "opencode",
                question_id: Some(id),
                prompts,
                upstream: Some(Upstream {
                    kind: "opencode".into(),
                    name: "local".into(),
                    directory: "/srv/work".into(),
                    request_id: id.into(),
                    session_id: "ses_1".into(),
                    call_id: None,
                }),
            },
        )
        .unwrap();
    q.question_id
}

#[test]
fn an_imported_question_is_answered_with_choices_and_keeps_them() {
    let w = world();
    let id = import(
        &w,
        "que_1",
        vec![prompt("Database", &["Postgres", "SQLite"], false, true)],
    );
    let q = w.engine.question(None, &id).unwrap();
    assert_eq!(q.source, "opencode");
    assert_eq!(q.upstream.as_ref().unwrap().request_id, "que_1");
    // resposta and answers together are refused; a bad label is refused; nothing recorded
    let both = AnswerInput {
        resposta: Some("x".into()),
        answers: Some(answers(&[&["SQLite"]])),
        ..Default::default()
    };
    assert_eq!(
        code(w.engine.answer(&w.dev, None, &id, &both)),
        "invalid_body"
    );
    let answered = w
        .engine
        .answer(
            &w.dev,
            None,
            &id,
            &AnswerInput {
                answers: Some(answers(&[&["SQLite"]])),
                ..Default::default()
            },
        )
        .unwrap();
    let a = answered.answer.unwrap();
    assert_eq!(a.choices, answers(&[&["SQLite"]]));
    assert_eq!(a.resposta, "Database: SQLite");
    // an ADR question takes no `answers`
    let plain = w
        .engine
        .declare(
            &Actor::agent(oq::domain::Role::Po),
            "loja",
            &DeclareInput {
                pergunta: "Plain?".into(),
                session_id: "oc-ses".into(),
                ..Default::default()
            },
        )
        .unwrap();
    let with_answers = AnswerInput {
        answers: Some(answers(&[&["x"]])),
        ..Default::default()
    };
    assert_eq!(
        code(
            w.engine
                .answer(&w.dev, None, &plain.question_id, &with_answers)
        ),
        "invalid_answers"
    );
}

#[test]
fn a_lone_free_text_part_takes_resposta() {
    let w = world();
    let id = import(&w, "que_2", vec![prompt("Name", &["A"], false, true)]);
    let q = w
        .engine
        .answer(&w.dev, None, &id, &AnswerInput::text("Zed"))
        .unwrap();
    assert_eq!(q.answer.unwrap().choices, answers(&[&["Zed"]]));
    let id = import(
        &w,
        "que_3",
        vec![
            prompt("A", &["x"], false, true),
            prompt("B", &["y"], false, true),
        ],
    );
    assert_eq!(
        code(
            w.engine
                .answer(&w.dev, None, &id, &AnswerInput::text("Zed"))
        ),
        "invalid_answers"
    );
}

#[test]
fn dismissing_is_the_authors_and_closes_the_question_once() {
    let w = world();
    let id = import(
        &w,
        "que_4",
        vec![prompt("Database", &["Postgres"], false, true)],
    );
    let other = Actor::person("dev-b");
    assert_eq!(
        code(
            w.engine
                .close_question(&other, None, &id, ClosedReason::Rejected)
        ),
        "so_o_autor_da_sessao"
    );
    let closed = w
        .engine
        .close_question(&w.dev, None, &id, ClosedReason::Rejected)
        .unwrap();
    assert_eq!(closed.status(), "closed");
    assert!(
        w.engine
            .list(Some("loja"), &ListQuery::new(StatusFilter::Open))
            .unwrap()
            .items
            .is_empty()
    );
    assert_eq!(
        w.engine
            .list(Some("loja"), &ListQuery::new(StatusFilter::All))
            .unwrap()
            .total,
        1
    );
    // neither an answer nor a second dismissal after it
    assert_eq!(
        code(
            w.engine
                .answer(&w.dev, None, &id, &AnswerInput::text("late"))
        ),
        "question_closed"
    );
    assert_eq!(
        code(
            w.engine
                .close_question(&w.dev, None, &id, ClosedReason::Rejected)
        ),
        "question_closed"
    );
}

#[test]
fn settled_upstream_is_recorded_by_the_bridge_only_and_is_idempotent() {
    let w = world();
    let id = import(
        &w,
        "que_5",
        vec![prompt("Database", &["Postgres"], false, true)],
    );
    assert_eq!(
        code(
            w.engine
                .close_question(&w.dev, None, &id, ClosedReason::External)
        ),
        "role_not_allowed"
    );
    let before = w.engine.revision().unwrap();
    w.engine
        .close_question(&w.bridge, None, &id, ClosedReason::External)
        .unwrap();
    let after = w.engine.revision().unwrap();
    assert_eq!(after, before + 1);
    // upstream says it again: nothing new in the log
    w.engine
        .close_question(&w.bridge, None, &id, ClosedReason::External)
        .unwrap();
    assert_eq!(w.engine.revision().unwrap(), after);
    // and an answered question is never closed by a late upstream word
    let id = import(
        &w,
        "que_6",
        vec![prompt("Database", &["Postgres"], false, true)],
    );
    w.engine
        .answer(
            &w.dev,
            None,
            &id,
            &AnswerInput {
                answers: Some(answers(&[&["Postgres"]])),
                ..Default::default()
            },
        )
        .unwrap();
    let q = w
        .engine
        .close_question(&w.bridge, None, &id, ClosedReason::External)
        .unwrap();
    assert_eq!(q.status(), "answered");
}

#[test]
fn an_orphan_is_marked_once_and_stays_open_until_dismissed() {
    let w = world();
    let id = import(
        &w,
        "que_7",
        vec![prompt("Database", &["Postgres"], false, true)],
    );
    let q = w.engine.mark_orphaned(&w.bridge, None, &id).unwrap();
    assert!(q.orphaned && q.is_open());
    let rev = w.engine.revision().unwrap();
    w.engine.mark_orphaned(&w.bridge, None, &id).unwrap();
    assert_eq!(w.engine.revision().unwrap(), rev);
    w.engine
        .close_question(&w.dev, None, &id, ClosedReason::Rejected)
        .unwrap();
}

#[test]
fn the_schema_refuses_a_second_settlement() {
    let w = world();
    let id = import(
        &w,
        "que_8",
        vec![prompt("Database", &["Postgres"], false, true)],
    );
    w.engine
        .close_question(&w.dev, None, &id, ClosedReason::Rejected)
        .unwrap();
    let conn = rusqlite::Connection::open(w.engine.store().path()).unwrap();
    let err = conn
        .execute(
            "INSERT INTO events (event_id, type, project_id, question_id, actor, at, payload)
             VALUES ('e-x', 'open_question.answered', 'loja', ?1, 'dev-a', 0, '{}')",
            [&id],
        )
        .unwrap_err();
    // One settlement per question: schema v5's unique index over answers and closures.
    assert!(
        err.to_string()
            .contains("UNIQUE constraint failed: events.question_id"),
        "{err}"
    );
}

#[test]
fn a_second_submission_is_refused_until_the_first_is_released() {
    use oq::domain::Event;
    use oq::domain::delegation::{Claimant, PauseReason, PostKind};
    let w = world();
    let id = import(
        &w,
        "que_claim",
        vec![prompt("Database", &["Postgres"], false, false)],
    );
    let submitted = || Event::QuestionSubmitted {
        question_id: id.clone(),
        claimant: Claimant::Manual,
        post: PostKind::Reject,
        answers: Vec::new(),
        by: "dev-a".into(),
        idempotency_key: None,
    };
    assert!(w.engine.note(&w.bridge, "loja", submitted()).unwrap());
    assert_eq!(
        code(w.engine.note(&w.bridge, "loja", submitted())),
        "question_submission_claimed"
    );
    // A countdown noted after it says the claim was released (as a pause or resume do).
    let countdown = Event::QuestionCountdown {
        question_id: id.clone(),
        deadline: 1,
    };
    assert!(w.engine.note(&w.bridge, "loja", countdown).unwrap());
    assert!(w.engine.note(&w.bridge, "loja", submitted()).unwrap());
    let paused = Event::QuestionPaused {
        question_id: id.clone(),
        reason: PauseReason::Refused,
        by: "bridge:local".into(),
    };
    assert!(w.engine.note(&w.bridge, "loja", paused).unwrap());
    assert!(w.engine.note(&w.bridge, "loja", submitted()).unwrap());
    assert_eq!(
        code(w.engine.note(&w.bridge, "loja", submitted())),
        "question_submission_claimed"
    );
}
