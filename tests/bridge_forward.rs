//! Commands through the server that does not drive the upstream: two real `oq serve` on
//! one real PostgreSQL, one scripted OpenCode upstream (counting POSTs). A person's
//! pause, resume, delegate, answer and setting sent to the server without the lease act
//! on the one truth — the owner's machine and the log — not on that server's memory, and
//! the setting is the log's, so it holds when another server takes the upstream over.
//!
//! Waits poll a condition under a deadline; nothing asserts a duration.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common_pg;
#[path = "bridge_server/scripted.rs"]
mod scripted;
mod serve_process;
#[path = "bridge_server/several.rs"]
mod several;

use reqwest::Method;
use serde_json::{Value, json};

use serve_process::Serve;
use several::{call, driven, owner, question, servers, setup, snapshot, until};

/// A window no test waits out: only the commands settle anything.
const LONG_WINDOW: u64 = 600;

fn command(s: &Serve, id: &str, what: &str, body: Value) -> Value {
    let path = format!("/api/question-auto-delegate/requests/{id}/{what}");
    let (status, reply) = call(s, Method::POST, &path, Some(body));
    assert_eq!(status, 200, "{what} {id}: {reply}");
    reply
}

#[test]
fn pause_resume_delegate_and_answer_on_the_other_server_act_on_the_owners_request() {
    if !common_pg::or_skip(
        "pause_resume_delegate_and_answer_on_the_other_server_act_on_the_owners_request",
    ) {
        return;
    }
    let db = common_pg::shared().database();
    let (_rt, script, port) = setup("que_p");
    script
        .lock()
        .unwrap()
        .pending
        .push(scripted::request("que_a"));
    let mut s: Vec<Option<Serve>> = servers(&db, port, 2, LONG_WINDOW)
        .into_iter()
        .map(Some)
        .collect();
    let (a, _) = owner(&s, "que_p");
    let (owner_s, other) = (s[a].as_ref().unwrap(), s[1 - a].as_ref().unwrap());
    until("both requests on the owner", || driven(owner_s, "que_a"));
    assert_eq!(snapshot(other)["drivenElsewhere"], true);

    // Pause through the other server: the owner's request is paused, by the person.
    let reply = command(other, "que_p", "pause", json!({"reason": "user"}));
    assert_eq!(reply["request"]["state"], "paused", "{reply}");
    let paused = driven(owner_s, "que_p").unwrap();
    assert_eq!(paused["state"], "paused", "{paused}");
    assert_eq!(paused["pauseReason"], "user", "{paused}");
    assert_eq!(paused["pausedBy"], serve_process::DEV, "{paused}");

    // Resume there: a fresh window on the owner.
    let reply = command(other, "que_p", "resume", json!({}));
    assert_eq!(reply["request"]["state"], "counting", "{reply}");
    assert_eq!(driven(owner_s, "que_p").unwrap()["state"], "counting");

    // Delegate there: the owner POSTs once, recorded as the person's delegate.
    command(other, "que_p", "delegate", json!({}));
    let q = until("the delegated answer", || {
        let q = question(other, "que_p");
        (q["status"] == "answered").then_some(q)
    });
    assert_eq!(q["answer"]["decisionSource"], "delegate", "{q}");
    assert_eq!(scripted::posts(&script), 1);

    // A person's answer there: claimed and POSTed by the owner, recorded as theirs.
    let (status, answered) = call(
        other,
        Method::POST,
        "/projects/loja/open-questions/que_a/answer",
        Some(json!({"answers": [["B"]]})),
    );
    assert_eq!(status, 200, "{answered}");
    assert_eq!(answered["status"], "answered", "{answered}");
    assert_eq!(
        answered["answer"]["respondidaPor"],
        serve_process::DEV,
        "{answered}"
    );
    assert_eq!(scripted::posts(&script), 2);
    {
        let g = script.lock().unwrap();
        assert_eq!(g.posts[1].0, "que_a");
        assert_eq!(g.posts[1].2["answers"], json!([["B"]]));
    }
    // The other server still drives nothing: the owner did all of it.
    assert_eq!(snapshot(other)["drivenElsewhere"], true);
    for s in s.iter_mut().flatten() {
        s.stop();
    }
}

#[test]
fn the_setting_changed_through_the_other_server_is_the_owners_and_outlives_a_failover() {
    if !common_pg::or_skip(
        "the_setting_changed_through_the_other_server_is_the_owners_and_outlives_a_failover",
    ) {
        return;
    }
    let db = common_pg::shared().database();
    let (_rt, script, port) = setup("que_s");
    let mut s: Vec<Option<Serve>> = servers(&db, port, 2, LONG_WINDOW)
        .into_iter()
        .map(Some)
        .collect();
    let (a, _) = owner(&s, "que_s");
    let b = 1 - a;

    // Auto-delegate off, asked of the server that does not drive it.
    let (status, body) = call(
        s[b].as_ref().unwrap(),
        Method::PUT,
        "/api/question-auto-delegate/settings",
        Some(json!({"enabled": false})),
    );
    assert_eq!(status, 200, "{body}");
    let on_owner = snapshot(s[a].as_ref().unwrap());
    assert_eq!(on_owner["enabled"], false, "{on_owner}");
    assert_eq!(
        driven(s[a].as_ref().unwrap(), "que_s").unwrap()["state"],
        "disabled"
    );

    // The owner dies; the other takes over with the setting the log holds (its own
    // configuration says on, and it never had a settings file).
    s[a].as_mut().unwrap().kill();
    s[a] = None;
    let taken = until("the other server driving it, its setting loaded", || {
        driven(s[b].as_ref().unwrap(), "que_s").filter(|r| r["state"] != "waiting")
    });
    assert_eq!(taken["state"], "disabled", "{taken}");
    let snap = snapshot(s[b].as_ref().unwrap());
    assert_eq!(snap["enabled"], false, "{snap}");
    assert_eq!(snap["settings"]["state"], "ready", "{snap}");
    assert_eq!(scripted::posts(&script), 0);
    for s in s.iter_mut().flatten() {
        s.stop();
    }
}
