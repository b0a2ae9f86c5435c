//! The memory of answers benchmark (`cargo bench --bench similar`), plain `fn main`:
//! the similar-answer lookup run on opening a question (issue 17 part 2, target < 5 ms).
//!
//! `OQ_BENCH_QUESTIONS` (10,000) questions in one project, every one answered, written
//! straight into a real SQLite store by the list bench's filler (`support/queue.rs`):
//! the texts differ only by three numbers, so every word of a lookup is one almost every
//! question holds — the lookup's worst case, each word's walk stopping at its bound.
//! Then, `OQ_BENCH_REPS` times (200) each, on a new open question:
//!
//! - `same`: the text of an answered question, differently cased and punctuated;
//! - `near`: a word of one changed (similar, above the threshold);
//! - `none`: a text no answered question resembles (the walk finds nothing to offer);
//! - `open_same`: what opening the question costs in all (`LocalSource::question`: the
//!   question read, then the lookup), on `same`.
//!
//! Every figure is printed as `OQBENCH similar_<door>_<query>_p50 <value> ms` too.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

#[path = "support/queue.rs"]
mod queue;

use std::sync::Arc;
use std::time::Instant;

use oq::domain::{Actor, DeclareInput, Question, Role, SessionKind};
use oq::engine::{EngineConfig, LocalEngine, SqliteStore};
use oq::source::{LocalSource, Source};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn declare(e: &LocalEngine, session: &str, text: &str) -> Question {
    let input = DeclareInput {
        pergunta: text.into(),
        session_id: session.into(),
        ..Default::default()
    };
    e.declare(&Actor::agent(Role::Po), "loja", &input).unwrap()
}

fn main() {
    let questions = env("OQ_BENCH_QUESTIONS", 10_000);
    let reps = env("OQ_BENCH_REPS", 200);
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_in(dir.path()).expect("store");
    let engine = Arc::new(LocalEngine::new(store, EngineConfig::default()));
    let session = engine
        .start_session(
            &Actor::person("ana"),
            "loja",
            SessionKind::Conversation,
            None,
        )
        .unwrap()
        .session_id;
    let t = Instant::now();
    let fill_store = SqliteStore::open_in(dir.path()).expect("store");
    queue::fill(&fill_store, &session, "ana", questions, 1);
    println!(
        "filled {questions} questions, all answered ({} events) in {:.1} s",
        questions * 2,
        t.elapsed().as_secs_f64()
    );
    let n = questions / 2;
    let cases = [
        (
            "same",
            format!(
                "question {n} SHOULD the checkout accept payment method {} in region {}",
                n % 17,
                n % 5
            ),
        ),
        (
            "near",
            format!(
                "Question {n}: should the checkout accept payment methods {} in region {}?",
                n % 17,
                n % 5
            ),
        ),
        (
            "none",
            "Where does the zeppelin hangar go next winter?".into(),
        ),
    ];
    let mut opened = None;
    for (name, text) in cases {
        let q = declare(&engine, &session, &text);
        let mut times = Vec::with_capacity(reps);
        let mut found = 0;
        for _ in 0..reps {
            let t = Instant::now();
            let hint = engine.similar_answer(&q).unwrap();
            times.push(t.elapsed());
            found = u64::from(hint.is_some());
        }
        assert_eq!(found == 1, name != "none", "{name}: the lookup's answer");
        queue::report("similar", "local", name, found, times);
        if name == "same" {
            opened = Some(q.question_id);
        }
    }
    let id = opened.unwrap();
    let source = LocalSource::new(engine, "ana");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps {
            let t = Instant::now();
            let q = source.question(Some("loja"), &id).await.unwrap();
            times.push(t.elapsed());
            assert!(q.similar_answer.is_some());
        }
        queue::report("similar", "local", "open_same", 1, times);
    });
}
