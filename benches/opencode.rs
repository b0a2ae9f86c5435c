//! The OpenCode benchmark (`cargo bench --bench opencode`), plain `fn main`, no harness.
//!
//! Against a REAL OpenCode server (the tests' harness: `opencode-linux-x64` from npm, our
//! scripted model, loopback). Needs `npm`; without it, it prints why and exits.
//!
//! 1. Listing: `OQ_BENCH_PENDING` (100) sessions each ask one question, so that many
//!    requests are pending in one directory. Then, side by side in one run, each timed
//!    `OQ_BENCH_LIST_REPS` (30) times, reporting p50 and max of "all pending questions
//!    listed":
//!    - OpenCode's own `GET /question?directory=` (one request);
//!    - oq direct: `OpencodeSource::list` (the `--source opencode+http://…` door), every
//!      page;
//!    - oq bridged: an `oq serve` with an `[[opencode]]` upstream, every page of
//!      `GET /projects/loja/open-questions` over HTTP (50 a page).
//! 2. Import delay: `OQ_BENCH_ASKS` (10) more questions are asked one at a time while a
//!    raw reader follows `/event?directory=` and the bridge runs; per question, the time
//!    from the raw reader's `question.asked` to the question being readable in oq's store
//!    (a second engine on the same store, polled every millisecond), p50 and max.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/bridge_server/mod.rs"]
mod bridge_server;
#[path = "../tests/opencode/mod.rs"]
mod opencode;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use oq::engine::{EngineConfig, ListQuery, LocalEngine, SqliteStore, StatusFilter};
use oq::opencode::{Event, Scope, events};
use oq::server::config::UpstreamTiming;
use oq::source::{OpencodeSource, Source};
use serde_json::json;

use bridge_server::{BridgeServer, PROJECT, Upstreamed, until};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn stats(mut v: Vec<Duration>) -> String {
    v.sort();
    let p50 = v[v.len() / 2];
    let max = v[v.len() - 1];
    format!(
        "p50 {:>8.2} ms  max {:>8.2} ms  (n={})",
        p50.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3,
        v.len()
    )
}

fn ask(i: usize, tag: &str) -> serde_json::Value {
    json!({ "questions": [{
        "question": format!("Bench {tag} question {i}: which option?"),
        "header": "Bench",
        "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}],
        "multiple": false
    }]})
}

fn main() {
    if !opencode::npm_available() {
        println!("opencode bench: SKIPPED (npm not found)");
        return;
    }
    let pending = env("OQ_BENCH_PENDING", 100);
    let reps = env("OQ_BENCH_LIST_REPS", 30);
    let asks = env("OQ_BENCH_ASKS", 10);
    let peer = opencode::Peer::start(None).expect("opencode");
    let dir = peer.directory("bench");
    let client = peer.client();

    // 1. `pending` questions pending upstream.
    let started = Instant::now();
    let indices: Vec<usize> = (0..pending).collect();
    std::thread::scope(|s| {
        for chunk in indices.chunks(10) {
            let (peer, dir) = (&peer, &dir);
            s.spawn(move || {
                for i in chunk {
                    peer.prompt(dir, Some(&ask(*i, "pending")));
                }
            });
        }
    });
    until(Duration::from_secs(300), || {
        (opencode::block_on(client.list(&dir)).ok()?.len() >= pending).then_some(())
    })
    .expect("all questions pending");
    println!(
        "setup: {pending} questions pending upstream after {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let direct =
        OpencodeSource::new(&peer.base, vec![dir.clone()], "ana", None).expect("direct source");
    let s = BridgeServer::start(
        &Upstreamed {
            url: &peer.base,
            directories: &[&dir],
            auto_delegate: false,
            window_seconds: 30,
            timing: UpstreamTiming::default(),
            admins: None,
        },
        None,
    );
    let http = reqwest::Client::new();
    let list_bridged = || {
        s.rt.block_on(async {
            let mut n = 0;
            let mut cursor: Option<String> = None;
            loop {
                let mut url = format!("{}/projects/{PROJECT}/open-questions?limit=50", s.base);
                if let Some(c) = &cursor {
                    url.push_str(&format!("&cursor={c}"));
                }
                let v: serde_json::Value = http
                    .get(url)
                    .bearer_auth(&s.ana)
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                let items = v["items"].as_array().map(|a| a.len()).unwrap_or(0);
                n += items;
                match v["cursor"].as_str() {
                    Some(c) if items > 0 => cursor = Some(c.to_string()),
                    _ => return n,
                }
            }
        })
    };
    until(Duration::from_secs(120), || {
        (list_bridged() >= pending).then_some(())
    })
    .expect("all imported");
    let list_direct = || {
        rt.block_on(async {
            let mut n = 0;
            let mut cursor: Option<String> = None;
            loop {
                let page = direct
                    .list(
                        None,
                        &ListQuery::new(StatusFilter::Open).after(cursor.as_deref()),
                    )
                    .await
                    .unwrap();
                n += page.items.len();
                match page.cursor {
                    Some(c) if !page.items.is_empty() => cursor = Some(c),
                    _ => return n,
                }
            }
        })
    };
    let list_upstream = || opencode::block_on(client.list(&dir)).unwrap().len();

    let (mut up, mut di, mut br) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        list_upstream();
        list_direct();
        list_bridged();
    }
    for _ in 0..reps {
        let t = Instant::now();
        assert!(list_upstream() >= pending);
        up.push(t.elapsed());
        let t = Instant::now();
        assert!(list_direct() >= pending);
        di.push(t.elapsed());
        let t = Instant::now();
        assert!(list_bridged() >= pending);
        br.push(t.elapsed());
    }
    println!("listing {pending} pending questions ({reps} reps each, interleaved):");
    println!("  OpenCode GET /question   {}", stats(up));
    println!("  oq direct (source)       {}", stats(di));
    println!("  oq bridged (oq serve)    {}", stats(br));

    // 2. question.asked → oq's store, against a raw reader.
    let seen: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let sink = seen.clone();
    let raw_client = peer.client();
    let raw_dir = dir.clone();
    rt.spawn(async move {
        let mut stream = events::subscribe(&raw_client, Scope::Directory(&raw_dir))
            .await
            .unwrap();
        while let Some(Ok(env)) = stream.next().await {
            if let Event::QuestionAsked(r) = env.event {
                sink.lock().unwrap().push((r.id, Instant::now()));
            }
        }
    });
    let store = LocalEngine::new(
        SqliteStore::open_in(&s.dir.path().join("data")).unwrap(),
        EngineConfig::default(),
    );
    let mut delays = Vec::new();
    for i in 0..asks {
        let before = seen.lock().unwrap().len();
        peer.prompt(&dir, Some(&ask(i, "delay")));
        let (id, at) = until(Duration::from_secs(60), || {
            seen.lock().unwrap().get(before).cloned()
        })
        .expect("raw reader saw question.asked");
        let stored = loop {
            if store.question(Some(PROJECT), &id).is_ok() {
                break Instant::now();
            }
            if at.elapsed() > Duration::from_secs(30) {
                panic!("{id} never reached oq's store");
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        delays.push(stored.saturating_duration_since(at));
    }
    println!("question.asked (raw reader) → in oq's store (bridge), {asks} questions:");
    println!("  delay                    {}", stats(delays));
    s.stop();
}
