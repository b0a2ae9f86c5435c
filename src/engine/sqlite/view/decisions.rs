//! The decision history in SQL: the settlements (answers and closures) driven newest
//! first by their own log position, each joined to its declaration, narrowed by the
//! list's search filter (`questions::search_filter`, the same FTS5 index), a date, a
//! link of `question_links` and the derived `decisionSource`. Every value is bound.

use rusqlite::Connection;
use rusqlite::types::Value;

use super::questions::{bound, search_filter};
use super::rows::{QUESTION_COLUMNS, question_from_row};
use crate::domain::OqError;
use crate::engine::decisions::{DecisionPage, DecisionQuery, source_sql};

/// Settlements `st` and their declarations `d` (the one-declaration index's condition).
const FROM: &str = "events st JOIN events d ON d.type = 'artifact.open_question'
                                          AND d.question_id = st.question_id";

pub(super) fn decisions(
    conn: &Connection,
    project_id: Option<&str>,
    q: &DecisionQuery,
    after: Option<i64>,
    limit: usize,
) -> Result<DecisionPage, OqError> {
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
            " AND d.question_id IN (SELECT question_id FROM question_links
                                    WHERE kind = :link_kind AND target = :link_target)",
        );
        params.push((":link_kind".into(), Value::Text(a.kind.as_str().into())));
        params.push((":link_target".into(), Value::Text(a.id.clone())));
    }
    if let Some(source) = q.source {
        let derived = source_sql(
            "st.type",
            "json_extract(st.payload, '$.decisionSource')",
            "json_extract(st.payload, '$.aceitouSugestao')",
            "json_extract(st.payload, '$.reason')",
        );
        filter.push_str(&format!(" AND {derived} = :source"));
        params.push((":source".into(), Value::Text(source.as_str().into())));
    }
    search_filter("d.seq", q.search.as_ref(), &mut filter, &mut params);

    let total: i64 = conn
        .prepare_cached(&format!("SELECT count(*) FROM {FROM} WHERE {filter}"))?
        .query_row(&*bound(&params), |r| r.get(0))?;

    if let Some(after) = after {
        filter.push_str(" AND st.seq < :after");
        params.push((":after".into(), Value::Integer(after)));
    }
    params.push((":limit".into(), Value::Integer(limit as i64)));
    let sql = format!(
        "SELECT {QUESTION_COLUMNS}, st.seq FROM {FROM} WHERE {filter} ORDER BY st.seq DESC LIMIT :limit"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(&*bound(&params), |row| {
        let seq: i64 = row.get(9)?;
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
