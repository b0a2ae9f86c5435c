//! What a list asks for — status, search, sort, where the page starts, how many — and
//! the page cursor each sort needs. One value every source carries (`Source::list`), the
//! server reads from its query string and the stores answer over the WHOLE filter: a
//! search or a sort never acts on the loaded page only.
//!
//! Invariant: a cursor names a position in its own sort's order (keyset: the sort key
//! and the declaration's log position), so paging never skips nor repeats a question
//! that stays in the filter, whatever is answered meanwhile.

use super::store::StatusFilter;
use crate::domain::search::Search;
use crate::domain::{ErrorCode, OqError};

/// RN-180: at most 50 a page.
pub const PAGE_LIMIT: usize = 50;

/// How far a search's total is counted. A search's matches are counted up to this many;
/// beyond it the total says "at least this many" (`total_is_lower_bound`), because an
/// exact count of a word most questions hold is a walk of the whole filter (835 ms for
/// two such words among 100,000 questions) where a page needs only its first 50. A
/// filter without search words keeps its exact total (an index count).
pub const SEARCH_TOTAL_CAP: u64 = 1_000;

/// A counted total as a page reports it: a search counted past the cap is the cap and
/// a lower bound (`total`, `total_is_lower_bound`); any other count is exact.
pub fn capped_total(search: bool, counted: u64) -> (u64, bool) {
    if search && counted > SEARCH_TOTAL_CAP {
        (SEARCH_TOTAL_CAP, true)
    } else {
        (counted, false)
    }
}

/// The order of a list; ties (same project, same asker) go oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Sort {
    #[default]
    Oldest,
    Newest,
    /// By project id, then oldest first.
    Project,
    /// By the declaring role (`autor`), then oldest first.
    Asker,
}

impl Sort {
    pub const ALL: &'static [Sort] = &[Sort::Oldest, Sort::Newest, Sort::Project, Sort::Asker];

    pub fn as_str(self) -> &'static str {
        match self {
            Sort::Oldest => "oldest",
            Sort::Newest => "newest",
            Sort::Project => "project",
            Sort::Asker => "asker",
        }
    }

    /// Whether the order has a key before the log position (project, asker).
    pub fn keyed(self) -> bool {
        matches!(self, Sort::Project | Sort::Asker)
    }
}

impl std::str::FromStr for Sort {
    type Err = OqError;
    fn from_str(s: &str) -> Result<Sort, OqError> {
        Sort::ALL
            .iter()
            .copied()
            .find(|o| o.as_str() == s)
            .ok_or_else(|| {
                OqError::invalid(
                    ErrorCode::InvalidSort,
                    format!("sort {s:?}: expected oldest, newest, project or asker"),
                )
            })
    }
}

/// A page's starting point: after this declaration (its log position) in the sort's
/// order, with its sort key for the keyed sorts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub seq: i64,
    pub key: Option<String>,
}

impl Cursor {
    /// `SEQ` for the log-ordered sorts, `SEQ~KEY` for the keyed ones.
    pub fn parse(sort: Sort, text: &str) -> Result<Cursor, OqError> {
        let bad = || {
            OqError::invalid(
                ErrorCode::InvalidCursor,
                format!(
                    "cursor {text:?} is not one this server gave for sort {}",
                    sort.as_str()
                ),
            )
        };
        let (seq, key) = match (sort.keyed(), text.split_once('~')) {
            (true, Some((seq, key))) => (seq, Some(key.to_string())),
            (false, None) => (text, None),
            _ => return Err(bad()),
        };
        let seq = seq
            .parse::<i64>()
            .ok()
            .filter(|n| *n >= 0)
            .ok_or_else(bad)?;
        Ok(Cursor { seq, key })
    }

    pub fn encode(&self) -> String {
        match &self.key {
            Some(k) => format!("{}~{k}", self.seq),
            None => self.seq.to_string(),
        }
    }
}

/// A page's size, refused outside 1..=[`PAGE_LIMIT`] (the list's and the decisions').
pub fn checked_limit(limit: usize) -> Result<usize, OqError> {
    if limit == 0 || limit > PAGE_LIMIT {
        return Err(OqError::invalid(
            ErrorCode::InvalidLimit,
            format!("limit {limit}: expected 1 to {PAGE_LIMIT}"),
        ));
    }
    Ok(limit)
}

/// A page size as typed (a query string): a number that is none is `invalid_limit` too.
pub fn parse_limit(text: Option<&str>) -> Result<usize, OqError> {
    match text {
        None => Ok(PAGE_LIMIT),
        Some(l) => l.parse::<usize>().map_err(|_| {
            OqError::invalid(
                ErrorCode::InvalidLimit,
                format!("limit {l:?}: expected 1 to {PAGE_LIMIT}"),
            )
        }),
    }
}

/// One list request, as every source takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListQuery {
    pub status: StatusFilter,
    pub search: Option<Search>,
    pub sort: Sort,
    /// What the previous page returned; `None` for the first.
    pub cursor: Option<String>,
    pub limit: usize,
    /// Which snoozed questions to keep (`engine::snoozed`): every open one by default.
    pub snoozed: super::SnoozeFilter,
}

impl ListQuery {
    /// The first page of `status`, oldest first, no search, [`PAGE_LIMIT`] a page.
    pub fn new(status: StatusFilter) -> ListQuery {
        ListQuery {
            status,
            search: None,
            sort: Sort::Oldest,
            cursor: None,
            limit: PAGE_LIMIT,
            snoozed: super::SnoozeFilter::Show,
        }
    }

    pub fn snoozed(mut self, snoozed: super::SnoozeFilter) -> ListQuery {
        self.snoozed = snoozed;
        self
    }

    /// Searches `text` (validated: see [`Search::parse`]); blank text searches nothing.
    pub fn search(mut self, text: &str) -> Result<ListQuery, OqError> {
        self.search = Search::parse(text)?;
        Ok(self)
    }

    pub fn sorted(mut self, sort: Sort) -> ListQuery {
        self.sort = sort;
        self
    }

    pub fn after(mut self, cursor: Option<&str>) -> ListQuery {
        self.cursor = cursor.filter(|c| !c.is_empty()).map(str::to_string);
        self
    }

    pub fn limit(mut self, limit: usize) -> ListQuery {
        self.limit = limit;
        self
    }

    /// The limit, refused outside 1..=[`PAGE_LIMIT`].
    pub fn checked_limit(&self) -> Result<usize, OqError> {
        checked_limit(self.limit)
    }

    /// The cursor, read for this query's sort.
    pub fn checked_cursor(&self) -> Result<Option<Cursor>, OqError> {
        self.cursor
            .as_deref()
            .map(|c| Cursor::parse(self.sort, c))
            .transpose()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_belong_to_their_sort() {
        let c = Cursor::parse(Sort::Project, "42~proj-a").unwrap();
        assert_eq!((c.seq, c.key.as_deref()), (42, Some("proj-a")));
        assert_eq!(c.encode(), "42~proj-a");
        assert_eq!(Cursor::parse(Sort::Newest, "7").unwrap().encode(), "7");
        for (sort, text) in [
            (Sort::Oldest, "7~x"),
            (Sort::Asker, "7"),
            (Sort::Newest, "-1"),
        ] {
            let e = Cursor::parse(sort, text).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidCursor, "{sort:?} {text}");
        }
    }

    #[test]
    fn an_unknown_sort_is_named() {
        let e = "random".parse::<Sort>().unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidSort);
        assert!(e.to_string().contains("\"random\""));
        for s in Sort::ALL {
            assert_eq!(s.as_str().parse::<Sort>().unwrap(), *s);
        }
    }
}
