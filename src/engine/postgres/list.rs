//! The list query in PostgreSQL: the SQL of a page and of its total, built from the
//! filter (status, project, search words), the sort and the keyset cursor, every value
//! bound. The same meaning as the SQLite store's (`engine::list`, `domain::search`):
//! each word a substring, case aside, of the question, its suggestion or its answer —
//! here `ILIKE`, PostgreSQL's own case folding.

use postgres::types::ToSql;

use crate::domain::search::Search;
use crate::engine::list::{SEARCH_TOTAL_CAP, Sort};
use crate::engine::store::{QuestionQuery, StatusFilter};

/// A bound value.
#[derive(Clone)]
pub(super) enum Param {
    Text(String),
    Int(i64),
}

impl Param {
    fn sql(&self) -> &(dyn ToSql + Sync) {
        match self {
            Param::Text(s) => s,
            Param::Int(n) => n,
        }
    }
}

/// The values in `$n` order, as `postgres` takes them.
pub(super) fn refs(params: &[Param]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(Param::sql).collect()
}

/// The SQL of one page and its count, with their parameters in `$n` order.
pub(super) struct ListSql {
    pub page: String,
    pub count: String,
    pub page_params: Vec<Param>,
    pub count_params: Vec<Param>,
    /// How many of the filter a snooze hides now (`snoozes.rs`), with its parameters.
    pub snoozed: Option<(String, Vec<Param>)>,
}

/// `AND (…)` per search word over the declaration `d`: its question, its suggestion or
/// its answer `ILIKE` the word. The list and the decision history share it.
pub(super) fn search_filter(search: Option<&Search>, filter: &mut String, params: &mut Vec<Param>) {
    for word in search.map(|s| s.words()).unwrap_or_default() {
        params.push(Param::Text(Search::like_pattern(word)));
        let n = params.len();
        filter.push_str(&format!(
            " AND (d.payload->>'pergunta' ILIKE ${n} OR coalesce(d.payload->>'sugestao', '') ILIKE ${n}
                   OR EXISTS (SELECT 1 FROM oq.events w WHERE w.type = 'open_question.answered'
                              AND w.question_id = d.question_id AND w.payload->>'resposta' ILIKE ${n}))"
        ));
    }
}

/// `columns` and `settlement` are the view's question columns and settlement join.
pub(super) fn list_sql(q: &QuestionQuery<'_>, columns: &str, settlement: &str) -> ListSql {
    let (from, seq, project, mut filter) = match q.status {
        StatusFilter::Open => (
            "oq.open_questions o JOIN oq.events d ON d.seq = o.declared_seq",
            "o.declared_seq",
            "o.project_id",
            String::from("TRUE"),
        ),
        StatusFilter::Answered => (
            "oq.events d",
            "d.seq",
            "d.project_id",
            String::from(
                "d.type = 'artifact.open_question' AND EXISTS (SELECT 1 FROM oq.events a
                   WHERE a.type = 'open_question.answered' AND a.question_id = d.question_id)",
            ),
        ),
        StatusFilter::All => (
            "oq.events d",
            "d.seq",
            "d.project_id",
            String::from("d.type = 'artifact.open_question'"),
        ),
        StatusFilter::Closed | StatusFilter::Decided(_) => (
            "oq.events d",
            "d.seq",
            "d.project_id",
            String::from(
                "d.type = 'artifact.open_question' AND EXISTS (SELECT 1 FROM oq.events st
                   WHERE st.type IN ('open_question.answered', 'open_question.closed')
                     AND st.question_id = d.question_id AND ",
            ),
        ),
    };
    let mut params: Vec<Param> = Vec::new();
    match q.status {
        StatusFilter::Closed => filter.push_str("st.type = 'open_question.closed')"),
        StatusFilter::Decided(source) => {
            params.push(Param::Text(source.as_str().into()));
            let derived = super::decisions::settled_source();
            filter.push_str(&format!("{derived} = ${})", params.len()));
        }
        StatusFilter::Open | StatusFilter::Answered | StatusFilter::All => {}
    }
    if let Some(p) = q.project_id {
        params.push(Param::Text(p.to_string()));
        filter.push_str(&format!(" AND {project} = ${}", params.len()));
    }
    search_filter(q.search, &mut filter, &mut params);
    let open = q.status == StatusFilter::Open;
    let qid = if open {
        "o.question_id"
    } else {
        "d.question_id"
    };
    let snoozed = Some(super::snoozes::count_sql(
        from, &filter, &params, qid, open, q.now,
    ));
    super::snoozes::filter(q.snoozed, qid, open, q.now, &mut filter, &mut params);
    // A search's total is counted to the cap and one past it (`SEARCH_TOTAL_CAP`): each
    // word is an ILIKE per row, so an exact count is a scan of the whole filter.
    let count = match q.search {
        Some(_) => format!(
            "SELECT count(*) FROM (SELECT 1 FROM {from} WHERE {filter} LIMIT {}) AS capped",
            SEARCH_TOTAL_CAP + 1
        ),
        None => format!("SELECT count(*) FROM {from} WHERE {filter}"),
    };
    let (count_params, mut page_params) = (params.clone(), params);
    let key = match q.sort {
        Sort::Oldest | Sort::Newest => None,
        Sort::Project => Some(project.to_string()),
        // The open set has its asker in a column of its own, indexed (schema v4).
        Sort::Asker if q.status == StatusFilter::Open => Some("o.autor".to_string()),
        Sort::Asker => Some("(d.payload->>'autor')".to_string()),
    };
    let mut page_filter = filter.clone();
    if let Some(after) = q.after {
        page_params.push(Param::Int(after.seq));
        let a = page_params.len();
        let cond = match (q.sort, &key) {
            (Sort::Newest, _) => format!("{seq} < ${a}"),
            (_, Some(k)) => {
                page_params.push(Param::Text(after.key.clone().unwrap_or_default()));
                let b = page_params.len();
                format!("({k} COLLATE \"C\" > ${b} OR ({k} = ${b} AND {seq} > ${a}))")
            }
            (_, None) => format!("{seq} > ${a}"),
        };
        page_filter.push_str(&format!(" AND {cond}"));
    }
    // Keys compare byte for byte, as SQLite's do, whatever the database's collation.
    let order = match (q.sort, &key) {
        (Sort::Newest, _) => format!("{seq} DESC"),
        (_, Some(k)) => format!("{k} COLLATE \"C\", {seq}"),
        (_, None) => seq.to_string(),
    };
    page_params.push(Param::Int(q.limit as i64));
    let page = format!(
        "SELECT {columns} FROM {from} {settlement} WHERE {page_filter} ORDER BY {order} LIMIT ${}",
        page_params.len()
    );
    ListSql {
        page,
        count,
        page_params,
        count_params,
        snoozed,
    }
}
