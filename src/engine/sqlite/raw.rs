//! The log's rows exactly as stored, for `oq store copy` (`engine::copy`): read in
//! position order, and written whole into an empty store with every position kept.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::{STORE_FILE, SqliteStore};
use crate::domain::{ErrorCode, OqError};
use crate::engine::copy::RawEvent;

const COLUMNS: &str = "seq, project_seq, event_id, type, project_id, session_id, question_id, task_id, story_id, actor, at, payload";

/// Up to `limit` rows after position `after`, from the store in `dir` (which must exist:
/// a copy never creates its source).
pub fn read(dir: &Path, after: i64, limit: usize) -> Result<Vec<RawEvent>, OqError> {
    let path = dir.join(STORE_FILE);
    if !path.exists() {
        return Err(OqError::store(
            ErrorCode::NotAnOqStore,
            format!("{} holds no oq store ({STORE_FILE})", dir.display()),
        ));
    }
    if after == 0 {
        // Checked (and brought to this binary's schema) once, before the first page.
        drop(SqliteStore::open(&path)?);
    }
    let conn = Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2"
    ))?;
    let rows = stmt.query_map(rusqlite::params![after, limit as i64], |r| {
        Ok(RawEvent {
            seq: r.get(0)?,
            project_seq: r.get(1)?,
            event_id: r.get(2)?,
            kind: r.get(3)?,
            project_id: r.get(4)?,
            session_id: r.get(5)?,
            question_id: r.get(6)?,
            task_id: r.get(7)?,
            story_id: r.get(8)?,
            actor: r.get(9)?,
            at: r.get(10)?,
            payload: r.get(11)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Writes every page `next` yields into the store in `dir` (created if needed), which
/// must hold no event: one transaction, all or nothing. Returns how many were written.
pub fn write_all(
    dir: &Path,
    next: &mut dyn FnMut() -> Result<Vec<RawEvent>, OqError>,
) -> Result<u64, OqError> {
    drop(SqliteStore::open_in(dir)?);
    let mut conn = Connection::open(dir.join(STORE_FILE))?;
    conn.busy_timeout(std::time::Duration::from_secs(15))?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let held: i64 = tx.query_row("SELECT count(*) FROM events", [], |r| r.get(0))?;
    if held > 0 {
        return Err(OqError::store(
            ErrorCode::StoreNotEmpty,
            format!(
                "{} already holds {held} events; a copy goes into an empty store only",
                dir.display()
            ),
        ));
    }
    let mut n = 0u64;
    {
        let mut insert = tx.prepare(&format!(
            "INSERT INTO events ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
        ))?;
        loop {
            let page = next()?;
            if page.is_empty() {
                break;
            }
            for e in &page {
                insert.execute(rusqlite::params![
                    e.seq,
                    e.project_seq,
                    e.event_id,
                    e.kind,
                    e.project_id,
                    e.session_id,
                    e.question_id,
                    e.task_id,
                    e.story_id,
                    e.actor,
                    e.at,
                    e.payload
                ])?;
                n += 1;
            }
        }
    }
    // Chained here, in each project's order: a store's chain is its own (PostgreSQL
    // carries none), and verify on the copy checks what was copied.
    super::chain::backfill(&tx)?;
    // And indexed for search whole: a copy leaves no tail to cover.
    super::search::catch_up(&tx, 1)?;
    tx.commit()?;
    Ok(n)
}
