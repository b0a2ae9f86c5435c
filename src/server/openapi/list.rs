//! The list route's operation (its filter, search, sort and paging parameters, each
//! bound by the same constants the engine checks) and the decision history's.

use serde_json::{Value, json};

use super::parts::*;
use crate::domain::search::{SEARCH_MAX_CHARS, SEARCH_MAX_WORDS};
use crate::domain::{DecisionSource, ErrorCode as C};
use crate::engine::{PAGE_LIMIT, Sort};

pub(super) fn list_op() -> Value {
    let sorts: Vec<&str> = Sort::ALL.iter().map(|s| s.as_str()).collect();
    let list_params = json!([
        param("projectId"),
        { "name": "status", "in": "query", "description": "a state (`open`, `answered`, `closed`, `all`) or, for settled questions, how they were settled (a `decisionSource`)", "schema": { "type": "string", "enum": crate::engine::StatusFilter::names(), "default": "open" } },
        { "name": "q", "in": "query", "schema": { "type": "string", "maxLength": SEARCH_MAX_CHARS },
          "description": format!("search: only questions with every word (at most {SEARCH_MAX_WORDS}, whitespace apart) in their text, suggestion or answer, as a substring, case aside; over every question of the filter (`invalid_search` when too long)") },
        { "name": "sort", "in": "query", "schema": { "type": "string", "enum": sorts, "default": "oldest" },
          "description": "the order over every question of the filter: oldest or newest first, or by project or asker (the declaring role) and then oldest first (`invalid_sort` for another)" },
        { "name": "snoozed", "in": "query", "schema": { "type": "string", "enum": ["show", "hide", "only"], "default": "show" },
          "description": "snoozed open questions (issue 17 part 4): listed like any other (`show`, what an agent sees), left out (`hide`, a person's queue) or only they (`only`); `snoozed` in the reply counts them whichever is asked (`invalid_status` for another value)" },
        { "name": "limit", "in": "query", "schema": { "type": "integer", "minimum": 1, "maximum": PAGE_LIMIT, "default": PAGE_LIMIT } },
        { "name": "cursor", "in": "query", "schema": { "type": "string" }, "description": "the `cursor` of the previous page, with the same sort (`invalid_cursor` otherwise)" }
    ]);
    let mut list = op(
        "List the project's questions (a page of the filter, `total` the filter's count), with canAnswer and reason for the caller",
        "a member or an agent of the project",
        &[],
        with(
            project_errors(&[(
                "422",
                "a bad status or snoozed, limit, cursor, search or sort (`invalid_status`, `invalid_limit`, `invalid_cursor`, `invalid_search`, `invalid_sort`), or an unknown query field",
                &[
                    C::InvalidStatus,
                    C::InvalidLimit,
                    C::InvalidCursor,
                    C::InvalidSearch,
                    C::InvalidSort,
                    C::InvalidQuery,
                ],
            )]),
            "200",
            ok("a page", schema("QuestionList")),
        ),
    );
    list["parameters"] = list_params;
    list
}

/// The decision history's operation: the list's search and paging, and its own filters.
pub(super) fn decisions_op() -> Value {
    let sources: Vec<&str> = DecisionSource::ALL.iter().map(|d| d.as_str()).collect();
    let mut decisions = op(
        "The decision history: every answered or closed question of the project, newest decision first (a page of the filter, `total` the filter's count), each with who decided, when, how (`decisionSource`), what it affects, the question and the answer in full",
        "a member or an agent of the project",
        &[],
        with(
            project_errors(&[(
                "422",
                "a bad search, date, affects, decision source, agent, limit or cursor (`invalid_search`, `invalid_date`, `invalid_affects`, `invalid_decision_source`, `invalid_id`, `invalid_limit`, `invalid_cursor`), or an unknown query field",
                &[
                    C::InvalidSearch,
                    C::InvalidDate,
                    C::InvalidAffects,
                    C::InvalidDecisionSource,
                    C::InvalidId,
                    C::InvalidLimit,
                    C::InvalidCursor,
                    C::InvalidQuery,
                ],
            )]),
            "200",
            ok("a page, newest decision first", schema("QuestionList")),
        ),
    );
    decisions["parameters"] = json!([
        param("projectId"),
        { "name": "q", "in": "query", "schema": { "type": "string", "maxLength": SEARCH_MAX_CHARS },
          "description": format!("search, as the list's: every word (at most {SEARCH_MAX_WORDS}) in the question, its suggestion or its answer, over the whole history") },
        { "name": "since", "in": "query", "schema": { "type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{3})?Z)?$" },
          "description": "only decisions made at or after this UTC date (`YYYY-MM-DD`) or time (`YYYY-MM-DDTHH:MM:SS[.mmm]Z`); `invalid_date` otherwise" },
        { "name": "affects", "in": "query", "schema": { "type": "string", "pattern": "^(rule|story|task|regra|historia|tarefa):.+$" },
          "description": "only questions whose `afeta` names this rule, story or task (`task:ID`)" },
        { "name": "source", "in": "query", "schema": { "type": "string", "enum": sources },
          "description": "only decisions made this way (`invalid_decision_source` for another)" },
        { "name": "agent", "in": "query", "schema": { "type": "string", "minLength": 1, "maxLength": 200 },
          "description": "only questions this agent asked (the declaration's `autor`; `invalid_id` for an empty, long or unprintable name)" },
        { "name": "limit", "in": "query", "schema": { "type": "integer", "minimum": 1, "maximum": PAGE_LIMIT, "default": PAGE_LIMIT } },
        { "name": "cursor", "in": "query", "schema": { "type": "string" }, "description": "the `cursor` of the previous page (`invalid_cursor` otherwise)" }
    ]);
    decisions
}
