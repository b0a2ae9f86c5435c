//! The TUI on a real OpenCode agent. Directly (`--source opencode+http://…`): a request
//! with two questions, one multi-select, answered through the options form — pick,
//! review, send — reaches the agent, which continues with the answers. Through
//! `oq serve`'s bridge with auto-delegate on: the author typing in the form holds the
//! countdown (reason `interaction`), so nothing goes upstream at the deadline, the typed
//! text stays, and sending it is the one POST, recorded as the person's.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bridge_server;
mod common_pty;
mod opencode;

use std::sync::atomic::Ordering;
use std::time::Duration;

use bridge_server::{BridgeServer, Upstreamed, until};
use common_pty::Tui;
use serde_json::{Value, json};

const DEADLINE: Duration = Duration::from_secs(60);

#[test]
fn the_options_form_answers_a_real_agent() {
    let Some(peer) = opencode::shared() else {
        return;
    };
    let dir = peer.directory("tui-choices");
    let questions = json!({"questions": [
        {
            "question": "Which database should the TUI project use?",
            "header": "Database",
            "options": [
                {"label": "Postgres", "description": "Relational"},
                {"label": "SQLite", "description": "Embedded"}
            ],
            "multiple": false
        },
        {
            "question": "Pick the colours",
            "header": "Colours",
            "options": [
                {"label": "Red", "description": "warm"},
                {"label": "Blue", "description": "cool"},
                {"label": "Green", "description": "calm"}
            ],
            "multiple": true
        }
    ]});
    let session = peer.prompt(&dir, Some(&questions));
    let request = peer.wait_question(&dir, &session);
    let data = tempfile::tempdir().unwrap();
    let source = format!("opencode+{}", peer.base);
    let mut tui = Tui::spawn_args(
        &[
            "--source",
            &source,
            "--directory",
            &dir,
            "--data-dir",
            data.path().to_str().unwrap(),
            "--as",
            "dev-a",
        ],
        &[],
    );
    tui.wait_text("Which database should the TUI project use?");
    tui.send(b"g");
    tui.send(b"i"); // the options form
    tui.wait_text("Postgres");
    tui.send(b"j"); // SQLite
    tui.send(b"\r"); // pick it, next part
    tui.wait_text("Green");
    tui.send(b" "); // Red
    tui.send(b"j");
    tui.send(b" "); // Blue
    tui.send(b"\r"); // to the review
    let asked_before = peer.model_requests().len();
    tui.send(b"\r"); // send
    tui.wait_text("answer recorded");
    // Upstream took it: the request is no longer pending, and the model was given the
    // answers when the agent went on.
    let client = peer.client();
    opencode::wait_for(|| {
        let pending = opencode::block_on(client.list(&dir)).unwrap();
        (!pending.iter().any(|r| r.id == request.id)).then_some(())
    })
    .expect("the request is settled upstream");
    // The model received the answers as the question tool's result: the chosen labels,
    // and none of the others.
    let seen = opencode::wait_for(|| {
        peer.tool_results(asked_before)
            .into_iter()
            .find(|t| t.contains("TUI project"))
    })
    .expect("the model received the question tool's result");
    assert!(
        seen.contains("SQLite") && seen.contains("Red") && seen.contains("Blue"),
        "{seen}"
    );
    assert!(
        !seen.contains("Postgres") && !seen.contains("Green"),
        "{seen}"
    );
    tui.send(b"q");
    tui.wait_exit();
    tui.assert_restored();
}

#[test]
fn typing_in_the_form_holds_the_auto_delegate_and_the_typed_answer_is_the_one_post() {
    let Some(peer) = opencode::shared() else {
        return;
    };
    let dir = peer.directory("tui-typing");
    // Long enough for the TUI to start and open the form on a loaded machine.
    let window = 8;
    let s = BridgeServer::start(
        &Upstreamed {
            window_seconds: window,
            ..Upstreamed::at(&peer.base, &[dir.as_str()], true)
        },
        None,
    );
    let ask = json!({"questions": [{
        "question": "Which queue should the typing service use?",
        "header": "Queue",
        "options": [
            {"label": "Kafka", "description": "log"},
            {"label": "NATS", "description": "light"}
        ],
        "multiple": false
    }]});
    let session = peer.prompt(&dir, Some(&ask));
    let request = peer.wait_question(&dir, &session);
    let id = until(DEADLINE, || {
        s.open_questions()
            .into_iter()
            .find(|q| q["upstream"]["sessionID"] == session)
    })
    .expect("imported")["questionId"]
        .as_str()
        .unwrap()
        .to_string();
    until(DEADLINE, || {
        s.state_of(&id).filter(|r| r["state"] == "counting")
    })
    .expect("the countdown runs");
    let data = tempfile::tempdir().unwrap();
    let mut tui = Tui::spawn_args(
        &[
            "--source",
            &s.base,
            "-p",
            "loja",
            "--data-dir",
            data.path().to_str().unwrap(),
        ],
        &[("OQ_TOKEN", &s.ana)],
    );
    tui.wait_text("Which queue should the typing service use?");
    tui.send(b"i"); // the options form: the countdown pauses for the interaction
    tui.wait_text("NATS");
    let paused = until(DEADLINE, || {
        s.state_of(&id).filter(|r| r["state"] == "paused")
    })
    .expect("the form paused the countdown");
    assert_eq!(paused["pauseReason"], "interaction", "{paused}");
    assert_eq!(paused["pausedBy"], "ana", "{paused}");
    tui.send(b"G"); // the free-text row
    tui.send(b"\r"); // type there
    tui.typed("Redis streams, we run it");
    tui.wait_text("Redis streams, we run it");
    // Well past the window (counted from before the form opened) while she types: the
    // request is still pending upstream, nothing was POSTed, oq still has it open and
    // paused, and her text is on the screen.
    std::thread::sleep(Duration::from_secs(window + 3));
    assert_eq!(s.upstream().stats.posts.load(Ordering::Relaxed), 0);
    assert!(
        opencode::block_on(peer.client().list(&dir))
            .unwrap()
            .iter()
            .any(|r| r.id == request.id),
        "the request is still pending upstream"
    );
    assert_eq!(s.question(&id)["status"], "open");
    assert_eq!(s.state_of(&id).unwrap()["state"], "paused");
    assert!(
        tui.screen().contains("Redis streams, we run it"),
        "{}",
        tui.screen()
    );
    // Sending it: the one POST, recorded as hers, and the agent continues with it.
    let asked_before = peer.model_requests().len();
    tui.send(b"\r"); // done typing: to the review
    tui.wait_text("Redis streams, we run it");
    tui.send(b"\r"); // send
    tui.wait_text("answer recorded");
    let q: Value = until(DEADLINE, || {
        Some(s.question(&id)).filter(|q| q["status"] != "open")
    })
    .expect("answered in oq");
    assert_eq!(q["status"], "answered", "{q}");
    assert_eq!(q["answer"]["decisionSource"], "person", "{q}");
    assert_eq!(q["answer"]["respondidaPor"], "ana", "{q}");
    assert_eq!(
        q["answer"]["answers"],
        json!([["Redis streams, we run it"]]),
        "{q}"
    );
    opencode::wait_for(|| {
        peer.tool_results(asked_before)
            .into_iter()
            .find(|t| t.contains("Redis streams, we run it"))
    })
    .expect("the model received her typed answer");
    assert_eq!(
        s.upstream().stats.posts.load(Ordering::Relaxed),
        1,
        "exactly one POST, hers"
    );
    tui.send(b"q");
    tui.wait_exit();
    tui.assert_restored();
    s.stop();
}
