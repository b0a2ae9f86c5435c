//! How a list's search words become SQL, chosen per query from how common each word is.
//!
//! A word can be tested two ways:
//! - **through the index**: `seq IN (the declarations whose rows MATCH it)`, the FTS5
//!   trigram table `question_search` of schema v8 and the cover of its unindexed tail,
//!   `temp.search_tail` (`search.rs`). Instant for a word few questions hold;
//!   for one most hold, SQLite builds the whole set first (90,000 positions) and the
//!   first page waits for it (835 ms for two such words among 100,000 questions);
//! - **per row**: the question's own texts (its declaration's `pergunta` and `sugestao`,
//!   its answer's `resposta`) `LIKE '%word%'`, tested on each row the sort's index
//!   walks, so a page of a common word stops after about a page of rows.
//!
//! Each word of 3 characters or more is first counted in the index, up to one past
//! [`SEARCH_TOTAL_CAP`] (a stop after 1,001 rows: about a millisecond). If the rarest holds
//! at most the cap, it drives the query through the index and every other word is tested
//! per row on its few candidates; otherwise every word is tested per row along the sort's
//! order. A word with letters beyond ASCII stays on the index either way: SQLite's `LIKE`
//! folds only ASCII case, the trigram index folds all of it. A word under 3 characters,
//! which trigrams cannot index, was always a `LIKE` and stays one.

use rusqlite::Connection;
use rusqlite::types::Value;

use crate::domain::search::Search;
use crate::engine::list::SEARCH_TOTAL_CAP;

/// How one word is tested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Test {
    /// `seq IN (…MATCH…)`, through the trigram index.
    Index,
    /// `LIKE` on the question's own texts, per row.
    Row,
}

/// Whether the trigram index can test `word` (3 characters or more).
fn indexable(word: &str) -> bool {
    word.chars().count() >= 3
}

/// The word as an FTS5 phrase: a substring, case aside.
fn phrase(word: &str) -> String {
    format!("\"{}\"", word.replace('"', "\"\""))
}

/// How many rows of the index hold `word`, counted to one past the cap.
fn held_by(conn: &Connection, word: &str) -> rusqlite::Result<u64> {
    let n: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM (SELECT 1 FROM question_search WHERE question_search MATCH ?1
                                   UNION ALL SELECT 1 FROM temp.search_tail WHERE search_tail MATCH ?1
                                   LIMIT ?2)",
        )?
        .query_row(
            rusqlite::params![phrase(word), SEARCH_TOTAL_CAP as i64 + 1],
            |r| r.get(0),
        )?;
    Ok(n as u64)
}

/// The word that drives the query through the index: the rarest indexable one, if the
/// index holds it in at most [`SEARCH_TOTAL_CAP`] rows (see the module's rule).
/// Also brings this connection's cover of the index's unindexed tail up to date
/// (`search::cover_tail`), which every index test of the query then reads too.
pub(super) fn driver(conn: &Connection, words: &[String]) -> rusqlite::Result<Option<usize>> {
    if words.iter().any(|w| indexable(w)) {
        crate::engine::sqlite::search::cover_tail(conn)?;
    }
    let mut rarest: Option<(usize, u64)> = None;
    for (i, word) in words.iter().enumerate() {
        if indexable(word) {
            let n = held_by(conn, word)?;
            if rarest.is_none_or(|(_, m)| n < m) {
                rarest = Some((i, n));
            }
        }
    }
    Ok(rarest
        .filter(|&(_, n)| n <= SEARCH_TOTAL_CAP)
        .map(|(i, _)| i))
}

/// One [`Test`] per word, in the words' order, given the [`driver`].
pub(super) fn tests(words: &[String], driver: Option<usize>) -> Vec<Test> {
    words
        .iter()
        .enumerate()
        .map(|(i, word)| {
            if Some(i) == driver || (indexable(word) && !word.is_ascii()) {
                Test::Index
            } else {
                Test::Row
            }
        })
        .collect()
}

/// One [`Test`] per word, in the words' order (see the module's rule).
pub(super) fn choose(conn: &Connection, words: &[String]) -> rusqlite::Result<Vec<Test>> {
    Ok(tests(words, driver(conn, words)?))
}

/// `AND …` per word, as `tests` says. `seq` is the declaration's log position as the
/// driving table has it; `d` is the declaration's event; `answered` whether the filter
/// can hold answered questions (whose answer's text counts too).
pub(super) fn push(
    seq: &str,
    answered: bool,
    words: &[String],
    tests: &[Test],
    filter: &mut String,
    params: &mut Vec<(String, Value)>,
) {
    for (i, (word, test)) in words.iter().zip(tests).enumerate() {
        let name = format!(":w{i}");
        match test {
            Test::Index if indexable(word) => {
                filter.push_str(&format!(
                    " AND {seq} IN (SELECT qseq FROM question_search WHERE question_search MATCH {name}
                                    UNION ALL SELECT qseq FROM temp.search_tail WHERE search_tail MATCH {name})"
                ));
                params.push((name, Value::Text(phrase(word))));
            }
            Test::Index | Test::Row => {
                let answer = if answered {
                    format!(
                        " OR (SELECT json_extract(a.payload, '$.resposta') FROM events a
                               WHERE a.type = 'open_question.answered' AND a.question_id = d.question_id)
                              LIKE {name} ESCAPE '\\'"
                    )
                } else {
                    String::new()
                };
                filter.push_str(&format!(
                    " AND ((json_extract(d.payload, '$.pergunta') || char(10)
                           || coalesce(json_extract(d.payload, '$.sugestao'), '')) LIKE {name} ESCAPE '\\'{answer})"
                ));
                params.push((name, Value::Text(Search::like_pattern(word))));
            }
        }
    }
}

/// Whether any word is tested on the declaration's own row (the count must join it).
pub(super) fn reads_rows(tests: &[Test], words: &[String]) -> bool {
    words
        .iter()
        .zip(tests)
        .any(|(w, t)| *t == Test::Row || !indexable(w))
}
