//! `oq status`'s two numbers (issue 17 part 5): the open questions in view and how many
//! of them the viewer may answer, without reading a question's text. A shell prompt runs
//! it every few seconds, so a store answers it from its open set's index where it can
//! (SQLite); [`by_pages`] is the same answer from the list's pages, for any store, and
//! the definition the index count is tested against.

use super::list::{Cursor, Sort};
use super::snoozed::SnoozeFilter;
use super::store::{QuestionQuery, StatusFilter, StoreView};
use crate::domain::{Actor, OqError};

/// The open questions a snooze does not hide now, and of those the viewer's to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpenCounts {
    pub open: u64,
    pub mine: u64,
}

/// How many questions a page of [`by_pages`] reads.
const PAGE: usize = 500;

/// [`OpenCounts`] by walking the open list (snoozed hidden, as the default view), oldest
/// first: `mine` counts those [`crate::domain::Question::answerability`] lets `viewer`
/// answer.
pub fn by_pages<V: StoreView + ?Sized>(
    view: &V,
    project_id: Option<&str>,
    viewer: &Actor,
    now: i64,
) -> Result<OpenCounts, OqError> {
    let mut counts = OpenCounts::default();
    let mut after: Option<Cursor> = None;
    loop {
        let page = view.questions(&QuestionQuery {
            project_id,
            status: StatusFilter::Open,
            search: None,
            sort: Sort::Oldest,
            after: after.as_ref(),
            limit: PAGE,
            snoozed: SnoozeFilter::Hide,
            now,
        })?;
        counts.open = page.total;
        counts.mine += page
            .items
            .iter()
            .filter(|q| q.answerability(viewer).0)
            .count() as u64;
        match page.items.last() {
            Some(q) if page.items.len() == PAGE => {
                after = Some(Cursor {
                    seq: q.seq,
                    key: None,
                })
            }
            _ => return Ok(counts),
        }
    }
}
