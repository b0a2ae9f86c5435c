//! The log's rows exactly as stored, for `oq store copy` (`engine::copy`): read in
//! position order, and written whole into an empty database with every position kept,
//! under the write lock, in one transaction.

use std::collections::HashMap;

use postgres::types::ToSql;

use super::conn::PgTarget;
use super::schema::{CHANNEL, WRITE_LOCK};
use super::writer::COLUMNS;
use super::{PgStore, blocking, chain};
use crate::domain::{ErrorCode, OqError};
use crate::engine::copy::RawEvent;
use crate::engine::sqlite::chain::{GENESIS, Link};

const ROWS_PER_INSERT: usize = 64;

/// Up to `limit` rows after position `after`.
pub fn read(target: &PgTarget, after: i64, limit: usize) -> Result<Vec<RawEvent>, OqError> {
    blocking(|| {
        let mut conn = target.connect()?;
        if after == 0 {
            super::schema_state(&mut conn, target)?.ready(target)?;
        }
        let rows = conn.query(
            "SELECT seq, project_seq, event_id, type, project_id, session_id, question_id, task_id,
                    story_id, actor, at, payload::text
               FROM oq.events WHERE seq > $1 ORDER BY seq LIMIT $2",
            &[&after, &(limit as i64)],
        )?;
        Ok(rows
            .iter()
            .map(|r| RawEvent {
                seq: r.get(0),
                project_seq: r.get(1),
                event_id: r.get(2),
                kind: r.get(3),
                project_id: r.get(4),
                session_id: r.get(5),
                question_id: r.get(6),
                task_id: r.get(7),
                story_id: r.get(8),
                actor: r.get(9),
                at: r.get(10),
                payload: r.get(11),
            })
            .collect())
    })
}

/// Writes every page `next` yields into the database, which must be migrated and hold
/// no event. Returns how many were written.
pub fn write_all(
    target: &PgTarget,
    next: &mut dyn FnMut() -> Result<Vec<RawEvent>, OqError>,
) -> Result<u64, OqError> {
    // The same checks as serving: the schema at this version, a role that cannot alter
    // history (a copy appends; it needs nothing more).
    drop(PgStore::open(target)?);
    blocking(|| {
        let mut conn = target.connect()?;
        conn.batch(&format!(
            "BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK})"
        ))?;
        let result = (|| {
            let held: i64 = conn
                .query("SELECT count(*) FROM oq.events", &[])?
                .first()
                .map(|r| r.get(0))
                .unwrap_or(0);
            if held > 0 {
                return Err(OqError::store(
                    ErrorCode::StoreNotEmpty,
                    format!(
                        "{} already holds {held} events; a copy goes into an empty store only",
                        target.shown()
                    ),
                ));
            }
            let mut n = 0u64;
            // Each project's chain, recomputed as the rows go in (the source's own links
            // are its store's business: `verify` checks these).
            let mut links: HashMap<String, Link> = HashMap::new();
            loop {
                let page = next()?;
                if page.is_empty() {
                    return Ok(n);
                }
                for chunk in page.chunks(ROWS_PER_INSERT) {
                    let chained: Vec<Link> = chunk
                        .iter()
                        .map(|e| {
                            let prev = links.get(&e.project_id).copied().unwrap_or(GENESIS);
                            let link = chain::link_raw(&prev, e);
                            links.insert(e.project_id.clone(), link);
                            link
                        })
                        .collect();
                    insert(&mut conn, chunk, &chained)?;
                }
                n += page.len() as u64;
            }
        })();
        match result {
            Ok(n) => {
                conn.batch(&format!("SELECT pg_notify('{CHANNEL}', '{n}'); COMMIT"))?;
                Ok(n)
            }
            Err(e) => {
                let _ = conn.batch("ROLLBACK");
                Err(e)
            }
        }
    })
}

fn insert(conn: &mut super::Conn, rows: &[RawEvent], links: &[Link]) -> Result<(), OqError> {
    let sql = super::writer::insert_sql(rows.len());
    let links: Vec<&[u8]> = links.iter().map(|l| l.as_slice()).collect();
    let mut params: Vec<&(dyn ToSql + Sync)> = Vec::with_capacity(rows.len() * COLUMNS);
    for (e, link) in rows.iter().zip(&links) {
        params.extend_from_slice(&[
            &e.seq as &(dyn ToSql + Sync),
            &e.project_seq,
            &e.event_id,
            &e.kind,
            &e.project_id,
            &e.session_id,
            &e.question_id,
            &e.task_id,
            &e.story_id,
            &e.actor,
            &e.at,
            &e.payload,
            link,
        ]);
    }
    conn.query(&sql, &params).map(|_| ())
}
