//! What the decision history asks for (`oq decisions`, `GET …/decisions`): every answered
//! or closed question, newest decision first, narrowed by search words (the list's own
//! [`Search`] over the same index), a date, what it affects and how it was decided.
//!
//! Invariant: the page cursor is the settlement's log position, so paging newest first
//! never skips nor repeats a decision, whatever is decided meanwhile (a new decision
//! lands before the first page, never inside the walk).

use crate::domain::date;
use crate::domain::search::Search;
use crate::domain::{DecisionSource, ErrorCode, OqError, Question};
use crate::engine::list::PAGE_LIMIT;

/// What a decision affects, as `--affects` names it: one rule, story or task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Affects {
    /// `rule`, `story` or `task`: the kinds of the store's `question_links`.
    pub kind: AffectsKind,
    pub id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AffectsKind {
    Rule,
    Story,
    Task,
}

impl AffectsKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AffectsKind::Rule => "rule",
            AffectsKind::Story => "story",
            AffectsKind::Task => "task",
        }
    }
}

impl std::str::FromStr for Affects {
    type Err = OqError;
    /// `task:ID`, `story:ID` or `rule:ID` (the ADR's Portuguese kinds too, as `oq ask`).
    fn from_str(s: &str) -> Result<Affects, OqError> {
        let bad = |why: &str| {
            OqError::invalid(
                ErrorCode::InvalidAffects,
                format!("affects {s:?}: {why}; expected rule:ID, story:ID or task:ID"),
            )
        };
        let (kind, id) = s.split_once(':').ok_or_else(|| bad("no kind"))?;
        let kind = match kind {
            "rule" | "regra" => AffectsKind::Rule,
            "story" | "historia" => AffectsKind::Story,
            "task" | "tarefa" => AffectsKind::Task,
            _ => return Err(bad(&format!("unknown kind {kind:?}"))),
        };
        if id.is_empty() || id.chars().count() > 200 || id.chars().any(char::is_control) {
            return Err(bad("an empty, long or unprintable id"));
        }
        Ok(Affects {
            kind,
            id: id.to_string(),
        })
    }
}

impl Affects {
    pub fn encode(&self) -> String {
        format!("{}:{}", self.kind.as_str(), self.id)
    }
}

/// One request of the decision history, as every source carries it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DecisionQuery {
    pub search: Option<Search>,
    /// Only decisions made at or after this time (Unix milliseconds).
    pub since: Option<i64>,
    pub affects: Option<Affects>,
    pub source: Option<DecisionSource>,
    /// Only questions this agent asked (the declaration's `autor`).
    pub agent: Option<String>,
    /// What the previous page returned; `None` for the first.
    pub cursor: Option<String>,
    pub limit: usize,
}

impl DecisionQuery {
    /// The first page of every decision, [`PAGE_LIMIT`] a page.
    pub fn new() -> DecisionQuery {
        DecisionQuery {
            limit: PAGE_LIMIT,
            ..DecisionQuery::default()
        }
    }

    /// Each part as typed (the CLI's flags, the route's query string), each checked:
    /// a bad one is refused by its own code.
    pub fn parse(
        search: Option<&str>,
        since: Option<&str>,
        affects: Option<&str>,
        source: Option<&str>,
    ) -> Result<DecisionQuery, OqError> {
        Ok(DecisionQuery {
            search: Search::parse(search.unwrap_or(""))?,
            since: since.map(date::parse_utc).transpose()?,
            affects: affects.map(str::parse).transpose()?,
            source: source.map(parse_source).transpose()?,
            ..DecisionQuery::new()
        })
    }

    /// Only questions `agent` asked; an empty, long or unprintable name is refused.
    pub fn by_agent(mut self, agent: Option<&str>) -> Result<DecisionQuery, OqError> {
        if let Some(a) = agent {
            if a.is_empty() || a.chars().count() > 200 || a.chars().any(char::is_control) {
                return Err(OqError::invalid(
                    ErrorCode::InvalidId,
                    format!("agent {a:?}: an empty, long or unprintable name"),
                ));
            }
            self.agent = Some(a.to_string());
        }
        Ok(self)
    }

    pub fn after(mut self, cursor: Option<&str>) -> DecisionQuery {
        self.cursor = cursor.filter(|c| !c.is_empty()).map(str::to_string);
        self
    }

    pub fn limit(mut self, limit: usize) -> DecisionQuery {
        self.limit = limit;
        self
    }

    /// The limit, refused outside 1..=[`PAGE_LIMIT`].
    pub fn checked_limit(&self) -> Result<usize, OqError> {
        crate::engine::list::checked_limit(self.limit)
    }

    /// The cursor: the log position of the last decision of the previous page.
    pub fn checked_cursor(&self) -> Result<Option<i64>, OqError> {
        self.cursor
            .as_deref()
            .map(|c| {
                c.parse::<i64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    OqError::invalid(
                        ErrorCode::InvalidCursor,
                        format!("cursor {c:?} is not one this server gave for decisions"),
                    )
                })
            })
            .transpose()
    }
}

/// A `decisionSource` by its wire name.
pub fn parse_source(text: &str) -> Result<DecisionSource, OqError> {
    text.parse().map_err(|()| {
        let known: Vec<&str> = DecisionSource::ALL.iter().map(|d| d.as_str()).collect();
        OqError::invalid(
            ErrorCode::InvalidDecisionSource,
            format!(
                "decision source {text:?}: expected one of {}",
                known.join(", ")
            ),
        )
    })
}

/// What a store answers: the page's questions, each with its settlement's log position
/// (the cursor), and the filter's total.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionPage {
    pub items: Vec<(i64, Question)>,
    pub total: u64,
    /// `total` is where a search's count stopped (`SEARCH_TOTAL_CAP`): at least that many.
    pub total_is_lower_bound: bool,
}

impl DecisionPage {
    /// The page of a filter `counted` rows matched (a search's count stopped one past
    /// the cap: then `total` is the cap and a lower bound).
    pub fn counted(items: Vec<(i64, Question)>, counted: u64, search: bool) -> DecisionPage {
        let (total, total_is_lower_bound) = crate::engine::list::capped_total(search, counted);
        DecisionPage {
            items,
            total,
            total_is_lower_bound,
        }
    }
}

/// The `decisionSource` of a settlement row in SQL, for events written before the
/// field existed too (`DecisionSource::for_answer` / `for_closure`, spelled in SQL).
/// `kind` is the settlement's type; `ds`, `accepted` (a boolean) and `reason` read its
/// payload's members as the dialect does.
pub fn source_sql(kind: &str, ds: &str, accepted: &str, reason: &str) -> String {
    format!(
        "coalesce({ds}, CASE WHEN {kind} = 'open_question.answered' THEN
             CASE WHEN {accepted} THEN 'suggestion' ELSE 'person' END
           WHEN {reason} = 'rejected' THEN 'dismissed'
           WHEN {reason} = 'external' THEN 'upstream' ELSE 'withdrawn' END)"
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn each_part_is_refused_by_its_own_code() {
        let q = DecisionQuery::parse(
            Some("redis"),
            Some("2026-11-03"),
            Some("task:T-1"),
            Some("person"),
        )
        .unwrap();
        assert_eq!(q.affects.unwrap().encode(), "task:T-1");
        assert_eq!(q.source, Some(DecisionSource::Person));
        let cases = [
            (
                DecisionQuery::parse(Some(&"x".repeat(10_000)), None, None, None),
                ErrorCode::InvalidSearch,
            ),
            (
                DecisionQuery::parse(None, Some("03/11/2026"), None, None),
                ErrorCode::InvalidDate,
            ),
            (
                DecisionQuery::parse(None, None, Some("epic:E"), None),
                ErrorCode::InvalidAffects,
            ),
            (
                DecisionQuery::parse(None, None, Some("task:"), None),
                ErrorCode::InvalidAffects,
            ),
            (
                DecisionQuery::parse(None, None, None, Some("robot")),
                ErrorCode::InvalidDecisionSource,
            ),
        ];
        for (got, code) in cases {
            assert_eq!(got.unwrap_err().code(), code);
        }
        let q = DecisionQuery::new().after(Some("0"));
        assert_eq!(
            q.checked_cursor().unwrap_err().code(),
            ErrorCode::InvalidCursor
        );
        assert_eq!(
            DecisionQuery::new()
                .limit(51)
                .checked_limit()
                .unwrap_err()
                .code(),
            ErrorCode::InvalidLimit
        );
    }
}
