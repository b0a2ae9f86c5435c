//! Bridges with one owner: several real `oq serve` processes on one real PostgreSQL,
//! one `[[opencode]]` upstream (the scripted OpenCode of `bridge_server::scripted`,
//! which counts every POST it receives). Exactly one server drives the upstream (its
//! lease); kill -9 of that server hands it to another, which restores what the log
//! holds: a pending countdown fires once, at its old deadline, and a claim whose POST was
//! in flight when the owner died is a tombstone — never POSTed again — that settles as
//! the timer's answer once upstream reports it took it.
//!
//! The mid-claim kill needs a POST that upstream holds unanswered, which the real
//! OpenCode cannot be made to do on cue: that is why the upstream is scripted here.
//! Waits poll a condition under a deadline; nothing asserts a duration.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common_pg;
#[path = "bridge_server/scripted.rs"]
mod scripted;
mod serve_process;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use scripted::{DIR, Mode, Script, Shared, request, start_upstream};
use serve_process::Serve;

const PASSWORD_ENV: &str = "OQ_TEST_STORE_PASSWORD";
const DEADLINE: Duration = Duration::from_secs(40);

/// `n` servers on `db` bridging the scripted upstream at `port`, auto-delegate on,
/// with this window and a 1 s lease.
fn servers(db: &common_pg::PgDb, port: u16, n: usize, window_seconds: u64) -> Vec<Serve> {
    let config = format!(
        "store = {:?}\nstore_password_env = {PASSWORD_ENV:?}\n\n\
         [[opencode]]\nname = \"oc\"\nurl = \"http://127.0.0.1:{port}\"\ndirectories = [{DIR:?}]\n\
         project = \"loja\"\nanswerer = {:?}\nauto_delegate = true\nwindow_seconds = {window_seconds}\n\
         lease_seconds = 1\n",
        db.app_url(),
        serve_process::DEV,
    );
    (0..n)
        .map(|_| {
            let mut s = Serve::with_config(&config);
            s.start_with(&[(PASSWORD_ENV, &db.password)]);
            s
        })
        .collect()
}

/// `method path` on server `s` as dev-a: (status, body).
fn call(s: &Serve, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    let rt = RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    });
    let _ = rustls::crypto::ring::default_provider().install_default();
    rt.block_on(async {
        let mut req = reqwest::Client::new()
            .request(method, format!("{}{path}", s.base))
            .timeout(Duration::from_secs(10))
            .bearer_auth(&s.token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json::<Value>().await.unwrap_or(Value::Null))
    })
}

/// The server's snapshot of upstream `oc`.
fn snapshot(s: &Serve) -> Value {
    let (status, body) = call(s, reqwest::Method::GET, "/api/question-auto-delegate", None);
    assert_eq!(status, 200, "{body}");
    body["upstreams"][0].clone()
}

/// The request `id` in the snapshot of a server that drives the upstream.
fn driven(s: &Serve, id: &str) -> Option<Value> {
    let snap = snapshot(s);
    if snap["drivenElsewhere"] == true {
        return None;
    }
    snap["requests"]
        .as_array()?
        .iter()
        .find(|r| r["requestID"] == id)
        .cloned()
}

fn question(s: &Serve, id: &str) -> Value {
    call(
        s,
        reqwest::Method::GET,
        &format!("/projects/loja/open-questions/{id}"),
        None,
    )
    .1
}

fn until<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + DEADLINE;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The index of the one server driving `id` (with its snapshot entry), once exactly
/// one does; every other says the upstream is driven elsewhere.
fn owner(s: &[Option<Serve>], id: &str) -> (usize, Value) {
    let end = Instant::now() + DEADLINE;
    until("exactly one server driving the upstream", || {
        if Instant::now() + Duration::from_millis(200) > end {
            let seen: Vec<_> = s
                .iter()
                .flatten()
                .map(|s| (snapshot(s), s.stderr()))
                .collect();
            panic!("no single owner: {seen:#?}");
        }
        let driving: Vec<(usize, Value)> = s
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((i, driven(s.as_ref()?, id)?)))
            .collect();
        match driving.as_slice() {
            [(i, r)] if r["deadlineUnixMs"].is_i64() || r["state"] == "uncertain" => {
                Some((*i, r.clone()))
            }
            _ => None,
        }
    })
}

fn setup(pending: &str) -> (tokio::runtime::Runtime, Shared, u16) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let script: Shared = Arc::new(Mutex::new(Script {
        pending: vec![request(pending)],
        ..Script::default()
    }));
    let up = start_upstream(&rt, script.clone(), 0);
    (rt, script, up.port)
}

#[test]
fn the_owner_killed_mid_countdown_hands_over_and_the_timer_fires_once() {
    if !common_pg::or_skip("the_owner_killed_mid_countdown_hands_over_and_the_timer_fires_once") {
        return;
    }
    let db = common_pg::shared().database();
    let (_rt, script, port) = setup("que_f");
    let mut s: Vec<Option<Serve>> = servers(&db, port, 3, 6).into_iter().map(Some).collect();
    let (first, counting) = owner(&s, "que_f");
    let deadline = counting["deadlineUnixMs"].as_i64().unwrap();
    // The others drive nothing, and say so; their commands are refused, not lost.
    for (i, other) in s.iter().enumerate().filter(|(i, _)| *i != first) {
        let other = other.as_ref().unwrap();
        let snap = snapshot(other);
        assert_eq!(snap["drivenElsewhere"], true, "server {i}: {snap}");
        assert_eq!(snap["requests"], json!([]), "server {i}: {snap}");
        let (status, body) = call(
            other,
            reqwest::Method::POST,
            "/api/question-auto-delegate/requests/que_f/pause",
            Some(json!({"reason": "user"})),
        );
        assert_eq!(status, 502, "{body}");
        assert_eq!(body["code"], "upstream_driven_elsewhere", "{body}");
    }
    assert_eq!(scripted::posts(&script), 0);

    s[first].as_mut().unwrap().kill();
    s[first] = None;
    let (second, restored) = owner(&s, "que_f");
    assert_ne!(second, first);
    // The countdown the dead owner noted is kept, not restarted.
    assert_eq!(
        restored["deadlineUnixMs"].as_i64(),
        Some(deadline),
        "{restored}"
    );

    let answered = until("the timer's answer", || {
        let q = question(s[second].as_ref().unwrap(), "que_f");
        (q["status"] == "answered").then_some(q)
    });
    assert_eq!(
        answered["answer"]["decisionSource"], "auto_delegate",
        "{answered}"
    );
    assert_eq!(
        answered["answer"]["respondidaPor"], "bridge:oc",
        "{answered}"
    );
    // Well past another window: still one POST, by one server.
    std::thread::sleep(Duration::from_secs(7));
    assert_eq!(scripted::posts(&script), 1);
    for s in s.iter_mut().flatten() {
        s.stop();
    }
}

#[test]
fn a_claim_in_flight_when_the_owner_dies_is_never_posted_again() {
    if !common_pg::or_skip("a_claim_in_flight_when_the_owner_dies_is_never_posted_again") {
        return;
    }
    let db = common_pg::shared().database();
    let (_rt, script, port) = setup("que_m");
    // Upstream takes the POST and holds it unanswered.
    script.lock().unwrap().mode = Some(Mode::Hang);
    let mut s: Vec<Option<Serve>> = servers(&db, port, 2, 2).into_iter().map(Some).collect();
    let (first, _) = owner(&s, "que_m");
    until("the timer's POST upstream", || {
        (scripted::posts(&script) == 1).then_some(())
    });
    s[first].as_mut().unwrap().kill();
    s[first] = None;

    let second = 1 - first;
    let tomb = until("the other server driving it", || {
        driven(s[second].as_ref().unwrap(), "que_m")
    });
    // Restored as what the log says: a claim whose outcome nobody knows.
    assert_eq!(tomb["state"], "uncertain", "{tomb}");
    // Several windows later nothing more left for upstream.
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(scripted::posts(&script), 1);

    // Upstream now shows it applied the held POST: the tombstone settles as the timer's.
    let answers = {
        let mut g = script.lock().unwrap();
        let answers = g.posts[0].2["answers"].clone();
        g.pending.clear();
        g.parts.insert(
            "call_que_m".into(),
            json!({"status": "completed", "metadata": {"answers": answers.clone()}}),
        );
        answers
    };
    scripted::emit(
        &script,
        json!({"type": "question.replied",
               "properties": {"sessionID": "ses_1", "requestID": "que_m", "answers": answers}}),
    );
    let q = until("the settlement", || {
        let q = question(s[second].as_ref().unwrap(), "que_m");
        (q["status"] == "answered").then_some(q)
    });
    assert_eq!(q["answer"]["decisionSource"], "auto_delegate", "{q}");
    assert_eq!(scripted::posts(&script), 1);
    for s in s.iter_mut().flatten() {
        s.stop();
    }
}
