//! Many writers of one process share transactions (group commit): every accepted write is
//! durable when its call returns, a refused one leaves nothing, and none spoils another.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use oq::domain::{Actor, AnswerInput, DeclareInput, Role, SessionKind};
use oq::engine::sqlite::Flush;
use oq::engine::{EngineConfig, ListQuery, LocalEngine, SqliteStore, StatusFilter};

#[test]
fn concurrent_writers_each_get_their_own_outcome_and_all_of_it_is_durable() {
    each_gets_its_own_outcome_and_all_of_it_is_durable(Flush::InCommit);
}

#[test]
fn with_the_flush_apart_too_each_gets_its_outcome_and_all_of_it_is_durable() {
    each_gets_its_own_outcome_and_all_of_it_is_durable(Flush::Pipelined);
}

#[test]
fn a_reader_never_sees_a_write_before_it_is_committed() {
    no_write_is_seen_before_its_commit(Flush::InCommit);
}

#[test]
fn with_the_flush_apart_a_reader_never_sees_a_write_before_it_is_committed() {
    no_write_is_seen_before_its_commit(Flush::Pipelined);
}

/// With the flush apart, checkpoints run on a thread of their own every few commits (not
/// inside a commit once the WAL holds thousands of pages): a handful of commits reaches
/// the database file itself, and the log stays whole.
#[test]
fn with_the_flush_apart_checkpoints_run_beside_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_in_with(dir.path(), Flush::Pipelined).unwrap();
    let db_file = store.path().to_path_buf();
    let engine = LocalEngine::new(store, EngineConfig::default());
    let dev = Actor::person("dev-a");
    engine
        .start_session(&dev, "p", SessionKind::Conversation, Some("s"))
        .unwrap();
    let size = || std::fs::metadata(&db_file).unwrap().len();
    let before = size();
    // 40 lone commits: a few dozen WAL pages, far below any automatic checkpoint's
    // threshold, and more than two rounds of the background one.
    for i in 0..40 {
        let input = DeclareInput {
            pergunta: format!("Q{i}: {}?", "which checkout flow".repeat(10)),
            session_id: "s".into(),
            ..Default::default()
        };
        engine
            .declare(&Actor::agent(Role::Po), "p", &input)
            .unwrap();
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while size() <= before {
        assert!(
            std::time::Instant::now() < deadline,
            "no checkpoint reached {} ({} bytes)",
            db_file.display(),
            size()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(engine);
    let reopened = LocalEngine::new(
        SqliteStore::open_in(dir.path()).unwrap(),
        EngineConfig::default(),
    );
    let all = reopened
        .list(Some("p"), &ListQuery::new(StatusFilter::All).limit(1))
        .unwrap();
    assert_eq!(all.total, 40);
}

fn each_gets_its_own_outcome_and_all_of_it_is_durable(flush: Flush) {
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(LocalEngine::new(
        SqliteStore::open_in_with(dir.path(), flush).unwrap(),
        EngineConfig::default(),
    ));
    let dev = Actor::person("dev-a");
    engine
        .start_session(&dev, "p", SessionKind::Conversation, Some("s"))
        .unwrap();
    let threads: Vec<_> = (0..12)
        .map(|t| {
            let engine = Arc::clone(&engine);
            std::thread::spawn(move || {
                let mut accepted = Vec::new();
                let mut refused = 0;
                for i in 0..40 {
                    // Every fourth declaration is over the limit: refused inside the batch.
                    let pergunta = if i % 4 == 3 {
                        "x".repeat(501)
                    } else {
                        format!("T{t} Q{i}?")
                    };
                    let input = DeclareInput {
                        pergunta,
                        session_id: "s".into(),
                        ..Default::default()
                    };
                    match engine.declare(&Actor::agent(Role::Po), "p", &input) {
                        Ok(q) => {
                            // Answer every other accepted one, racing the other threads' writes.
                            if i % 2 == 0 {
                                engine
                                    .answer(
                                        &Actor::person("dev-a"),
                                        None,
                                        &q.question_id,
                                        &AnswerInput::text("ok"),
                                    )
                                    .unwrap();
                            }
                            accepted.push((q.question_id, i % 2 == 0));
                        }
                        Err(e) => {
                            assert_eq!(e.code(), "text_too_long");
                            refused += 1;
                        }
                    }
                }
                (accepted, refused)
            })
        })
        .collect();
    let mut accepted = Vec::new();
    for t in threads {
        let (a, r) = t.join().unwrap();
        assert_eq!(r, 10);
        accepted.extend(a);
    }
    assert_eq!(accepted.len(), 12 * 30);
    drop(engine);
    // A fresh store on the same file sees every accepted write, and only those.
    let reopened = LocalEngine::new(
        SqliteStore::open_in(dir.path()).unwrap(),
        EngineConfig::default(),
    );
    for (id, answered) in &accepted {
        let q = reopened.question(None, id).unwrap();
        assert_eq!(q.answer.is_some(), *answered, "{id}");
    }
    let all = reopened
        .list(Some("p"), &ListQuery::new(StatusFilter::All).limit(1))
        .unwrap()
        .total;
    assert_eq!(all, accepted.len() as u64);
    let answered = reopened
        .list(Some("p"), &ListQuery::new(StatusFilter::Answered).limit(1))
        .unwrap()
        .total;
    assert_eq!(answered, accepted.iter().filter(|(_, a)| *a).count() as u64);
}

fn no_write_is_seen_before_its_commit(flush: Flush) {
    // Reads have their own connections: a question declared is visible to a read only
    // once its declare call has returned (it was committed), never halfway.
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(LocalEngine::new(
        SqliteStore::open_in_with(dir.path(), flush).unwrap(),
        EngineConfig::default(),
    ));
    engine
        .start_session(
            &Actor::person("dev-a"),
            "p",
            SessionKind::Conversation,
            Some("s"),
        )
        .unwrap();
    let writer = {
        let engine = Arc::clone(&engine);
        std::thread::spawn(move || {
            for i in 0..100 {
                let input = DeclareInput {
                    pergunta: format!("Q{i}?"),
                    session_id: "s".into(),
                    ..Default::default()
                };
                engine
                    .declare(&Actor::agent(Role::Po), "p", &input)
                    .unwrap();
            }
        })
    };
    let mut last = 0;
    while !writer.is_finished() {
        let page = engine
            .list(Some("p"), &ListQuery::new(StatusFilter::Open).limit(1))
            .unwrap();
        // Counts only grow, and every counted question can be read in full.
        assert!(page.total >= last);
        last = page.total;
        if let Some(q) = page.items.first() {
            assert!(engine.question(None, &q.question_id).is_ok());
        }
    }
    writer.join().unwrap();
    assert_eq!(
        engine
            .list(Some("p"), &ListQuery::new(StatusFilter::Open).limit(1))
            .unwrap()
            .total,
        100
    );
}
