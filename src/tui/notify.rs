//! Notifications of new questions (the bell, OSC 9/777), pure: they fire only for
//! questions this person can answer, name the question, and count grammatically.
//!
//! - Every counts reply carries the newest open questions of the scope (one page,
//!   newest first). Their ids are remembered; the first reply only remembers (what was
//!   open at start is not news).
//! - A question is news when its id was never seen, it is open, and this person can
//!   answer it: someone else's question never rings. One: "oq: 1 new question" with its
//!   text; several: "oq: 3 new questions", the newest named and how many more.
//! - A snoozed question that comes back on its own (its snooze ended, nobody woke it)
//!   rings the same way, when this person can answer it: "oq: 1 question back from
//!   snooze". One woken early by the unsnooze key does not: the person just asked.

use std::collections::HashSet;

use super::effect::Effect;
use super::model::Model;
use crate::wire::QuestionItem;

/// "1 new question", "3 new questions".
pub fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// The newest open questions of a counts reply: ring for the ones that are news.
pub(super) fn newest(model: &mut Model, newest: &[QuestionItem], fx: &mut Vec<Effect>) {
    let first = model.seen_open.is_none();
    let seen = model.seen_open.get_or_insert_with(HashSet::new);
    let fresh: Vec<&QuestionItem> = newest
        .iter()
        .filter(|q| !seen.contains(&q.question_id) && q.status == "open" && q.can_answer)
        .collect();
    seen.extend(newest.iter().map(|q| q.question_id.clone()));
    if first {
        return;
    }
    ring(model, &fresh, ("new question", "new questions"), fx);
}

/// The questions of `items` whose snooze ended on its own between `from` and `to`
/// (Unix ms, both included): ring for the ones this person can answer.
pub(super) fn returned(
    model: &Model,
    items: &[QuestionItem],
    from: i64,
    to: i64,
    fx: &mut Vec<Effect>,
) {
    let back: Vec<&QuestionItem> = items
        .iter()
        .filter(|q| q.status == "open" && q.can_answer)
        .filter(|q| {
            q.snooze
                .as_ref()
                .is_some_and(|s| (from..=to).contains(&s.until))
        })
        .collect();
    let nouns = ("question back from snooze", "questions back from snooze");
    ring(model, &back, nouns, fx);
}

/// The bell and the notification for `these` (the newest first), if any.
fn ring(model: &Model, these: &[&QuestionItem], (one, many): (&str, &str), fx: &mut Vec<Effect>) {
    let Some(top) = these.first() else {
        return;
    };
    let n = these.len();
    let name = super::words::clip(&top.pergunta, 80);
    let body = if n == 1 {
        name
    } else {
        format!("{name} (and {} more)", n - 1)
    };
    if model.behaviour.bell {
        fx.push(Effect::Bell);
    }
    if model.behaviour.notify {
        fx.push(Effect::Notify {
            title: format!("oq: {}", count(n, one, many)),
            body,
        });
    }
}
