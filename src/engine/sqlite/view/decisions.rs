//! The decision history in SQL: the settlements (answers and closures) newest first by
//! their own log position, each joined to its declaration, narrowed by search words
//! (the list's rule, `words.rs`), a date, a link of `question_links` and the derived
//! `decisionSource`. Every value is bound.
//!
//! Two shapes, chosen per query:
//! - **from the matches**, when a search word is rare enough to drive (`words::driver`:
//!   at most `SEARCH_TOTAL_CAP` declarations hold it): those declarations through the
//!   trigram index, each joined to its one settlement, the few sorted; a rare word among
//!   500,000 decisions no longer walks every one of them;
//! - **from the settlements**, otherwise: a backward walk of `events_settled_by_project`
//!   that stops after a page, every word tested per row on the way.
//!
//! A search's total is counted to one past the cap and reported as a lower bound beyond
//! it, as the list's is. A `since` bound is also a log position bound (the first
//! settlement at or after it, through `events_settled_at`), so the walk stops there
//! instead of testing every older settlement's time.

use rusqlite::Connection;
use rusqlite::types::Value;

use super::questions::bound;
use super::rows::{AFTER_QUESTION, QUESTION_COLUMNS, question_from_row};
use super::words;
use crate::domain::OqError;
use crate::engine::decisions::{DecisionPage, DecisionQuery, source_sql};
use crate::engine::list::SEARCH_TOTAL_CAP;

/// The settlement types, spelled as the settlement indexes' own condition (a partial
/// index serves only a query whose terms name its condition).
const SETTLED: &str = "st.type IN ('open_question.answered', 'open_question.closed')";

/// Settlements `st` and their declarations `d` (the one-declaration index's condition),
/// walked from the settlements.
const FROM_SETTLEMENTS: &str = "events st JOIN events d ON d.type = 'artifact.open_question'
                                          AND d.question_id = st.question_id";

/// The declarations a rare word found, each joined to its one settlement: `CROSS JOIN`
/// keeps `d` outside, so SQLite starts from the index's few matches, not the walk.
const FROM_MATCHES: &str = "events d CROSS JOIN events st ON st.question_id = d.question_id";

/// The count's and the page's SQL, each with its bound values.
type Sql = (String, Vec<(String, Value)>);

fn plan(
    conn: &Connection,
    project_id: Option<&str>,
    q: &DecisionQuery,
    after: Option<i64>,
    limit: usize,
) -> Result<(Sql, Sql), OqError> {
    let mut filter = String::from(SETTLED);
    let mut params: Vec<(String, Value)> = Vec::new();
    if let Some(p) = project_id {
        filter.push_str(" AND st.project_id = :project");
        params.push((":project".into(), Value::Text(p.into())));
    }
    if let Some(since) = q.since {
        // The exact test, and the position of the first settlement it keeps: the walk
        // newest first ends there (`at` need not grow with `seq`; the test still holds).
        let project = if project_id.is_some() {
            "project_id = :project AND "
        } else {
            ""
        };
        filter.push_str(&format!(
            " AND st.at >= :since AND st.seq >= coalesce((SELECT min(seq) FROM events
                WHERE {project}type IN ('open_question.answered', 'open_question.closed')
                  AND at >= :since), 9223372036854775807)"
        ));
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
    let words = q.search.as_ref().map(|s| s.words()).unwrap_or_default();
    let driver = words::driver(conn, words)?;
    let tests = words::tests(words, driver);
    words::push("d.seq", true, words, &tests, &mut filter, &mut params);

    let from = if driver.is_some() {
        filter.push_str(" AND d.type = 'artifact.open_question'");
        FROM_MATCHES
    } else {
        FROM_SETTLEMENTS
    };
    // Without a search or an agent every filter is the settlement's own: the total is a
    // walk of the settlements' index, no declaration joined.
    let count_from = if q.search.is_some() || q.agent.is_some() {
        from
    } else {
        "events st"
    };
    let count = match q.search {
        Some(_) => format!(
            "SELECT count(*) FROM (SELECT 1 FROM {count_from} WHERE {filter} LIMIT {})",
            SEARCH_TOTAL_CAP + 1
        ),
        None => format!("SELECT count(*) FROM {count_from} WHERE {filter}"),
    };
    let count = (count, params.clone());
    if let Some(after) = after {
        filter.push_str(" AND st.seq < :after");
        params.push((":after".into(), Value::Integer(after)));
    }
    params.push((":limit".into(), Value::Integer(limit as i64)));
    let page = format!(
        "SELECT {QUESTION_COLUMNS}, st.seq FROM {from} WHERE {filter} ORDER BY st.seq DESC LIMIT :limit"
    );
    Ok((count, (page, params)))
}

pub(super) fn decisions(
    conn: &Connection,
    project_id: Option<&str>,
    q: &DecisionQuery,
    after: Option<i64>,
    limit: usize,
) -> Result<DecisionPage, OqError> {
    let ((count_sql, count_params), (sql, params)) = plan(conn, project_id, q, after, limit)?;
    let counted: i64 = conn
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
    Ok(DecisionPage::counted(
        items,
        counted as u64,
        q.search.is_some(),
    ))
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
    use crate::domain::search::Search;

    /// How SQLite runs `sql`: its query plan's lines.
    fn how(conn: &Connection, (sql, params): &Sql) -> String {
        super::super::questions::query_plan(conn, sql, params)
    }

    /// A store at the current schema with 1,001 answered questions in `loja` (one more
    /// than the cap), each "Routine checkout number N", answered at time N. Only the
    /// columns the plans and counts read (the rows' payloads are not events: the pages'
    /// contents are tested over a real server, `tests/server_decisions.rs`).
    fn store() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        crate::engine::sqlite::schema::migrate(&conn, 0).unwrap();
        conn.execute_batch(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1001)
             INSERT INTO events (seq, project_seq, event_id, type, project_id, session_id, question_id, actor, at, payload)
             SELECT 2 * i - 1, 2 * i - 1, 'd' || i, 'artifact.open_question', 'loja', 's', 'q' || i, 'po-bot', i,
                    json_object('pergunta', 'Routine checkout number ' || i, 'autor', 'po') FROM n;
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1001)
             INSERT INTO events (seq, project_seq, event_id, type, project_id, session_id, question_id, actor, at, payload)
             SELECT 2 * i, 2 * i, 'a' || i, 'open_question.answered', 'loja', 's', 'q' || i, 'ana', i,
                    json_object('resposta', 'yes') FROM n;",
        )
        .unwrap();
        conn
    }

    fn counted(conn: &Connection, (sql, params): &Sql) -> i64 {
        conn.query_row(sql, &*bound(params), |r| r.get(0)).unwrap()
    }

    fn search(text: &str) -> DecisionQuery {
        DecisionQuery {
            search: Search::parse(text).unwrap(),
            ..DecisionQuery::new()
        }
    }

    /// The newest page walks a project's settlements backwards through their index and
    /// stops after a page; the total counts that index alone (no declaration joined, no
    /// sort): with neither, a page among 1,000,000 events took 2.2 s.
    #[test]
    fn the_newest_page_and_its_total_walk_the_settlement_index() {
        let conn = store();
        let (count, page) =
            plan(&conn, Some("loja"), &DecisionQuery::new(), Some(900), 50).unwrap();
        let walk = how(&conn, &page);
        assert!(walk.contains("events_settled_by_project"), "{walk}");
        assert!(!walk.contains("TEMP B-TREE"), "the page sorts: {walk}");
        // Either settlement index counts them (both hold exactly the settlements).
        let count = how(&conn, &count);
        assert!(count.contains("USING INDEX events_settled"), "{count}");
        assert!(!count.contains("TEMP B-TREE"), "the count sorts: {count}");
        assert!(
            !count.contains(" d "),
            "the count joins the declarations: {count}"
        );
    }

    /// A word few declarations hold drives the query from the trigram index (the page
    /// sorts those few); a word more hold than the cap walks the settlements newest
    /// first and tests each row, and its total stops at the cap as a lower bound.
    #[test]
    fn a_rare_word_drives_from_the_index_and_a_common_one_walks_the_settlements() {
        let conn = store();
        let (count, page) = plan(&conn, Some("loja"), &search("number 1000"), None, 50).unwrap();
        for (what, plan) in [("count", how(&conn, &count)), ("page", how(&conn, &page))] {
            assert!(
                plan.contains("SEARCH d USING INTEGER PRIMARY KEY"),
                "{what}: {plan}"
            );
            assert!(plan.contains("events_one_settlement"), "{what}: {plan}");
            assert!(
                !plan.contains("events_settled_by_project"),
                "{what} walks: {plan}"
            );
        }
        assert_eq!(counted(&conn, &count), 1);

        let (count, page) = plan(&conn, Some("loja"), &search("checkout"), None, 50).unwrap();
        let walk = how(&conn, &page);
        assert!(walk.contains("events_settled_by_project"), "{walk}");
        assert!(
            !walk.contains("TEMP B-TREE"),
            "the common word sorts: {walk}"
        );
        assert_eq!(counted(&conn, &count), SEARCH_TOTAL_CAP as i64 + 1);
    }

    /// `since` is counted on the settlements' time index, and the page's walk ends at
    /// the first settlement it keeps; the result is the exact set either way.
    #[test]
    fn since_is_a_range_of_the_time_index() {
        let conn = store();
        let q = DecisionQuery {
            since: Some(990),
            ..DecisionQuery::new()
        };
        let (count, page) = plan(&conn, Some("loja"), &q, None, 50).unwrap();
        let counting = how(&conn, &count);
        assert!(counting.contains("events_settled_at"), "{counting}");
        let walk = how(&conn, &page);
        assert!(walk.contains("events_settled_by_project"), "{walk}");
        assert!(!walk.contains("TEMP B-TREE"), "{walk}");
        assert_eq!(counted(&conn, &count), 12);
        let late = DecisionQuery {
            since: Some(5_000),
            ..DecisionQuery::new()
        };
        let (count, _) = plan(&conn, Some("loja"), &late, None, 50).unwrap();
        assert_eq!(counted(&conn, &count), 0);
    }
}
