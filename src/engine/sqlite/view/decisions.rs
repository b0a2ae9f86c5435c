//! The decision history in SQL: the settlements (answers and closures) driven newest
//! first by their own log position, each joined to its declaration, narrowed by the
//! list's search filter (`questions::search_filter`, the same FTS5 index), a date, a
//! link of `question_links` and the derived `decisionSource`. Every value is bound.

use rusqlite::Connection;
use rusqlite::types::Value;

use super::questions::{bound, search_filter};
use super::rows::{AFTER_QUESTION, QUESTION_COLUMNS, question_from_row};
use crate::domain::OqError;
use crate::engine::decisions::{DecisionPage, DecisionQuery, source_sql};

/// Settlements `st` and their declarations `d` (the one-declaration index's condition).
const FROM: &str = "events st JOIN events d ON d.type = 'artifact.open_question'
                                          AND d.question_id = st.question_id";

/// The count's and the page's SQL, each with its bound values.
type Sql = (String, Vec<(String, Value)>);

fn plan(
    project_id: Option<&str>,
    q: &DecisionQuery,
    after: Option<i64>,
    limit: usize,
) -> (Sql, Sql) {
    let mut filter = String::from("st.type IN ('open_question.answered', 'open_question.closed')");
    let mut params: Vec<(String, Value)> = Vec::new();
    if let Some(p) = project_id {
        filter.push_str(" AND st.project_id = :project");
        params.push((":project".into(), Value::Text(p.into())));
    }
    if let Some(since) = q.since {
        filter.push_str(" AND st.at >= :since");
        params.push((":since".into(), Value::Integer(since)));
    }
    if let Some(a) = &q.affects {
        filter.push_str(
            " AND st.question_id IN (SELECT question_id FROM question_links
                                     WHERE kind = :link_kind AND target = :link_target)",
        );
        params.push((":link_kind".into(), Value::Text(a.kind.as_str().into())));
        params.push((":link_target".into(), Value::Text(a.id.clone())));
    }
    if let Some(source) = q.source {
        let derived = settled_source();
        filter.push_str(&format!(" AND {derived} = :source"));
        params.push((":source".into(), Value::Text(source.as_str().into())));
    }
    if let Some(agent) = &q.agent {
        filter.push_str(" AND json_extract(d.payload, '$.autor') = :agent");
        params.push((":agent".into(), Value::Text(agent.clone())));
    }
    search_filter("d.seq", q.search.as_ref(), &mut filter, &mut params);

    // Only a search or an agent needs the declaration to count: every other filter is
    // the settlement's own, and the total is then a walk of `events_settled_by_project`.
    let count_from = if q.search.is_some() || q.agent.is_some() {
        FROM
    } else {
        "events st"
    };
    let count = (
        format!("SELECT count(*) FROM {count_from} WHERE {filter}"),
        params.clone(),
    );
    if let Some(after) = after {
        filter.push_str(" AND st.seq < :after");
        params.push((":after".into(), Value::Integer(after)));
    }
    params.push((":limit".into(), Value::Integer(limit as i64)));
    let page = format!(
        "SELECT {QUESTION_COLUMNS}, st.seq FROM {FROM} WHERE {filter} ORDER BY st.seq DESC LIMIT :limit"
    );
    (count, (page, params))
}

pub(super) fn decisions(
    conn: &Connection,
    project_id: Option<&str>,
    q: &DecisionQuery,
    after: Option<i64>,
    limit: usize,
) -> Result<DecisionPage, OqError> {
    let ((count_sql, count_params), (sql, params)) = plan(project_id, q, after, limit);
    let total: i64 = conn
        .prepare_cached(&count_sql)?
        .query_row(&*bound(&count_params), |r| r.get(0))?;
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(&*bound(&params), |row| {
        let seq: i64 = row.get(AFTER_QUESTION)?;
        Ok(question_from_row(row)?.map(|q| (seq, q)))
    })?;
    let mut items = Vec::new();
    for r in rows {
        items.push(r??);
    }
    Ok(DecisionPage {
        items,
        total: total as u64,
    })
}

/// The `decisionSource` of the settlement aliased `st`, derived for older events too:
/// the history's filter and the list's `--status SOURCE` read it alike.
pub(super) fn settled_source() -> String {
    source_sql(
        "st.type",
        "json_extract(st.payload, '$.decisionSource')",
        "json_extract(st.payload, '$.aceitouSugestao')",
        "json_extract(st.payload, '$.reason')",
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// How SQLite runs `sql`: its query plan's lines.
    fn how(conn: &Connection, (sql, params): &Sql) -> String {
        super::super::questions::query_plan(conn, sql, params)
    }

    /// The newest page walks a project's settlements backwards through their index and
    /// stops after a page; the total counts that index alone (no declaration joined, no
    /// sort): with neither, a page among 1,000,000 events took 2.2 s.
    #[test]
    fn the_newest_page_and_its_total_walk_the_settlement_index() {
        let conn = Connection::open_in_memory().unwrap();
        crate::engine::sqlite::schema::migrate(&conn, 0).unwrap();
        let q = DecisionQuery::parse(None, None, None, None).unwrap();
        let (count, page) = plan(Some("loja"), &q, Some(900), 50);
        for (what, plan) in [("count", how(&conn, &count)), ("page", how(&conn, &page))] {
            assert!(plan.contains("events_settled_by_project"), "{what}: {plan}");
            assert!(!plan.contains("TEMP B-TREE"), "{what} sorts: {plan}");
        }
        let count = how(&conn, &count);
        assert!(
            !count.contains(" d "),
            "the count joins the declarations: {count}"
        );
    }
}
