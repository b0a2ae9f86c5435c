//! The whole-queue benchmark (`cargo bench --bench list`), plain `fn main`, no harness.
//!
//! 100,000 questions in one project (every tenth answered), written straight into the
//! store of a real `oq serve` (`tests/common_server`, SQLite, on 127.0.0.1:0) before it
//! is measured; then each list query below `OQ_BENCH_REPS` times (30), through
//! `LocalSource` (the engine in this process, on the same file) and through `HttpSource`
//! (the server, over loopback HTTP): p50, p99, max, and the total the query found.
//!
//! - `newest`: the first page, newest first (the whole open set ordered);
//! - `asker`: the first page by asker (the open set's `(project_id, autor, declared_seq)`);
//! - `search rare`: a word in one question only, beyond every first page;
//! - `search common`: two words most questions hold (counted to the cap, `1000+`);
//! - `search answer`: a word only answers hold, over open and answered (`status=all`);
//! - `search + newest`: a common word, newest first.
//!
//! Every figure is printed as `OQBENCH <metric> <value> <unit>` too.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

#[path = "../tests/common_server/mod.rs"]
mod common_server;
#[path = "support/queue.rs"]
mod queue;

use std::sync::Arc;
use std::time::Instant;

use common_server::{ANA, TestServer, seed};
use oq::engine::{EngineConfig, ListQuery, LocalEngine, Sort, SqliteStore, StatusFilter};
use oq::source::{HttpSource, LocalSource, Source};

const QUESTIONS: usize = 100_000;

fn queries() -> Vec<(&'static str, ListQuery)> {
    let open = || ListQuery::new(StatusFilter::Open);
    vec![
        ("newest", open().sorted(Sort::Newest)),
        ("asker", open().sorted(Sort::Asker)),
        ("search_rare", open().search("zeppelin").unwrap()),
        ("search_common", open().search("checkout region").unwrap()),
        (
            "search_answer",
            ListQuery::new(StatusFilter::All).search("review").unwrap(),
        ),
        (
            "search_newest",
            open().search("payment").unwrap().sorted(Sort::Newest),
        ),
    ]
}

async fn measure<S: Source>(label: &str, source: &S, reps: usize) {
    for (name, query) in queries() {
        let mut times = Vec::with_capacity(reps);
        let (mut total, mut at_least) = (0, false);
        for _ in 0..reps {
            let t = Instant::now();
            let page = source.list(Some("loja"), &query).await.expect("list");
            times.push(t.elapsed());
            (total, at_least) = (page.total, page.total_is_lower_bound);
        }
        queue::report("list", label, name, total, times);
        if at_least {
            println!("      ({name}: total {total}+, the search's count stopped at the cap)");
        }
    }
}

fn main() {
    let reps: usize = std::env::var("OQ_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let s = TestServer::start().await;
        let world = seed(&s).await;
        let t = Instant::now();
        let store = SqliteStore::open_in(&s.data_dir).expect("store");
        queue::fill(&store, &world.conversation, ANA, QUESTIONS, 10);
        println!(
            "filled {QUESTIONS} questions ({} answered) in {:.1} s",
            QUESTIONS / 10,
            t.elapsed().as_secs_f64()
        );
        let engine = Arc::new(LocalEngine::new(store, EngineConfig::default()));
        let local = LocalSource::new(engine, ANA);
        measure("local", &local, reps).await;
        let http = HttpSource::new(&s.base, s.token(ANA)).unwrap();
        measure("http", &http, reps).await;
        s.stop().await;
    });
}
