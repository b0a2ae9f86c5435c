//! Which snoozed questions a list shows (issue 17 part 4). A snooze hides an open
//! question from its answerer's queue while its `until` is ahead (`domain::snooze`), so
//! "snoozed" is the log and the clock together: the list carries the filter, the engine
//! supplies the clock, and each store answers both over the whole filter.
//!
//! `Show` is the default of the wire and of every reader that needs every open question
//! (an agent's `list_my_questions`, the bridges, `oq watch`): a snoozed question is open.
//! `oq list` and the list route default to `Show` too: scripts and agents read them, and
//! an agent must see every open question (the reply's `snoozed` counts the hidden
//! ones). The person's queue — the TUI's open view — asks `Hide`; `oq list --snoozed`
//! (`snoozed=only` on the route) asks `Only`.

use crate::domain::{ErrorCode, OqError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum SnoozeFilter {
    /// Snoozed questions are listed like any other open one.
    #[default]
    Show,
    /// Only questions no snooze hides now.
    Hide,
    /// Only open questions a snooze hides now.
    Only,
}

impl SnoozeFilter {
    pub const ALL: &'static [SnoozeFilter] =
        &[SnoozeFilter::Show, SnoozeFilter::Hide, SnoozeFilter::Only];

    pub fn as_str(self) -> &'static str {
        match self {
            SnoozeFilter::Show => "show",
            SnoozeFilter::Hide => "hide",
            SnoozeFilter::Only => "only",
        }
    }
}

impl std::str::FromStr for SnoozeFilter {
    type Err = OqError;
    fn from_str(s: &str) -> Result<SnoozeFilter, OqError> {
        SnoozeFilter::ALL
            .iter()
            .copied()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| {
                OqError::invalid(
                    ErrorCode::InvalidStatus,
                    format!("snoozed {s:?}: expected show, hide or only"),
                )
            })
    }
}

/// How many questions of a list's filter a snooze hides now, and when the first of
/// them comes back (what the TUI's header counts and its wake-up timer waits for).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SnoozedCount {
    pub count: u64,
    pub next_wake: Option<i64>,
}
