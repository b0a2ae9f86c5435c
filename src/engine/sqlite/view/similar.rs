//! The memory of answers' lookup in SQLite: for each of an open question's words, and
//! for all of them together, the newest answered questions of the project that hold it,
//! found through the FTS5 trigram table `question_search` walked newest first
//! (`ORDER BY rowid DESC` is the index's own order, so a word every question holds stops
//! after a few rows, and a rare one is its whole posting list, at most
//! [`SCAN_PER_QUERY`] matches a query). `domain::similar` decides which of them resemble
//! the question. The rows past the index's `upto` (at most 63, schema v12) are read from
//! this connection's cover of them, `search_tail` (`search.rs`), beside the index: they
//! are the newest, so a query's positions are the tail's, then the index's.
//!
//! Three costs are kept off the path (session 13, `cargo bench --bench similar`):
//! - the all-words query is asked of the **rarest word alone** when the index holds it
//!   in at most `per_word` rows ([`rare_driver`]): every text holding all the words holds
//!   it, and no match of it is cut by a bound, so it finds every question the all-words
//!   `MATCH` finds (and maybe more), without FTS5 intersecting some 50 trigram doclists
//!   of words almost every question holds (~3 ms among 10,000 answered questions);
//! - each query selects only the declaration's position; a question is read (its
//!   columns, sub-queries and JSON) once however many queries find it, so the per-word
//!   walks of common words, which find the same newest answers, do not read them 8 times;
//! - no statement is prepared again on each call: no `LIMIT` is bound ([`sql`]).

use std::collections::HashSet;

use rusqlite::Connection;

use super::rows::{QUESTION_COLUMNS, SETTLEMENT_JOIN, question_from_row};
use crate::domain::{OqError, Question};
use crate::engine::store::Lookup;

/// One FTS5 query: the words as phrases, all of them (FTS5's implicit AND).
fn phrase<'w>(words: impl IntoIterator<Item = &'w str>) -> String {
    words
        .into_iter()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How many of a query's newest index matches are looked at, answered or not. Without
/// a bound, a word every question holds among 100,000 open questions and few answered
/// ones read the whole posting list (over a second a lookup, and the TUI looks up on
/// every move); an answer older than this many newer matches is not recalled.
pub const SCAN_PER_QUERY: i64 = 500;

/// The declarations' positions of one query's answered candidates, newest match first,
/// at most `limit`. The limits are written into the SQL, never bound: SQLite reads a
/// bound `LIMIT` while planning and marks the statement to be prepared again on every
/// new binding (`sqlite3ExprIsInteger` on a variable sets its `expmask`), which made each
/// of the lookup's queries a fresh parse and plan (~10 % of the lookup's time, `perf`).
pub(super) fn sql(table: &str, limit: usize) -> String {
    format!(
        "SELECT d.seq FROM (SELECT rowid, qseq FROM {table}
                              WHERE {table} MATCH :words
                              ORDER BY rowid DESC LIMIT {SCAN_PER_QUERY}) m
           JOIN events d ON d.seq = m.qseq {SETTLEMENT_JOIN}
          WHERE d.type = 'artifact.open_question'
            AND d.project_id = :project AND st.type = 'open_question.answered'
          ORDER BY m.rowid DESC LIMIT {limit}"
    )
}

/// The two tables a query reads, newest rows first: the unindexed tail's cover, then
/// the index. Each is walked to [`SCAN_PER_QUERY`] (so with a tail the walk of a common
/// word looks up to 63 rows further back than one table would).
const TABLES: [&str; 2] = ["search_tail", "question_search"];

/// One candidate read in full, by its declaration's position.
fn question_sql() -> String {
    format!("SELECT {QUESTION_COLUMNS} FROM events d {SETTLEMENT_JOIN} WHERE d.seq = ?1")
}

/// How many rows of the index and its tail's cover hold `word`, each counted to one
/// past `cap` (a stop after `cap + 1` rows: a few hundredths of a millisecond for a word
/// every question holds).
fn held_by(conn: &Connection, word: &str, cap: usize) -> rusqlite::Result<usize> {
    let mut n = 0;
    for table in TABLES {
        // The limit written in, not bound (see [`sql`]).
        let held: i64 = conn
            .prepare_cached(&format!(
                "SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ?1 LIMIT {})",
                cap + 1
            ))?
            .query_row([phrase([word])], |r| r.get(0))?;
        n += held as usize;
    }
    Ok(n)
}

/// The word to ask the all-words query with alone: the rarest of `words`, when the index
/// holds it in at most `per_word` rows (declarations and answers of every project
/// counted). Then its walk reads its whole posting list (`per_word` ≤
/// [`SCAN_PER_QUERY`]) and yields at most `per_word` candidates, so none is cut by
/// either bound: a superset of what the `MATCH` of every word finds. `None` when every
/// word is held by more rows: then all the words are asked together, as before.
/// The count must see every row a walk could yield: the unindexed tail's too
/// ([`held_by`]), or the bound would no longer hold.
pub(super) fn rare_driver<'w>(
    conn: &Connection,
    words: &'w [String],
    per_word: usize,
) -> rusqlite::Result<Option<&'w String>> {
    let cap = per_word.min(SCAN_PER_QUERY as usize);
    let mut best: Option<(usize, &String)> = None;
    for w in words {
        let n = held_by(conn, w, cap)?;
        if n <= cap && best.is_none_or(|(m, _)| n < m) {
            best = Some((n, w));
        }
    }
    Ok(best.map(|(_, w)| w))
}

pub(super) fn candidates(
    conn: &Connection,
    project_id: &str,
    words: &[String],
    per_word: usize,
    lookup: Lookup,
) -> Result<Vec<Question>, OqError> {
    // The tail's cover first: the rarity counts read it too.
    crate::engine::sqlite::search::cover_tail(conn)?;
    let queries: Vec<String> = match lookup {
        Lookup::AllWords => match rare_driver(conn, words, per_word)? {
            Some(rarest) => vec![phrase([rarest.as_str()])],
            None => vec![phrase(words.iter().map(String::as_str))],
        },
        Lookup::EachWord => words.iter().map(|w| phrase([w.as_str()])).collect(),
    };
    let mut seen = HashSet::new();
    let mut seqs = Vec::new();
    for q in queries {
        // The query's newest `per_word`, over the tail then the index.
        let mut found = Vec::new();
        for table in TABLES {
            let mut stmt = conn.prepare_cached(&sql(table, per_word))?;
            let rows = stmt.query_map(
                rusqlite::named_params! {":words": q, ":project": project_id},
                |r| r.get::<_, i64>(0),
            )?;
            for seq in rows {
                found.push(seq?);
            }
        }
        found.truncate(per_word);
        seqs.extend(found.into_iter().filter(|seq| seen.insert(*seq)));
    }
    let mut read = conn.prepare_cached(&question_sql())?;
    let mut out = Vec::with_capacity(seqs.len());
    for seq in seqs {
        out.push(read.query_row([seq], question_from_row)??);
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
        for table in TABLES {
            let mut stmt = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {}", sql(table, 3)))
                .unwrap();
            let plan = stmt
                .query_map(
                    rusqlite::named_params! {":words": "\"abc\"", ":project": "p"},
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

    /// A candidate is read by its declaration's position: one probe of the log's key.
    #[test]
    fn a_candidate_is_read_by_its_key() {
        let conn = Connection::open_in_memory().unwrap();
        crate::engine::sqlite::schema::migrate(&conn, 0).unwrap();
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {}", question_sql()))
            .unwrap()
            .query_map([1], |r| r.get::<_, String>(3))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(
            plan.iter()
                .any(|l| l.starts_with("SEARCH d USING INTEGER PRIMARY KEY")),
            "{plan:?}"
        );
        assert!(!plan.iter().any(|l| l.starts_with("SCAN d")), "{plan:?}");
    }

    /// The all-words query goes to the rarest word only when none of its rows can be cut
    /// by a bound: at most `per_word` rows hold it. One row more, and every word is
    /// asked together again (a word held by 33 rows, 32 newer than the one sought and
    /// answered, would lose it to the limit).
    #[test]
    fn the_rarest_word_drives_only_within_the_bound() {
        let conn = Connection::open_in_memory().unwrap();
        crate::engine::sqlite::schema::migrate(&conn, 0).unwrap();
        let row = |seq: i64, body: &str| {
            conn.execute(
                "INSERT INTO question_search (rowid, qseq, body) VALUES (?1, ?1, ?2)",
                rusqlite::params![seq, body],
            )
            .unwrap();
        };
        // "common" in 40 rows, "rarer" in 4, "rarest" (typed in another case) in 2.
        for seq in 1..=40 {
            let extra = match seq {
                1 | 2 => " RAREST rarer",
                3 | 4 => " rarer",
                _ => "",
            };
            row(seq, &format!("common text{extra}"));
        }
        crate::engine::sqlite::search::cover_tail(&conn).unwrap();
        let words = |ws: &[&str]| ws.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let w = words(&["common", "rarer", "rarest"]);
        assert_eq!(rare_driver(&conn, &w, 32).unwrap().unwrap(), "rarest");
        assert_eq!(rare_driver(&conn, &w, 2).unwrap().unwrap(), "rarest");
        // Two rows hold the rarest: over a bound of 1, so is every word.
        assert_eq!(rare_driver(&conn, &w, 1).unwrap(), None);
        let common = words(&["common", "text"]);
        assert_eq!(rare_driver(&conn, &common, 39).unwrap(), None);
        assert_eq!(rare_driver(&conn, &common, 40).unwrap().unwrap(), "common");
    }

    /// The lookup's statements are prepared once per connection, not on every binding
    /// (a bound `LIMIT` would make SQLite prepare them again each time, see [`sql`]).
    #[test]
    fn the_lookup_is_not_prepared_again_on_each_call() {
        use rusqlite::StatementStatus::RePrepare;
        let conn = Connection::open_in_memory().unwrap();
        crate::engine::sqlite::schema::migrate(&conn, 0).unwrap();
        let words = |ws: &[&str]| ws.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        for w in [words(&["alpha", "bravo"]), words(&["charlie", "delta"])] {
            for lookup in [Lookup::AllWords, Lookup::EachWord] {
                candidates(&conn, "p", &w, 32, lookup).unwrap();
            }
        }
        for table in TABLES {
            let count = format!(
                "SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ?1 LIMIT {})",
                33
            );
            for sql in [sql(table, 32), count] {
                let stmt = conn.prepare_cached(&sql).unwrap();
                assert_eq!(stmt.get_status(RePrepare), 0, "{sql}");
            }
        }
        // What the rule guards against: the same count with its limit bound.
        let mut bound = conn
            .prepare("SELECT count(*) FROM (SELECT 1 FROM question_search WHERE question_search MATCH ?1 LIMIT ?2)")
            .unwrap();
        for cap in [33, 34] {
            bound
                .query_row(rusqlite::params!["\"alpha\"", cap], |r| r.get::<_, i64>(0))
                .unwrap();
        }
        assert!(bound.get_status(RePrepare) > 0);
    }
}
