//! The list query in SQL: one statement for a page and one for the total, built from
//! the filter (status, project, search words), the sort and the keyset cursor. Every
//! part binds its values; nothing the caller typed is spliced into the SQL text.
//!
//! Search words go through the FTS5 trigram index (`question_search`, schema v8) or are
//! tested per row along the sort's index, whichever the words' commonness makes cheap
//! (`words.rs`); a search's total is counted to [`SEARCH_TOTAL_CAP`] and flagged beyond.

use rusqlite::Connection;
use rusqlite::types::Value;

use super::rows::{QUESTION_COLUMNS, SETTLEMENT_JOIN, collect, question_from_row};
use super::snoozes;
use super::words;
use crate::domain::{Actor, OqError};
use crate::engine::OpenCounts;
use crate::engine::list::{SEARCH_TOTAL_CAP, Sort, capped_total};
use crate::engine::snoozed::SnoozeFilter;
use crate::engine::store::{QuestionPage, QuestionQuery, StatusFilter};

/// The SQL of one list: `FROM` and `WHERE` shared by the page and the count.
struct Plan {
    from: &'static str,
    /// What the count reads: for the open set, the open table alone (the filter names
    /// only its columns), so the whole filter's total is an index count, not a join.
    count_from: &'static str,
    /// The declaration's log position, project and asker, as the driving table has them.
    seq: &'static str,
    project: &'static str,
    asker: &'static str,
    /// The question's id as the driving table has it, and whether that table is the
    /// open set (for the snooze conditions).
    qid: &'static str,
    open: bool,
    /// Whether the log holds any snooze (`snoozes::any`): none, nothing to test per row.
    any_snoozed: bool,
    /// The filter before the snooze condition: what the snoozed count counts over.
    base: String,
    base_params: Vec<(String, Value)>,
    filter: String,
    params: Vec<(String, Value)>,
}

impl Plan {
    fn new(conn: &Connection, q: &QuestionQuery<'_>) -> rusqlite::Result<Plan> {
        let (from, seq, project, mut filter) = match q.status {
            // The open set has its own indexes (by position, by asker): walk them.
            StatusFilter::Open => (
                "open_questions o JOIN events d ON d.seq = o.declared_seq",
                "o.declared_seq",
                "o.project_id",
                String::from("1 = 1"),
            ),
            StatusFilter::Answered => (
                "events d",
                "d.seq",
                "d.project_id",
                String::from(
                    "d.type = 'artifact.open_question' AND EXISTS (SELECT 1 FROM events a
                       WHERE a.type = 'open_question.answered' AND a.question_id = d.question_id)",
                ),
            ),
            StatusFilter::All => (
                "events d",
                "d.seq",
                "d.project_id",
                String::from("d.type = 'artifact.open_question'"),
            ),
            StatusFilter::Closed | StatusFilter::Decided(_) => (
                "events d",
                "d.seq",
                "d.project_id",
                String::from(
                    "d.type = 'artifact.open_question' AND EXISTS (SELECT 1 FROM events st
                       WHERE st.type IN ('open_question.answered', 'open_question.closed')
                         AND st.question_id = d.question_id AND ",
                ),
            ),
        };
        let mut params = Vec::new();
        match q.status {
            StatusFilter::Closed => filter.push_str("st.type = 'open_question.closed')"),
            StatusFilter::Decided(source) => {
                let derived = super::decisions::settled_source();
                filter.push_str(&format!("{derived} = :source)"));
                params.push((":source".into(), Value::Text(source.as_str().into())));
            }
            StatusFilter::Open | StatusFilter::Answered | StatusFilter::All => {}
        }
        if let Some(p) = q.project_id {
            filter.push_str(&format!(" AND {project} = :project"));
            params.push((":project".into(), Value::Text(p.into())));
        }
        let words = q.search.map(|s| s.words()).unwrap_or_default();
        let tests = words::choose(conn, words)?;
        let answered = q.status != StatusFilter::Open;
        words::push(seq, answered, words, &tests, &mut filter, &mut params);
        let open = q.status == StatusFilter::Open;
        let qid = if open {
            "o.question_id"
        } else {
            "d.question_id"
        };
        let (base, base_params) = (filter.clone(), params.clone());
        let any_snoozed = snoozes::any(conn)?;
        snoozes::filter(
            q.snoozed,
            any_snoozed,
            qid,
            open,
            q.now,
            &mut filter,
            &mut params,
        );
        let count_from = match q.status {
            StatusFilter::Open if !words::reads_rows(&tests, words) => "open_questions o",
            _ => from,
        };
        let asker = match q.status {
            StatusFilter::Open => "o.autor",
            _ => "json_extract(d.payload, '$.autor')",
        };
        Ok(Plan {
            from,
            count_from,
            seq,
            project,
            asker,
            qid,
            open,
            any_snoozed,
            base,
            base_params,
            filter,
            params,
        })
    }

    /// The sort key before the log position, for the keyed sorts.
    fn key(&self, sort: Sort) -> Option<String> {
        match sort {
            Sort::Oldest | Sort::Newest => None,
            Sort::Project => Some(self.project.to_string()),
            Sort::Asker => Some(self.asker.to_string()),
        }
    }
}

pub(super) fn bound(params: &[(String, Value)]) -> Vec<(&str, &dyn rusqlite::ToSql)> {
    params
        .iter()
        .map(|(n, v)| (n.as_str(), v as &dyn rusqlite::ToSql))
        .collect()
}

/// How SQLite runs `sql`: its query plan's lines, for the tests that hold a query to
/// its index.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(super) fn query_plan(conn: &Connection, sql: &str, params: &[(String, Value)]) -> String {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let rows = stmt
        .query_map(&*bound(params), |r| r.get::<_, String>(3))
        .unwrap();
    rows.map(Result::unwrap).collect::<Vec<_>>().join("\n")
}

pub(super) fn questions(conn: &Connection, q: &QuestionQuery<'_>) -> Result<QuestionPage, OqError> {
    let plan = Plan::new(conn, q)?;
    // A search is counted to one past the cap and stops there (`SEARCH_TOTAL_CAP`).
    let count_sql = match q.search {
        Some(_) => format!(
            "SELECT count(*) FROM (SELECT 1 FROM {} WHERE {} LIMIT {})",
            plan.count_from,
            plan.filter,
            SEARCH_TOTAL_CAP + 1
        ),
        None => format!(
            "SELECT count(*) FROM {} WHERE {}",
            plan.count_from, plan.filter
        ),
    };
    let counted: i64 = conn
        .prepare_cached(&count_sql)?
        .query_row(&*bound(&plan.params), |r| r.get(0))?;
    let (total, total_is_lower_bound) = capped_total(q.search.is_some(), counted as u64);
    let (sql, params) = page_sql(&plan, q);
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut items = collect(stmt.query_map(&*bound(&params), question_from_row)?)?;
    snoozes::attach(conn, &mut items)?;
    let snoozed = snoozes::count(
        conn,
        plan.any_snoozed,
        plan.count_from,
        &plan.base,
        &plan.base_params,
        plan.qid,
        plan.open,
        q.now,
    )?;
    Ok(QuestionPage {
        items,
        total,
        total_is_lower_bound,
        snoozed,
    })
}

/// [`crate::engine::counts::by_pages`]'s numbers from the open set's index alone: the
/// list's own filter (snoozes hidden), with `mine` the questions of the viewer's sessions
/// not handed off to another dialog. An agent answers nothing.
pub(super) fn open_counts(
    conn: &Connection,
    project_id: Option<&str>,
    viewer: &Actor,
    now: i64,
) -> Result<OpenCounts, OqError> {
    let plan = Plan::new(conn, &open_filter(project_id, now))?;
    let (sql, mut params) = (open_counts_sql(&plan), plan.params);
    let person = match viewer {
        Actor::Person { id } => Value::Text(id.clone()),
        Actor::Agent { .. } | Actor::Service { .. } => Value::Null,
    };
    params.push((":me".into(), person));
    let (open, mine): (i64, i64) = conn
        .prepare_cached(&sql)?
        .query_row(&*bound(&params), |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(OpenCounts {
        open: open as u64,
        mine: mine as u64,
    })
}

/// The default open view's filter, for [`open_counts`].
fn open_filter(project_id: Option<&str>, now: i64) -> QuestionQuery<'_> {
    QuestionQuery {
        project_id,
        status: StatusFilter::Open,
        search: None,
        sort: Sort::Oldest,
        after: None,
        limit: 0,
        snoozed: SnoozeFilter::Hide,
        now,
    }
}

/// Each open question's session author and hand-off mark, as [`QUESTION_COLUMNS`] reads
/// them, without its text: one probe of the declaration, its session, its hand-off.
fn open_counts_sql(plan: &Plan) -> String {
    format!(
        "SELECT count(*), coalesce(sum(CASE WHEN (SELECT json_extract(s.payload, '$.author')
                  FROM events s WHERE s.type = 'session.started' AND s.session_id = d.session_id) = :me
             THEN NOT EXISTS (SELECT 1 FROM events x
                  WHERE x.type = 'open_question.handed_off' AND x.question_id = d.question_id)
             ELSE 0 END), 0)
           FROM {} WHERE {}",
        plan.from, plan.filter
    )
}

/// The page's SQL and parameters: the filter, the cursor, the sort's order, the limit.
fn page_sql(plan: &Plan, q: &QuestionQuery<'_>) -> (String, Vec<(String, Value)>) {
    let seq = plan.seq;
    let key = plan.key(q.sort);
    let mut page_filter = plan.filter.clone();
    let mut params = plan.params.clone();
    if let Some(after) = q.after {
        let cond = match (q.sort, &key) {
            (Sort::Newest, _) => format!("{seq} < :after"),
            (_, Some(k)) => format!("({k}, {seq}) > (:after_key, :after)"),
            (_, None) => format!("{seq} > :after"),
        };
        page_filter.push_str(&format!(" AND {cond}"));
        params.push((":after".into(), Value::Integer(after.seq)));
        if key.is_some() {
            let k = after.key.clone().unwrap_or_default();
            params.push((":after_key".into(), Value::Text(k)));
        }
    }
    let order = match (q.sort, &key) {
        (Sort::Newest, _) => format!("{seq} DESC"),
        (_, Some(k)) => format!("{k}, {seq}"),
        (_, None) => seq.to_string(),
    };
    params.push((":limit".into(), Value::Integer(q.limit as i64)));
    let sql = format!(
        "SELECT {QUESTION_COLUMNS} FROM {} {SETTLEMENT_JOIN} WHERE {page_filter} ORDER BY {order} LIMIT :limit",
        plan.from
    );
    (sql, params)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::words::{Test, choose};
    use super::*;
    use crate::domain::search::Search;

    /// 1,001 open questions in `loja` (one more than the cap), every one of them
    /// "Routine questão number N", asked by `po` or `criativo` in turn.
    const FILL: &str = "
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1001)
        INSERT INTO events (seq, project_seq, event_id, type, project_id, session_id, question_id, actor, at, payload)
        SELECT i, i, 'e' || i, 'artifact.open_question', 'loja', 's', 'q' || i, 'po-bot', i,
               json_object('pergunta', 'Routine questão number ' || i,
                           'autor', CASE i % 2 WHEN 0 THEN 'po' ELSE 'criativo' END)
          FROM n";

    /// A word more rows hold than the cap is tested per row (unless it has letters
    /// beyond ASCII); the rarest word under the cap drives the query through the index.
    /// Per row or by asker, the first page walks the open set's own index in the sort's
    /// order and stops after a page: no sort of the matches.
    #[test]
    fn common_words_walk_the_sorts_index_and_a_rare_one_drives() {
        let conn = Connection::open_in_memory().unwrap();
        crate::engine::sqlite::schema::migrate(&conn, 0).unwrap();
        conn.execute_batch(FILL).unwrap();
        let parse = |t: &str| Search::parse(t).unwrap().unwrap();
        let tests = |t: &str| choose(&conn, parse(t).words()).unwrap();
        assert_eq!(tests("routine"), [Test::Row]);
        assert_eq!(tests("routine 1000"), [Test::Row, Test::Index]);
        assert_eq!(tests("questão routine"), [Test::Index, Test::Row]);
        assert_eq!(tests("routine er"), [Test::Row, Test::Row]);
        let common = parse("routine number");
        for (sort, search, index) in [
            (Sort::Newest, Some(&common), "open_questions_by_project"),
            (Sort::Oldest, Some(&common), "open_questions_by_project"),
            (Sort::Asker, Some(&common), "open_questions_by_asker"),
            (Sort::Asker, None, "open_questions_by_asker"),
        ] {
            let q = QuestionQuery {
                project_id: Some("loja"),
                status: StatusFilter::Open,
                search,
                sort,
                after: None,
                limit: 51,
                snoozed: Default::default(),
                now: 0,
            };
            let plan = Plan::new(&conn, &q).unwrap();
            let (sql, params) = page_sql(&plan, &q);
            let how = query_plan(&conn, &sql, &params);
            assert!(how.contains(index), "{sort:?}: {how}");
            assert!(!how.contains("TEMP B-TREE"), "{sort:?} sorts: {how}");
        }
    }

    /// `oq status`'s count walks the open set and probes each question's declaration,
    /// session and hand-off by key: no scan of the log, whatever the log holds.
    #[test]
    fn the_open_count_reads_the_open_set_and_probes_by_key() {
        let conn = Connection::open_in_memory().unwrap();
        crate::engine::sqlite::schema::migrate(&conn, 0).unwrap();
        for project in [None, Some("loja")] {
            let plan = Plan::new(&conn, &open_filter(project, 0)).unwrap();
            let mut params = plan.params.clone();
            params.push((":me".into(), Value::Text("ana".into())));
            let how = query_plan(&conn, &open_counts_sql(&plan), &params);
            let mut lines = how.lines();
            let first = lines.next().unwrap();
            assert!(
                first.contains(" o USING COVERING INDEX"),
                "{project:?}: {how}"
            );
            assert!(!lines.any(|l| l.contains("SCAN ")), "{project:?}: {how}");
            assert!(how.contains("events_one_session"), "{project:?}: {how}");
            assert!(how.contains("events_by_question"), "{project:?}: {how}");
        }
    }

    /// A log without any snooze hides nothing and counts nothing, so the open view pays
    /// no per-row snooze test; once one snooze is in the log the test is back.
    #[test]
    fn the_snooze_test_is_paid_only_when_the_log_holds_a_snooze() {
        let conn = Connection::open_in_memory().unwrap();
        crate::engine::sqlite::schema::migrate(&conn, 0).unwrap();
        conn.execute_batch(FILL).unwrap();
        let plan = |snoozed| {
            let q = QuestionQuery {
                project_id: Some("loja"),
                status: StatusFilter::Open,
                search: None,
                sort: Sort::Oldest,
                after: None,
                limit: 50,
                snoozed,
                now: 0,
            };
            let plan = Plan::new(&conn, &q).unwrap();
            (
                plan.filter.contains("open_question.snoozed"),
                plan.any_snoozed,
            )
        };
        assert_eq!(plan(crate::engine::SnoozeFilter::Hide), (false, false));
        // Whether any snooze exists is one probe of their own index, not a scan of the log.
        let how = query_plan(&conn, snoozes::ANY, &[]);
        assert!(how.contains("INDEX events_snoozed"), "{how}");
        conn.execute_batch(
            "INSERT INTO events (seq, project_seq, event_id, type, project_id, session_id, question_id, actor, at, payload)
             VALUES (2000, 2000, 'z', 'open_question.snoozed', 'loja', 's', 'q1', 'ana', 5,
                     json_object('until', 10))",
        )
        .unwrap();
        assert_eq!(plan(crate::engine::SnoozeFilter::Hide), (true, true));
    }
}
