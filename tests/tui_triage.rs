//! Triage by marking through the pure `update`: marks, the review (recorded or skipped
//! with the reason), one confirmation, each question its own submission, and one
//! failing reply that does not lose the others.
#![allow(clippy::unwrap_used)]

mod tui_fixtures;

use crossterm::event::KeyCode;
use oq::tui::effect::{Effect, Msg};
use oq::tui::triage::{Outcome, Plan, Stage};
use oq::tui::update::update;
use tui_fixtures::*;

fn submitted(fx: &[Effect]) -> Vec<(u64, String)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Submit {
                id, question_id, ..
            } => Some((*id, question_id.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn marked_questions_are_reviewed_confirmed_once_and_each_reported() {
    let mut m = loaded("dev-a", sample("dev-a"));
    // q-1 (suggestion), q-2 (none), q-3 (ana's), q-4 (suggestion): all marked by a range.
    update(&mut m, ch('V'));
    for _ in 0..3 {
        update(&mut m, ch('j'));
    }
    update(&mut m, key(KeyCode::Char(' ')));
    assert_eq!(m.triage.marks.len(), 4);
    let fx = update(&mut m, ch('a'));
    assert!(submitted(&fx).is_empty(), "{fx:?}");
    let s = m.triage.screen.as_ref().unwrap();
    let plans: Vec<bool> = s
        .items
        .iter()
        .map(|i| matches!(i.plan, Plan::Record { .. }))
        .collect();
    assert_eq!(plans, vec![true, false, false, true]);
    assert!(matches!(&s.items[2].plan, Plan::Skip(w) if w.starts_with("not yours")));
    // The confirming key: the first goes out; its refusal does not stop the next.
    let fx = update(&mut m, ch('a'));
    let first = submitted(&fx);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].1, "q-1");
    let fx = update(
        &mut m,
        Msg::Answered {
            id: first[0].0,
            question_id: "q-1".into(),
            result: Err("pergunta_ja_respondida: answered elsewhere".into()),
        },
    );
    let second = submitted(&fx);
    assert_eq!(second.len(), 1);
    assert_eq!(second[0].1, "q-4");
    let s = m.triage.screen.as_ref().unwrap();
    assert!(matches!(&s.items[0].outcome, Some(Outcome::Failed(_))));
    assert_eq!(s.stage, Stage::Running);
    assert!(m.triage.marks.is_empty());
}

#[test]
fn another_key_before_the_confirmation_disarms_it() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, key(KeyCode::Char(' ')));
    update(&mut m, ch('a'));
    let mut fx = update(&mut m, ch('c'));
    fx.extend(update(&mut m, key(KeyCode::Enter)));
    assert!(submitted(&fx).is_empty(), "{fx:?}");
    update(&mut m, key(KeyCode::Esc));
    assert!(m.triage.screen.is_none());
    assert_eq!(m.triage.marks.len(), 1, "the marks stay after a cancel");
}
