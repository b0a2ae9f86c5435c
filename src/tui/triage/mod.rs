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

use std::collections::HashSet;

use super::effect::Effect;
use super::keymap::Action;
use super::model::Model;
use super::notice::{error, info};
use crate::engine::{Sort, StatusFilter};
pub use review::{Item, Kind, Outcome, Plan, Screen, Stage};

/// The marks, the range being drawn, and the review or report while one is up.
#[derive(Debug, Clone, Default)]
pub struct Triage {
    pub marks: HashSet<String>,
    /// The visual range's first question, while a range is drawn.
    pub anchor: Option<String>,
    pub screen: Option<Screen>,
}

/// The marked questions now (the range being drawn included), in the queue's order.
pub fn marked(model: &Model) -> Vec<String> {
    let range = range(model);
    model
        .visible
        .iter()
        .enumerate()
        .filter_map(|(pos, &i)| {
            let id = &model.queue.items.get(i)?.question_id;
            (model.triage.marks.contains(id) || range.contains(&pos)).then(|| id.clone())
        })
        .collect()
}

/// How many are marked now (the range being drawn included): the queue's title.
pub fn marked_count(model: &Model) -> usize {
    if model.triage.anchor.is_none() {
        return model.triage.marks.len();
    }
    let shown = marked(model);
    let hidden = model
        .triage
        .marks
        .iter()
        .filter(|id| !shown.contains(id))
        .count();
    shown.len() + hidden
}

/// Whether the row at `pos` of `visible` shows a mark.
pub fn is_marked(model: &Model, pos: usize) -> bool {
    range(model).contains(&pos)
        || model
            .visible
            .get(pos)
            .and_then(|&i| model.queue.items.get(i))
            .is_some_and(|q| model.triage.marks.contains(&q.question_id))
}

/// The positions the range covers: its anchor to the selection.
fn range(model: &Model) -> std::ops::RangeInclusive<usize> {
    let anchor = model.triage.anchor.as_ref().and_then(|id| {
        model.visible.iter().position(|&i| {
            model
                .queue
                .items
                .get(i)
                .is_some_and(|q| &q.question_id == id)
        })
    });
    match anchor {
        Some(a) => a.min(model.selected)..=a.max(model.selected),
        #[allow(clippy::reversed_empty_ranges)]
        None => 1..=0,
    }
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
    model
        .triage
        .marks
        .retain(|id| match items.iter().find(|q| &q.question_id == id) {
            Some(q) => q.status == "open",
            None => !whole,
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
