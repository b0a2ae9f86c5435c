//! The TUI on a real OpenCode server (`--source opencode+http://…`): a request with two
//! questions, one multi-select, answered through the options form — pick, review, send —
//! reaches the agent, which continues with the answers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common_pty;
mod opencode;

use common_pty::Tui;
use serde_json::json;

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
        peer.model_requests()
            .iter()
            .skip(asked_before)
            .flat_map(|r| {
                let roles = r["roles"].as_array().cloned().unwrap_or_default();
                let texts = r["texts"].as_array().cloned().unwrap_or_default();
                roles
                    .into_iter()
                    .zip(texts)
                    .filter(|(role, _)| role == "tool")
                    .map(|(_, t)| t.as_str().unwrap_or("").to_string())
                    .collect::<Vec<_>>()
            })
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
