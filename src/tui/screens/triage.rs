//! Triage's state (`triage/` drives it): the marks, the range being drawn, and the
//! review, run and report of a bulk action over them. Data only, so the model can hold it.

use std::collections::HashSet;

use super::super::keymap::Action;
use crate::wire::QuestionItem;

/// The marks, the range being drawn, and the review or report while one is up.
#[derive(Debug, Clone, Default)]
pub struct Triage {
    pub marks: HashSet<String>,
    /// The visual range's first question, while a range is drawn.
    pub anchor: Option<String>,
    pub screen: Option<Screen>,
    /// The marks dropped since the review opened because their questions were seen
    /// settled: the confirmation names why they record nothing.
    pub settled: HashSet<String>,
}

/// The mark queries over the queue's rows (`rows` is `queue.items`, `selected` the
/// selection's index there, the range's other end).
impl Triage {
    /// The marked questions now (the range being drawn included), in the rows' order.
    pub fn marked(&self, rows: &[QuestionItem], selected: usize) -> Vec<String> {
        let range = self.range(rows, selected);
        rows.iter()
            .enumerate()
            .filter(|(pos, q)| self.marks.contains(&q.question_id) || range.contains(pos))
            .map(|(_, q)| q.question_id.clone())
            .collect()
    }

    /// How many are marked now (the range being drawn included): the queue's title.
    pub fn marked_count(&self, rows: &[QuestionItem], selected: usize) -> usize {
        if self.anchor.is_none() {
            return self.marks.len();
        }
        let shown = self.marked(rows, selected);
        let hidden = self.marks.iter().filter(|id| !shown.contains(id)).count();
        shown.len() + hidden
    }

    /// Whether the row at `pos` shows a mark.
    pub fn is_marked(&self, rows: &[QuestionItem], selected: usize, pos: usize) -> bool {
        self.range(rows, selected).contains(&pos)
            || rows
                .get(pos)
                .is_some_and(|q| self.marks.contains(&q.question_id))
    }

    /// The positions the range covers: its anchor to the selection.
    fn range(&self, rows: &[QuestionItem], selected: usize) -> std::ops::RangeInclusive<usize> {
        let anchor = self
            .anchor
            .as_ref()
            .and_then(|id| rows.iter().position(|q| &q.question_id == id));
        match anchor {
            Some(a) => a.min(selected)..=a.max(selected),
            #[allow(clippy::reversed_empty_ranges)]
            None => 1..=0,
        }
    }
}

/// The bulk action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Accept,
    Dismiss,
}

impl Kind {
    pub fn action(self) -> Action {
        match self {
            Kind::Accept => Action::Accept,
            Kind::Dismiss => Action::Dismiss,
        }
    }
    pub fn verb(self) -> &'static str {
        match self {
            Kind::Accept => "Accepting",
            Kind::Dismiss => "Dismissing",
        }
    }
}

/// What the review says of one question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Recorded on confirmation: what, in words, and the draft it discards.
    Record {
        what: String,
        draft: Option<String>,
    },
    Skip(String),
}

/// What became of one question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Sending,
    Recorded(String),
    Queued(String),
    Failed(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub question_id: String,
    pub project: String,
    pub pergunta: String,
    pub plan: Plan,
    pub outcome: Option<Outcome>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Waiting for the confirming key; `disarmed` once another key came first.
    Review {
        disarmed: bool,
    },
    Running,
    Report,
}

/// The reply the run waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Waiting {
    Submit(u64),
    Dismiss(String),
}

#[derive(Debug, Clone)]
pub struct Screen {
    pub kind: Kind,
    pub items: Vec<Item>,
    pub stage: Stage,
    pub scroll: u16,
    pub waiting: Option<Waiting>,
}

impl Screen {
    /// How many the review would record.
    pub fn to_record(&self) -> usize {
        self.items
            .iter()
            .filter(|i| matches!(i.plan, Plan::Record { .. }))
            .count()
    }
    /// "2 accepted · 1 failed · 1 skipped": the report's count.
    pub fn summary(&self) -> String {
        let done = match self.kind {
            Kind::Accept => "accepted",
            Kind::Dismiss => "dismissed",
        };
        let count = |f: &dyn Fn(&Item) -> bool| self.items.iter().filter(|i| f(i)).count();
        let parts = [
            (
                count(&|i| matches!(i.outcome, Some(Outcome::Recorded(_)))),
                done,
            ),
            (
                count(&|i| matches!(i.outcome, Some(Outcome::Queued(_)))),
                "queued",
            ),
            (
                count(&|i| matches!(i.outcome, Some(Outcome::Failed(_)))),
                "failed",
            ),
            (count(&|i| matches!(i.plan, Plan::Skip(_))), "skipped"),
        ];
        let words: Vec<String> = parts
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, w)| format!("{n} {w}"))
            .collect();
        if words.is_empty() {
            "nothing recorded".into()
        } else {
            words.join(" · ")
        }
    }
}
