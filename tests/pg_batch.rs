//! The PostgreSQL writer's batch on a real PostgreSQL (`postgres/ahead.rs`): answers
//! queued together are decided in one transaction from questions read ahead, with their
//! rows sent after the last decision. The write lock is held from outside (as another
//! server's batch would hold it) while they queue, so they meet in one batch — the one
//! the writer was waiting to begin takes all that queued meanwhile: each question
//! answered once with its own text, a second answer to a question in the same batch
//! refused as on its own, a parked task resumed, and the log and its chain whole
//! afterwards.
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
    let before = e.revision().unwrap();
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
    // The first answer's batch waits for the lock before the others are sent.
    let mut tasks = vec![answer(&ids[0], format!("answer to {}", ids[0]))];
    let waiting = |holder: &mut postgres::Client| -> i64 {
        holder
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
                &[],
            )
            .unwrap()
            .get(0)
    };
    for _ in 0..1000 {
        if waiting(&mut holder) > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(waiting(&mut holder), 1, "the writer waits for the lock");
    tasks.extend(
        ids[1..]
            .iter()
            .map(|id| answer(id, format!("answer to {id}"))),
    );
    // Three more answers to the first question, in the same batch as its first.
    tasks.extend((0..3).map(|i| answer(&ids[0], format!("late {i}"))));
    std::thread::sleep(Duration::from_millis(300));
    holder
        .execute("SELECT pg_advisory_unlock($1)", &[&WRITE_LOCK])
        .unwrap();
    let results: Vec<Result<_, OqError>> =
        tasks.into_iter().map(|t| rt.block_on(t).unwrap()).collect();
    // One batch, one transaction: the writer that waited for the lock took every answer
    // that queued meanwhile, not only the one it was holding when it began to wait.
    let transactions: i64 = holder
        .query_one(
            "SELECT count(DISTINCT xmin::text) FROM oq.events WHERE seq > $1",
            &[&before],
        )
        .unwrap()
        .get(0);
    assert_eq!(
        transactions, 1,
        "the answers were committed in {transactions} transactions"
    );
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

/// The newest snooze of a question (the read-ahead's and the list's) is read through the
/// snooze events' own index, whatever the planner's statistics: on a log not analysed
/// since it grew, without that index the planner walked the whole log backwards from its
/// newest event for each question never snoozed, inside the write lock.
#[test]
fn the_newest_snooze_of_a_question_is_a_probe_not_a_walk_of_the_log() {
    let test = "the_newest_snooze_of_a_question_is_a_probe_not_a_walk_of_the_log";
    if !common_pg::or_skip(test) {
        return;
    }
    let db = common_pg::shared().database();
    let mut su = db.superuser();
    su.batch_execute(
        "INSERT INTO oq.events (seq, project_seq, event_id, type, project_id, question_id, actor, at, payload)
         SELECT n, n, 'e' || n, 'artifact.open_question', 'p', 'q' || n, 'agent:criativo', 0,
                json_build_object('pergunta', 'Question ' || n || '?', 'autor', 'alice')
           FROM generate_series(1, 20000) n",
    )
    .unwrap();
    let statements = [
        (
            "text[]",
            oq::engine::postgres::read_ahead_sql(),
            "'{q5,q17}'",
        ),
        ("text", oq::engine::postgres::newest_snooze_sql(), "'q5'"),
    ];
    for (param, sql, arg) in statements {
        su.batch_execute("DEALLOCATE ALL").unwrap();
        su.batch_execute(&format!("PREPARE s({param}) AS {sql}"))
            .unwrap();
        for mode in ["force_custom_plan", "force_generic_plan"] {
            su.batch_execute(&format!("SET plan_cache_mode = {mode}"))
                .unwrap();
            let plan: Vec<String> = su
                .query(&format!("EXPLAIN EXECUTE s({arg})"), &[])
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect();
            let plan = plan.join("\n");
            assert!(
                plan.contains("events_snoozes") && !plan.contains("Backward using events_pkey"),
                "{mode}: {sql}\n{plan}"
            );
        }
    }
}
