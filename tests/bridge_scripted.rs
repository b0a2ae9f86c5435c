//! The bridge against a scripted upstream: a tiny axum server in this file imitates
//! OpenCode's question routes (list, reply, reject, session, the event stream) and
//! answers POSTs as each test chooses — 200, 404, 422, 500, a hang (a timeout after
//! dispatch), or not at all because it is gone (connection refused) — while the test
//! drives its event stream. Waits poll a condition under a deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bridge_server;

use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::response::sse::{Event as SseEvent, Sse};
use axum::routing::{get, post};
use futures_util::Stream;
use oq::bridge::connection::End;
use oq::server::config::UpstreamTiming;
use reqwest::Method;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use bridge_server::{BridgeServer, Upstreamed, until};

const DEADLINE: Duration = Duration::from_secs(20);
const DIR: &str = "/srv/scripted/work";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Status(u16),
    /// Accept and never answer: the bridge's POST times out after dispatch.
    Hang,
}

#[derive(Default)]
struct Script {
    pending: Vec<Value>,
    mode: Option<Mode>,
    /// Every POST received: (request id, "reply"|"reject", body).
    posts: Vec<(String, String, Value)>,
    streams: Vec<mpsc::UnboundedSender<Value>>,
    /// Send nothing on new streams, not even `server.connected` (a stall).
    silent: bool,
}

type Shared = Arc<Mutex<Script>>;

#[derive(serde::Deserialize)]
struct Dir {
    #[allow(dead_code)]
    directory: Option<String>,
}

async fn list(State(s): State<Shared>, Query(_): Query<Dir>) -> axum::Json<Value> {
    axum::Json(Value::Array(s.lock().unwrap().pending.clone()))
}

async fn settle(s: &Shared, id: &str, kind: &str, body: Value) -> (axum::http::StatusCode, String) {
    let mode = {
        let mut g = s.lock().unwrap();
        g.posts
            .push((id.to_string(), kind.to_string(), body.clone()));
        g.mode.unwrap_or(Mode::Status(200))
    };
    match mode {
        Mode::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            (axum::http::StatusCode::OK, "true".into())
        }
        Mode::Status(code) => {
            if code == 200 {
                let mut g = s.lock().unwrap();
                g.pending.retain(|r| r["id"] != id);
                let ev = json!({"type": if kind == "reply" {"question.replied"} else {"question.rejected"},
                    "properties": {"sessionID": "ses_1", "requestID": id, "answers": body["answers"].clone()}});
                g.streams.retain(|t| t.send(ev.clone()).is_ok());
            }
            (
                axum::http::StatusCode::from_u16(code).unwrap(),
                if code == 200 {
                    "true".into()
                } else {
                    json!({"message": "scripted"}).to_string()
                },
            )
        }
    }
}

async fn reply(
    State(s): State<Shared>,
    Path(id): Path<String>,
    axum::Json(body): axum::Json<Value>,
) -> (axum::http::StatusCode, String) {
    settle(&s, &id, "reply", body).await
}

async fn reject(
    State(s): State<Shared>,
    Path(id): Path<String>,
) -> (axum::http::StatusCode, String) {
    settle(&s, &id, "reject", Value::Null).await
}

async fn session(Path(id): Path<String>) -> axum::Json<Value> {
    axum::Json(json!({"id": id, "directory": DIR, "title": "t"}))
}

async fn events(State(s): State<Shared>) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let (tx, rx) = mpsc::unbounded_channel::<Value>();
    {
        let mut g = s.lock().unwrap();
        if !g.silent {
            let _ = tx.send(json!({"type": "server.connected", "properties": {}}));
        }
        g.streams.push(tx);
    }
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        let v = rx.recv().await?;
        Some((Ok(SseEvent::default().data(v.to_string())), rx))
    });
    Sse::new(stream)
}

struct Upstream {
    script: Shared,
    port: u16,
    task: tokio::task::JoinHandle<()>,
}

/// Starts the scripted upstream on `port` (0: any) on `rt`.
fn start_upstream(rt: &tokio::runtime::Runtime, script: Shared, port: u16) -> Upstream {
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let app = Router::new()
            .route("/question", get(list))
            .route("/question/{id}/reply", post(reply))
            .route("/question/{id}/reject", post(reject))
            .route("/session/{id}", get(session))
            .route("/event", get(events))
            .with_state(script.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Upstream { script, port, task }
    })
}

fn request(id: &str) -> Value {
    json!({"id": id, "sessionID": "ses_1", "questions": [{"question": format!("Question {id}?"), "header": "H",
        "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}], "multiple": false}]})
}

fn emit(script: &Shared, ev: Value) {
    script
        .lock()
        .unwrap()
        .streams
        .retain(|t| t.send(ev.clone()).is_ok());
}

fn posts(script: &Shared) -> usize {
    script.lock().unwrap().posts.len()
}

/// A bridge on a scripted upstream (the upstream runs on the bridge's runtime).
fn setup(
    pending: &[&str],
    auto: bool,
    window: u64,
    timing: UpstreamTiming,
) -> (BridgeServer, Upstream) {
    let requests = pending.iter().map(|id| request(id)).collect();
    setup_with(requests, None, auto, window, timing)
}

/// [`setup`] with these pending requests, on `data_dir` when given.
fn setup_with(
    requests: Vec<Value>,
    data_dir: Option<&std::path::Path>,
    auto: bool,
    window: u64,
    timing: UpstreamTiming,
) -> (BridgeServer, Upstream) {
    // A placeholder runtime for the upstream first, so the bridge gets its URL.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let script: Shared = Arc::new(Mutex::new(Script {
        pending: requests,
        ..Script::default()
    }));
    let up = start_upstream(&rt, script, 0);
    let url = format!("http://127.0.0.1:{}", up.port);
    let s = BridgeServer::start(
        &Upstreamed {
            url: &url,
            directories: &[DIR],
            auto_delegate: auto,
            window_seconds: window,
            timing,
        },
        data_dir,
    );
    // Keep the upstream's runtime alive with the test.
    std::mem::forget(rt);
    (s, up)
}

fn fast() -> UpstreamTiming {
    UpstreamTiming {
        stall: Duration::from_secs(30),
        post_timeout: Duration::from_millis(500),
        subscribe_timeout: Duration::from_secs(5),
        backoff_min: Duration::from_millis(20),
        backoff_max: Duration::from_millis(100),
    }
}

fn open_ids(s: &BridgeServer) -> Vec<String> {
    s.open_questions()
        .iter()
        .map(|q| q["questionId"].as_str().unwrap().to_string())
        .collect()
}

fn wait_open(s: &BridgeServer, id: &str) {
    until(DEADLINE, || {
        open_ids(s).contains(&id.to_string()).then_some(())
    })
    .unwrap_or_else(|| panic!("{id} never imported"));
}

fn wait_closed(s: &BridgeServer, id: &str) -> Value {
    until(DEADLINE, || {
        Some(s.question(id)).filter(|q| q["status"] == "closed")
    })
    .unwrap_or_else(|| panic!("{id} never closed"))
}

/// A session with a bridge id that someone else made (in a store written before the
/// server kept `oc-` ids for the bridge, or by the local CLI on the server's store) is
/// not the bridge's: its requests are not imported under that author, in that project or
/// another, while the other sessions' requests are.
#[test]
fn a_bridge_session_someone_else_made_gets_no_question() {
    use oq::domain::{Actor, SessionKind};
    let data = tempfile::tempdir().unwrap();
    {
        let e = oq::engine::LocalEngine::new(
            oq::engine::SqliteStore::open_in(data.path()).unwrap(),
            oq::engine::EngineConfig::default(),
        );
        let squat = |who: &str, project: &str, session: &str| {
            e.start_session(
                &Actor::person(who),
                project,
                SessionKind::Conversation,
                Some(session),
            )
            .unwrap();
        };
        squat("mallory", bridge_server::PROJECT, "oc-oc-ses_1");
        squat("caio", "outro", "oc-oc-ses_2");
    }
    let in_session = |id: &str, session: &str| {
        let mut r = request(id);
        r["sessionID"] = json!(session);
        r
    };
    let requests = vec![
        request("que_a"),
        in_session("que_b", "ses_2"),
        in_session("que_c", "ses_3"),
    ];
    let (s, up) = setup_with(requests, Some(data.path()), false, 30, fast());
    wait_open(&s, "que_c");
    assert_eq!(s.question("que_c")["sessionAuthor"], "ana");
    let open = open_ids(&s);
    assert!(!open.contains(&"que_a".to_string()), "{open:?}");
    assert!(!open.contains(&"que_b".to_string()), "{open:?}");
    let (st, outro) = s.call(
        &s.caio,
        Method::GET,
        "/projects/outro/open-questions?status=all",
        None,
    );
    assert_eq!(st, 200);
    assert_eq!(outro["total"], 0, "{outro}");
    assert_eq!(posts(&up.script), 0);
    s.stop();
}

#[test]
fn imports_and_keeps_in_sync_with_replied_rejected_and_missing() {
    let (s, up) = setup(&["que_a", "que_b", "que_c"], false, 30, fast());
    for id in ["que_a", "que_b", "que_c"] {
        wait_open(&s, id);
    }
    let q = s.question("que_a");
    assert_eq!(q["source"], "opencode");
    assert_eq!(q["autor"], "opencode");
    // Asked on the stream: imported.
    up.script.lock().unwrap().pending.push(request("que_d"));
    emit(
        &up.script,
        json!({"type": "question.asked", "properties": request("que_d")}),
    );
    wait_open(&s, "que_d");
    // Replied and rejected upstream: closed External.
    emit(
        &up.script,
        json!({"type": "question.replied", "properties": {"sessionID": "ses_1", "requestID": "que_a", "answers": [["A"]]}}),
    );
    emit(
        &up.script,
        json!({"type": "question.rejected", "properties": {"sessionID": "ses_1", "requestID": "que_b"}}),
    );
    assert_eq!(wait_closed(&s, "que_a")["closed"]["reason"], "external");
    assert_eq!(wait_closed(&s, "que_b")["closed"]["reason"], "external");
    // Missing from a successful list (after a reconnect's rehydrate): closed External.
    up.script
        .lock()
        .unwrap()
        .pending
        .retain(|r| r["id"] != "que_c");
    let u = s.upstream();
    assert!(u.end_connection(End::StreamError("test".into())));
    assert_eq!(wait_closed(&s, "que_c")["closed"]["reason"], "external");
    assert!(open_ids(&s).contains(&"que_d".to_string()));
    // Orphaned: the session was aborted.
    emit(
        &up.script,
        json!({"type": "session.error", "properties": {"sessionID": "ses_1", "error": {"name": "MessageAbortedError"}}}),
    );
    until(DEADLINE, || {
        (s.question("que_d")["orphaned"] == true).then_some(())
    })
    .expect("orphaned");
    // A non-member sees no bridge.
    let (st, _) = s.call(&s.caio, Method::GET, "/api/question-auto-delegate", None);
    assert_eq!(st, 404);
    assert_eq!(posts(&up.script), 0);
    s.stop();
}

#[test]
fn a_manual_answer_racing_the_timer_loses_cleanly_and_upstream_sees_one_post() {
    let (s, up) = setup(
        &["que_r"],
        true,
        1,
        UpstreamTiming {
            post_timeout: Duration::from_secs(10),
            ..fast()
        },
    );
    wait_open(&s, "que_r");
    // The timer's POST hangs upstream: the claim is the timer's while a person answers.
    up.script.lock().unwrap().mode = Some(Mode::Hang);
    until(DEADLINE, || (posts(&up.script) == 1).then_some(())).expect("the timer posted");
    let (st, b) = s.answer("que_r", json!({"answers": [["A"]]}));
    assert_eq!(st, 409, "{b}");
    assert_eq!(b["code"], "question_submission_claimed");
    assert_eq!(posts(&up.script), 1);
    assert_eq!(s.state_of("que_r").unwrap()["claimant"], "auto");
    s.stop();
}

#[test]
fn a_definitive_refusal_releases_and_pauses_and_a_retry_goes_through() {
    let (s, up) = setup(&["que_x"], false, 30, fast());
    wait_open(&s, "que_x");
    up.script.lock().unwrap().mode = Some(Mode::Status(422));
    let (st, b) = s.answer("que_x", json!({"answers": [["B"]]}));
    assert_eq!(st, 502, "{b}");
    assert_eq!(b["code"], "upstream_refused");
    let r = s.state_of("que_x").unwrap();
    assert_eq!(r["state"], "paused");
    assert_eq!(r["pauseReason"], "user");
    assert_eq!(s.question("que_x")["status"], "open", "nothing recorded");
    up.script.lock().unwrap().mode = Some(Mode::Status(200));
    let (st, b) = s.answer("que_x", json!({"answers": [["B"]]}));
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["status"], "answered");
    assert_eq!(posts(&up.script), 2);
    // A 404: settled elsewhere — 409 question_closed, closed External.
    up.script.lock().unwrap().pending.push(request("que_y"));
    s.upstream()
        .end_connection(End::StreamError("relist".into()));
    wait_open(&s, "que_y");
    up.script.lock().unwrap().mode = Some(Mode::Status(404));
    let (st, b) = s.dismiss("que_y");
    assert_eq!(st, 409, "{b}");
    assert_eq!(b["code"], "question_closed");
    assert_eq!(wait_closed(&s, "que_y")["closed"]["reason"], "external");
    s.stop();
}

#[test]
fn an_uncertain_outcome_leaves_a_tombstone_that_blocks_and_is_never_retried() {
    let (s, up) = setup(&["que_u", "que_t"], false, 30, fast());
    wait_open(&s, "que_u");
    wait_open(&s, "que_t");
    up.script.lock().unwrap().mode = Some(Mode::Status(500));
    let (st, b) = s.answer("que_u", json!({"answers": [["A"]]}));
    assert_eq!(st, 502, "{b}");
    assert_eq!(b["code"], "upstream_uncertain");
    assert_eq!(s.state_of("que_u").unwrap()["state"], "uncertain");
    let (st, b) = s.answer("que_u", json!({"answers": [["B"]]}));
    assert_eq!(st, 409, "{b}");
    assert_eq!(b["code"], "question_submission_claimed");
    // A timeout after dispatch is uncertain too.
    up.script.lock().unwrap().mode = Some(Mode::Hang);
    let (st, b) = s.dismiss("que_t");
    assert_eq!(st, 502, "{b}");
    assert_eq!(b["code"], "upstream_uncertain");
    assert_eq!(posts(&up.script), 2, "never retried");
    assert_eq!(s.question("que_u")["status"], "open");
    s.stop();
}

#[test]
fn the_setting_persists_and_a_non_boolean_changes_nothing() {
    let (s, up) = setup(&[], true, 30, fast());
    // Settled first: settings loaded AND the first list done, so nothing else moves the
    // machine's revision while the bad values are sent.
    until(DEADLINE, || {
        let snap = s.snapshot();
        (snap["settings"]["state"] == "ready"
            && snap["connected"] == true
            && snap["listedDirectories"]
                .as_array()
                .is_some_and(|d| !d.is_empty()))
        .then_some(())
    })
    .expect("loaded and listed");
    assert_eq!(s.snapshot()["enabled"], true);
    let revision = s.snapshot()["revision"].clone();
    for bad in [
        json!({"enabled": "false"}),
        json!({"enabled": 0}),
        json!({"enabled": null}),
        json!({}),
    ] {
        let (st, b) = s.call(
            &s.ana,
            Method::PUT,
            "/api/question-auto-delegate/settings",
            Some(bad.clone()),
        );
        assert_eq!(st, 400, "{bad}: {b}");
        assert_eq!(b["code"], "invalid_setting");
    }
    assert_eq!(s.snapshot()["revision"], revision);
    assert_eq!(s.snapshot()["enabled"], true);
    let (st, b) = s.call(
        &s.ana,
        Method::PUT,
        "/api/question-auto-delegate/settings",
        Some(json!({"enabled": false})),
    );
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["upstreams"][0]["enabled"], false);
    // Persisted: a new server on the same store starts with it off.
    let data = s.state.clone();
    drop(data);
    let stored =
        std::fs::read_to_string(s.dir.path().join("data/opencode-oc.settings.json")).unwrap();
    assert!(stored.contains("false"), "{stored}");
    let keep = tempfile::tempdir().unwrap();
    let copy = keep.path().join("data");
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::copy(
        s.dir.path().join("data/opencode-oc.settings.json"),
        copy.join("opencode-oc.settings.json"),
    )
    .unwrap();
    s.stop();
    let url = format!("http://127.0.0.1:{}", up.port);
    let s2 = BridgeServer::start(
        &Upstreamed {
            url: &url,
            directories: &[DIR],
            auto_delegate: true,
            window_seconds: 30,
            timing: fast(),
        },
        Some(&copy),
    );
    until(DEADLINE, || {
        (s2.snapshot()["settings"]["state"] == "ready").then_some(())
    })
    .expect("loaded");
    assert_eq!(s2.snapshot()["enabled"], false);
    s2.stop();
}

#[test]
fn every_non_clean_end_goes_through_one_cleanup_once_and_nothing_leaks() {
    let timing = UpstreamTiming {
        stall: Duration::from_millis(400),
        post_timeout: Duration::from_secs(30),
        ..fast()
    };
    let (s, up) = setup(&["que_1"], false, 30, timing);
    wait_open(&s, "que_1");
    let u = s.upstream();
    let released = || u.stats.releases.load(Ordering::Relaxed);
    let connects = || u.stats.connects.load(Ordering::Relaxed);
    let first = u.connection_id().unwrap();

    // 1. Stall: the upstream keeps the stream open and silent past the backstop.
    up.script.lock().unwrap().silent = true;
    up.script.lock().unwrap().streams.clear(); // ends the live stream: a stream error first
    until(DEADLINE, || (released() >= 2).then_some(())).expect("stream error, then stall released");
    assert!(u.connection_id() != Some(first));
    up.script.lock().unwrap().silent = false;
    until(DEADLINE, || {
        (u.connection_id().is_some() && connects() >= 2).then_some(())
    })
    .expect("reconnected");

    // 2. A POST in flight is released with its connection: uncertain, never retried.
    up.script.lock().unwrap().mode = Some(Mode::Hang);
    let u2 = u.clone();
    let before = released();
    let waiter = std::thread::spawn({
        let base = s.base.clone();
        let token = s.ana.clone();
        move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                let r = reqwest::Client::new()
                    .post(format!("{base}/projects/loja/open-questions/que_1/answer"))
                    .bearer_auth(token)
                    .json(&json!({"answers": [["A"]]}))
                    .send()
                    .await
                    .unwrap();
                (r.status().as_u16(), r.json::<Value>().await.unwrap())
            })
        }
    });
    until(DEADLINE, || (u2.held().1 == 1).then_some(())).expect("a POST in flight");
    assert!(u.end_connection(End::StreamError("forced".into())));
    assert!(!u.end_connection(End::StreamError("twice".into())) || released() == before + 1);
    let (st, b) = waiter.join().unwrap();
    assert_eq!(st, 502, "{b}");
    assert_eq!(b["code"], "upstream_uncertain");
    assert_eq!(s.state_of("que_1").unwrap()["state"], "uncertain");

    // 3. The upstream dies: released, reconnects fail (each failure its own release),
    //    then it comes back on the same port and everything is rehydrated.
    until(DEADLINE, || u.connection_id().map(|_| ())).expect("reconnected");
    let script = up.script.clone();
    up.task.abort();
    {
        let mut g = script.lock().unwrap();
        g.streams.clear();
        g.mode = Some(Mode::Status(200));
        g.pending.push(request("que_2"));
    }
    until(DEADLINE, || (u.connection_id().is_none()).then_some(())).expect("released on death");
    assert_eq!(u.held(), (0, 0, 0));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let _up2 = start_upstream(&rt, script.clone(), up.port);
    wait_open(&s, "que_2");
    assert!(
        open_ids(&s).contains(&"que_1".to_string()),
        "nothing oq knew was lost"
    );
    assert_eq!(
        s.state_of("que_1").unwrap()["state"],
        "uncertain",
        "the tombstone survives"
    );

    // 4. Shutdown: the live connection is released; every connection exactly once.
    let u = s.upstream();
    s.stop();
    assert_eq!(u.connection_id(), None);
    assert_eq!(u.held(), (0, 0, 0));
    assert_eq!(
        u.stats.releases.load(Ordering::Relaxed),
        u.stats.opened.load(Ordering::Relaxed),
        "one release per opened connection"
    );
    assert_eq!(posts(&script), 1, "the released POST was never retried");
    std::mem::forget(rt);
}

#[test]
fn an_answer_while_the_upstream_refuses_connections_is_not_sent_and_pauses() {
    let (s, up) = setup(&["que_n"], true, 30, fast());
    wait_open(&s, "que_n");
    up.task.abort();
    up.script.lock().unwrap().streams.clear();
    until(DEADLINE, || {
        s.upstream().connection_id().is_none().then_some(())
    })
    .expect("disconnected");
    let (st, b) = s.answer("que_n", json!({"answers": [["A"]]}));
    assert_eq!(st, 502, "{b}");
    assert_eq!(b["code"], "upstream_unreachable");
    let r = s.state_of("que_n").unwrap();
    assert_eq!(r["state"], "paused", "{r}");
    assert_eq!(r["pauseReason"], "user");
    assert_eq!(s.question("que_n")["status"], "open");
    assert_eq!(posts(&up.script), 0);
    s.stop();
}

#[test]
fn pause_and_delegate_routes_follow_the_claim_and_identity_rules() {
    let (s, up) = setup(&["que_p", "que_d"], true, 30, fast());
    wait_open(&s, "que_p");
    wait_open(&s, "que_d");
    until(DEADLINE, || {
        s.state_of("que_p").filter(|r| r["state"] == "counting")
    })
    .expect("counting");
    let path = |id: &str, what: &str| format!("/api/question-auto-delegate/requests/{id}/{what}");
    let (st, b) = s.call(
        &s.ana,
        Method::POST,
        &path("que_p", "pause"),
        Some(json!({"reason": "nap"})),
    );
    assert_eq!(st, 422, "{b}");
    let (st, b) = s.call(
        &s.ana,
        Method::POST,
        &path("que_p", "pause"),
        Some(json!({"reason": "user", "sessionID": "ses_other"})),
    );
    assert_eq!(st, 409, "{b}");
    assert_eq!(b["code"], "question_identity_conflict");
    let (st, b) = s.call(
        &s.ana,
        Method::POST,
        &path("que_p", "pause"),
        Some(json!({"reason": "user", "sessionID": "ses_1", "directory": DIR})),
    );
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["request"]["state"], "paused");
    assert_eq!(b["request"]["pauseReason"], "user");
    // A non-member cannot touch it.
    let (st, _) = s.call(
        &s.caio,
        Method::POST,
        &path("que_p", "pause"),
        Some(json!({"reason": "user"})),
    );
    assert_eq!(st, 404);
    // Delegate: one continuation, posted once, closes the question External.
    let (st, b) = s.call(&s.ana, Method::POST, &path("que_d", "delegate"), None);
    assert_eq!(st, 200, "{b}");
    let closed = wait_closed(&s, "que_d");
    assert_eq!(closed["closed"]["reason"], "external");
    let (st, b) = s.call(&s.ana, Method::POST, &path("que_d", "delegate"), None);
    assert_eq!(st, 409, "{b}");
    assert_eq!(b["code"], "question_already_settled");
    let g = up.script.lock().unwrap();
    assert_eq!(g.posts.len(), 1);
    assert_eq!(g.posts[0].0, "que_d");
    assert_eq!(
        g.posts[0].2["answers"],
        json!([[oq::bridge::delegate::CONTINUATION_TEXT]])
    );
    drop(g);
    s.stop();
}

#[test]
fn a_session_is_blocked_while_a_question_of_its_tree_is_not_settled() {
    let (s, _up) = setup(&["que_blk"], false, 30, fast());
    wait_open(&s, "que_blk");
    let path = "/api/question-auto-delegate/sessions/ses_1/blocking";
    // The store and the delegate machine are two views of upstream, fed one after the
    // other by the same sync: the question may be listed a moment before the machine
    // has it. Blocking must follow within the deadline.
    let b = until(DEADLINE, || {
        let (st, b) = s.call(&s.ana, Method::GET, path, None);
        assert_eq!(st, 200, "{b}");
        (b["blocking"] == true).then_some(b)
    })
    .expect("the session never showed as blocked while its question was open");
    assert_eq!(b["root"], "ses_1");
    assert_eq!(b["userTakeover"], false, "{b}");
    // Another session is not blocked; a non-member learns nothing.
    let (_, other) = s.call(
        &s.ana,
        Method::GET,
        "/api/question-auto-delegate/sessions/ses_9/blocking",
        None,
    );
    assert_eq!(other["blocking"], false, "{other}");
    let (st, _) = s.call(&s.caio, Method::GET, path, None);
    assert_eq!(st, 404);
    // Answered: settled, the session is free.
    let (st, b) = s.answer("que_blk", json!({"answers": [["A"]]}));
    assert_eq!(st, 200, "{b}");
    let (_, b) = s.call(&s.ana, Method::GET, path, None);
    assert_eq!(b["blocking"], false, "{b}");
    // A manual answer is a person taking the session over: reported for its root.
    assert_eq!(b["userTakeover"], true, "{b}");
    s.stop();
}
