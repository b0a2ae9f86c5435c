//! Triage and the Decisions view through the whole app: the real driver loop on
//! `TestBackend` over a real local store (the built `oq demo`), keys fed as events
//! (`tests/common/tui_app.rs`). What `tui_triage.rs` proves of `update`, these prove
//! reaches the store: each marked question its own answer, the skipped ones untouched,
//! a question settled elsewhere between the review and the confirmation left as it was.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::tui_app::App;
use common::{answered_events, demo, event_count, oq, run};
use crossterm::event::KeyCode;

/// The open questions' ids in the TUI's default order (the list's), with their text.
fn open(dir: &Path) -> Vec<(String, String)> {
    let out = run(oq(dir, "dev-a").args(["list", "--json", "--status", "open"]));
    out.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            (
                q["questionId"].as_str().unwrap().to_string(),
                q["pergunta"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn id_of(dir: &Path, starts: &str) -> String {
    open(dir)
        .into_iter()
        .find(|(_, p)| p.starts_with(starts))
        .expect("the demo's question")
        .0
}

/// The types of the events after log position `after`, in order.
fn types_after(dir: &Path, after: i64) -> Vec<String> {
    let conn = rusqlite::Connection::open(common::store_file(dir)).unwrap();
    let mut stmt = conn
        .prepare("SELECT type FROM events WHERE seq > ?1 ORDER BY seq")
        .unwrap();
    stmt.query_map([after], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// The events after `after`, but the gates the engine resumes on its own.
fn recorded(dir: &Path, after: i64) -> Vec<String> {
    let mut t = types_after(dir, after);
    t.retain(|t| t != "gate.resumed");
    t
}

const ANSWERED_TWICE: [&str; 4] = [
    "open_question.answered",
    "decision_record",
    "open_question.answered",
    "decision_record",
];

fn shown(dir: &Path, id: &str) -> serde_json::Value {
    let out = run(oq(dir, "dev-a").args(["show", id, "--json"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.json()
}

#[test]
fn a_range_of_four_records_two_suggestions_and_skips_two_with_their_reasons() {
    let data = demo();
    let d = data.path();
    let pay = id_of(d, "Which payment provider");
    let guest = id_of(d, "Should guest checkout");
    let taxes = id_of(d, "Should prices be shown");
    let code = id_of(d, "Is the product code");
    let before = event_count(d);
    let app = App::local(d, "dev-a");
    app.wait_text("Which payment provider should checkout offer first?");
    // The first four rows: payment (dev-a's, a suggestion), guest (dev-a's, none),
    // taxes (another author's session), product code (dev-a's, a suggestion).
    app.ch('V');
    for _ in 0..3 {
        app.ch('j');
    }
    app.key(KeyCode::Char(' '));
    app.wait_text("4 marked");
    app.ch('a');
    let review = app.wait_text("Accept the suggestion of 4 marked — 2 to record");
    assert!(review.contains("skipped: no suggestion"), "{review}");
    assert!(review.contains("skipped: not yours"), "{review}");
    assert_eq!(event_count(d), before, "the review records nothing");
    app.ch('a');
    let report = app.wait_text("Done — 2 accepted · 2 skipped");
    assert!(report.contains("decisionSource: suggestion"), "{report}");
    for id in [&pay, &code] {
        assert_eq!(answered_events(d, id), 1, "{id}");
        let q = shown(d, id);
        assert_eq!(q["answer"]["aceitouSugestao"], true, "{q}");
        assert_eq!(q["answer"]["respondidaPor"], "dev-a", "{q}");
        assert_eq!(q["answer"]["decisionSource"], "suggestion", "{q}");
    }
    for id in [&guest, &taxes] {
        assert_eq!(answered_events(d, id), 0, "{id} was skipped");
        assert_eq!(shown(d, id)["status"], "open");
    }
    // Two answers, each with its decision record, and nothing in anyone's name else
    // (a gate the answers unblock resumes: the engine's consequence, not a key's).
    assert_eq!(recorded(d, before), ANSWERED_TWICE);
    app.key(KeyCode::Esc);
    app.wait_text("Open questions (4)");
    app.ch('q');
    app.join().expect("a clean quit");
}

#[test]
fn a_question_answered_elsewhere_after_the_review_keeps_that_answer_and_the_rest_goes_on() {
    let data = demo();
    let d = data.path();
    let pay = id_of(d, "Which payment provider");
    let code = id_of(d, "Is the product code");
    let app = App::local(d, "dev-a");
    app.wait_text("Which payment provider should checkout offer first?");
    // Mark the payment question (row 1) and the product code question (row 4).
    app.key(KeyCode::Char(' '));
    for _ in 0..3 {
        app.ch('j');
    }
    app.key(KeyCode::Char(' '));
    app.wait_text("2 marked");
    app.ch('a');
    app.wait_text("Accept the suggestion of 2 marked — 2 to record");
    let other = run(oq(d, "dev-a").args(["answer", &pay, "--text", "Pix only"]));
    assert_eq!(other.code, 0, "{}", other.stderr);
    let after_other = event_count(d);
    // The app sees the other answer: the list reloads under the review.
    app.wait_text("1 mark dropped: its question was settled elsewhere");
    app.ch('a');
    let report = app.wait_text("Done — 1 accepted · 1 failed");
    assert!(
        report.contains("changed since the review (settled elsewhere meanwhile)"),
        "{report}"
    );
    assert_eq!(answered_events(d, &pay), 1, "only the other answer");
    assert_eq!(shown(d, &pay)["answer"]["resposta"], "Pix only");
    assert_eq!(answered_events(d, &code), 1);
    assert_eq!(shown(d, &code)["answer"]["aceitouSugestao"], true);
    assert_eq!(
        recorded(d, after_other),
        ["open_question.answered", "decision_record"]
    );
    app.key(KeyCode::Esc);
    app.ch('q');
    app.join().expect("a clean quit");
}

#[test]
fn the_decisions_view_reads_the_history_and_its_filter_narrows_it() {
    let data = demo();
    let d = data.path();
    let app = App::local(d, "dev-a");
    app.wait_text("Which payment provider should checkout offer first?");
    app.ch('D');
    // The demo's two decisions, newest first, whatever the queue had loaded.
    let screen = app.wait_text("Decisions (2)");
    assert!(
        screen.contains("May the integration tests use SQLite"),
        "{screen}"
    );
    assert!(screen.contains("Above which order value"), "{screen}");
    app.ch('/');
    app.typed("source:suggestion");
    app.key(KeyCode::Enter);
    let narrowed = app.wait_text("Decisions (1) · source:suggestion");
    assert!(narrowed.contains("Above which order value"), "{narrowed}");
    assert!(
        !narrowed.contains("May the integration tests"),
        "{narrowed}"
    );
    // A bad part is refused in the engine's words and the last filter stays.
    app.ch('/');
    for _ in "source:suggestion".chars() {
        app.key(KeyCode::Backspace);
    }
    app.typed("source:nonsense");
    app.key(KeyCode::Enter);
    let refused = app.wait_text("\"nonsense\": expected one of");
    assert!(refused.contains("Decisions (1)"), "{refused}");
    // The writing keys do nothing here; Esc goes back to the queue as it was.
    let before = event_count(d);
    app.key(KeyCode::Esc); // leaves the filter line, unchanged
    app.typed("arRx");
    app.key(KeyCode::Esc);
    app.wait_text("Open questions (6)");
    assert_eq!(event_count(d), before);
    assert!(!app.screen().contains("Record this in your name?"));
    app.ch('q');
    app.join().expect("a clean quit");
}
