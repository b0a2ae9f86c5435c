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
#[path = "bridge_server/several.rs"]
mod several;

use std::time::Duration;

use serde_json::json;

use scripted::Mode;
use serve_process::Serve;
use several::{driven, owner, question, servers, setup, snapshot, until};

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
    // The others drive nothing, and say so (their commands go to the owner:
    // `bridge_forward.rs`).
    for (i, other) in s.iter().enumerate().filter(|(i, _)| *i != first) {
        let snap = snapshot(other.as_ref().unwrap());
        assert_eq!(snap["drivenElsewhere"], true, "server {i}: {snap}");
        assert_eq!(snap["requests"], json!([]), "server {i}: {snap}");
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
