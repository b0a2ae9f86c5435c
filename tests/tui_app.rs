//! The whole app in-process: the real driver loop on ratatui's `TestBackend` over a real
//! local store (filled by the built `oq demo`), keys fed as events, the frames read back
//! (`tests/common/tui_app.rs`). What these prove goes through every layer the binary
//! has but the terminal itself, which `tui_pty.rs` covers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::tui_app::{App, Start};
use common::{answered_events, demo, event_count, oq, run};
use crossterm::event::KeyCode;

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

// Modes that cannot leak (issue 11, items 1-2): the race driven with a second handle on
// the same store; the store's events say what was recorded.

#[test]
fn the_field_closed_by_an_answer_from_another_handle_takes_the_keys_that_keep_coming() {
    let data = demo();
    let guest = id_of(data.path(), "Should guest checkout");
    let app = App::local(data.path(), "dev-a");
    app.wait_text("Open questions (6)");
    app.ch('j');
    app.wait_text("Should guest checkout be supported");
    app.ch('i');
    app.typed("Accounts opt");
    let draft = data.path().join("drafts").join(format!("{guest}.txt"));
    app.wait_for("the draft on disk", |_| {
        std::fs::read_to_string(&draft).is_ok_and(|d| d == "Accounts opt")
    });
    // Another shell answers the same question.
    let other = run(oq(data.path(), "dev-a").args(["answer", &guest, "--text", "Guests too"]));
    assert_eq!(other.code, 0, "{}", other.stderr);
    let after_other = event_count(data.path());
    app.wait_text("The answer field closed");
    // Settled: the notice promises nothing it cannot do, and says where the text is.
    let screen = app.wait_text("answered by dev-a");
    let screen = if screen.contains("your text was not sent") {
        screen
    } else {
        app.wait_text("your text was not sent")
    };
    assert!(screen.contains(&format!("drafts/{guest}.txt")), "{screen}");
    assert!(
        !screen.contains("when you open that question again"),
        "{screen}"
    );
    // The person keeps typing: "a" would accept, "r" record readiness, "x" dismiss.
    app.typed("ional; a r R x d p");
    app.wait_text("The answer field closed");
    assert_eq!(
        event_count(data.path()),
        after_other,
        "nothing was recorded"
    );
    assert_eq!(answered_events(data.path(), &guest), 1);
    assert_eq!(std::fs::read_to_string(&draft).unwrap(), "Accounts opt");
    app.key(KeyCode::Esc);
    app.wait_for("the notice gone", |s| {
        !s.contains("The answer field closed")
    });
    app.ch('q');
    app.join().expect("a clean quit");
    assert_eq!(event_count(data.path()), after_other);
}

#[test]
fn typing_on_someone_elses_question_records_nothing() {
    let data = demo();
    let before = event_count(data.path());
    let app = App::local(data.path(), "ana");
    app.wait_text("Which payment provider should checkout offer first?");
    // The inert controls read as text, so Enter then an answer is a natural mistake.
    app.wait_text("read-only: you cannot type an answer here");
    app.key(KeyCode::Enter);
    app.wait_text("You cannot answer this question");
    app.typed("yes, ready: r R a");
    app.wait_text("You cannot answer this question");
    app.key(KeyCode::Esc);
    app.wait_for("the notice gone", |s| {
        !s.contains("You cannot answer this question")
    });
    app.ch('q');
    app.join().expect("a clean quit");
    assert_eq!(event_count(data.path()), before, "nothing was recorded");
}

// Every key that writes to the log is deliberate (issue 11, item 6): the key shows what
// will be recorded, and only the same key again or Enter records it.

fn draft_file(dir: &Path, id: &str) -> std::path::PathBuf {
    dir.join("drafts").join(format!("{id}.txt"))
}

/// The app on the demo with a draft typed for the payment question (the top row, with a
/// suggestion), and the field left.
fn with_a_draft(data: &Path, start: Start) -> (App, String) {
    let pay = id_of(data, "Which payment provider");
    let app = App::start(start);
    app.wait_text("Open questions (6)");
    app.wait_text("Which payment provider should checkout offer first?");
    app.ch('i');
    app.typed("Cards first");
    app.key(KeyCode::Esc);
    let draft = draft_file(data, &pay);
    app.wait_for("the draft on disk", |_| {
        std::fs::read_to_string(&draft).is_ok_and(|d| d == "Cards first")
    });
    (app, pay)
}

#[test]
fn accept_over_a_draft_records_nothing_and_keeps_the_draft_until_confirmed() {
    let data = demo();
    let (app, pay) = with_a_draft(data.path(), Start::new(data.path(), "dev-a"));
    let before = event_count(data.path());
    app.ch('a');
    let screen = app.wait_text("Record this in your name?");
    assert!(screen.contains("You have a draft for"), "{screen}");
    assert!(screen.contains("Accept the suggestion"), "{screen}");
    // Keys other than the confirming ones are swallowed while it stands.
    app.typed("jrRs");
    app.key(KeyCode::Esc);
    app.wait_text("cancelled: nothing was recorded");
    assert_eq!(event_count(data.path()), before, "nothing was recorded");
    let draft = draft_file(data.path(), &pay);
    assert_eq!(std::fs::read_to_string(&draft).unwrap(), "Cards first");
    // The same key again records it, and only then the draft goes.
    app.ch('a');
    app.wait_text("Record this in your name?");
    app.ch('a');
    app.wait_text("suggestion accepted");
    assert_eq!(answered_events(data.path(), &pay), 1);
    let shown = run(oq(data.path(), "dev-a").args(["show", &pay, "--json"]));
    assert_eq!(shown.json()["answer"]["aceitouSugestao"], true);
    app.wait_for("the draft removed", |_| !draft.exists());
    app.ch('q');
    app.join().expect("a clean quit");
}

#[test]
fn a_question_answered_while_the_confirmation_stands_records_nothing() {
    let data = demo();
    let pay = id_of(data.path(), "Which payment provider");
    let app = App::local(data.path(), "dev-a");
    app.wait_text("Which payment provider should checkout offer first?");
    app.ch('a');
    app.wait_text("Record this in your name?");
    let other = run(oq(data.path(), "dev-a").args(["answer", &pay, "--text", "Pix only"]));
    assert_eq!(other.code, 0, "{}", other.stderr);
    let after_other = event_count(data.path());
    app.wait_text("Open questions (5)");
    app.ch('a');
    app.wait_text("the question changed meanwhile: nothing was recorded");
    assert_eq!(event_count(data.path()), after_other);
    let shown = run(oq(data.path(), "dev-a").args(["show", &pay, "--json"]));
    assert_eq!(shown.json()["answer"]["resposta"], "Pix only");
    app.ch('q');
    app.join().expect("a clean quit");
}

#[test]
fn with_confirmation_off_a_key_records_at_once_but_never_over_a_draft() {
    let data = demo();
    let mut start = Start::new(data.path(), "dev-a");
    start.config = "[tui]\nconfirm = false\n".into();
    let (app, pay) = with_a_draft(data.path(), start);
    let before = event_count(data.path());
    app.ch('r');
    app.wait_text("I'm ready recorded");
    assert_eq!(event_count(data.path()), before + 1, "one readiness event");
    app.ch('a');
    let screen = app.wait_text("Record this in your name?");
    assert!(screen.contains("You have a draft for"), "{screen}");
    assert_eq!(event_count(data.path()), before + 1);
    app.key(KeyCode::Enter);
    app.wait_text("suggestion accepted");
    assert_eq!(answered_events(data.path(), &pay), 1);
    app.ch('q');
    app.join().expect("a clean quit");
}

#[test]
fn dismiss_asks_then_closes_the_question_in_the_authors_name() {
    let data = demo();
    let pay = id_of(data.path(), "Which payment provider");
    let before = event_count(data.path());
    let app = App::local(data.path(), "dev-a");
    app.wait_text("Which payment provider should checkout offer first?");
    app.ch('x');
    let screen = app.wait_text("Record this in your name?");
    assert!(screen.contains("close it without an answer"), "{screen}");
    assert_eq!(event_count(data.path()), before);
    app.ch('x');
    app.wait_text(&format!("dismissed {pay}"));
    app.wait_text("Open questions (5)");
    let shown = run(oq(data.path(), "dev-a").args(["show", &pay, "--json"]));
    assert_eq!(shown.json()["closed"]["by"], "dev-a", "{}", shown.stdout);
    app.ch('q');
    app.join().expect("a clean quit");
}
