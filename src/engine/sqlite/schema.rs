//! The store's schema and its migrations, one SQL step per version.
//!
//! `PRAGMA user_version` is the schema version and `PRAGMA application_id` marks the file
//! as an oq store. Steps only ever add: a store written by an older build is brought
//! forward on open; a store newer than this binary is refused before anything is written.
//!
//! The log is the truth. The tables beside it (`open_questions`, `question_links`) are
//! indexes derived from the log by triggers in the same transaction, and their own
//! triggers refuse any row the log does not justify, so they can never disagree with it.
//! The search index alone is written in batches since v12 (`search.rs`), its unindexed
//! tail covered at read.

/// "oq" followed by a format mark; a SQLite file without it is not an oq store.
pub const APPLICATION_ID: i32 = 0x6F71_0214;

/// `MIGRATIONS[n]` takes a store from version `n` to `n + 1`.
pub const MIGRATIONS: &[&str] = &[
    V1_EVENT_LOG,
    V2_DERIVED_INDEXES,
    V3_PROJECT_REVISION,
    V4_CLOSED_QUESTIONS,
    V5_LEAN_LOG,
    V6_PROJECT_SEQUENCE,
    V7_EVENT_CHAIN,
    V8_QUESTION_SEARCH,
    V9_SETTLEMENTS_BY_PROJECT,
    V10_OPEN_BY_ASKER,
    V11_SETTLED_BY_TIME,
    super::search::V12_SEARCH_IN_BATCHES,
];

/// The version whose step is followed by chaining the existing history (`chain.rs`,
/// code SQL cannot run: SHA-256).
pub const CHAIN_VERSION: i64 = 7;

/// Runs `MIGRATIONS[from..]` in the caller's transaction: each step's SQL and, after
/// the chain's, the one-time chaining of what is already in the log.
pub fn migrate(conn: &rusqlite::Connection, from: usize) -> rusqlite::Result<()> {
    for (i, step) in MIGRATIONS.iter().enumerate().skip(from) {
        conn.execute_batch(step)?;
        if i as i64 + 1 == CHAIN_VERSION {
            super::chain::backfill(conn)?;
        }
    }
    Ok(())
}

pub const LATEST_VERSION: i64 = MIGRATIONS.len() as i64;

/// Version 1: the append-only event log.
pub const V1_EVENT_LOG: &str = r#"
CREATE TABLE events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id    TEXT NOT NULL UNIQUE,
    type        TEXT NOT NULL,
    project_id  TEXT NOT NULL,
    session_id  TEXT,
    question_id TEXT,
    task_id     TEXT,
    story_id    TEXT,
    actor       TEXT NOT NULL,
    at          INTEGER NOT NULL,
    payload     TEXT NOT NULL CHECK (json_valid(payload))
) STRICT;

CREATE TRIGGER events_refuse_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'oq: the event log is append-only; UPDATE is refused'); END;

CREATE TRIGGER events_refuse_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'oq: the event log is append-only; DELETE is refused'); END;

-- One declaration and at most one answer per question, whatever the writers race.
CREATE UNIQUE INDEX events_one_declaration ON events(question_id) WHERE type = 'artifact.open_question';
CREATE UNIQUE INDEX events_one_answer ON events(question_id) WHERE type = 'open_question.answered';
CREATE UNIQUE INDEX events_one_session ON events(session_id) WHERE type = 'session.started';
CREATE UNIQUE INDEX events_one_story ON events(story_id) WHERE type = 'story.created';
CREATE UNIQUE INDEX events_one_task ON events(task_id) WHERE type = 'task.created';

CREATE INDEX events_by_question ON events(question_id) WHERE question_id IS NOT NULL;
CREATE INDEX events_by_task ON events(task_id) WHERE task_id IS NOT NULL;
CREATE INDEX events_by_story ON events(story_id) WHERE story_id IS NOT NULL;
CREATE INDEX events_by_project_type ON events(project_id, type);
CREATE INDEX events_by_type ON events(type);
"#;

/// Version 2: indexes derived from the log (the open set, and what each question affects),
/// rebuilt from the log for a store that was written at version 1.
pub const V2_DERIVED_INDEXES: &str = r#"
CREATE TABLE open_questions (
    question_id  TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL,
    declared_seq INTEGER NOT NULL UNIQUE,
    answerer     TEXT NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX open_questions_by_project ON open_questions(project_id, declared_seq);
CREATE INDEX open_questions_by_answerer ON open_questions(answerer, declared_seq);

CREATE TABLE question_links (
    kind        TEXT NOT NULL,
    target      TEXT NOT NULL,
    question_id TEXT NOT NULL,
    PRIMARY KEY (kind, target, question_id)
) STRICT, WITHOUT ROWID;

-- Guards: a row exists only while the log says so.
CREATE TRIGGER open_questions_guard_insert BEFORE INSERT ON open_questions
WHEN NOT EXISTS (SELECT 1 FROM events WHERE type = 'artifact.open_question'
                 AND question_id = NEW.question_id AND seq = NEW.declared_seq)
  OR EXISTS (SELECT 1 FROM events WHERE type = 'open_question.answered' AND question_id = NEW.question_id)
BEGIN SELECT RAISE(ABORT, 'oq: open_questions is derived from the log; this row is not in it'); END;

CREATE TRIGGER open_questions_refuse_update BEFORE UPDATE ON open_questions
BEGIN SELECT RAISE(ABORT, 'oq: open_questions is derived from the log; UPDATE is refused'); END;

CREATE TRIGGER open_questions_guard_delete BEFORE DELETE ON open_questions
WHEN NOT EXISTS (SELECT 1 FROM events WHERE type = 'open_question.answered' AND question_id = OLD.question_id)
BEGIN SELECT RAISE(ABORT, 'oq: open_questions is derived from the log; the question is still open'); END;

CREATE TRIGGER question_links_guard_insert BEFORE INSERT ON question_links
WHEN NOT EXISTS (SELECT 1 FROM events WHERE type = 'artifact.open_question' AND question_id = NEW.question_id)
BEGIN SELECT RAISE(ABORT, 'oq: question_links is derived from the log; this row is not in it'); END;

CREATE TRIGGER question_links_refuse_update BEFORE UPDATE ON question_links
BEGIN SELECT RAISE(ABORT, 'oq: question_links is derived from the log; UPDATE is refused'); END;

CREATE TRIGGER question_links_refuse_delete BEFORE DELETE ON question_links
BEGIN SELECT RAISE(ABORT, 'oq: question_links is derived from the log; DELETE is refused'); END;

-- Maintenance, in the same transaction as the append.
CREATE TRIGGER events_derive_declared AFTER INSERT ON events
WHEN NEW.type = 'artifact.open_question'
BEGIN
    INSERT INTO open_questions (question_id, project_id, declared_seq, answerer)
    SELECT NEW.question_id, NEW.project_id, NEW.seq,
           (SELECT json_extract(s.payload, '$.author') FROM events s
             WHERE s.type = 'session.started' AND s.session_id = NEW.session_id);
    INSERT INTO question_links (kind, target, question_id)
    SELECT 'rule', value, NEW.question_id FROM json_each(NEW.payload, '$.afeta.regras')
    UNION SELECT 'story', value, NEW.question_id FROM json_each(NEW.payload, '$.afeta.historias')
    UNION SELECT 'task', value, NEW.question_id FROM json_each(NEW.payload, '$.afeta.tarefas');
END;

CREATE TRIGGER events_derive_answered AFTER INSERT ON events
WHEN NEW.type = 'open_question.answered'
BEGIN
    DELETE FROM open_questions WHERE question_id = NEW.question_id;
END;

-- Rebuild from a version-1 log.
INSERT INTO open_questions (question_id, project_id, declared_seq, answerer)
SELECT d.question_id, d.project_id, d.seq,
       (SELECT json_extract(s.payload, '$.author') FROM events s
         WHERE s.type = 'session.started' AND s.session_id = d.session_id)
FROM events d
WHERE d.type = 'artifact.open_question'
  AND NOT EXISTS (SELECT 1 FROM events a WHERE a.type = 'open_question.answered' AND a.question_id = d.question_id);

INSERT INTO question_links (kind, target, question_id)
SELECT 'rule', j.value, d.question_id FROM events d, json_each(d.payload, '$.afeta.regras') j
 WHERE d.type = 'artifact.open_question'
UNION SELECT 'story', j.value, d.question_id FROM events d, json_each(d.payload, '$.afeta.historias') j
 WHERE d.type = 'artifact.open_question'
UNION SELECT 'task', j.value, d.question_id FROM events d, json_each(d.payload, '$.afeta.tarefas') j
 WHERE d.type = 'artifact.open_question';
"#;

/// Version 3: a project's newest event without scanning its history, for clients that
/// poll whether anything changed (`GET …/revision`, the TUI's live view).
pub const V3_PROJECT_REVISION: &str = r#"
CREATE INDEX events_by_project_seq ON events(project_id, seq);
"#;

/// Version 4: a question may also leave the queue closed (dismissed, or settled
/// upstream) — once, and never after an answer nor an answer after it.
pub const V4_CLOSED_QUESTIONS: &str = r#"
CREATE UNIQUE INDEX events_one_closure ON events(question_id) WHERE type = 'open_question.closed';

CREATE TRIGGER events_one_settlement BEFORE INSERT ON events
WHEN NEW.type IN ('open_question.answered', 'open_question.closed')
 AND EXISTS (SELECT 1 FROM events WHERE question_id = NEW.question_id
             AND type IN ('open_question.answered', 'open_question.closed'))
BEGIN SELECT RAISE(ABORT, 'oq: this question was already answered or closed'); END;

DROP TRIGGER open_questions_guard_insert;
CREATE TRIGGER open_questions_guard_insert BEFORE INSERT ON open_questions
WHEN NOT EXISTS (SELECT 1 FROM events WHERE type = 'artifact.open_question'
                 AND question_id = NEW.question_id AND seq = NEW.declared_seq)
  OR EXISTS (SELECT 1 FROM events WHERE question_id = NEW.question_id
             AND type IN ('open_question.answered', 'open_question.closed'))
BEGIN SELECT RAISE(ABORT, 'oq: open_questions is derived from the log; this row is not in it'); END;

DROP TRIGGER open_questions_guard_delete;
CREATE TRIGGER open_questions_guard_delete BEFORE DELETE ON open_questions
WHEN NOT EXISTS (SELECT 1 FROM events WHERE question_id = OLD.question_id
                 AND type IN ('open_question.answered', 'open_question.closed'))
BEGIN SELECT RAISE(ABORT, 'oq: open_questions is derived from the log; the question is still open'); END;

CREATE TRIGGER events_derive_closed AFTER INSERT ON events
WHEN NEW.type = 'open_question.closed'
BEGIN
    DELETE FROM open_questions WHERE question_id = NEW.question_id;
END;
"#;

/// Version 5: the same log with less to maintain per append, rebuilt once.
///
/// Under concurrent answers the store was the bottleneck. Every append paid for
/// `AUTOINCREMENT`'s `sqlite_sequence` row, a UNIQUE index on random event ids, a
/// `json_valid` CHECK, two indexes on `type` and a BEFORE INSERT trigger; and SQLite
/// copied each page an insert touched into a statement journal, because a trigger that
/// an insert into `events` may fire could abort it half-way (a `RAISE(ABORT)` guard, a
/// scalar subquery in a derived row). Measured on the same disk, an answer's SQL went
/// from 50 µs (v4) to well under 20 µs. What stays, unchanged in meaning:
/// - append-only (UPDATE and DELETE refused);
/// - one declaration, one session, story and task per id, and now ONE settlement
///   (answer or closure) per question as a unique index instead of a trigger;
/// - the derived open set and links, maintained and guarded by triggers as before. The
///   guards now refuse with `RAISE(ROLLBACK)`: a refusal ends the whole transaction
///   (the writer fails the whole batch), which is what lets SQLite skip the journal.
///   The open set no longer stores the session's author (it took a subquery per
///   declaration); "waiting for you" starts from the parked tasks' own index instead.
///
/// `seq` stays monotonic without AUTOINCREMENT because no row is ever deleted. Rows are
/// copied with their `seq`, so every position a client holds (cursors, Last-Event-ID)
/// means the same event afterwards. Declarations get their own indexes for the
/// answered/all listings, which used to ride on the `type` indexes.
pub const V5_LEAN_LOG: &str = r#"
DROP TRIGGER open_questions_guard_insert;
DROP TRIGGER open_questions_guard_delete;
DROP TRIGGER question_links_guard_insert;

CREATE TABLE events_v5 (
    seq         INTEGER PRIMARY KEY,
    event_id    TEXT NOT NULL,
    type        TEXT NOT NULL,
    project_id  TEXT NOT NULL,
    session_id  TEXT,
    question_id TEXT,
    task_id     TEXT,
    story_id    TEXT,
    actor       TEXT NOT NULL,
    at          INTEGER NOT NULL,
    payload     TEXT NOT NULL
) STRICT;
INSERT INTO events_v5 (seq, event_id, type, project_id, session_id, question_id, task_id, story_id, actor, at, payload)
SELECT seq, event_id, type, project_id, session_id, question_id, task_id, story_id, actor, at, payload
  FROM events ORDER BY seq;
-- Its indexes and triggers go with it; DROP TABLE fires no DELETE trigger.
DROP TABLE events;
DELETE FROM sqlite_sequence WHERE name = 'events';
ALTER TABLE events_v5 RENAME TO events;

CREATE TABLE open_questions_v5 (
    question_id  TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL,
    declared_seq INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO open_questions_v5 SELECT question_id, project_id, declared_seq FROM open_questions;
DROP TABLE open_questions;
ALTER TABLE open_questions_v5 RENAME TO open_questions;
CREATE INDEX open_questions_by_project ON open_questions(project_id, declared_seq);
CREATE INDEX open_questions_by_seq ON open_questions(declared_seq);

CREATE TRIGGER events_refuse_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'oq: the event log is append-only; UPDATE is refused'); END;

CREATE TRIGGER events_refuse_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'oq: the event log is append-only; DELETE is refused'); END;

CREATE UNIQUE INDEX events_one_declaration ON events(question_id) WHERE type = 'artifact.open_question';
CREATE UNIQUE INDEX events_one_settlement ON events(question_id)
    WHERE type IN ('open_question.answered', 'open_question.closed');
CREATE UNIQUE INDEX events_one_session ON events(session_id) WHERE type = 'session.started';
CREATE UNIQUE INDEX events_one_story ON events(story_id) WHERE type = 'story.created';
CREATE UNIQUE INDEX events_one_task ON events(task_id) WHERE type = 'task.created';

CREATE INDEX events_by_question ON events(question_id) WHERE question_id IS NOT NULL;
CREATE INDEX events_by_task ON events(task_id) WHERE task_id IS NOT NULL;
CREATE INDEX events_by_story ON events(story_id) WHERE story_id IS NOT NULL;
CREATE INDEX events_by_project_seq ON events(project_id, seq);
CREATE INDEX events_declared ON events(seq) WHERE type = 'artifact.open_question';
CREATE INDEX events_declared_by_project ON events(project_id, seq) WHERE type = 'artifact.open_question';
CREATE INDEX events_parked ON events(seq) WHERE type = 'gate.rescue_parked';

CREATE TRIGGER open_questions_guard_insert BEFORE INSERT ON open_questions
WHEN NOT EXISTS (SELECT 1 FROM events WHERE type = 'artifact.open_question'
                 AND question_id = NEW.question_id AND seq = NEW.declared_seq)
  OR EXISTS (SELECT 1 FROM events WHERE question_id = NEW.question_id
             AND type IN ('open_question.answered', 'open_question.closed'))
BEGIN SELECT RAISE(ROLLBACK, 'oq: open_questions is derived from the log; this row is not in it'); END;

CREATE TRIGGER open_questions_refuse_update BEFORE UPDATE ON open_questions
BEGIN SELECT RAISE(ABORT, 'oq: open_questions is derived from the log; UPDATE is refused'); END;

CREATE TRIGGER open_questions_guard_delete BEFORE DELETE ON open_questions
WHEN NOT EXISTS (SELECT 1 FROM events WHERE question_id = OLD.question_id
                 AND type IN ('open_question.answered', 'open_question.closed'))
BEGIN SELECT RAISE(ROLLBACK, 'oq: open_questions is derived from the log; the question is still open'); END;

CREATE TRIGGER question_links_guard_insert BEFORE INSERT ON question_links
WHEN NOT EXISTS (SELECT 1 FROM events WHERE type = 'artifact.open_question' AND question_id = NEW.question_id)
BEGIN SELECT RAISE(ROLLBACK, 'oq: question_links is derived from the log; this row is not in it'); END;

CREATE TRIGGER events_derive_declared AFTER INSERT ON events
WHEN NEW.type = 'artifact.open_question'
BEGIN
    INSERT INTO open_questions (question_id, project_id, declared_seq)
    VALUES (NEW.question_id, NEW.project_id, NEW.seq);
    INSERT INTO question_links (kind, target, question_id)
    SELECT DISTINCT 'rule', value, NEW.question_id FROM json_each(NEW.payload, '$.afeta.regras');
    INSERT INTO question_links (kind, target, question_id)
    SELECT DISTINCT 'story', value, NEW.question_id FROM json_each(NEW.payload, '$.afeta.historias');
    INSERT INTO question_links (kind, target, question_id)
    SELECT DISTINCT 'task', value, NEW.question_id FROM json_each(NEW.payload, '$.afeta.tarefas');
END;

CREATE TRIGGER events_derive_settled AFTER INSERT ON events
WHEN NEW.type IN ('open_question.answered', 'open_question.closed')
BEGIN
    DELETE FROM open_questions WHERE question_id = NEW.question_id;
END;
"#;

/// Version 6: each event's position within its project (`project_seq`: 1, 2, 3… per
/// project, no gap), so what a project's clients see — the event stream's ids, `GET
/// …/revision` — counts that project's own changes and says nothing of the others'.
///
/// The writer numbers each append (the newest `project_seq` of the project, plus one)
/// inside the write transaction; the unique index is the last line if anything raced.
/// It replaces `(project_id, seq)`: within a project both orders are the same, so every
/// per-project read walks it. Existing rows are numbered in log order; the append-only
/// trigger steps aside for that one UPDATE, inside the migration's transaction.
pub const V6_PROJECT_SEQUENCE: &str = r#"
ALTER TABLE events ADD COLUMN project_seq INTEGER NOT NULL DEFAULT 0;
DROP TRIGGER events_refuse_update;
UPDATE events SET project_seq = numbered.n
  FROM (SELECT seq, row_number() OVER (PARTITION BY project_id ORDER BY seq) AS n FROM events) AS numbered
 WHERE events.seq = numbered.seq;
CREATE TRIGGER events_refuse_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'oq: the event log is append-only; UPDATE is refused'); END;
DROP INDEX events_by_project_seq;
CREATE UNIQUE INDEX events_project_seq ON events(project_id, project_seq);
"#;

/// Version 7: tamper evidence. Each event's `chain` is SHA-256 over the previous event's
/// chain in its project and the event's canonical bytes (`chain.rs`), written by the
/// appending INSERT itself; the history already there is chained once, in order, by
/// [`migrate`].
pub const V7_EVENT_CHAIN: &str = r#"
ALTER TABLE events ADD COLUMN chain BLOB;
"#;

/// Version 8: the words of every question — its text and suggestion, and its answer once
/// there is one — in an FTS5 table with the trigram tokenizer, so a list's search
/// (`engine::list`, every word a substring, case aside) is a lookup over the whole log
/// instead of a scan. One row per event (the declaration's, the answer's), keyed by the
/// event's `seq` and carrying the declaration's (`qseq`): the index is only appended to,
/// like the log. It decides nothing — it only narrows what a list shows — and is rebuilt
/// here from the log for an older store.
pub const V8_QUESTION_SEARCH: &str = r#"
CREATE VIRTUAL TABLE question_search USING fts5(qseq UNINDEXED, body, tokenize = 'trigram');

INSERT INTO question_search (rowid, qseq, body)
SELECT seq, seq, json_extract(payload, '$.pergunta') || char(10) || coalesce(json_extract(payload, '$.sugestao'), '')
  FROM events WHERE type = 'artifact.open_question';
INSERT INTO question_search (rowid, qseq, body)
SELECT a.seq, d.seq, json_extract(a.payload, '$.resposta')
  FROM events a JOIN events d ON d.type = 'artifact.open_question' AND d.question_id = a.question_id
 WHERE a.type = 'open_question.answered';

CREATE TRIGGER events_derive_search_declared AFTER INSERT ON events
WHEN NEW.type = 'artifact.open_question'
BEGIN
    INSERT INTO question_search (rowid, qseq, body)
    VALUES (NEW.seq, NEW.seq, json_extract(NEW.payload, '$.pergunta') || char(10) || coalesce(json_extract(NEW.payload, '$.sugestao'), ''));
END;

CREATE TRIGGER events_derive_search_answered AFTER INSERT ON events
WHEN NEW.type = 'open_question.answered'
BEGIN
    INSERT INTO question_search (rowid, qseq, body)
    SELECT NEW.seq, d.seq, json_extract(NEW.payload, '$.resposta')
      FROM events d WHERE d.type = 'artifact.open_question' AND d.question_id = NEW.question_id;
END;
"#;

/// Version 9: a project's settlements (answers and closures) in log order, so the
/// decision history's newest page is an index walk that stops after a page, and its
/// total an index count, instead of a look at every event of the project and a sort of
/// every decision (2.2 s for a page among 1,000,000 events without it). Derived like the
/// other indexes; it decides nothing.
pub const V9_SETTLEMENTS_BY_PROJECT: &str = r#"
CREATE INDEX events_settled_by_project ON events(project_id, seq)
 WHERE type IN ('open_question.answered', 'open_question.closed');
"#;

/// Version 10: the open set carries each question's asker (`autor`, the declaring role),
/// indexed with its project and position, so the queue "by asker" is a walk of
/// `(project_id, autor, declared_seq)` that stops after a page instead of a sort of every
/// open question on a key read out of its declaration's JSON (140 ms for the first page
/// among 90,000). Existing rows take it from their declaration; the guard that refuses
/// an UPDATE steps aside for that one, inside the migration's transaction. The guard on
/// insert now also refuses an asker the declaration does not name.
pub const V10_OPEN_BY_ASKER: &str = r#"
DROP TRIGGER open_questions_refuse_update;
ALTER TABLE open_questions ADD COLUMN autor TEXT NOT NULL DEFAULT '';
UPDATE open_questions SET autor = coalesce(
    (SELECT json_extract(d.payload, '$.autor') FROM events d WHERE d.seq = open_questions.declared_seq), '');
CREATE TRIGGER open_questions_refuse_update BEFORE UPDATE ON open_questions
BEGIN SELECT RAISE(ABORT, 'oq: open_questions is derived from the log; UPDATE is refused'); END;
CREATE INDEX open_questions_by_asker ON open_questions(project_id, autor, declared_seq);

DROP TRIGGER open_questions_guard_insert;
CREATE TRIGGER open_questions_guard_insert BEFORE INSERT ON open_questions
WHEN NOT EXISTS (SELECT 1 FROM events WHERE type = 'artifact.open_question'
                 AND question_id = NEW.question_id AND seq = NEW.declared_seq
                 AND coalesce(json_extract(payload, '$.autor'), '') = NEW.autor)
  OR EXISTS (SELECT 1 FROM events WHERE question_id = NEW.question_id
             AND type IN ('open_question.answered', 'open_question.closed'))
BEGIN SELECT RAISE(ROLLBACK, 'oq: open_questions is derived from the log; this row is not in it'); END;

DROP TRIGGER events_derive_declared;
CREATE TRIGGER events_derive_declared AFTER INSERT ON events
WHEN NEW.type = 'artifact.open_question'
BEGIN
    INSERT INTO open_questions (question_id, project_id, declared_seq, autor)
    VALUES (NEW.question_id, NEW.project_id, NEW.seq, coalesce(json_extract(NEW.payload, '$.autor'), ''));
    INSERT INTO question_links (kind, target, question_id)
    SELECT DISTINCT 'rule', value, NEW.question_id FROM json_each(NEW.payload, '$.afeta.regras');
    INSERT INTO question_links (kind, target, question_id)
    SELECT DISTINCT 'story', value, NEW.question_id FROM json_each(NEW.payload, '$.afeta.historias');
    INSERT INTO question_links (kind, target, question_id)
    SELECT DISTINCT 'task', value, NEW.question_id FROM json_each(NEW.payload, '$.afeta.tarefas');
END;
"#;

/// Version 11: a project's settlements by time, so the decision history's `since` is a
/// range of an index (its count an index count, the page's walk bounded by the first
/// settlement in it) instead of a test of every settlement's `at` (180 ms among 500,000
/// decisions). Derived like the other indexes; it decides nothing. Also the questions
/// ever snoozed: a list's snooze test reads this set (a few rows) instead of scanning
/// the log for it on every list (11 ms among 100,000 events, with no snooze at all).
pub const V11_SETTLED_BY_TIME: &str = r#"
CREATE INDEX events_settled_at ON events(project_id, at)
 WHERE type IN ('open_question.answered', 'open_question.closed');
CREATE INDEX events_snoozed ON events(question_id) WHERE type = 'open_question.snoozed';
"#;
