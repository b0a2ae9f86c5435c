//! The bridge against a scripted upstream (`bridge_server::scripted`): OpenCode's
//! question routes imitated, POSTs answered as each test chooses, the event stream
//! driven by the test. What is checked is what oq *says* happened — every settlement in
//! the log as what it was — and that a POST leaves at most once. Waits poll a condition
//! under a deadline; nothing asserts a duration.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bridge_server;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oq::bridge::connection::End;
use oq::server::config::UpstreamTiming;
use reqwest::Method;
use serde_json::{Value, json};

use bridge_server::scripted::{DIR, Mode, Script, Shared, Upstream, request, start_upstream};
use bridge_server::{BridgeServer, Upstreamed, until};

const DEADLINE: Duration = Duration::from_secs(20);

/// A bridge on a scripted upstream (the upstream runs on a runtime of its own).
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
            window_seconds: window,
            timing,
            ..Upstreamed::at(&url, &[DIR], auto)
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
        settled_retention: Duration::from_secs(300),
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

/// Waits until `id` is no longer open; returns it.
fn wait_settled(s: &BridgeServer, id: &str) -> Value {
    until(DEADLINE, || {
        Some(s.question(id)).filter(|q| q["status"] != "open")
    })
    .unwrap_or_else(|| panic!("{id} never settled"))
}

/// The log's events of `kind` about `id`.
fn notes(s: &BridgeServer, kind: &str, id: &str) -> Vec<(String, Value)> {
    s.events()
        .into_iter()
        .filter(|e| e.event.type_name() == kind && e.event.question_id() == Some(id))
        .map(|e| (e.actor.clone(), serde_json::to_value(&e.event).unwrap()))
        .collect()
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
    assert_eq!(up.posts(), 0);
    s.stop();
}

#[test]
fn each_settlement_upstream_reports_is_recorded_as_what_it_was() {
    let (s, up) = setup(&["que_a", "que_b", "que_c"], false, 30, fast());
    for id in ["que_a", "que_b", "que_c"] {
        wait_open(&s, id);
    }
    let q = s.question("que_a");
    assert_eq!(q["source"], "opencode");
    assert_eq!(q["autor"], "opencode");
    assert_eq!(q["upstream"]["callID"], "call_que_a");
    // Asked on the stream: imported.
    up.script.lock().unwrap().pending.push(request("que_d"));
    up.emit(json!({"type": "question.asked", "properties": request("que_d")}));
    wait_open(&s, "que_d");
    // Answered in OpenCode itself: an answer by OpenCode, with its answers.
    up.emit(json!({"type": "question.replied", "properties": {"sessionID": "ses_1", "requestID": "que_a", "answers": [["A"]]}}));
    let a = wait_settled(&s, "que_a");
    assert_eq!(a["status"], "answered", "{a}");
    assert_eq!(a["answer"]["decisionSource"], "upstream", "{a}");
    assert_eq!(a["answer"]["answers"], json!([["A"]]));
    assert_eq!(a["answer"]["respondidaPor"], "opencode");
    // Dismissed in OpenCode itself: closed, by upstream.
    up.emit(json!({"type": "question.rejected", "properties": {"sessionID": "ses_1", "requestID": "que_b"}}));
    let b = wait_settled(&s, "que_b");
    assert_eq!(b["status"], "closed", "{b}");
    assert_eq!(b["closed"]["decisionSource"], "upstream", "{b}");
    // Gone from a successful list while its tool still runs (OpenCode lost it): vanished,
    // not an answer.
    {
        let mut g = up.script.lock().unwrap();
        g.pending.retain(|r| r["id"] != "que_c");
        g.parts
            .insert("call_que_c".into(), json!({"status": "running"}));
    }
    assert!(s.end_connection(End::StreamError("test".into())));
    let c = wait_settled(&s, "que_c");
    assert_eq!(c["status"], "closed", "{c}");
    assert_eq!(c["closed"]["decisionSource"], "vanished", "{c}");
    assert!(c["answer"].is_null());
    assert!(open_ids(&s).contains(&"que_d".to_string()));
    // Orphaned: the session was aborted.
    up.emit(json!({"type": "session.error", "properties": {"sessionID": "ses_1", "error": {"name": "MessageAbortedError"}}}));
    until(DEADLINE, || {
        (s.question("que_d")["orphaned"] == true).then_some(())
    })
    .expect("orphaned");
    // A non-member sees no bridge.
    let (st, _) = s.call(&s.caio, Method::GET, "/api/question-auto-delegate", None);
    assert_eq!(st, 404);
    assert_eq!(up.posts(), 0);
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
    up.set_mode(Mode::Hang);
    until(DEADLINE, || (up.posts() == 1).then_some(())).expect("the timer posted");
    let (st, b) = s.answer("que_r", json!({"answers": [["A"]]}));
    assert_eq!(st, 409, "{b}");
    assert_eq!(b["code"], "question_submission_claimed");
    assert_eq!(up.posts(), 1);
    assert_eq!(s.state_of("que_r").unwrap()["claimant"], "auto");
    // The submission is in the log before the POST, naming the timer.
    let sub = notes(&s, "open_question.submitted", "que_r");
    assert_eq!(sub.len(), 1, "{sub:?}");
    assert_eq!(sub[0].1["claimant"], "auto");
    assert_eq!(sub[0].1["by"], "bridge:oc");
    s.stop();
}

#[test]
fn the_timers_continuation_is_an_answer_whose_decision_names_the_timer() {
    let (s, up) = setup(&["que_t"], true, 1, fast());
    wait_open(&s, "que_t");
    let q = wait_settled(&s, "que_t");
    assert_eq!(q["status"], "answered", "{q}");
    let a = &q["answer"];
    assert_eq!(a["decisionSource"], "auto_delegate", "{q}");
    assert_eq!(a["respondidaPor"], "bridge:oc", "{q}");
    assert_eq!(
        a["answers"],
        json!([[oq::bridge::delegate::CONTINUATION_TEXT]])
    );
    assert!(
        a["resposta"]
            .as_str()
            .unwrap()
            .contains(oq::bridge::delegate::CONTINUATION_TEXT)
    );
    // The decision record names the timer, never the author.
    let decided: Vec<_> = s
        .events()
        .into_iter()
        .filter(|e| e.event.type_name() == "decision_record")
        .map(|e| serde_json::to_value(&e.event).unwrap())
        .collect();
    assert_eq!(decided.len(), 1, "{decided:?}");
    assert_eq!(decided[0]["actor"], "bridge:oc");
    assert_ne!(decided[0]["actor"], "ana");
    assert_eq!(up.posts(), 1);
    s.stop();
}

#[test]
fn a_definitive_refusal_releases_and_pauses_and_a_retry_goes_through() {
    let (s, up) = setup(&["que_x"], false, 30, fast());
    wait_open(&s, "que_x");
    up.set_mode(Mode::Status(422));
    let (st, b) = s.answer("que_x", json!({"answers": [["B"]]}));
    assert_eq!(st, 502, "{b}");
    assert_eq!(b["code"], "upstream_refused");
    let r = s.state_of("que_x").unwrap();
    assert_eq!(r["state"], "paused");
    assert_eq!(
        r["pauseReason"], "refused",
        "the bridge paused it, not a person: {r}"
    );
    assert_eq!(s.question("que_x")["status"], "open", "nothing recorded");
    up.set_mode(Mode::Status(200));
    let (st, b) = s.answer("que_x", json!({"answers": [["B"]]}));
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["status"], "answered");
    assert_eq!(b["answer"]["respondidaPor"], "ana");
    assert_eq!(b["answer"]["decisionSource"], "person");
    assert_eq!(up.posts(), 2);
    // A 404: settled elsewhere — 409 question_closed, and recorded as what upstream says.
    up.script.lock().unwrap().pending.push(request("que_y"));
    s.end_connection(End::StreamError("relist".into()));
    wait_open(&s, "que_y");
    up.set_mode(Mode::Status(404));
    let (st, b) = s.dismiss("que_y");
    assert_eq!(st, 409, "{b}");
    assert_eq!(b["code"], "question_closed");
    let y = wait_settled(&s, "que_y");
    assert_eq!(y["closed"]["decisionSource"], "vanished", "{y}");
    s.stop();
}

#[test]
fn an_uncertain_answer_is_never_retried_and_becomes_the_persons_once_upstream_shows_it() {
    let (s, up) = setup(&["que_u", "que_t"], false, 30, fast());
    wait_open(&s, "que_u");
    wait_open(&s, "que_t");
    up.set_mode(Mode::Status(500));
    let (st, b) = s.answer("que_u", json!({"answers": [["A"]]}));
    assert_eq!(st, 502, "{b}");
    assert_eq!(b["code"], "upstream_uncertain");
    assert_eq!(s.state_of("que_u").unwrap()["state"], "uncertain");
    let (st, b) = s.answer("que_u", json!({"answers": [["B"]]}));
    assert_eq!(st, 409, "{b}");
    assert_eq!(b["code"], "question_submission_claimed");
    // A timeout after dispatch is uncertain too.
    up.set_mode(Mode::Hang);
    let (st, b) = s.dismiss("que_t");
    assert_eq!(st, 502, "{b}");
    assert_eq!(b["code"], "upstream_uncertain");
    assert_eq!(up.posts(), 2, "never retried");
    assert_eq!(s.question("que_u")["status"], "open");
    // Upstream later says it took ana's answer: it is hers, not "external".
    up.emit(json!({"type": "question.replied", "properties": {"sessionID": "ses_1", "requestID": "que_u", "answers": [["A"]]}}));
    let q = wait_settled(&s, "que_u");
    assert_eq!(q["status"], "answered", "{q}");
    assert_eq!(q["answer"]["respondidaPor"], "ana", "{q}");
    assert_eq!(q["answer"]["decisionSource"], "person", "{q}");
    assert_eq!(q["answer"]["answers"], json!([["A"]]));
    // The hung reject: its tool part shows the dismissal once the request is gone.
    {
        let mut g = up.script.lock().unwrap();
        g.pending.retain(|r| r["id"] != "que_t");
        g.parts.insert(
            "call_que_t".into(),
            json!({"status": "error", "error": "The user dismissed this question"}),
        );
        g.mode = Some(Mode::Status(200));
    }
    s.end_connection(End::StreamError("relist".into()));
    let t = wait_settled(&s, "que_t");
    assert_eq!(t["status"], "closed", "{t}");
    assert_eq!(t["closed"]["decisionSource"], "dismissed", "{t}");
    assert_eq!(t["closed"]["by"], "ana", "{t}");
    assert_eq!(up.posts(), 2);
    s.stop();
}

#[test]
fn the_setting_is_the_admins_persists_with_its_actor_and_a_non_boolean_changes_nothing() {
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
        assert_eq!(st, 422, "{bad}: {b}");
        assert_eq!(b["code"], "invalid_setting", "{bad}: {b}");
    }
    // Not an object at all: the body's own refusal, and nothing changed either.
    let (st, b) = s.call(
        &s.ana,
        Method::PUT,
        "/api/question-auto-delegate/settings",
        Some(json!([true])),
    );
    assert_eq!(st, 422, "{b}");
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
    // In the log, with who did it.
    let changed: Vec<_> = s
        .events()
        .into_iter()
        .filter(|e| e.event.type_name() == "bridge.settings_changed")
        .collect();
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0].actor, "ana");
    // Persisted: a new server on the same settings starts with it off.
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
            timing: fast(),
            ..Upstreamed::at(&url, &[DIR], true)
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
    up.set_mode(Mode::Hang);
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
    // In flight: held by the connection AND received upstream (the submission note is
    // written before it leaves, so the task exists a little before the POST does).
    until(DEADLINE, || {
        (u2.held().1 == 1 && bridge_server::scripted::posts(&up.script) == 1).then_some(())
    })
    .expect("a POST in flight");
    assert!(s.end_connection(End::StreamError("forced".into())));
    assert!(!s.end_connection(End::StreamError("twice".into())) || released() == before + 1);
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
    assert_eq!(
        bridge_server::scripted::posts(&script),
        1,
        "the released POST was never retried"
    );
    std::mem::forget(rt);
}

#[test]
fn while_the_upstream_is_away_nothing_counts_nothing_is_sent_and_the_list_says_so() {
    let window = 2;
    let (s, up) = setup(&["que_n"], true, window, fast());
    wait_open(&s, "que_n");
    until(DEADLINE, || {
        s.state_of("que_n").filter(|r| r["state"] == "counting")
    })
    .expect("counting");
    let (st, list) = s.call(&s.ana, Method::GET, "/projects/loja/open-questions", None);
    assert_eq!(st, 200);
    assert_eq!(list["bridges"][0]["connected"], true, "{list}");
    up.task.abort();
    up.script.lock().unwrap().streams.clear();
    let down = until(DEADLINE, || {
        let snap = s.snapshot();
        (snap["connected"] == false).then_some(snap)
    })
    .expect("disconnected");
    assert!(down["sinceUnixMs"].as_i64().unwrap() > 0, "{down}");
    let r = s.state_of("que_n").unwrap();
    assert_eq!(r["state"], "paused", "{r}");
    assert_eq!(r["pauseReason"], "unreachable", "{r}");
    assert!(r.get("deadline").is_none(), "no countdown while away: {r}");
    let (_, list) = s.call(&s.ana, Method::GET, "/projects/loja/open-questions", None);
    assert_eq!(list["bridges"][0]["name"], "oc");
    assert_eq!(list["bridges"][0]["connected"], false, "{list}");
    // A person's answer: refused at once, nothing sent, nothing recorded.
    let (st, b) = s.answer("que_n", json!({"answers": [["A"]]}));
    assert_eq!(st, 502, "{b}");
    assert_eq!(b["code"], "upstream_unreachable");
    assert_eq!(s.question("que_n")["status"], "open");
    // Well past the old deadline: still nothing.
    std::thread::sleep(Duration::from_secs(window + 1));
    assert_eq!(up.posts(), 0);
    assert_eq!(s.state_of("que_n").unwrap()["pauseReason"], "unreachable");
    // Back: a fresh window, then one POST.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let back = start_upstream(&rt, up.script.clone(), up.port);
    let counting = until(DEADLINE, || {
        s.state_of("que_n").filter(|r| r["state"] != "paused")
    })
    .expect("counting again");
    if counting["state"] == "counting" {
        let snap = s.snapshot();
        let left = counting["deadline"].as_u64().unwrap() - snap["nowMs"].as_u64().unwrap();
        assert!(
            left > 0,
            "a fresh window, not the deadline that passed: {counting}"
        );
    }
    let q = wait_settled(&s, "que_n");
    assert_eq!(q["answer"]["decisionSource"], "auto_delegate", "{q}");
    assert_eq!(back.posts(), 1);
    s.stop();
    std::mem::forget(rt);
}

#[test]
fn pause_resume_and_delegate_follow_the_claim_and_identity_rules_and_are_logged() {
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
    assert_eq!(b["request"]["pausedBy"], "ana");
    let paused = notes(&s, "open_question.paused", "que_p");
    assert_eq!(paused.len(), 1, "{paused:?}");
    assert_eq!(paused[0].0, "ana");
    // Resume: counting again, from a fresh window; logged too.
    let (st, b) = s.call(&s.ana, Method::POST, &path("que_p", "resume"), None);
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["request"]["state"], "counting", "{b}");
    assert_eq!(notes(&s, "open_question.resumed", "que_p")[0].0, "ana");
    // An id that is no bridged question: 404, not a pretend "recovering".
    for what in ["pause", "resume", "delegate"] {
        let body = (what == "pause").then(|| json!({"reason": "user"}));
        let (st, b) = s.call(&s.ana, Method::POST, &path("que_nope", what), body);
        assert_eq!(st, 404, "{what}: {b}");
    }
    // Delegate: one continuation, posted once, recorded as ana's delegation.
    let (st, b) = s.call(&s.ana, Method::POST, &path("que_d", "delegate"), None);
    assert_eq!(st, 200, "{b}");
    let q = wait_settled(&s, "que_d");
    assert_eq!(q["status"], "answered", "{q}");
    assert_eq!(q["answer"]["decisionSource"], "delegate", "{q}");
    assert_eq!(q["answer"]["respondidaPor"], "ana", "{q}");
    let sub = notes(&s, "open_question.submitted", "que_d");
    assert_eq!(sub[0].1["claimant"], "delegate");
    assert_eq!(sub[0].1["by"], "ana");
    let (st, b) = s.call(&s.ana, Method::POST, &path("que_d", "delegate"), None);
    assert_eq!(st, 409, "{b}");
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

#[test]
fn settled_requests_leave_the_snapshot_after_the_retention() {
    let timing = UpstreamTiming {
        settled_retention: Duration::from_millis(300),
        ..fast()
    };
    let (s, up) = setup(&["que_s"], false, 30, timing);
    wait_open(&s, "que_s");
    up.emit(json!({"type": "question.rejected", "properties": {"sessionID": "ses_1", "requestID": "que_s"}}));
    wait_settled(&s, "que_s");
    until(DEADLINE, || s.state_of("que_s").is_none().then_some(()))
        .expect("the settled request left the snapshot");
    s.stop();
}

#[test]
fn coverage_is_partial_until_every_directory_listed_even_right_after_a_start() {
    // Nothing listens on the upstream's port: the bridge never lists.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let s = BridgeServer::start(
        &Upstreamed {
            timing: fast(),
            ..Upstreamed::at(&url, &[DIR], true)
        },
        None,
    );
    let snap = until(DEADLINE, || {
        let snap = s.snapshot();
        (snap["settings"]["state"] == "ready").then_some(snap)
    })
    .expect("settings loaded");
    assert_eq!(snap["coverage"]["partial"], true, "{snap}");
    assert_eq!(snap["connected"], false);
    s.stop();
}

#[test]
fn the_authors_form_pauses_the_timer_as_interaction_through_the_http_source() {
    use oq::domain::delegation::PauseReason;
    use oq::source::{HttpSource, Source};
    let (s, up) = setup(&["que_i"], true, 1, fast());
    wait_open(&s, "que_i");
    until(DEADLINE, || {
        s.state_of("que_i").filter(|r| r["state"] == "counting")
    })
    .expect("counting");
    let src = HttpSource::new(&s.base, &s.ana).unwrap();
    let paused =
        s.rt.block_on(src.pause_auto("que_i", PauseReason::Interaction))
            .unwrap();
    assert_eq!(paused.state, Some(oq::wire::AutoState::Paused));
    let r = s.state_of("que_i").unwrap();
    assert_eq!(r["pauseReason"], "interaction", "{r}");
    assert_eq!(r["pausedBy"], "ana", "{r}");
    let noted = notes(&s, "open_question.paused", "que_i");
    assert_eq!(noted[0].1["reason"], "interaction", "{noted:?}");
    // Well past the 1 s window while the form is open: nothing goes upstream.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(up.posts(), 0);
    // The form closed without an answer: a fresh window, then the timer's one POST.
    let resumed = s.rt.block_on(src.resume_auto("que_i")).unwrap();
    assert_eq!(resumed.state, Some(oq::wire::AutoState::Counting));
    let q = wait_settled(&s, "que_i");
    assert_eq!(q["answer"]["decisionSource"], "auto_delegate", "{q}");
    assert_eq!(up.posts(), 1);
    s.stop();
}
