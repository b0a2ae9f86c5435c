//! The decision history: a page of answered and closed questions, newest decision first,
//! with the cursor of the next page (the last settlement's log position).

use super::{Engine, ListPage};
use crate::domain::OqError;
use crate::engine::decisions::DecisionQuery;
use crate::engine::store::Store;

impl<S: Store> Engine<S> {
    /// A page of the decisions `query` asks for, with the total of the whole filter.
    /// `query.cursor` is what the previous page returned.
    pub fn decisions(
        &self,
        project_id: Option<&str>,
        query: &DecisionQuery,
    ) -> Result<ListPage, OqError> {
        let limit = query.checked_limit()?;
        let after = query.checked_cursor()?;
        let page = self
            .store
            .read(|v| v.decisions(project_id, query, after, limit + 1))?;
        let mut items = page.items;
        let cursor = if items.len() > limit {
            items.truncate(limit);
            items.last().map(|(seq, _)| seq.to_string())
        } else {
            None
        };
        Ok(ListPage {
            items: items.into_iter().map(|(_, q)| q).collect(),
            total: page.total,
            total_is_lower_bound: page.total_is_lower_bound,
            cursor,
            snoozed: Default::default(),
        })
    }
}
