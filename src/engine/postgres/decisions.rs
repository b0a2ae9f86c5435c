//! The decision history in PostgreSQL: the same meaning as the SQLite store's
//! (`engine::decisions`) — settlements newest first by log position, joined to their
//! declarations, narrowed by the list's search filter (`list::search_filter`), a date,
//! a `question_links` row and the derived `decisionSource` — every value bound.

use super::list::{Param, search_filter};

/// Binds `p` and gives its `$n`.
fn push(params: &mut Vec<Param>, p: Param) -> usize {
    params.push(p);
    params.len()
}
use crate::engine::decisions::{DecisionQuery, source_sql};
use crate::engine::list::SEARCH_TOTAL_CAP;

const FROM: &str = "oq.events st JOIN oq.events d ON d.type = 'artifact.open_question'
                                                 AND d.question_id = st.question_id";

/// The SQL of a page and its count, with their parameters in `$n` order; the page's
/// last column is the settlement's log position. `columns` are the view's.
pub(super) fn decisions_sql(
    project_id: Option<&str>,
    q: &DecisionQuery,
    after: Option<i64>,
    limit: usize,
    columns: &str,
) -> super::list::ListSql {
    let mut filter = String::from("st.type IN ('open_question.answered', 'open_question.closed')");
    let mut params: Vec<Param> = Vec::new();
    if let Some(p) = project_id {
        let n = push(&mut params, Param::Text(p.into()));
        filter.push_str(&format!(" AND st.project_id = ${n}"));
    }
    if let Some(since) = q.since {
        let n = push(&mut params, Param::Int(since));
        filter.push_str(&format!(" AND st.at >= ${n}"));
    }
    if let Some(a) = &q.affects {
        let k = push(&mut params, Param::Text(a.kind.as_str().into()));
        let t = push(&mut params, Param::Text(a.id.clone()));
        filter.push_str(&format!(
            " AND d.question_id IN (SELECT question_id FROM oq.question_links
                                    WHERE kind = ${k} AND target = ${t})"
        ));
    }
    if let Some(source) = q.source {
        let n = push(&mut params, Param::Text(source.as_str().into()));
        let derived = settled_source();
        filter.push_str(&format!(" AND {derived} = ${n}"));
    }
    if let Some(agent) = &q.agent {
        let n = push(&mut params, Param::Text(agent.clone()));
        filter.push_str(&format!(" AND (d.payload->>'autor') = ${n}"));
    }
    search_filter(q.search.as_ref(), &mut filter, &mut params);
    // A search is counted to one past the cap, as the list's is (each word an ILIKE).
    let count = match q.search {
        Some(_) => format!(
            "SELECT count(*) FROM (SELECT 1 FROM {FROM} WHERE {filter} LIMIT {}) AS capped",
            SEARCH_TOTAL_CAP + 1
        ),
        None => format!("SELECT count(*) FROM {FROM} WHERE {filter}"),
    };
    let count_params = params.clone();
    if let Some(after) = after {
        let n = push(&mut params, Param::Int(after));
        filter.push_str(&format!(" AND st.seq < ${n}"));
    }
    let n = push(&mut params, Param::Int(limit as i64));
    let page = format!(
        "SELECT {columns}, st.seq FROM {FROM} WHERE {filter} ORDER BY st.seq DESC LIMIT ${n}"
    );
    super::list::ListSql {
        page,
        count,
        page_params: params,
        count_params,
        snoozed: None,
    }
}

/// The `decisionSource` of the settlement aliased `st`, derived for older events too:
/// the history's filter and the list's `status=SOURCE` read it alike.
pub(super) fn settled_source() -> String {
    source_sql(
        "st.type",
        "(st.payload->>'decisionSource')",
        "coalesce((st.payload->>'aceitouSugestao')::boolean, false)",
        "(st.payload->>'reason')",
    )
}
