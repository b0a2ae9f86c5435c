//! Several `oq serve` on one real PostgreSQL behave as one server: a race to answer
//! across servers gives one 200 and one 409; a change made through one server reaches
//! the event streams of the others, and `Last-Event-ID` resumes on any of them without a
//! gap or a duplicate; the database stopped (or crashed) and restarted under load loses
//! and doubles no acknowledged answer, while writes meanwhile are 503 and `/healthz` says
//! so.
#![allow(clippy::unwrap_used)]

mod common_server;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use common_server::common_pg::{self, Durability, PgCluster, PgDb};
use common_server::*;
use futures_util::StreamExt;
use oq::server::ServerOptions;
use serde_json::{Value, json};

fn options() -> ServerOptions {
    ServerOptions {
        heartbeat: Duration::from_millis(200),
        // Long: cross-server changes must come through LISTEN/NOTIFY, not the poller.
        poll: Duration::from_secs(3600),
        ..ServerOptions::default()
    }
}

/// `n` servers on one fresh database of the shared cluster, with the same users.
async fn servers(n: usize) -> (Arc<PgDb>, Vec<TestServer>) {
    let db = tokio::task::spawn_blocking(|| common_pg::shared().database());
    servers_on(Arc::new(db.await.unwrap()), n).await
}

async fn servers_on(db: Arc<PgDb>, n: usize) -> (Arc<PgDb>, Vec<TestServer>) {
    let tokens = new_tokens();
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(TestServer::start_on(options(), Some(db.clone()), tokens.clone()).await);
    }
    (db, out)
}

async fn declare(s: &TestServer, session: &str, text: &str) -> String {
    id_of(
        &s.post(
            CRIATIVO,
            "/projects/loja/open-questions",
            json!({"pergunta": text, "sugestao": "yes", "afeta": {}, "sessionId": session}),
        )
        .await,
        "questionId",
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_racing_to_answer_give_one_200_and_one_409() {
    if !common_pg::or_skip("two_servers_racing_to_answer_give_one_200_and_one_409") {
        return;
    }
    let (_db, s) = servers(2).await;
    let w = seed(&s[0]).await;
    for i in 0..20 {
        let q = declare(&s[i % 2], &w.conversation, &format!("Race {i}?")).await;
        let path = format!("/projects/loja/open-questions/{q}/answer");
        let (a, b) = tokio::join!(
            s[0].post(ANA, &path, json!({"resposta": format!("from A {i}")})),
            s[1].post(ANA, &path, json!({"resposta": format!("from B {i}")})),
        );
        let mut codes = [a.status.as_u16(), b.status.as_u16()];
        codes.sort();
        assert_eq!(codes, [200, 409], "{a:?} / {b:?}");
        let loser = if a.status == 200 { &b } else { &a };
        assert_eq!(loser.body["code"], "pergunta_ja_respondida");
        let winner = if a.status == 200 { &a } else { &b };
        // Both servers now tell the same answer.
        for server in &s {
            let r = server
                .get(ANA, &format!("/projects/loja/open-questions/{q}"))
                .await;
            assert_eq!(
                must(&r, 200)["answer"]["resposta"],
                winner.body["answer"]["resposta"]
            );
        }
    }
    for server in s {
        server.stop().await;
    }
}

/// A minimal reader of one event stream.
struct Stream {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buf: String,
}

impl Stream {
    async fn open(s: &TestServer, last_event_id: Option<i64>) -> Stream {
        let mut req = s
            .client
            .get(s.url("/projects/loja/events"))
            .bearer_auth(s.token(ANA));
        if let Some(id) = last_event_id {
            req = req.header("last-event-id", id.to_string());
        }
        let r = req.send().await.unwrap();
        assert_eq!(r.status(), 200);
        Stream {
            body: r.bytes_stream().map(|c| c.map(|b| b.to_vec())).boxed(),
            buf: String::new(),
        }
    }

    /// The next tip's id (skipping heartbeats); a hang fails after a generous bound.
    async fn next_id(&mut self) -> i64 {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let raw: String = self.buf.drain(..end + 2).collect();
                let id = raw.lines().find_map(|l| l.strip_prefix("id:"));
                let data = raw.lines().find_map(|l| l.strip_prefix("data:"));
                if let (Some(id), Some(data)) = (id, data) {
                    let id: i64 = id.trim().parse().unwrap();
                    let data: Value = serde_json::from_str(data.trim()).unwrap();
                    assert_eq!(data["revision"], id);
                    return id;
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.body.next())
                .await
                .expect("the stream went silent")
                .expect("the stream ended")
                .unwrap();
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

async fn revision(s: &TestServer) -> i64 {
    let r = s.get(ANA, "/projects/loja/revision").await;
    must(&r, 200)["revision"].as_i64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn changes_through_one_server_reach_the_others_streams_and_resume_on_any() {
    if !common_pg::or_skip("changes_through_one_server_reach_the_others_streams_and_resume_on_any")
    {
        return;
    }
    let (_db, s) = servers(3).await;
    let w = seed(&s[0]).await;
    let start = revision(&s[1]).await;
    let mut on_b = Stream::open(&s[1], None).await;
    let mut on_c = Stream::open(&s[2], None).await;
    // A change through A reaches B's and C's subscribers (LISTEN/NOTIFY: the poller is
    // off for this test).
    declare(&s[0], &w.conversation, "Seen everywhere?").await;
    assert_eq!(on_b.next_id().await, start + 1);
    assert_eq!(on_c.next_id().await, start + 1);
    // Changes through all three, in turn; B's subscriber sees each once, in order.
    for i in 0..6 {
        declare(&s[i % 3], &w.conversation, &format!("Turn {i}?")).await;
    }
    let mut seen = vec![start + 1];
    for _ in 0..3 {
        seen.push(on_b.next_id().await);
    }
    drop(on_b);
    // More while nobody listens on B, then resume on C from the last id B saw.
    for i in 0..4 {
        declare(&s[(i + 1) % 3], &w.conversation, &format!("Away {i}?")).await;
    }
    let last = *seen.last().unwrap();
    let mut resumed = Stream::open(&s[2], Some(last)).await;
    let top = revision(&s[0]).await;
    while *seen.last().unwrap() < top {
        seen.push(resumed.next_id().await);
    }
    let expected: Vec<i64> = (start + 1..=top).collect();
    assert_eq!(seen, expected, "no gap, no duplicate across servers");
    // And on A, resuming from the very start replays the same ids.
    let mut replay = Stream::open(&s[0], Some(start)).await;
    for want in start + 1..=top {
        assert_eq!(replay.next_id().await, want);
    }
    drop((on_c, resumed, replay));
    for server in s {
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_database_stopped_and_restarted_under_load_loses_and_doubles_no_answer() {
    database_down_under_load(
        "the_database_stopped_and_restarted_under_load_loses_and_doubles_no_answer",
        PgCluster::stop,
    )
    .await
}

/// A crash of the database, not a clean stop: what was not yet flushed to its WAL is gone
/// when it recovers, so an answer acknowledged before its flush (an asynchronous commit,
/// or a reply sent before COMMIT returned) would be lost here.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_database_crashed_under_load_loses_and_doubles_no_acknowledged_answer() {
    database_down_under_load(
        "the_database_crashed_under_load_loses_and_doubles_no_acknowledged_answer",
        PgCluster::crash,
    )
    .await
}

async fn database_down_under_load(test: &str, down: fn(&mut PgCluster)) {
    if !common_pg::or_skip(test) {
        return;
    }
    // A cluster of this test's own: it is stopped and started again.
    let cluster = Arc::new(std::sync::Mutex::new(
        tokio::task::spawn_blocking(|| PgCluster::start(Durability::Test))
            .await
            .unwrap(),
    ));
    let on = cluster.clone();
    let db = tokio::task::spawn_blocking(move || on.lock().unwrap().database());
    let (db, s) = servers_on(Arc::new(db.await.unwrap()), 2).await;
    let at = |f: fn(&mut PgCluster)| {
        let c = cluster.clone();
        tokio::task::spawn_blocking(move || f(&mut c.lock().unwrap()))
    };
    let s = Arc::new(s);
    let w = seed(&s[0]).await;
    const N: usize = 40;
    let mut questions = Vec::new();
    for i in 0..N {
        questions.push(declare(&s[i % 2], &w.conversation, &format!("Under load {i}?")).await);
    }
    let acked = Arc::new(tokio::sync::Mutex::new(HashMap::<String, String>::new()));
    let unavailable = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut clients = Vec::new();
    for (c, chunk) in questions.chunks(N / 4).enumerate() {
        let (s, acked, unavailable) = (s.clone(), acked.clone(), unavailable.clone());
        let chunk = chunk.to_vec();
        clients.push(tokio::spawn(async move {
            for (i, q) in chunk.iter().enumerate() {
                let text = format!("client {c} answer {i}");
                let key = format!("k-{c}-{i}");
                let server = &s[(c + i) % 2];
                let path = format!("/projects/loja/open-questions/{q}/answer");
                // Retried with the same key until the store takes it (bounded).
                let mut tries = 0;
                loop {
                    tries += 1;
                    assert!(tries < 600, "{q}: no answer within the bound");
                    let r = server
                        .client
                        .post(server.url(&path))
                        .bearer_auth(server.token(ANA))
                        .header("idempotency-key", &key)
                        .json(&json!({"resposta": text}))
                        .send()
                        .await;
                    let Ok(r) = r else {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    };
                    let r = reply(r).await;
                    match r.status.as_u16() {
                        200 => {
                            assert_eq!(r.body["answer"]["resposta"], text.as_str(), "{r:?}");
                            acked.lock().await.insert(q.clone(), text.clone());
                            break;
                        }
                        503 => {
                            assert_eq!(r.body["code"], "store_unavailable", "{r:?}");
                            unavailable.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                        _ => panic!("{q}: {r:?}"),
                    }
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }
    // Once some answers are in, stop the database under the clients' feet.
    while acked.lock().await.len() < N / 4 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    at(down).await.unwrap();
    let health = s[0]
        .call(Auth::None, reqwest::Method::GET, "/healthz", None)
        .await;
    assert_eq!(health.status.as_u16(), 503, "{health:?}");
    assert_eq!(health.body["store"]["reachable"], false);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    at(PgCluster::resume).await.unwrap();
    for c in clients {
        c.await.unwrap();
    }
    assert!(
        unavailable.load(std::sync::atomic::Ordering::Relaxed) > 0,
        "the clients met the database down (503)"
    );
    let health = s[1]
        .call(Auth::None, reqwest::Method::GET, "/healthz", None)
        .await;
    assert_eq!(must(&health, 200)["store"]["reachable"], true);
    // Every acknowledged answer is there, exactly as acknowledged, and once.
    let acked = acked.lock().await.clone();
    assert_eq!(acked.len(), N);
    let e = s[0].engine();
    for (q, text) in &acked {
        let got = e.question(Some("loja"), q).unwrap();
        let answer = got
            .answer
            .unwrap_or_else(|| panic!("{q}: the acknowledged answer {text:?} was lost"));
        assert_eq!(&answer.resposta, text);
    }
    let answered = e
        .events_after(None, 0, 100_000)
        .unwrap()
        .into_iter()
        .filter(|ev| ev.event.type_name() == "open_question.answered")
        .count();
    assert_eq!(answered, N, "no answer doubled");
    drop(e);
    let s = Arc::try_unwrap(s).ok().unwrap();
    for server in s {
        server.stop().await;
    }
    tokio::task::spawn_blocking(move || drop(db)).await.unwrap();
    at(PgCluster::stop).await.unwrap();
}
