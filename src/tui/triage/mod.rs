//! Triage by marking (issue 17, part 3): Space marks or unmarks the selected question,
//! `V` starts a visual range that the moves stretch (Space or `V` again keeps it, Esc
//! drops it); the queue shows each mark and the count. With marks, the accept and
//! dismiss keys act on the marked questions through a review (`review.rs`): one
//! confirmation, then each question its own answer or closure through the one
//! submission path, reported per question.
//!
//! Marks are question ids, so they survive reloads; a marked question seen settled (or
//! gone from a fully loaded open queue) loses its mark, and the notice says so. Pure,
//! part of `update`.

pub mod review;
pub(super) mod run;

use super::effect::Effect;
use super::keymap::Action;
use super::model::Model;
use super::notice::{error, info};
pub use super::screens::triage::{Item, Kind, Outcome, Plan, Screen, Stage, Triage};
use crate::engine::{Sort, StatusFilter};

/// The marked questions now (the range being drawn included), in the queue's order.
pub fn marked(model: &Model) -> Vec<String> {
    model.triage.marked(&model.queue.items, model.selected)
}

/// A key in the panes, before the keymap's action runs: `true` when triage took it.
pub(super) fn action(model: &mut Model, action: Action, fx: &mut Vec<Effect>) -> bool {
    let on_queue = model.focus == super::model::Focus::Queue;
    match action {
        Action::Mark | Action::Visual if model.triage.anchor.is_some() => keep_range(model),
        Action::Mark if on_queue => match model.current().map(|q| q.question_id.clone()) {
            Some(id) => {
                if !model.triage.marks.remove(&id) {
                    model.triage.marks.insert(id);
                }
            }
            None => error(model, "no question is selected to mark".into()),
        },
        Action::Visual if on_queue => {
            model.triage.anchor = model.current().map(|q| q.question_id.clone());
        }
        Action::Back if model.triage.anchor.is_some() => model.triage.anchor = None,
        Action::Accept | Action::Dismiss if !marked(model).is_empty() => {
            let kind = if action == Action::Accept {
                Kind::Accept
            } else {
                Kind::Dismiss
            };
            keep_range(model);
            review::open(model, kind);
        }
        _ => return false,
    }
    let _ = fx;
    model.dirty = true;
    true
}

fn keep_range(model: &mut Model) {
    let ids = marked(model);
    model.triage.marks.extend(ids);
    model.triage.anchor = None;
}

/// After a list arrived: a marked question seen settled, or gone from an open queue
/// loaded in whole, was settled elsewhere; its mark goes and the notice says so.
pub(super) fn prune(model: &mut Model) {
    if model.triage.marks.is_empty() {
        return;
    }
    let whole = model.filter == StatusFilter::Open
        && model.search.is_empty()
        && (model.queue.cursor.is_none() || model.sort == Sort::Oldest);
    let items = &model.queue.items;
    let before = model.triage.marks.len();
    let settled = &mut model.triage.settled;
    model.triage.marks.retain(|id| {
        let keep = match items.iter().find(|q| &q.question_id == id) {
            Some(q) => q.status == "open",
            None => !whole,
        };
        if !keep {
            settled.insert(id.clone());
        }
        keep
    });
    if model.triage.anchor.as_ref().is_some_and(|a| {
        !items
            .iter()
            .any(|q| &q.question_id == a && q.status == "open")
    }) {
        model.triage.anchor = None;
    }
    let dropped = before - model.triage.marks.len();
    if dropped > 0 {
        let text = if dropped == 1 {
            "1 mark dropped: its question was settled elsewhere".to_string()
        } else {
            format!("{dropped} marks dropped: their questions were settled elsewhere")
        };
        info(model, text);
    }
}
