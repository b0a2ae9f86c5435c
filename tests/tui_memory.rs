//! The memory of answers in the TUI (issue 17 part 2), through the pure `update`: the
//! selection on a question the person can answer asks for the earlier answer as an
//! effect, its reply arrives as a message and the pane shows it; `c` copies it into the
//! field to edit, never over typed text, never sending.
#![allow(clippy::unwrap_used)]

mod tui_fixtures;

use crossterm::event::KeyCode;
use oq::domain::similar::Resemblance;
use oq::tui::effect::{Effect, Msg};
use oq::tui::model::{Focus, Model};
use oq::tui::theme::Theme;
use oq::tui::update::update;
use oq::wire::SimilarAnswer;
use tui_fixtures::*;

/// 3 Nov 2025, 12:00 UTC (the fixtures' clock is 1 Jan 2026).
const NOV_3: i64 = 1_762_171_200_000;

fn hint(by: &str) -> SimilarAnswer {
    SimilarAnswer {
        question_id: "q-old".into(),
        pergunta: "Which payment provider should the checkout offer first?".into(),
        resposta: "Pix first, then cards".into(),
        respondida_por: by.into(),
        answered_at: NOV_3,
        resemblance: Resemblance::Similar,
        similarity: 88,
    }
}

fn recalled(m: &mut Model, id: &str, s: Option<SimilarAnswer>) -> Vec<Effect> {
    update(
        m,
        Msg::Recalled {
            question_id: id.into(),
            result: Ok(s),
        },
    )
}

fn asks(fx: &[Effect]) -> Vec<String> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::RecallSimilar {
                question_id,
                project,
            } => {
                assert_eq!(project, "loja");
                Some(question_id.clone())
            }
            _ => None,
        })
        .collect()
}

fn notice(m: &Model) -> String {
    m.notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default()
}

fn screen(m: &Model) -> String {
    text(&render(m, &Theme::embedded("dark").unwrap(), 220, 40))
}

#[test]
fn the_selection_asks_for_the_earlier_answer_as_an_effect_and_only_where_one_can_answer() {
    let mut m = loaded("dev-a", sample("dev-a"));
    // The first load selected q-1: asked already.
    assert_eq!(m.memory.asked.as_deref(), Some("q-1"));
    assert_eq!(asks(&update(&mut m, ch('j'))), ["q-2"]);
    // q-3 is another person's session: nothing to copy into, nothing asked.
    assert!(asks(&update(&mut m, ch('j'))).is_empty());
    assert_eq!(m.memory.asked, None);
    assert_eq!(asks(&update(&mut m, ch('k'))), ["q-2"]);
    // A reload that keeps the selection asks nothing again.
    let items = sample("dev-a");
    assert!(asks(&reloaded(&mut m, items, true)).is_empty());
}

#[test]
fn the_reply_shows_the_hint_and_a_stale_one_is_dropped() {
    let mut m = loaded("dev-a", sample("dev-a"));
    assert!(!screen(&m).contains("similar question"));
    recalled(&mut m, "q-2", Some(hint("dev-a")));
    assert!(
        m.memory.for_question("q-1").is_none(),
        "a reply for another question"
    );
    recalled(&mut m, "q-1", Some(hint("dev-a")));
    let s = screen(&m);
    assert!(
        s.contains("You answered a similar question on 3 Nov 2025: «Pix first, then cards»"),
        "{s}"
    );
    assert!(
        s.contains("to «Which payment provider should the checkout offer first?»"),
        "{s}"
    );
    // Someone else's answer says who.
    recalled(&mut m, "q-1", Some(hint("ana")));
    assert!(screen(&m).contains("ana answered a similar question on 3 Nov 2025"));
    // Moving away forgets it; a failed lookup shows nothing.
    update(&mut m, ch('j'));
    assert!(!screen(&m).contains("similar question"));
    update(
        &mut m,
        Msg::Recalled {
            question_id: "q-2".into(),
            result: Err("unreachable".into()),
        },
    );
    assert!(m.memory.for_question("q-2").is_none());
}

#[test]
fn c_copies_the_answer_into_the_field_to_edit_and_sends_nothing() {
    let mut m = loaded("dev-a", sample("dev-a"));
    recalled(&mut m, "q-1", Some(hint("ana")));
    assert_eq!(m.focus, Focus::Queue);
    let fx = update(&mut m, ch('c'));
    assert_eq!(m.focus, Focus::Answer, "the field opens on it");
    assert_eq!(m.form.as_ref().unwrap().value(), "Pix first, then cards");
    assert!(m.in_flight.is_none());
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Submit { .. })),
        "never answers: {fx:?}"
    );
    assert!(fx.contains(&Effect::SaveDraft {
        question_id: "q-1".into(),
        text: "Pix first, then cards".into()
    }));
    assert!(
        notice(&m).starts_with("copied ana's answer"),
        "{}",
        notice(&m)
    );
    // Edited like any typed text; Enter is still what sends.
    typed(&mut m, " (3DS)");
    assert_eq!(
        m.form.as_ref().unwrap().value(),
        "Pix first, then cards (3DS)"
    );
}

#[test]
fn c_never_overwrites_typed_text() {
    let mut m = loaded("dev-a", sample("dev-a"));
    recalled(&mut m, "q-1", Some(hint("dev-a")));
    update(&mut m, ch('i'));
    typed(&mut m, "Boleto");
    update(&mut m, key(KeyCode::Esc));
    let fx = update(&mut m, ch('c'));
    assert_eq!(m.form.as_ref().unwrap().value(), "Boleto");
    assert_eq!(m.focus, Focus::Queue);
    assert!(
        notice(&m).contains("already holds your text"),
        "{}",
        notice(&m)
    );
    assert!(
        !fx.iter()
            .any(|e| matches!(e, Effect::SaveDraft { .. } | Effect::Submit { .. })),
        "{fx:?}"
    );
}

#[test]
fn c_without_a_hint_or_on_a_question_one_cannot_answer_copies_nothing() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('c'));
    assert!(m.form.as_ref().unwrap().value().is_empty());
    assert_eq!(m.focus, Focus::Queue);
    assert!(notice(&m).contains("no earlier answer"), "{}", notice(&m));
    update(&mut m, ch('j'));
    update(&mut m, ch('j'));
    assert_eq!(m.current().unwrap().question_id, "q-3");
    update(&mut m, ch('c'));
    assert!(m.form.is_none());
    assert!(
        m.modal.is_some(),
        "the refusal to a non-author is the inert modal"
    );
}
