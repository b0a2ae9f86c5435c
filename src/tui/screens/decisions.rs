//! The Decisions view's state (`decisions/` drives it). Data only, so the model can
//! hold it.

use super::decision_filter::Filter;
use crate::wire::QuestionItem;

/// The view's state. It stays in the model while closed, so the filter is there again
/// when the view opens.
#[derive(Debug, Clone, Default)]
pub struct DecisionsView {
    pub open: bool,
    pub items: Vec<QuestionItem>,
    pub total: u64,
    /// `total` is where a search's count stopped: at least that many (shown "1000+").
    pub total_is_lower_bound: bool,
    pub cursor: Option<String>,
    pub loaded_once: bool,
    pub loading_more: bool,
    /// The request in flight or last applied; a reply with another is stale.
    pub generation: u64,
    pub selected: usize,
    /// The detail pane's first line.
    pub scroll: u16,
    /// The filter applied, as typed, and parsed.
    pub filter_text: String,
    pub filter: Filter,
    /// The filter line while it is being typed.
    pub editing: Option<String>,
    /// Why the history could not be read (a source without one says so).
    pub error: Option<String>,
}

impl DecisionsView {
    pub fn current(&self) -> Option<&QuestionItem> {
        self.items.get(self.selected)
    }
}
