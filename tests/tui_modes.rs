//! Modes that cannot leak (issue 11, items 1 and 2): a key typed for an answer never
//! acts as a command. When the field closes under the person (answered elsewhere, the
//! source lost) a modal notice takes every key until Esc/Enter, says what happened, and
//! the typed text stays a draft; an answering key on someone else's question is a
//! modal too. Pure `update`: state AND effects asserted.
#![allow(clippy::unwrap_used)]

mod tui_fixtures;

use crossterm::event::KeyCode;
use oq::tui::effect::{Effect, Msg};
use oq::tui::link::LinkError;
use oq::tui::modal::Modal;
use oq::tui::model::{Focus, Model};
use oq::tui::theme::Theme;
use oq::tui::update::update;
use tui_fixtures::*;

/// Effects that write to the log or the outbox in someone's name.
fn writes(fx: &[Effect]) -> Vec<&Effect> {
    fx.iter()
        .filter(|e| {
            matches!(
                e,
                Effect::Submit { .. }
                    | Effect::Readiness { .. }
                    | Effect::PauseAuto { .. }
                    | Effect::DelegateNow { .. }
                    | Effect::Reconcile { .. }
            )
        })
        .collect()
}

/// Types `s` key by key, collecting every effect.
fn type_all(m: &mut Model, s: &str) -> Vec<Effect> {
    s.chars().flat_map(|c| update(m, ch(c))).collect()
}

fn screen(m: &Model) -> String {
    text(&render(m, &Theme::embedded("dark").unwrap(), 80, 24))
}

#[test]
fn the_field_closed_by_an_answer_elsewhere_takes_the_next_keys() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('i'));
    assert_eq!(m.focus, Focus::Answer);
    type_all(&mut m, "Pix fi");
    // q-1 is answered from another shell: the next list has no q-1.
    let rest: Vec<_> = sample("dev-a").into_iter().skip(1).collect();
    let fx = reloaded(&mut m, rest, true);
    assert!(
        fx.contains(&Effect::LookUp {
            question_id: "q-1".into()
        }),
        "{fx:?}"
    );
    assert!(matches!(&m.modal, Some(Modal::Interrupted(i)) if i.question_id == "q-1"));
    // The person keeps typing, believing they are still in the field: "a" would
    // accept q-2's suggestion, "r" record readiness, "s" sort.
    let fx = type_all(&mut m, "rst as a card, r s");
    assert!(writes(&fx).is_empty(), "{fx:?}");
    assert_eq!(m.sort, oq::tui::model::Sort::Oldest);
    assert_eq!(m.drafts.get("q-1").map(String::as_str), Some("Pix fi"));
    assert!(
        !fx.iter()
            .any(|e| matches!(e, Effect::RemoveDraft { question_id } if question_id == "q-1"))
    );
    // The look-up says who answered, in words.
    let by_ana = answered(sample("dev-a").remove(0), "ana", false, "Cards first", 0);
    looked_up(&mut m, by_ana);
    let s = screen(&m);
    assert!(s.contains("answered by ana just now"), "{s}");
    assert!(s.contains("«Cards first»"), "{s}");
    // Answered: nothing promises the draft back in a field it can never reopen.
    assert!(s.contains("your text was not sent"), "{s}");
    assert!(s.contains("drafts/q-1.txt"), "{s}");
    assert!(!s.contains("when you open that question again"), "{s}");
    // Esc closes the notice; only then do keys act again.
    update(&mut m, key(KeyCode::Esc));
    assert!(m.modal.is_none());
    update(&mut m, ch('s'));
    assert_eq!(m.sort, oq::tui::model::Sort::Newest);
}

#[test]
fn an_answer_seen_in_the_list_is_named_without_a_look_up() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('i'));
    type_all(&mut m, "Pix");
    let mut items = sample("dev-a");
    items[0] = answered(items[0].clone(), "ana", true, "Pix through the gateway", 3);
    let fx = reloaded(&mut m, items, true);
    assert!(!fx.iter().any(|e| matches!(e, Effect::LookUp { .. })));
    let Some(Modal::Interrupted(i)) = &m.modal else {
        panic!("no notice: {:?}", m.modal)
    };
    assert_eq!(
        i.what,
        "answered by ana 3m ago (accepted the suggestion): «Pix through the gateway»"
    );
}

#[test]
fn our_own_answer_landing_first_is_not_an_interruption() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('i'));
    type_all(&mut m, "Pix");
    let fx = update(&mut m, key(KeyCode::Enter));
    assert_eq!(writes(&fx).len(), 1);
    // The poll sees our own answer before its reply arrives.
    let rest: Vec<_> = sample("dev-a").into_iter().skip(1).collect();
    reloaded(&mut m, rest, true);
    assert!(m.modal.is_none(), "{:?}", m.modal);
}

#[test]
fn the_source_dropped_while_typing_takes_the_next_keys() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('i'));
    type_all(&mut m, "Pix first");
    let fx = update(
        &mut m,
        Msg::Revision {
            now: NOW,
            revision: Err(LinkError::unreachable("connection refused")),
        },
    );
    assert!(writes(&fx).is_empty(), "{fx:?}");
    let Some(Modal::Interrupted(i)) = &m.modal else {
        panic!("no notice: {:?}", m.modal)
    };
    assert!(i.what.contains("connection refused"), "{}", i.what);
    let fx = type_all(&mut m, ", then cards. a r d p");
    assert!(writes(&fx).is_empty(), "{fx:?}");
    assert_eq!(m.drafts.get("q-1").map(String::as_str), Some("Pix first"));
    let s = screen(&m);
    assert!(s.contains("The answer field closed"), "{s}");
}

#[test]
fn typing_on_someone_elses_question_records_nothing() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('j'));
    update(&mut m, ch('j'));
    assert_eq!(m.selected_id.as_deref(), Some("q-3"));
    // The person takes the inert box for a field: Enter, then an answer.
    let mut fx = update(&mut m, key(KeyCode::Enter));
    assert!(
        matches!(&m.modal, Some(Modal::Inert { .. })),
        "{:?}",
        m.modal
    );
    fx.extend(type_all(&mut m, "yes, ready: ship it after a review"));
    assert!(writes(&fx).is_empty(), "{fx:?}");
    assert!(matches!(&m.modal, Some(Modal::Inert { question_id, .. }) if question_id == "q-3"));
    let s = screen(&m);
    assert!(s.contains("only the person who started"), "{s}");
    update(&mut m, key(KeyCode::Enter));
    assert!(m.modal.is_none());
}

#[test]
fn the_inert_controls_are_text_not_a_field() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('j'));
    update(&mut m, ch('j'));
    let s = screen(&m);
    assert!(s.contains("read-only: you cannot type"), "{s}");
    // No inner "Answer" box inside the controls' frame.
    assert!(!s.contains("││┌ Answer"), "{s}");
}

/// Offline is a mode: once the source is lost, the field opened again is the person's,
/// and the failed polls that keep coming never close it; Enter sends into the outbox.
#[test]
fn failed_polls_while_offline_never_close_the_field() {
    let mut m = loaded("dev-a", sample("dev-a"));
    let lost = |m: &mut Model| {
        update(
            m,
            Msg::Revision {
                now: NOW,
                revision: Err(LinkError::unreachable("cannot reach the server")),
            },
        )
    };
    lost(&mut m);
    assert!(m.offline());
    update(&mut m, ch('i'));
    assert_eq!(m.focus, Focus::Answer);
    type_all(&mut m, "typed offline");
    for _ in 0..3 {
        let fx = lost(&mut m);
        assert!(writes(&fx).is_empty(), "{fx:?}");
        assert!(m.modal.is_none(), "{:?}", m.modal);
        assert_eq!(m.focus, Focus::Answer);
    }
    assert!(screen(&m).contains("offline"), "{}", screen(&m));
    let fx = update(&mut m, key(KeyCode::Enter));
    assert!(
        matches!(writes(&fx).as_slice(), [Effect::Submit { input, .. }] if input.resposta.as_deref() == Some("typed offline")),
        "{fx:?}"
    );
    // A poll failing while that answer is out does not take it from its own reply.
    assert!(writes(&lost(&mut m)).is_empty());
    assert!(m.in_flight.is_some());
}
