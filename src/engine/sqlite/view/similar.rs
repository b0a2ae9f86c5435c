//! The memory of answers' lookup in SQLite: for each of an open question's words, and
//! for all of them together, the newest answered questions of the project that hold it,
//! found through the FTS5 trigram table `question_search` walked newest first
//! (`ORDER BY rowid DESC` is the index's own order, so a word every question holds stops
//! after a few rows, and a rare one is its whole posting list, at most
//! [`SCAN_PER_QUERY`] matches a query). `domain::similar` decides which of them resemble
//! the question. The rows past the index's `upto` are read from this connection's cover
//! of them (`search.rs`) first: they are the newest.

use std::collections::HashSet;

use rusqlite::Connection;

use super::rows::{QUESTION_COLUMNS, SETTLEMENT_JOIN, question_from_row};
use crate::domain::{OqError, Question};
use crate::engine::store::Lookup;

/// One FTS5 query: the words as phrases, all of them (FTS5's implicit AND).
fn phrase(words: &[&String]) -> String {
    words
        .iter()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How many of a query's newest index matches are looked at, answered or not. Without
/// a bound, a word every question holds among 100,000 open questions and few answered
/// ones read the whole posting list (over a second a lookup, and the TUI looks up on
/// every move); an answer older than this many newer matches is not recalled.
pub const SCAN_PER_QUERY: i64 = 500;

/// The lookup over one FTS5 table: `question_search`, or this connection's cover of its
/// unindexed tail (`search_tail`, `search.rs`), whose rows are all newer.
pub(super) fn sql(table: &str) -> String {
    format!(
        "SELECT {QUESTION_COLUMNS} FROM (SELECT rowid, qseq FROM {table}
                                          WHERE {table} MATCH :words
                                          ORDER BY rowid DESC LIMIT :scan) m
           JOIN events d ON d.seq = m.qseq {SETTLEMENT_JOIN}
          WHERE d.type = 'artifact.open_question'
            AND d.project_id = :project AND st.type = 'open_question.answered'
          ORDER BY m.rowid DESC LIMIT :limit"
    )
}

pub(super) fn candidates(
    conn: &Connection,
    project_id: &str,
    words: &[String],
    per_word: usize,
    lookup: Lookup,
) -> Result<Vec<Question>, OqError> {
    let queries: Vec<String> = match lookup {
        Lookup::AllWords => vec![phrase(&words.iter().collect::<Vec<_>>())],
        Lookup::EachWord => words.iter().map(|w| phrase(&[w])).collect(),
    };
    crate::engine::sqlite::search::cover_tail(conn)?;
    let mut in_tail = conn.prepare_cached(
        "SELECT count(*) FROM (SELECT 1 FROM search_tail WHERE search_tail MATCH ?1 LIMIT ?2)",
    )?;
    let mut tail = conn.prepare_cached(&sql("search_tail"))?;
    let mut index = conn.prepare_cached(&sql("question_search"))?;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for q in queries {
        // The tail's matches first, then the index's newest: SCAN_PER_QUERY and `per_word`
        // over both, as one table indexed to the end would give them.
        let held: i64 = in_tail.query_row(rusqlite::params![q, SCAN_PER_QUERY], |r| r.get(0))?;
        let mut found = 0;
        for (stmt, scan) in [
            (&mut tail, SCAN_PER_QUERY),
            (&mut index, SCAN_PER_QUERY - held),
        ] {
            if scan <= 0 || found >= per_word {
                continue;
            }
            let rows = stmt.query_map(
                rusqlite::named_params! {":words": q, ":project": project_id,
                ":limit": (per_word - found) as i64, ":scan": scan},
                question_from_row,
            )?;
            for row in rows {
                let question = row??;
                found += 1;
                if seen.insert(question.question_id.clone()) {
                    out.push(question);
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The lookup starts from the search index, newest first, and sorts nothing: with a
    /// walk of the declarations instead, a word every question holds would read them all.
    #[test]
    fn the_lookup_walks_the_search_index_newest_first_without_a_sort() {
        let conn = Connection::open_in_memory().unwrap();
        crate::engine::sqlite::schema::migrate(&conn, 0).unwrap();
        crate::engine::sqlite::search::cover_tail(&conn).unwrap();
        for table in ["question_search", "search_tail"] {
            let mut stmt = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {}", sql(table)))
                .unwrap();
            let plan = stmt
                .query_map(
                    rusqlite::named_params! {":words": "\"abc\"", ":project": "p", ":limit": 3, ":scan": 500},
                    |r| r.get::<_, String>(3),
                )
                .unwrap()
                .map(Result::unwrap)
                .collect::<Vec<_>>();
            // The matches looked at are bounded first (`SCAN_PER_QUERY`), then joined.
            assert_eq!(plan[0], "CO-ROUTINE m", "{plan:?}");
            assert!(plan[1].contains("VIRTUAL TABLE"), "{plan:?}");
            assert!(!plan.iter().any(|l| l.contains("TEMP B-TREE")), "{plan:?}");
        }
    }
}
