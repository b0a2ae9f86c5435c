//! The memory of answers' lookup in SQLite: for each of an open question's words, and
//! for all of them together, the newest answered questions of the project that hold it,
//! found through the FTS5 trigram table `question_search` walked newest first
//! (`ORDER BY rowid DESC` is the index's own order, so a word every question holds stops
//! after a few rows, and a rare one is its whole posting list, at most
//! [`SCAN_PER_QUERY`] matches a query). `domain::similar` decides which of them resemble
//! the question.

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

pub(super) fn sql() -> String {
    format!(
        "SELECT {QUESTION_COLUMNS} FROM (SELECT rowid, qseq FROM question_search
                                          WHERE question_search MATCH :words
                                          ORDER BY rowid DESC LIMIT {SCAN_PER_QUERY}) m
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
    let mut stmt = conn.prepare_cached(&sql())?;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for q in queries {
        let rows = stmt.query_map(
            rusqlite::named_params! {":words": q, ":project": project_id, ":limit": per_word as i64},
            question_from_row,
        )?;
        for row in rows {
            let question = row??;
            if seen.insert(question.question_id.clone()) {
                out.push(question);
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
        let mut stmt = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {}", sql()))
            .unwrap();
        let plan = stmt
            .query_map(
                rusqlite::named_params! {":words": "\"abc\"", ":project": "p", ":limit": 3},
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
