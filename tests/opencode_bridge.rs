//! The bridge against a REAL OpenCode server (the harness in `tests/opencode/`): an
//! `oq serve` with an `[[opencode]]` upstream imports the agent's questions, routes
//! answers from oq's HTTP API upstream, and auto-delegates after a shortened window.
//!
//! Every wait has a deadline and polls a condition; no test asserts a duration. Without
//! `npm` they print why and return.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bridge_server;
mod opencode;

use std::sync::atomic::Ordering;
use std::time::Duration;

use oq::bridge::delegate::CONTINUATION_TEXT;
use oq::server::config::UpstreamTiming;
use serde_json::{Value, json};

use bridge_server::{BridgeServer, Upstreamed, until};
use opencode::{Peer, block_on};

const DEADLINE: Duration = Duration::from_secs(60);

fn bridge(peer: &Peer, dir: &str, auto: bool, window: u64) -> BridgeServer {
    BridgeServer::start(
        &Upstreamed {
            url: &peer.base,
            directories: &[dir],
            auto_delegate: auto,
            window_seconds: window,
            timing: UpstreamTiming::default(),
            admins: None,
        },
        None,
    )
}

fn ask(question: &str, header: &str, labels: &[&str]) -> Value {
    json!({ "questions": [{
        "question": question,
        "header": header,
        "options": labels.iter().map(|l| json!({"label": l, "description": l})).collect::<Vec<_>>(),
        "multiple": false
    }]})
}

/// The session's question as oq's HTTP API lists it.
fn imported(s: &BridgeServer, session: &str) -> Value {
    until(DEADLINE, || {
        s.open_questions()
            .into_iter()
            .find(|q| q["upstream"]["sessionID"] == session)
    })
    .unwrap_or_else(|| panic!("session {session}'s question never showed up in oq"))
}

/// Waits until the session is idle upstream (not busy in `GET /session/status`).
fn wait_idle(peer: &Peer, dir: &str, session: &str) {
    let client = peer.client();
    until(DEADLINE, || {
        let status = block_on(client.session_status(dir)).ok()?;
        (!status.get(session).is_some_and(|s| s.is_busy())).then_some(())
    })
    .expect("the session went idle");
}

fn pending_upstream(peer: &Peer, dir: &str, id: &str) -> bool {
    block_on(peer.client().list(dir))
        .unwrap()
        .iter()
        .any(|r| r.id == id)
}

#[test]
fn an_agents_question_is_imported_and_answered_through_oq_and_the_agent_continues() {
    let Some(peer) = opencode::shared() else {
        return;
    };
    let dir = peer.directory("bridge-answer");
    let s = bridge(&peer, &dir, false, 30);
    let session = peer.prompt(
        &dir,
        Some(&ask(
            "Which queue should the bridged service use?",
            "Queue",
            &["Kafka", "Rabbit"],
        )),
    );
    let item = imported(&s, &session);
    assert_eq!(item["source"], "opencode");
    assert_eq!(item["status"], "open");
    assert_eq!(item["sessionAuthor"], "ana");
    assert_eq!(item["canAnswer"], true);
    assert_eq!(item["upstream"]["name"], "oc");
    assert_eq!(item["upstream"]["directory"], dir.as_str());
    let id = item["questionId"].as_str().unwrap().to_string();

    // An answer that is not one of the options (custom text is allowed here, so use a
    // malformed shape instead): refused locally, nothing posted.
    let (st, b) = s.answer(&id, json!({ "answers": [["Kafka", "Rabbit"]] }));
    assert_eq!(st, 422, "{b}");
    assert_eq!(s.upstream().stats.posts.load(Ordering::Relaxed), 0);

    let (st, b) = s.answer(&id, json!({ "answers": [["Rabbit"]] }));
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["status"], "answered");
    assert_eq!(b["answer"]["respondidaPor"], "ana");
    assert!(b["decisionEventId"].is_string(), "{b}");

    // The agent continues: no longer pending, idle, and the model received the answer.
    until(DEADLINE, || {
        (!pending_upstream(&peer, &dir, &id)).then_some(())
    })
    .expect("replied upstream");
    wait_idle(&peer, &dir, &session);
    until(DEADLINE, || {
        peer.tool_results(0)
            .iter()
            .any(|t| {
                t.contains("Which queue should the bridged service use?") && t.contains("Rabbit")
            })
            .then_some(())
    })
    .expect("the model received the answer");
    // Exactly one POST, and the question left oq's queue as answered.
    assert_eq!(s.upstream().stats.posts.load(Ordering::Relaxed), 1);
    assert!(
        s.open_questions()
            .iter()
            .all(|q| q["questionId"] != id.as_str())
    );
    assert_eq!(s.question(&id)["status"], "answered");
    s.stop();
}

#[test]
fn auto_delegate_fires_once_after_the_window_and_the_agent_continues() {
    let Some(peer) = opencode::shared() else {
        return;
    };
    let dir = peer.directory("bridge-auto");
    let s = bridge(&peer, &dir, true, 2);
    let session = peer.prompt(
        &dir,
        Some(&ask(
            "Which logger should the auto service use?",
            "Logger",
            &["Slog", "Zap"],
        )),
    );
    let item = imported(&s, &session);
    let id = item["questionId"].as_str().unwrap().to_string();
    // Counting first (the snapshot gives a client the deadline)…
    let counting = until(DEADLINE, || {
        s.state_of(&id)
            .filter(|r| r["state"] == "counting" || r["state"] == "settled")
    })
    .expect("armed");
    if counting["state"] == "counting" {
        assert!(
            counting["deadline"].is_u64() && counting["deadlineUnixMs"].is_i64(),
            "{counting}"
        );
    }
    // …then settled by the timer: replied upstream, and in oq an answer whose decision
    // names the timer (never ana) with the text it sent.
    let settled = until(DEADLINE, || {
        s.state_of(&id).filter(|r| r["state"] == "settled")
    })
    .expect("auto-delegated");
    assert_eq!(settled["settled"], "replied");
    assert_eq!(settled["claimant"], "auto");
    let q = until(DEADLINE, || {
        Some(s.question(&id)).filter(|q| q["status"] != "open")
    })
    .expect("settled in oq");
    assert_eq!(q["status"], "answered", "{q}");
    assert_eq!(q["answer"]["decisionSource"], "auto_delegate", "{q}");
    assert_eq!(q["answer"]["respondidaPor"], "bridge:oc", "{q}");
    assert_eq!(q["answer"]["answers"], json!([[CONTINUATION_TEXT]]), "{q}");
    wait_idle(&peer, &dir, &session);
    until(DEADLINE, || {
        peer.tool_results(0)
            .iter()
            .any(|t| {
                t.contains("Which logger should the auto service use?")
                    && t.contains(CONTINUATION_TEXT)
            })
            .then_some(())
    })
    .expect("the model received the continuation");
    assert_eq!(
        s.upstream().stats.posts.load(Ordering::Relaxed),
        1,
        "exactly one POST"
    );
    s.stop();
}

#[test]
fn a_manual_answer_racing_the_timer_reaches_upstream_exactly_once() {
    let Some(peer) = opencode::shared() else {
        return;
    };
    let dir = peer.directory("bridge-race");
    let s = bridge(&peer, &dir, true, 2);
    let session = peer.prompt(
        &dir,
        Some(&ask(
            "Which cache should the racing service use?",
            "Cache",
            &["Memcached", "Redis"],
        )),
    );
    let item = imported(&s, &session);
    let id = item["questionId"].as_str().unwrap().to_string();
    // Race the timer: wait until the deadline is close, then answer.
    let r = until(DEADLINE, || s.state_of(&id)).expect("known");
    if let (Some(deadline), Some(now)) = (r["deadline"].as_u64(), s.snapshot()["nowMs"].as_u64()) {
        std::thread::sleep(Duration::from_millis(
            deadline.saturating_sub(now).saturating_sub(30),
        ));
    }
    let (st, b) = s.answer(&id, json!({ "answers": [["Redis"]] }));
    assert!(
        st == 200
            || (st == 409
                && (b["code"] == "question_submission_claimed"
                    || b["code"] == "question_already_settled")),
        "{st} {b}"
    );
    until(DEADLINE, || {
        s.state_of(&id).filter(|r| r["state"] == "settled")
    })
    .expect("settled");
    wait_idle(&peer, &dir, &session);
    assert_eq!(
        s.upstream().stats.posts.load(Ordering::Relaxed),
        1,
        "exactly one POST upstream"
    );
    let answers: Vec<String> = peer
        .tool_results(0)
        .into_iter()
        .filter(|t| t.contains("Which cache should the racing service use?"))
        .collect();
    assert_eq!(answers.len(), 1, "the agent got one answer: {answers:?}");
    if st == 200 {
        assert!(answers[0].contains("Redis"));
        assert_eq!(s.question(&id)["status"], "answered");
    } else {
        assert!(answers[0].contains(CONTINUATION_TEXT));
    }
    s.stop();
}

#[test]
fn a_restarted_oq_serve_keeps_what_it_knew_and_imports_what_is_asked_after() {
    let Some(peer) = opencode::shared() else {
        return;
    };
    let dir = peer.directory("bridge-restart");
    let keep = tempfile::tempdir().unwrap();
    let data = keep.path().join("data");
    let up = Upstreamed {
        url: &peer.base,
        directories: &[&dir],
        auto_delegate: false,
        window_seconds: 30,
        timing: UpstreamTiming::default(),
        admins: None,
    };
    let s = BridgeServer::start(&up, Some(&data));
    let first = peer.prompt(
        &dir,
        Some(&ask(
            "Which broker survives the restart?",
            "Broker",
            &["Nats", "Kafka"],
        )),
    );
    let id = imported(&s, &first)["questionId"]
        .as_str()
        .unwrap()
        .to_string();
    // Stop oq serve and start another on the same store: still listed, still answerable.
    s.stop();
    let s = BridgeServer::start(&up, Some(&data));
    assert!(
        s.open_questions()
            .iter()
            .any(|q| q["questionId"] == id.as_str())
    );
    until(DEADLINE, || s.state_of(&id)).expect("rehydrated into the machine");
    let second = peer.prompt(
        &dir,
        Some(&ask(
            "Which store is asked after the restart?",
            "Store",
            &["S3", "Disk"],
        )),
    );
    let id2 = imported(&s, &second)["questionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (st, b) = s.answer(&id, json!({ "answers": [["Nats"]] }));
    assert_eq!(st, 200, "{b}");
    let (st, b) = s.dismiss(&id2);
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["status"], "closed");
    wait_idle(&peer, &dir, &first);
    wait_idle(&peer, &dir, &second);
    s.stop();
}

#[test]
fn an_upstream_restart_loses_nothing_oq_knew_and_later_questions_are_imported() {
    let Some(mut peer) = Peer::start(None) else {
        return;
    };
    let dir = peer.directory("bridge-upstream-restart");
    let s = BridgeServer::start(
        &Upstreamed {
            url: &peer.base,
            directories: &[&dir],
            auto_delegate: false,
            window_seconds: 30,
            timing: UpstreamTiming {
                backoff_max: Duration::from_millis(500),
                subscribe_timeout: Duration::from_secs(3),
                ..UpstreamTiming::default()
            },
            admins: None,
        },
        None,
    );
    let before = peer.prompt(
        &dir,
        Some(&ask(
            "Which region before the restart?",
            "Region",
            &["EU", "US"],
        )),
    );
    let id = imported(&s, &before)["questionId"]
        .as_str()
        .unwrap()
        .to_string();
    let u = s.upstream();
    let first = u.connection_id().expect("connected");
    let rehydrates = u.stats.rehydrates.load(Ordering::Relaxed);

    peer.restart();
    until(DEADLINE, || {
        (u.connection_id().is_some_and(|c| c != first)
            && u.stats.rehydrates.load(Ordering::Relaxed) > rehydrates)
            .then_some(())
    })
    .expect("reconnected and rehydrated after the restart");
    // Nothing oq knew is lost: the question and its record are still in oq's store. Its
    // request died with the old process (OpenCode keeps pending questions in memory),
    // its tool still "running": the agent is gone — `vanished`, not an answer, no ✓.
    let q = until(DEADLINE, || {
        Some(s.question(&id)).filter(|q| q["status"] != "open")
    })
    .expect("settled after the upstream restart");
    assert_eq!(q["questionId"], id.as_str());
    assert_eq!(q["status"], "closed", "{q}");
    assert_eq!(q["closed"]["decisionSource"], "vanished", "{q}");
    assert!(q["answer"].is_null(), "{q}");

    // A question asked after the restart is imported and answered through oq.
    let after = peer.prompt(
        &dir,
        Some(&ask(
            "Which region after the restart?",
            "Region",
            &["EU", "US"],
        )),
    );
    let id2 = imported(&s, &after)["questionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (st, b) = s.answer(&id2, json!({ "answers": [["EU"]] }));
    assert_eq!(st, 200, "{b}");
    wait_idle(&peer, &dir, &after);
    until(DEADLINE, || {
        peer.tool_results(0)
            .iter()
            .any(|t| t.contains("Which region after the restart?") && t.contains("EU"))
            .then_some(())
    })
    .expect("the model received the answer after the restart");
    s.stop();
}
