//! Appending to the log: a decision's events as one INSERT (all or nothing by itself),
//! longer appends in chunks under a savepoint, and the schema's refusals mapped back to
//! the domain's.

use rusqlite::{Connection, OptionalExtension};

use super::chain::{self, Canonical, GENESIS, Link};
use super::now_ms;
use crate::domain::{ErrorCode, OqError, StoredEvent};
use crate::engine::ids;
use crate::engine::store::NewEvent;

/// Appends events at the end of the log, inside the caller's transaction: all of them or,
/// on any refusal by the schema, none.
///
/// A decision's few events go in as one multi-row INSERT, atomic by itself, so the common
/// write needs no savepoint. Longer appends (imports, benchmarks' seeding) go in chunks
/// under a savepoint.
pub(super) fn append_events(
    conn: &Connection,
    new_events: Vec<NewEvent>,
) -> Result<Vec<StoredEvent>, OqError> {
    if new_events.len() <= ROWS_PER_INSERT {
        return insert_rows(conn, new_events);
    }
    conn.prepare_cached("SAVEPOINT oq_append")?.execute([])?;
    let mut stored = Vec::with_capacity(new_events.len());
    let mut rest = new_events.into_iter();
    let result = loop {
        let chunk: Vec<NewEvent> = rest.by_ref().take(ROWS_PER_INSERT).collect();
        if chunk.is_empty() {
            break Ok(());
        }
        match insert_rows(conn, chunk) {
            Ok(rows) => stored.extend(rows),
            Err(e) => break Err(e),
        }
    };
    // A refusal by the schema rolled the whole transaction back, savepoint included.
    if conn.is_autocommit() {
        return result.map(|()| stored);
    }
    if result.is_err() {
        conn.prepare_cached("ROLLBACK TO oq_append")?.execute([])?;
    }
    conn.prepare_cached("RELEASE oq_append")?.execute([])?;
    result.map(|()| stored)
}

/// Rows per INSERT statement: 11 parameters each, far below SQLite's parameter limit.
const ROWS_PER_INSERT: usize = 64;
const EVENT_COLUMNS: usize = 12;

/// A project's newest position and link, as the batch moves them on.
type ProjectHead = (i64, Link);
/// Per event (its position, its project's slot), and per project slot its head.
type Heads = (Vec<(i64, usize)>, Vec<ProjectHead>);

/// Each event's position within its project and the link before it: the project's
/// newest, counted on through the batch. Read inside the caller's write transaction, so
/// no other writer can take the same numbers (the unique index on `(project_id,
/// project_seq)` would refuse it). Returns, per event, its position and the index of the
/// project's running state in the second list (position, last link).
fn project_heads(conn: &Connection, new_events: &[NewEvent]) -> Result<Heads, OqError> {
    let mut newest = conn.prepare_cached(
        "SELECT project_seq, chain FROM events WHERE project_id = ?1 ORDER BY project_seq DESC LIMIT 1",
    )?;
    // A decision's events almost always share one project: a short list beats a map.
    let mut names: Vec<&str> = Vec::with_capacity(1);
    let mut heads: Vec<ProjectHead> = Vec::with_capacity(1);
    let mut out = Vec::with_capacity(new_events.len());
    for ne in new_events {
        let slot = match names.iter().position(|p| *p == ne.project_id) {
            Some(i) => i,
            None => {
                let top = newest
                    .query_row([&ne.project_id], |r| {
                        Ok((r.get::<_, i64>(0)?, chain::as_link(r.get(1)?)))
                    })
                    .optional()?
                    .map(|(seq, link)| (seq, link.unwrap_or(GENESIS)))
                    .unwrap_or((0, GENESIS));
                names.push(&ne.project_id);
                heads.push(top);
                heads.len() - 1
            }
        };
        heads[slot].0 += 1;
        out.push((heads[slot].0, slot));
    }
    Ok((out, heads))
}

/// One INSERT for `new_events` (at most [`ROWS_PER_INSERT`]).
fn insert_rows(conn: &Connection, new_events: Vec<NewEvent>) -> Result<Vec<StoredEvent>, OqError> {
    let n = new_events.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    let tuple = format!("({})", ["?"; EVENT_COLUMNS].join(", "));
    let sql = format!(
        // OR ROLLBACK, like the schema's guards: nothing an insert fires can abort it
        // half-way, so SQLite keeps no statement journal; a refusal ends the whole
        // transaction instead, and the writer fails the whole batch.
        "INSERT OR ROLLBACK INTO events (event_id, type, project_id, project_seq, session_id, question_id, task_id, story_id, actor, at, payload, chain)
         VALUES {}",
        vec![tuple.as_str(); n].join(", ")
    );
    let mut insert = conn.prepare_cached(&sql)?;
    let (positions, mut heads) = project_heads(conn, &new_events)?;
    let at = now_ms();
    let mut rows = Vec::with_capacity(n);
    for ne in &new_events {
        let payload =
            serde_json::to_string(&ne.event).map_err(|e| OqError::Internal(e.to_string()))?;
        rows.push((ids::event_id(), payload));
    }
    let columns: Vec<_> = new_events
        .iter()
        .map(|ne| {
            (
                ne.event.type_name(),
                ne.event.session_id(),
                ne.event.question_id(),
                ne.event.task_id(),
                ne.event.story_id(),
            )
        })
        .collect();
    // Each event's link, in order: it follows the one before it in its project.
    let mut links: Vec<Link> = Vec::with_capacity(n);
    for (((ne, (event_id, payload)), (kind, session, question, task, story)), (_, slot)) in
        new_events.iter().zip(&rows).zip(&columns).zip(&positions)
    {
        let link = Canonical {
            texts: [
                Some(event_id.as_bytes()),
                Some(kind.as_bytes()),
                Some(ne.project_id.as_bytes()),
                session.map(str::as_bytes),
                question.map(str::as_bytes),
                task.map(str::as_bytes),
                story.map(str::as_bytes),
                Some(ne.actor.as_bytes()),
            ],
            at,
            payload: payload.as_bytes(),
        }
        .link(&heads[*slot].1);
        heads[*slot].1 = link;
        links.push(link);
    }
    let mut params: Vec<&dyn rusqlite::ToSql> = Vec::with_capacity(n * EVENT_COLUMNS);
    for (
        (((ne, (event_id, payload)), (kind, session, question, task, story)), (position, _)),
        link,
    ) in new_events
        .iter()
        .zip(&rows)
        .zip(&columns)
        .zip(&positions)
        .zip(&links)
    {
        params.extend_from_slice(&[
            event_id as &dyn rusqlite::ToSql,
            kind,
            &ne.project_id,
            position,
            session,
            question,
            task,
            story,
            &ne.actor,
            &at,
            payload,
            link,
        ]);
    }
    insert
        .execute(params.as_slice())
        .map_err(constraint_to_domain)?;
    drop(params);
    // One writer inside the transaction and no row ever deleted: the rows of one
    // statement take consecutive positions ending at the last rowid.
    let first = conn.last_insert_rowid() - n as i64 + 1;
    Ok(new_events
        .into_iter()
        .zip(rows)
        .zip(positions)
        .enumerate()
        .map(|(i, ((ne, (event_id, _)), (project_seq, _)))| StoredEvent {
            seq: first + i as i64,
            project_seq,
            event_id,
            project_id: ne.project_id,
            actor: ne.actor,
            at,
            event: ne.event,
        })
        .collect())
}

/// The unique indexes are the last line against a lost race: map them back to the
/// domain's refusal rather than an internal error.
fn constraint_to_domain(e: rusqlite::Error) -> OqError {
    let text = e.to_string();
    if text.contains("events.question_id") && text.contains("UNIQUE") {
        return OqError::conflict(
            ErrorCode::DuplicateEvent,
            "another writer recorded this question event first",
        );
    }
    e.into()
}
