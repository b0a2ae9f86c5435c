//! The decision history benchmark (`cargo bench --bench decisions`), plain `fn main`.
//!
//! `OQ_BENCH_QUESTIONS` (500,000) questions in one project, every one answered: 1,000,000
//! events, 500,000 decisions, written straight into the store of a real `oq serve`
//! (`tests/common_server`, SQLite, on 127.0.0.1:0) by the list bench's own filler
//! (`support/queue.rs`). Then each history query below `OQ_BENCH_REPS` times (30),
//! through `LocalSource` (the engine in this process, on the same file) and through
//! `HttpSource` (`GET /projects/loja/decisions` over loopback): p50, p99, max, total.
//!
//! - `newest`: the first page, newest decision first, no filter;
//! - `search_rare`: a word one question holds (`zeppelin`);
//! - `search_common`: a word every question holds (`checkout`);
//! - `since`: the decisions of the last tenth of the fill (`--since`).
//!
//! Every figure is printed as `OQBENCH decisions_<door>_<query>_p50 <value> ms` too.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

#[path = "../tests/common_server/mod.rs"]
mod common_server;
#[path = "support/queue.rs"]
mod queue;

use std::sync::Arc;
use std::time::Instant;

use common_server::{ANA, TestServer, seed};
use oq::engine::{DecisionQuery, EngineConfig, LocalEngine, SqliteStore};
use oq::source::{HttpSource, LocalSource, Source};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn queries(since: i64) -> Vec<(&'static str, DecisionQuery)> {
    let search = |w| DecisionQuery::parse(Some(w), None, None, None).unwrap();
    vec![
        ("newest", DecisionQuery::new()),
        ("search_rare", search("zeppelin")),
        ("search_common", search("checkout")),
        (
            "since",
            DecisionQuery {
                since: Some(since),
                ..DecisionQuery::new()
            },
        ),
    ]
}

async fn measure<S: Source>(label: &str, source: &S, since: i64, reps: usize) {
    // `OQ_BENCH_QUERIES=newest,since` measures only those (a common word takes tens of
    // seconds a call at 1,000,000 events).
    let only = std::env::var("OQ_BENCH_QUERIES").unwrap_or_default();
    let picked = |name: &str| only.is_empty() || only.split(',').any(|n| n == name);
    for (name, query) in queries(since).into_iter().filter(|(n, _)| picked(n)) {
        let mut times = Vec::with_capacity(reps);
        let mut total = 0;
        for _ in 0..reps {
            let t = Instant::now();
            let page = source.decisions(Some("loja"), &query).await.expect(name);
            times.push(t.elapsed());
            total = page.total;
        }
        queue::report("decisions", label, name, total, times);
    }
}

fn main() {
    let questions = env("OQ_BENCH_QUESTIONS", 500_000);
    let reps = env("OQ_BENCH_REPS", 30);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let s = TestServer::start().await;
        let world = seed(&s).await;
        let t = Instant::now();
        let store = SqliteStore::open_in(&s.data_dir).expect("store");
        let since = queue::fill(&store, &world.conversation, ANA, questions, 1);
        println!(
            "filled {questions} questions, all answered ({} events) in {:.1} s",
            questions * 2,
            t.elapsed().as_secs_f64()
        );
        let engine = Arc::new(LocalEngine::new(store, EngineConfig::default()));
        let local = LocalSource::new(engine, ANA);
        measure("local", &local, since, reps).await;
        let http = HttpSource::new(&s.base, s.token(ANA)).unwrap();
        measure("http", &http, since, reps).await;
        s.stop().await;
    });
}
