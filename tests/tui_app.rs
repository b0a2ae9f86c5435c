//! The whole app in-process: the real driver loop on ratatui's `TestBackend` over a real
//! local store (filled by the built `oq demo`), keys fed as events, the frames read back
//! (`tests/common/tui_app.rs`). What these prove goes through every layer the binary
//! has but the terminal itself, which `tui_pty.rs` covers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::tui_app::App;
use common::{answered_events, event_count, oq, run};
use crossterm::event::KeyCode;

fn demo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run(oq(dir.path(), "dev-a").args(["demo", "--quiet"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    dir
}

fn open_items(dir: &Path) -> Vec<serde_json::Value> {
    let out = run(oq(dir, "dev-a").args(["list", "--json", "--status", "open"]));
    out.json()["items"].as_array().cloned().unwrap_or_default()
}

fn id_of(dir: &Path, starts: &str) -> String {
    open_items(dir)
        .into_iter()
        .find(|q| q["pergunta"].as_str().unwrap().starts_with(starts))
        .expect("the demo's question")["questionId"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_typed_answer_goes_through_the_real_loop_into_the_store_once() {
    let data = demo();
    let guest = id_of(data.path(), "Should guest checkout");
    let before = event_count(data.path());
    let app = App::local(data.path(), "dev-a");
    app.wait_text("Open questions (6)");
    app.ch('j');
    app.wait_text("Should guest checkout be supported");
    app.ch('i');
    app.typed("Accounts optional");
    app.key(KeyCode::Enter);
    app.wait_text("answer recorded");
    app.wait_text("Open questions (5)");
    assert_eq!(answered_events(data.path(), &guest), 1);
    // The answer and its decision record, nothing else: no typed key acted as a command.
    assert_eq!(event_count(data.path()), before + 2);
    let shown = run(oq(data.path(), "dev-a").args(["show", &guest, "--json"]));
    let answer = &shown.json()["answer"];
    assert_eq!(answer["resposta"], "Accounts optional", "{}", shown.stdout);
    assert_eq!(answer["respondidaPor"], "dev-a");
    assert_eq!(answer["aceitouSugestao"], false);
    app.ch('q');
    app.join().expect("a clean quit");
}

#[test]
fn the_input_ending_ends_the_app_through_the_cleanup_and_keeps_the_draft() {
    let data = demo();
    let guest = id_of(data.path(), "Should guest checkout");
    let mut app = App::local(data.path(), "dev-a");
    app.wait_text("Open questions (6)");
    app.ch('j');
    app.wait_text("Should guest checkout be supported");
    app.ch('i');
    app.typed("half an answ");
    app.end_input();
    // The loop ends on its own (no quit key, no signal) and says the terminal went.
    assert!(app.join().is_ok());
    let draft = data.path().join("drafts").join(format!("{guest}.txt"));
    assert_eq!(
        std::fs::read_to_string(&draft).expect("the draft on disk"),
        "half an answ"
    );
    assert_eq!(answered_events(data.path(), &guest), 0);
}
