//! The PostgreSQL writer's batch on a real PostgreSQL (`postgres/ahead.rs`): answers
//! queued together are decided in one transaction from questions read ahead, with their
//! rows sent after the last decision. The write lock is held from outside while they
//! queue, so they meet in one batch: each question answered once with its own text, a
//! second answer to a question in the same batch refused as on its own, a parked task
//! resumed, and the log and its chain whole afterwards.
#![allow(clippy::unwrap_used)]

mod common_pg;

use std::sync::Arc;
use std::time::Duration;

use oq::domain::{Actor, Afeta, AnswerInput, DeclareInput, OqError, Role, SessionKind};
use oq::engine::postgres::PgStore;
use oq::engine::postgres::schema::WRITE_LOCK;
use oq::engine::{Engine, EngineConfig};

fn ask(e: &Engine<PgStore>, pergunta: &str) -> String {
    let input = DeclareInput {
        pergunta: pergunta.into(),
        sugestao: Some("the suggestion".into()),
        afeta: Afeta::default(),
        session_id: "s-alice".into(),
        idempotency_key: None,
    };
    e.declare(&Actor::agent(Role::Criativo), "p", &input)
        .unwrap()
        .question_id
}

#[test]
fn answers_queued_together_are_decided_as_if_one_by_one() {
    let test = "answers_queued_together_are_decided_as_if_one_by_one";
    if !common_pg::or_skip(test) {
        return;
    }
    let db = common_pg::shared().database();
    let e = Arc::new(Engine::new(
        PgStore::open(&db.app_target()).unwrap(),
        EngineConfig::default(),
    ));
    let alice = Actor::person("alice");
    e.start_session(&alice, "p", SessionKind::Conversation, Some("s-alice"))
        .unwrap();
    let ids: Vec<String> = (0..30)
        .map(|i| ask(&e, &format!("Question {i}?")))
        .collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Every answer queues behind the lock; the writer's next batch takes them all.
    let mut holder = db.superuser();
    holder
        .execute("SELECT pg_advisory_lock($1)", &[&WRITE_LOCK])
        .unwrap();
    let answer = |id: &str, text: String| {
        let (e, alice, id) = (e.clone(), alice.clone(), id.to_string());
        rt.spawn(async move {
            let input = AnswerInput::text(text);
            e.answer_once_async(&alice, Some("p"), &id, &input, None)
                .await
        })
    };
    let mut tasks: Vec<_> = ids
        .iter()
        .map(|id| answer(id, format!("answer to {id}")))
        .collect();
    // Three more answers to the first question, in the same batch as its first.
    tasks.extend((0..3).map(|i| answer(&ids[0], format!("late {i}"))));
    std::thread::sleep(Duration::from_millis(300));
    holder
        .execute("SELECT pg_advisory_unlock($1)", &[&WRITE_LOCK])
        .unwrap();
    let results: Vec<Result<_, OqError>> =
        tasks.into_iter().map(|t| rt.block_on(t).unwrap()).collect();
    let refused = results[30..]
        .iter()
        .filter(|r| matches!(r, Err(OqError::AlreadyAnswered { .. })))
        .count();
    assert_eq!(refused, 3, "{:?}", &results[30..]);
    for (id, r) in ids.iter().zip(&results[..30]) {
        let q = r.as_ref().unwrap();
        let text = q.answer.as_ref().unwrap().resposta.clone();
        assert_eq!(text, format!("answer to {id}"));
        // What the store holds, read back: the same single answer.
        let stored = e.question(Some("p"), id).unwrap();
        assert_eq!(stored.answer.unwrap().resposta, text);
        let answered = e
            .question_events(id)
            .unwrap()
            .iter()
            .filter(|ev| ev.type_name() == "open_question.answered")
            .count();
        assert_eq!(answered, 1, "{id}");
    }
    // The chain over every event (sessions, declarations, answers) intact.
    let report = oq::engine::postgres::chain::verify(&db.app_target()).unwrap();
    assert!(report.first_break.is_none(), "{:?}", report.first_break);
    assert_eq!(report.events, 1 + 30 + 30 * 2, "{report:?}");
    // The event feed's read without payloads gives the same heads as the whole read.
    let whole: Vec<_> = e
        .events_after(None, 0, 1000)
        .unwrap()
        .into_iter()
        .map(|s| {
            (
                s.seq,
                s.project_id,
                s.project_seq,
                s.event.type_name().to_string(),
            )
        })
        .collect();
    let heads: Vec<_> = e
        .heads_after(0, 1000)
        .unwrap()
        .into_iter()
        .map(|h| (h.seq, h.project_id, h.project_seq, h.kind))
        .collect();
    assert_eq!(heads, whole);
    assert_eq!(e.heads_after(40, 7).unwrap().len(), 7);
}
