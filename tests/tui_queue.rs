//! The whole queue in the whole app: with 53 open questions (more than a page), the TUI
//! says how many are loaded of how many, `G` reaches the 53rd, the search finds a
//! question beyond the loaded page, "newest first" puts the newest on top, and PgDn
//! moves a screenful — over a real local store, through the real loop
//! (`tests/common/tui_app.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::tui_app::App;
use crossterm::event::KeyCode;
use oq::domain::{Actor, DeclareInput, Role, SessionKind};

/// 53 open questions in `p` for alice, numbered in the order declared; the 51st alone
/// speaks of a zeppelin.
fn fifty_three(dir: &std::path::Path) {
    let e = common::engine(dir);
    e.start_session(
        &Actor::person("alice"),
        "p",
        SessionKind::Conversation,
        Some("s-alice"),
    )
    .unwrap();
    for i in 0..53 {
        let pergunta = if i == 50 {
            "Where does the Zeppelin hangar go?".to_string()
        } else {
            format!("Routine question number {i}?")
        };
        let input = DeclareInput {
            pergunta,
            sugestao: None,
            afeta: Default::default(),
            session_id: "s-alice".into(),
            idempotency_key: None,
        };
        e.declare(&Actor::agent(Role::Po), "p", &input).unwrap();
    }
}

/// The selected row's text (the row marked `>`).
fn selected_row(screen: &str) -> String {
    screen
        .lines()
        .find_map(|l| l.split_once("│> ").map(|(_, rest)| rest.to_string()))
        .unwrap_or_default()
}

#[test]
fn the_counts_say_what_is_loaded_and_g_reaches_the_last_question_of_the_filter() {
    let dir = tempfile::tempdir().unwrap();
    fifty_three(dir.path());
    let app = App::local(dir.path(), "alice");
    app.wait_text("Open questions (50 of 53 loaded)");
    app.ch('G');
    let s = app.wait_for("all 53 loaded and the last selected", |s| {
        s.contains("Open questions (53)")
            && selected_row(s).starts_with("Routine question number 52")
    });
    assert!(!s.contains("loaded)"), "{s}");
    app.ch('q');
    app.join().expect("a clean quit");
}

#[test]
fn the_search_finds_a_question_beyond_the_loaded_page_and_esc_brings_the_queue_back() {
    let dir = tempfile::tempdir().unwrap();
    fifty_three(dir.path());
    let app = App::local(dir.path(), "alice");
    app.wait_text("Open questions (50 of 53 loaded)");
    app.ch('/');
    app.typed("zeppelin");
    let s = app.wait_text("Open questions (1) · /zeppelin");
    assert!(
        selected_row(&s).starts_with("Where does the Zeppelin"),
        "{s}"
    );
    app.key(KeyCode::Esc);
    app.wait_text("Open questions (50 of 53 loaded)");
    app.ch('q');
    app.join().expect("a clean quit");
}

#[test]
fn newest_first_puts_the_newest_question_of_the_filter_on_top() {
    let dir = tempfile::tempdir().unwrap();
    fifty_three(dir.path());
    let app = App::local(dir.path(), "alice");
    app.wait_text("Open questions (50 of 53 loaded)");
    app.ch('s');
    let top = |s: &str| {
        s.lines()
            .find(|l| l.contains("Routine question number") || l.contains("Zeppelin"))
            .unwrap_or_default()
            .to_string()
    };
    let s = app.wait_for("the newest on top", |s| {
        top(s).contains("Routine question number 52")
    });
    assert!(s.contains("Open questions (50 of 53 loaded)"), "{s}");
    app.ch('q');
    app.join().expect("a clean quit");
}

#[test]
fn page_down_moves_a_screenful_of_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    fifty_three(dir.path());
    let app = App::local(dir.path(), "alice");
    app.wait_text("Open questions (50 of 53 loaded)");
    // What a screenful is at the harness's 100×30, as the view lays it out.
    let keymap = oq::tui::keymap::Keymap::default();
    let mut model = oq::tui::model::Model::new("alice", "local", None, 0, keymap);
    model.screen = (100, 30);
    let rows = oq::tui::view::queue_rows(&model);
    assert!(
        rows > 10,
        "a 30-row screen shows more than ten rows: {rows}"
    );
    app.key(KeyCode::PageDown);
    let want = format!("Routine question number {rows}?");
    app.wait_for(&want, |s| selected_row(s).starts_with(&want));
    app.key(KeyCode::PageUp);
    app.wait_for("the first row again", |s| {
        selected_row(s).starts_with("Routine question number 0?")
    });
    app.ch('q');
    app.join().expect("a clean quit");
}

/// A search most questions match: its total is where the count stopped, and the title
/// says "at least" (`1000+`), not a count it never made.
#[test]
fn a_common_search_says_its_total_is_at_least_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    fifty_three(dir.path());
    let e = common::engine(dir.path());
    for i in 53..=oq::engine::SEARCH_TOTAL_CAP + 1 {
        let input = DeclareInput {
            pergunta: format!("Routine question number {i}?"),
            sugestao: None,
            afeta: Default::default(),
            session_id: "s-alice".into(),
            idempotency_key: None,
        };
        e.declare(&Actor::agent(Role::Po), "p", &input).unwrap();
    }
    drop(e);
    let app = App::local(dir.path(), "alice");
    app.wait_text("Open questions (50 of 1002 loaded)");
    app.ch('/');
    app.typed("routine");
    // (the pane is too narrow for the title's " · /routine" after it)
    app.wait_text("Open questions (50 of 1000+ loaded)");
    app.key(KeyCode::Esc);
    app.wait_text("Open questions (50 of 1002 loaded)");
    app.ch('q');
    app.join().expect("a clean quit");
}
