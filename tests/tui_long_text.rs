//! Long text can be read and written (issue 11, item 8): the answer field wraps and shows
//! a live count against the domain's limit; an answer over it is refused before sending
//! and stays a draft; the question and the answered record scroll in full; the help
//! overlay scrolls, filters as you type, and Esc, `q` or `?` close it. Pure `update` and
//! the real view on `TestBackend`; snapshots at 80×24.
#![allow(clippy::unwrap_used)]

mod tui_fixtures;

use crossterm::event::KeyCode;
use oq::domain::question::RESPOSTA_MAX_CHARS;
use oq::tui::effect::{Effect, Msg};
use oq::tui::model::Model;
use oq::tui::theme::Theme;
use oq::tui::update::update;
use tui_fixtures::*;

fn screen(m: &Model) -> String {
    text(&render(m, &Theme::embedded("dark").unwrap(), 80, 24))
}

/// `n` characters of words, ending in a word that says where the text ends.
fn words(n: usize) -> String {
    let mut s = String::new();
    while s.chars().count() + 12 < n {
        s.push_str("lorem ipsum ");
    }
    while s.chars().count() + 3 < n {
        s.push('x');
    }
    s.push_str(" ok");
    s.truncate(n);
    s
}

#[test]
fn the_field_wraps_and_counts_as_the_domain_does() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('i'));
    update(&mut m, Msg::Paste(words(1834)));
    let s = screen(&m);
    assert!(s.contains("1834/2000"), "{s}");
    // Wrapped: the field's rows all hold text, none runs off to the right.
    assert!(s.matches("lorem ipsum").count() >= 4, "{s}");
    insta::assert_snapshot!("answer_counter_80x24", s);
}

#[test]
fn an_answer_over_the_limit_is_refused_before_sending_and_stays_a_draft() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('i'));
    update(&mut m, Msg::Paste(words(RESPOSTA_MAX_CHARS + 10)));
    assert!(screen(&m).contains("2010/2000"));
    let fx = update(&mut m, key(KeyCode::Enter));
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Submit { .. })),
        "{fx:?}"
    );
    assert_eq!(
        m.notice.as_ref().unwrap().text,
        "the answer is 2010 characters, 10 over the limit of 2000; nothing was sent"
    );
    assert_eq!(m.drafts["q-1"].chars().count(), 2010);
}

#[test]
fn the_answered_record_scrolls_in_full() {
    let long = words(2000);
    let q = answered(
        question("q-9", "dev-a", "dev-a", "Which shipping rule?", None, 300),
        "ana",
        false,
        &long,
        240,
    );
    let mut m = loaded("dev-a", vec![q]);
    let s = screen(&m);
    assert!(s.contains("answered by ana"), "{s}");
    assert!(!s.contains("xx ok"), "the end does not fit at first:\n{s}");
    for _ in 0..200 {
        update(&mut m, ch('J'));
    }
    let s = screen(&m);
    assert!(s.contains("xx ok"), "the last words are reached:\n{s}");
    assert!(s.contains(" of "), "the position is shown:\n{s}");
    // Back to the top with as many K as the rows scrolled, not more.
    for _ in 0..200 {
        update(&mut m, ch('K'));
    }
    assert!(screen(&m).contains("Which shipping rule?"));
}

#[test]
fn the_help_overlay_filters_as_you_type_and_scrolls() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('?'));
    let s = screen(&m);
    assert!(!s.contains("next step: pick and go on"), "{s}");
    for _ in 0..60 {
        update(&mut m, key(KeyCode::Down));
    }
    assert!(screen(&m).contains("next step: pick and go on"));
    // Typing filters; keys behind the overlay do nothing meanwhile.
    for c in "dismiss".chars() {
        assert!(update(&mut m, ch(c)).is_empty());
    }
    let s = screen(&m);
    assert!(
        s.contains("dismiss without an answer") && !s.contains("move down"),
        "{s}"
    );
    assert!(s.contains("filter: dismiss"), "{s}");
    // With a filter, q is a letter of it; ? closes.
    update(&mut m, ch('q'));
    assert!(screen(&m).contains("no key matches «dismissq»"));
    update(&mut m, ch('?'));
    assert!(m.help.is_none());
    // q and Esc close it too.
    update(&mut m, ch('?'));
    update(&mut m, ch('q'));
    assert!(m.help.is_none() && !m.quit);
    update(&mut m, ch('?'));
    update(&mut m, key(KeyCode::Esc));
    assert!(m.help.is_none());
}
