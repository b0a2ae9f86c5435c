//! Snooze through the whole app over a real local store (the built `oq demo`), keys
//! fed as events (`tests/common/tui_app.rs`): what `tui_snooze.rs` proves of `update`
//! reaches the log — z, a duration and the confirming key record one
//! `open_question.snoozed` by this person, the question leaves the open view and its
//! title counts it; Z lists it with its return time; u and its confirmation record one
//! `open_question.unsnoozed` and it is back. Esc records nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::tui_app::App;
use common::{demo, event_count, oq, run};
use crossterm::event::KeyCode;

/// The open question whose text starts with `starts`.
fn id_of(dir: &Path, starts: &str) -> String {
    let out = run(oq(dir, "dev-a").args(["list", "--json", "--status", "open"]));
    out.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["pergunta"].as_str().unwrap().starts_with(starts))
        .expect("the demo's question")["questionId"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The snooze events of `id`: (type, payload), in log order.
fn snooze_events(dir: &Path, id: &str) -> Vec<(String, serde_json::Value)> {
    let conn = rusqlite::Connection::open(common::store_file(dir)).unwrap();
    let mut stmt = conn
        .prepare(
            "SELECT type, payload FROM events WHERE question_id = ?1
              AND type IN ('open_question.snoozed', 'open_question.unsnoozed') ORDER BY seq",
        )
        .unwrap();
    stmt.query_map([id], |r| Ok((r.get(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .map(|r| {
            let (t, p) = r.unwrap();
            (t, serde_json::from_str(&p).unwrap())
        })
        .collect()
}

/// z, the prompt, `text` typed, then `last`.
fn prompt(app: &App, text: &str, last: KeyCode) {
    app.ch('z');
    app.wait_text("Back at:");
    app.typed(text);
    app.key(last);
}

#[test]
fn z_a_duration_and_the_confirmation_snooze_it_out_of_the_open_view_and_u_brings_it_back() {
    let data = demo();
    let d = data.path();
    let pay = id_of(d, "Which payment provider");
    let before = event_count(d);
    let app = App::local(d, "dev-a");
    app.wait_text("Open questions (6)");
    app.wait_text("Which payment provider should checkout offer first?");

    // Esc at the prompt records nothing.
    prompt(&app, "2h", KeyCode::Esc);
    app.wait_text("snooze cancelled: nothing was recorded");
    assert_eq!(event_count(d), before);

    // A refused time is named in the prompt; nothing is recorded.
    prompt(&app, "yesterday", KeyCode::Enter);
    app.wait_text("is not a time");
    assert_eq!(event_count(d), before);
    for _ in 0.."yesterday".len() {
        app.key(KeyCode::Backspace);
    }
    app.typed("2h");
    app.key(KeyCode::Enter);
    let confirm = app.wait_text("Record this in your name?");
    assert!(
        confirm.contains(&format!("Snooze {pay} until")),
        "{confirm}"
    );
    assert_eq!(event_count(d), before, "the confirmation records nothing");
    app.ch('z');
    app.wait_text(&format!("snoozed {pay} until"));
    let screen = app.wait_text("Open questions (5) · 1 snoozed");
    assert!(
        !screen.contains("Which payment provider"),
        "the question left the open view:\n{screen}"
    );
    let events = snooze_events(d, &pay);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].0, "open_question.snoozed");
    assert_eq!(events[0].1["by"], "dev-a");
    assert_eq!(event_count(d), before + 1, "one event, nothing else");

    // Z: the snoozed list, with when it is back.
    app.ch('Z');
    let listed = app.wait_text("Snoozed questions (1)");
    // Two hours from the app's clock, less however long the test took since.
    assert!(
        listed.contains("back in 1h") || listed.contains("back in 2h"),
        "{listed}"
    );
    // u, asked first, then confirmed: back now.
    app.ch('u');
    app.wait_text(&format!("Unsnooze {pay}: back in your open view now"));
    app.ch('u');
    app.wait_text(&format!("unsnoozed {pay}: back in the open view"));
    app.wait_text("nothing is snoozed");
    app.ch('Z');
    app.wait_text("Open questions (6)");
    let events = snooze_events(d, &pay);
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[1].0, "open_question.unsnoozed");
    let shown = run(oq(d, "dev-a").args(["list", "--snoozed", "--json"]));
    assert_eq!(shown.json()["total"], 0, "{}", shown.stdout);
    app.ch('q');
    app.join().expect("a clean quit");
}
