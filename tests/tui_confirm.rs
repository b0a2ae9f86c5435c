//! Every key that writes in the person's name is deliberate (issue 11, item 6): accept,
//! readiness, pause, delegate and dismiss show what will be recorded and wait for the
//! same key again or Enter; Esc cancels; `[tui] confirm = false` skips the question but
//! never over a draft. Pure `update`: state AND effects asserted.
#![allow(clippy::unwrap_used)]

mod tui_fixtures;

use crossterm::event::KeyCode;
use oq::domain::AnswerInput;
use oq::domain::readiness::ReadinessGate;
use oq::tui::effect::Effect;
use oq::tui::modal::Modal;
use oq::tui::model::Model;
use oq::tui::theme::Theme;
use oq::tui::update::update;
use tui_fixtures::*;

fn me() -> Model {
    loaded("dev-a", sample("dev-a"))
}

fn submits(fx: &[Effect]) -> Vec<&AnswerInput> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Submit { input, .. } => Some(input),
            _ => None,
        })
        .collect()
}

fn asked(m: &Model) -> Vec<String> {
    match &m.modal {
        Some(Modal::Confirm(_)) => m.modal.as_ref().unwrap().lines(),
        other => panic!("no confirmation: {other:?}"),
    }
}

#[test]
fn accept_shows_what_is_recorded_and_waits_for_the_same_key() {
    let mut m = me();
    let fx = update(&mut m, ch('a'));
    assert!(submits(&fx).is_empty(), "{fx:?}");
    assert_eq!(
        asked(&m),
        vec![
            "Accept the suggestion as the answer to q-1, in your name (dev-a): «Pix through the current gateway; cards in the next release»"
        ]
    );
    let fx = update(&mut m, ch('a'));
    assert_eq!(submits(&fx), vec![&AnswerInput::accept()]);
    assert!(m.modal.is_none());
}

/// A sentence typed where the person thought a field was open: its letters are not
/// commands, and neither the `a` of "cards" nor the Enter at its end records anything.
#[test]
fn a_key_other_than_the_confirming_one_disarms_the_question() {
    let mut m = me();
    update(&mut m, ch('a'));
    let mut fx = Vec::new();
    for c in "Pix first, cards later".chars() {
        fx.extend(update(&mut m, ch(c)));
    }
    fx.extend(update(&mut m, key(KeyCode::Enter)));
    assert!(fx.is_empty(), "typed text acted: {fx:?}");
    assert_eq!(m.selected_id.as_deref(), Some("q-1"));
    let lines = asked(&m);
    assert!(
        lines.last().unwrap().contains("will not be recorded"),
        "{lines:?}"
    );
    let keys = m.modal.as_ref().unwrap().keys(&m.keymap);
    assert_eq!(keys, vec![("Esc".to_string(), "closes it")]);
    let fx = update(&mut m, key(KeyCode::Esc));
    assert!(fx.is_empty() && m.modal.is_none(), "{fx:?}");
    // The queue is itself again: `a` asks afresh, and `a` again records.
    update(&mut m, ch('a'));
    let fx = update(&mut m, ch('a'));
    assert_eq!(submits(&fx), vec![&AnswerInput::accept()]);
}

#[test]
fn enter_confirms_and_esc_cancels() {
    let mut m = me();
    update(&mut m, ch('a'));
    let fx = update(&mut m, key(KeyCode::Esc));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(m.modal.is_none());
    assert_eq!(
        m.notice.as_ref().unwrap().text,
        "cancelled: nothing was recorded"
    );
    update(&mut m, ch('r'));
    assert_eq!(
        asked(&m),
        vec!["Record \"I'm ready\" for project loja, in your name (dev-a)."]
    );
    let fx = update(&mut m, key(KeyCode::Enter));
    assert_eq!(
        fx,
        vec![Effect::Readiness {
            project: "loja".into(),
            gate: ReadinessGate::ImReady
        }]
    );
}

#[test]
fn a_refused_write_asks_nothing() {
    let mut m = me();
    update(&mut m, ch('j'));
    // q-2 has no suggestion: the refusal at once, no question.
    let fx = update(&mut m, ch('a'));
    assert!(fx.is_empty());
    assert!(m.modal.is_none());
    assert_eq!(
        m.notice.as_ref().unwrap().text,
        "this question has no suggestion to accept"
    );
}

#[test]
fn the_confirmation_can_be_switched_off_but_not_over_a_draft() {
    let mut m = me();
    m.behaviour.confirm = false;
    let fx = update(&mut m, ch('r'));
    assert!(
        matches!(fx.as_slice(), [Effect::Readiness { .. }]),
        "{fx:?}"
    );
    // A draft for q-1: accepting says so first, even with confirmation off.
    update(&mut m, ch('i'));
    typed(&mut m, "Cards first");
    update(&mut m, key(KeyCode::Esc));
    let fx = update(&mut m, ch('a'));
    assert!(submits(&fx).is_empty(), "{fx:?}");
    let lines = asked(&m);
    assert_eq!(
        lines[1],
        "You have a draft for q-1: «Cards first». Accepting discards it."
    );
    // Nothing deleted the draft yet; only the recorded answer will.
    assert!(!fx.iter().any(|e| matches!(e, Effect::RemoveDraft { .. })));
    assert_eq!(m.drafts.get("q-1").map(String::as_str), Some("Cards first"));
    let fx = update(&mut m, ch('a'));
    assert_eq!(submits(&fx).len(), 1);
}

#[test]
fn dismiss_is_the_authors_and_confirmed() {
    let mut m = me();
    let fx = update(&mut m, ch('x'));
    assert!(fx.is_empty());
    assert_eq!(
        asked(&m),
        vec!["Dismiss q-1: close it without an answer, in your name (dev-a)."]
    );
    let fx = update(&mut m, ch('x'));
    assert_eq!(
        fx,
        vec![Effect::Dismiss {
            question_id: "q-1".into(),
            project: "loja".into()
        }]
    );
    // Someone else's question: the reason, never a question to confirm.
    update(&mut m, ch('j'));
    update(&mut m, ch('j'));
    assert!(update(&mut m, ch('x')).is_empty());
    assert!(matches!(m.modal, Some(Modal::Inert { .. })));
}

#[test]
fn a_change_between_the_question_and_the_key_records_nothing() {
    let mut m = me();
    update(&mut m, ch('a'));
    // q-1 is answered elsewhere meanwhile: the list moves the selection to q-2.
    let rest: Vec<_> = sample("dev-a").into_iter().skip(1).collect();
    reloaded(&mut m, rest, true);
    let fx = update(&mut m, ch('a'));
    assert!(submits(&fx).is_empty(), "{fx:?}");
    assert!(
        m.notice
            .as_ref()
            .unwrap()
            .text
            .starts_with("the question changed meanwhile")
    );
}

#[test]
fn the_confirmation_on_screen() {
    let mut m = me();
    update(&mut m, ch('i'));
    typed(&mut m, "Cards first");
    update(&mut m, key(KeyCode::Esc));
    update(&mut m, ch('a'));
    let screen = text(&render(&m, &Theme::embedded("dark").unwrap(), 80, 24));
    insta::assert_snapshot!("confirm_accept_over_a_draft_80x24", screen);
}
