//! The search index `question_search` (FTS5 trigram, schema v8), kept in batches
//! (schema v12) rather than by a trigger per append, and the unindexed tail covered
//! exactly at read.
//!
//! FTS5 writes a new segment (and merges) per transaction that touches it, which was
//! half the cost of a lone declare or answer (session 8: 3,678 rows/s without the index,
//! 1,907 with it). Now the writer indexes the events past `search_indexed.upto` only
//! once they are [`INDEX_EVERY`] or more, just before its batch's COMMIT, in the same
//! transaction (no extra fsync), under a savepoint: a failure there leaves the tail
//! unindexed a while longer and never costs the batch its events.
//!
//! Invariant: `question_search` holds exactly the rows of [`ROWS`] for the events
//! `(0, upto]`, and `upto ≤ max(seq)` (`oq store check` recomputes both). Every reader
//! of the index also reads `temp.search_tail`, a per-connection FTS5 table with the
//! same tokenizer holding the rows of `(upto, max(seq)]` ([`cover_tail`]), so a search
//! finds the same questions whether or not the tail is indexed yet — the same folding by
//! construction (a `LIKE` would fold ASCII case only; the trigram tokenizer folds all of
//! it). Every index row's `rowid` is at most `upto`, below every tail row's, so "newest
//! first" is the tail's rows, then the index's.

use rusqlite::{Connection, OptionalExtension};

/// The writer indexes the tail once it is this many events past `upto`: one FTS5 write
/// (a segment, and now and then a merge) per 64 events instead of one per transaction,
/// while a search reads at most 63 events beyond the index (`temp.search_tail`, a few
/// dozen rows of a per-connection table, rebuilt only when the log moved).
pub const INDEX_EVERY: i64 = 64;

/// The index's rows (`rowid`, `qseq`, `body`) for the events in `(?1, ?2]`, exactly as
/// the triggers of v8 wrote them: a declaration's text and suggestion, an answer's text
/// keyed by its own position and carrying its declaration's.
pub const ROWS: &str = "
SELECT seq, seq, json_extract(payload, '$.pergunta') || char(10) || coalesce(json_extract(payload, '$.sugestao'), '')
  FROM events WHERE seq > ?1 AND seq <= ?2 AND type = 'artifact.open_question'
UNION ALL
SELECT a.seq, d.seq, json_extract(a.payload, '$.resposta')
  FROM events a JOIN events d ON d.type = 'artifact.open_question' AND d.question_id = a.question_id
 WHERE a.seq > ?1 AND a.seq <= ?2 AND a.type = 'open_question.answered'";

/// Schema version 12 (`schema::MIGRATIONS`): the search index is kept in batches, not
/// by a trigger per append: FTS5 wrote a segment per transaction, half of a lone
/// answer's cost (session 8). The
/// triggers go; `search_indexed.upto` is how far the index goes — the whole log here,
/// which the triggers indexed — and the writer moves it, 64 events or more at a time,
/// inside its batch's transaction. It only grows and never passes the log's end.
pub const V12_SEARCH_IN_BATCHES: &str = r#"
DROP TRIGGER events_derive_search_declared;
DROP TRIGGER events_derive_search_answered;
CREATE TABLE search_indexed (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    upto INTEGER NOT NULL
) STRICT;
INSERT INTO search_indexed (id, upto) SELECT 1, coalesce(max(seq), 0) FROM events;

CREATE TRIGGER search_indexed_guard_update BEFORE UPDATE ON search_indexed
WHEN NEW.id != OLD.id OR NEW.upto < OLD.upto
  OR NEW.upto > (SELECT coalesce(max(seq), 0) FROM events)
BEGIN SELECT RAISE(ABORT, 'oq: search_indexed only moves forward, up to the log'); END;

CREATE TRIGGER search_indexed_refuse_delete BEFORE DELETE ON search_indexed
BEGIN SELECT RAISE(ABORT, 'oq: search_indexed is derived from the log; DELETE is refused'); END;
"#;

/// `(upto, max(seq))`: how far the index goes, and the log.
fn bounds(conn: &Connection) -> rusqlite::Result<(i64, i64)> {
    conn.prepare_cached(
        "SELECT coalesce((SELECT upto FROM search_indexed WHERE id = 1), 0),
                coalesce((SELECT max(seq) FROM events), 0)",
    )?
    .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
}

/// Indexes `(upto, max(seq)]` and moves `upto`, if the tail is `due` events or more, in
/// the caller's transaction under a savepoint of its own: on failure the savepoint is
/// rolled back (the caller's writes stand) and the error returned. Whether it indexed.
pub fn catch_up(conn: &Connection, due: i64) -> rusqlite::Result<bool> {
    let (upto, end) = bounds(conn)?;
    if end - upto < due.max(1) {
        return Ok(false);
    }
    conn.execute_batch("SAVEPOINT search_index")?;
    let indexed = conn
        .prepare_cached(&format!(
            "INSERT INTO question_search (rowid, qseq, body) {ROWS}"
        ))
        .and_then(|mut s| s.execute([upto, end]))
        .and_then(|_| {
            conn.prepare_cached("UPDATE search_indexed SET upto = ?1 WHERE id = 1")?
                .execute([end])
        });
    match indexed {
        Ok(_) => conn.execute_batch("RELEASE search_index").map(|()| true),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK TO search_index; RELEASE search_index");
            Err(e)
        }
    }
}

/// Brings `temp.search_tail` to the rows of `(upto, max(seq)]` as this connection's
/// snapshot sees them, creating it on first use. A read connection is `query_only`,
/// which refuses temp writes too: the flag is lifted for these statements alone (they
/// write nothing but this connection's temp tables) and put back whatever they did. A
/// read transaction that wrote it is committed (`Store::read`) so the next read finds it.
pub fn cover_tail(conn: &Connection) -> rusqlite::Result<()> {
    let (upto, end) = bounds(conn)?;
    // No such table yet (a new connection) reads as nothing built.
    let built: Option<(i64, i64)> = conn
        .prepare_cached("SELECT upto, upto_end FROM temp.search_tail_state")
        .and_then(|mut s| s.query_row([], |r| Ok((r.get(0)?, r.get(1)?))).optional())
        .unwrap_or(None);
    if built == Some((upto, end)) {
        return Ok(());
    }
    let query_only: bool = conn.query_row("PRAGMA query_only", [], |r| r.get(0))?;
    if query_only {
        conn.pragma_update(None, "query_only", false)?;
    }
    // Under a savepoint of its own: FTS5 writes what it buffered when a savepoint ends,
    // which must be now, while the flag is lifted, and not at the read's COMMIT.
    let rebuilt = conn
        .execute_batch("SAVEPOINT search_tail")
        .and_then(|()| rebuild(conn, built, upto, end))
        .and_then(|()| conn.execute_batch("RELEASE search_tail"));
    if rebuilt.is_err() {
        let _ = conn.execute_batch("ROLLBACK TO search_tail; RELEASE search_tail");
    }
    if query_only {
        conn.pragma_update(None, "query_only", true)?;
    }
    rebuilt
}

fn rebuild(
    conn: &Connection,
    built: Option<(i64, i64)>,
    upto: i64,
    end: i64,
) -> rusqlite::Result<()> {
    let from = match built {
        // Only appended to and indexed since: drop what the index now holds, add the new.
        Some((was_upto, was_end)) if was_upto <= upto && was_end <= end => {
            conn.prepare_cached("DELETE FROM temp.search_tail WHERE rowid <= ?1")?
                .execute([upto])?;
            was_end.max(upto)
        }
        Some(_) => {
            conn.execute_batch("DELETE FROM temp.search_tail")?;
            upto
        }
        None => {
            conn.execute_batch(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_tail
                     USING fts5(qseq UNINDEXED, body, tokenize = 'trigram');
                 CREATE TABLE IF NOT EXISTS temp.search_tail_state (upto INTEGER NOT NULL, upto_end INTEGER NOT NULL);
                 DELETE FROM temp.search_tail; DELETE FROM temp.search_tail_state;",
            )?;
            upto
        }
    };
    conn.prepare_cached(&format!(
        "INSERT INTO temp.search_tail (rowid, qseq, body) {ROWS}"
    ))?
    .execute([from, end])?;
    conn.execute_batch("DELETE FROM temp.search_tail_state")?;
    conn.prepare_cached("INSERT INTO temp.search_tail_state (upto, upto_end) VALUES (?1, ?2)")?
        .execute([upto, end])?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// 64 declarations straight into a migrated store, as the writer's batch leaves them.
    fn store() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        super::super::schema::migrate(&conn, 0).unwrap();
        conn.execute_batch(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 64)
             INSERT INTO events (seq, project_seq, event_id, type, project_id, session_id, question_id, actor, at, payload)
             SELECT i, i, 'e' || i, 'artifact.open_question', 'p', 's', 'q' || i, 'po', i,
                    json_object('pergunta', 'Question ' || i) FROM n",
        )
        .unwrap();
        conn
    }

    fn indexed(conn: &Connection) -> (i64, i64) {
        conn.query_row(
            "SELECT (SELECT upto FROM search_indexed), (SELECT count(*) FROM question_search)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    }

    #[test]
    fn the_tail_is_indexed_once_it_is_due_and_a_failure_keeps_the_events() {
        let conn = store();
        assert!(!catch_up(&conn, 65).unwrap());
        assert_eq!(indexed(&conn), (0, 0));
        // A failing index (a stand-in without its body column) leaves the events and `upto`.
        conn.execute_batch(
            "BEGIN; ALTER TABLE question_search RENAME TO kept;
             CREATE TABLE question_search (qseq);",
        )
        .unwrap();
        assert!(catch_up(&conn, INDEX_EVERY).is_err());
        assert!(!conn.is_autocommit(), "the caller's transaction goes on");
        conn.execute_batch(
            "DROP TABLE question_search; ALTER TABLE kept RENAME TO question_search; COMMIT",
        )
        .unwrap();
        assert_eq!(indexed(&conn), (0, 0));
        let events: i64 = conn
            .query_row("SELECT count(*) FROM events", [], |r| r.get(0))
            .unwrap();
        assert_eq!(events, 64);
        assert!(catch_up(&conn, INDEX_EVERY).unwrap());
        assert_eq!(indexed(&conn), (64, 64));
    }

    /// A read connection is `query_only`: its cover is still written, in its read
    /// transaction, and the flag is back on afterwards.
    #[test]
    fn a_query_only_connection_covers_the_tail_and_stays_query_only() {
        let conn = store();
        conn.pragma_update(None, "query_only", true).unwrap();
        conn.execute_batch("BEGIN").unwrap();
        cover_tail(&conn).unwrap();
        conn.execute_batch("COMMIT").unwrap();
        let held: i64 = conn
            .query_row(
                "SELECT count(*) FROM search_tail WHERE search_tail MATCH '\"question 7\"'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        // Question 7 alone: "question 7" is no substring of "Question 17" nor "Question 57".
        assert_eq!(held, 1);
        let query_only: bool = conn
            .query_row("PRAGMA query_only", [], |r| r.get(0))
            .unwrap();
        assert!(query_only);
    }
}
