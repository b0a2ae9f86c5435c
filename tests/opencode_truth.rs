//! What the bridge says happened, on a REAL OpenCode (issue 13): a person's pause
//! survives a restart of `oq serve`; an answer OpenCode held while it hung is recorded as
//! the person's once it goes through; an OpenCode that stops answering reads
//! disconnected, holds the timer past its deadline, and starts a fresh window on return.
//!
//! The hangs are real: the OpenCode process is stopped (SIGSTOP) and continued; those
//! tests start an OpenCode of their own so no other test sees it hang. Every wait polls a
//! condition under a deadline; no test asserts a duration. Without `npm` they skip.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bridge_server;
mod opencode;

use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::Duration;

use oq::server::config::UpstreamTiming;
use reqwest::Method;
use serde_json::{Value, json};

use bridge_server::{BridgeServer, Upstreamed, until};
use opencode::{Peer, block_on};

const DEADLINE: Duration = Duration::from_secs(90);

/// Sends `sig` to `pid`.
fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} {pid}");
}

/// OpenCode stopped until this is dropped: continued even when the test fails, so its
/// harness can stop it.
struct Stopped(u32);

impl Stopped {
    fn now(peer: &Peer) -> Stopped {
        let pid = peer.server_pid();
        signal(pid, "-STOP");
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        signal(self.0, "-CONT");
    }
}

fn ask(question: &str) -> Value {
    json!({ "questions": [{
        "question": question,
        "header": "Pick",
        "options": [
            {"label": "Nats", "description": "light"},
            {"label": "Kafka", "description": "log"}
        ],
        "multiple": false
    }]})
}

/// The session's question id in oq, once imported.
fn imported(s: &BridgeServer, session: &str) -> String {
    until(DEADLINE, || {
        s.open_questions()
            .into_iter()
            .find(|q| q["upstream"]["sessionID"] == session)
    })
    .unwrap_or_else(|| panic!("session {session}'s question never showed up in oq"))["questionId"]
        .as_str()
        .unwrap()
        .to_string()
}

fn counting(s: &BridgeServer, id: &str) -> Value {
    until(DEADLINE, || {
        s.state_of(id).filter(|r| r["state"] == "counting")
    })
    .expect("the countdown runs")
}

fn posts(s: &BridgeServer) -> u64 {
    s.upstream().stats.posts.load(Ordering::Relaxed)
}

fn pending_upstream(peer: &Peer, dir: &str, id: &str) -> bool {
    block_on(peer.client().list(dir))
        .unwrap()
        .iter()
        .any(|r| r.id == id)
}

fn unix_ms() -> i64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    i64::try_from(since.as_millis()).unwrap()
}

fn command(id: &str, what: &str) -> String {
    format!("/api/question-auto-delegate/requests/{id}/{what}")
}

#[test]
fn a_persons_pause_survives_a_restart_and_nothing_is_posted_past_the_old_deadline() {
    let Some(peer) = opencode::shared() else {
        return;
    };
    let dir = peer.directory("truth-pause");
    let keep = tempfile::tempdir().unwrap();
    let data = keep.path().join("data");
    let window = 6;
    let dirs = [dir.as_str()];
    let up = Upstreamed {
        window_seconds: window,
        ..Upstreamed::at(&peer.base, &dirs, true)
    };
    let s = BridgeServer::start(&up, Some(&data));
    let session = peer.prompt(&dir, Some(&ask("Which broker does the pause keep?")));
    let id = imported(&s, &session);
    counting(&s, &id);
    let (st, b) = s.call(
        &s.ana,
        Method::POST,
        &command(&id, "pause"),
        Some(json!({"reason": "user"})),
    );
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["request"]["state"], "paused", "{b}");
    // Stopped and started again on the same store: still paused, by her, for her reason.
    s.stop();
    let s = BridgeServer::start(&up, Some(&data));
    let paused = until(DEADLINE, || s.state_of(&id)).expect("restored into the machine");
    assert_eq!(paused["state"], "paused", "{paused}");
    assert_eq!(paused["pauseReason"], "user", "{paused}");
    assert_eq!(paused["pausedBy"], "ana", "{paused}");
    // Well past the window the first server started: nothing went upstream.
    std::thread::sleep(Duration::from_secs(window + 3));
    assert_eq!(posts(&s), 0);
    assert!(pending_upstream(&peer, &dir, &id));
    assert_eq!(s.question(&id)["status"], "open");
    assert_eq!(s.state_of(&id).unwrap()["state"], "paused");
    // Her resume: a fresh window, then the timer's one POST, recorded as the timer's.
    let (st, b) = s.call(&s.ana, Method::POST, &command(&id, "resume"), None);
    assert_eq!(st, 200, "{b}");
    let q = until(DEADLINE, || {
        Some(s.question(&id)).filter(|q| q["status"] != "open")
    })
    .expect("auto-delegated after the resume");
    assert_eq!(q["answer"]["decisionSource"], "auto_delegate", "{q}");
    assert_eq!(posts(&s), 1);
    s.stop();
}

#[test]
fn an_answer_a_hung_opencode_took_late_is_recorded_as_the_persons() {
    let Some(peer) = Peer::start(None) else {
        return;
    };
    let dir = peer.directory("truth-held");
    let dirs = [dir.as_str()];
    let up = Upstreamed {
        timing: UpstreamTiming {
            post_timeout: Duration::from_secs(3),
            ..UpstreamTiming::default()
        },
        ..Upstreamed::at(&peer.base, &dirs, false)
    };
    let s = BridgeServer::start(&up, None);
    let session = peer.prompt(&dir, Some(&ask("Which broker does the hang keep?")));
    let id = imported(&s, &session);
    let asked_before = peer.model_requests().len();
    let stopped = Stopped::now(&peer);
    // OpenCode holds the POST without answering: oq cannot know whether it landed.
    let (st, b) = s.answer(&id, json!({"answers": [["Kafka"]]}));
    assert_eq!(st, 502, "{b}");
    assert_eq!(b["code"], "upstream_uncertain", "{b}");
    assert_eq!(s.question(&id)["status"], "open");
    assert_eq!(s.state_of(&id).unwrap()["state"], "uncertain");
    // OpenCode goes on and takes it: in oq it is ana's answer, not "external".
    drop(stopped);
    let q = until(DEADLINE, || {
        Some(s.question(&id)).filter(|q| q["status"] != "open")
    })
    .expect("settled once OpenCode went on");
    assert_eq!(q["status"], "answered", "{q}");
    assert_eq!(q["answer"]["respondidaPor"], "ana", "{q}");
    assert_eq!(q["answer"]["decisionSource"], "person", "{q}");
    assert_eq!(q["answer"]["answers"], json!([["Kafka"]]), "{q}");
    opencode::wait_for(|| {
        peer.model_requests()
            .iter()
            .skip(asked_before)
            .any(|r| r.to_string().contains("Kafka"))
            .then_some(())
    })
    .expect("the model received her answer");
    assert_eq!(posts(&s), 1, "sent once, never retried");
    s.stop();
}

#[test]
fn a_silent_opencode_reads_disconnected_holds_the_timer_and_counts_afresh_on_return() {
    let Some(peer) = Peer::start(None) else {
        return;
    };
    let dir = peer.directory("truth-silent");
    // The stall bound is two and a half of OpenCode's 10 s heartbeats (a busy machine
    // never reads a live stream as silent), and the window outlasts it, so the outage is
    // known before the deadline it holds.
    let window = 40;
    let dirs = [dir.as_str()];
    let up = Upstreamed {
        window_seconds: window,
        timing: UpstreamTiming {
            stall: Duration::from_secs(25),
            subscribe_timeout: Duration::from_secs(2),
            backoff_max: Duration::from_secs(1),
            ..UpstreamTiming::default()
        },
        ..Upstreamed::at(&peer.base, &dirs, true)
    };
    let s = BridgeServer::start(&up, None);
    let session = peer.prompt(&dir, Some(&ask("Which broker does the outage keep?")));
    let id = imported(&s, &session);
    let before = counting(&s, &id);
    let old_deadline = before["deadlineUnixMs"].as_i64().expect("a deadline");
    let list = |s: &BridgeServer| {
        let (st, b) = s.call(&s.ana, Method::GET, "/projects/loja/open-questions", None);
        assert_eq!(st, 200, "{b}");
        b
    };
    assert_eq!(list(&s)["bridges"][0]["connected"], true);
    let stopped = Stopped::now(&peer);
    let down = until(DEADLINE, || {
        let snap = s.snapshot();
        (snap["connected"] == false).then_some(snap)
    })
    .expect("the silence is an outage");
    assert!(down["sinceUnixMs"].as_i64().unwrap() > 0, "{down}");
    let r = s.state_of(&id).unwrap();
    assert_eq!(r["state"], "paused", "{r}");
    assert_eq!(r["pauseReason"], "unreachable", "{r}");
    assert!(r.get("deadline").is_none(), "no countdown while away: {r}");
    let shown = list(&s);
    assert_eq!(shown["bridges"][0]["name"], "oc", "{shown}");
    assert_eq!(shown["bridges"][0]["connected"], false, "{shown}");
    // Past the old deadline (Unix ms; the server runs in this process, on this clock):
    // nothing was sent.
    until(DEADLINE, || {
        (unix_ms() > old_deadline + 2_000).then_some(())
    })
    .expect("the old deadline passed");
    assert_eq!(posts(&s), 0);
    assert_eq!(s.question(&id)["status"], "open");
    // Back: the request is still pending upstream and counts from a fresh window.
    drop(stopped);
    let again = until(DEADLINE, || {
        s.state_of(&id).filter(|r| r["state"] == "counting")
    })
    .expect("counting again on return");
    assert!(
        again["deadlineUnixMs"].as_i64().unwrap() > old_deadline,
        "a fresh window, not the deadline that passed: {again}"
    );
    assert_eq!(list(&s)["bridges"][0]["connected"], true);
    assert!(pending_upstream(&peer, &dir, &id));
    // Her answer before the fresh deadline is the one POST.
    let (st, b) = s.answer(&id, json!({"answers": [["Nats"]]}));
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["answer"]["decisionSource"], "person", "{b}");
    assert_eq!(posts(&s), 1);
    s.stop();
}
