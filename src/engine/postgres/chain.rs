//! Tamper evidence on PostgreSQL: the same per-project SHA-256 chain as the SQLite store
//! (`engine::sqlite::chain`: the previous link, then the event's canonical bytes), in the
//! column `chain`, computed by the writer and written in the INSERT that appends the
//! event. The same bytes give the same links in both stores, so a copy keeps them.
//!
//! The triggers and the serving role's grants stop oq and its role from altering history;
//! the chain is for what they cannot stop — the owner or a superuser dropping a trigger
//! and editing, deleting, inserting or reordering rows by hand. `oq store verify --store
//! postgres://…` walks every project's chain (the SQLite store's walk, over these rows)
//! and names the first break; `oq store head --store postgres://…` prints each project's
//! newest link, to keep elsewhere.

use std::collections::HashMap;

use fallible_iterator::FallibleIterator;

use super::conn::{Conn, PgTarget, to_domain};
use super::{blocking, schema_state};
use crate::domain::{OqError, StoredEvent};
use crate::engine::copy::RawEvent;
use crate::engine::sqlite::chain::{Canonical, GENESIS, Link, Row, as_link};
use crate::engine::sqlite::verify::{Head, Verified, Walked, walk};

/// Every event in walking order, with its link and covered columns as text.
const WALK: &str = "SELECT project_seq, chain, event_id, type, project_id, session_id, question_id,
        task_id, story_id, actor, at, payload::text
   FROM oq.events ORDER BY project_id, project_seq";
/// Each project's newest event (the unique index on `(project_id, project_seq)` walked
/// backwards per project), as the SQLite store's `heads`.
const HEADS: &str = "SELECT DISTINCT ON (project_id) project_id, project_seq, chain FROM oq.events
     ORDER BY project_id, project_seq DESC";
/// A project's newest event: its position and link.
const NEWEST: &str = "SELECT project_seq, chain FROM oq.events WHERE project_id = $1
     ORDER BY project_seq DESC LIMIT 1";

/// The link of `s` (its payload as written) after `prev`.
pub fn link_stored(prev: &Link, s: &StoredEvent, payload: &str) -> Link {
    let texts = [
        Some(s.event_id.as_str()),
        Some(s.event.type_name()),
        Some(s.project_id.as_str()),
        s.event.session_id(),
        s.event.question_id(),
        s.event.task_id(),
        s.event.story_id(),
        Some(s.actor.as_str()),
    ];
    canonical(texts, s.at, payload).link(prev)
}

/// The link of a row copied as stored, after `prev`.
pub fn link_raw(prev: &Link, e: &RawEvent) -> Link {
    let texts = [
        Some(e.event_id.as_str()),
        Some(e.kind.as_str()),
        Some(e.project_id.as_str()),
        e.session_id.as_deref(),
        e.question_id.as_deref(),
        e.task_id.as_deref(),
        e.story_id.as_deref(),
        Some(e.actor.as_str()),
    ];
    canonical(texts, e.at, &e.payload).link(prev)
}

fn canonical<'a>(texts: [Option<&'a str>; 8], at: i64, payload: &'a str) -> Canonical<'a> {
    Canonical {
        texts: texts.map(|t| t.map(str::as_bytes)),
        at,
        payload: payload.as_bytes(),
    }
}

/// A project's newest position and link, as far as this transaction sees (0 and the
/// genesis for a project without events).
pub fn newest(conn: &mut Conn, project: &str) -> Result<(i64, Link), OqError> {
    let rows = conn.query(NEWEST, &[&project])?;
    Ok(match rows.first() {
        None => (0, GENESIS),
        Some(r) => (r.get(0), as_link(r.get(1)).unwrap_or(GENESIS)),
    })
}

/// `oq store verify` on a database: every chain walked in one snapshot.
pub fn verify(target: &PgTarget) -> Result<Verified, OqError> {
    blocking(|| {
        let mut conn = target.connect()?;
        schema_state(&mut conn, target)?.ready(target)?;
        conn.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
        let out = walk_all(&mut conn);
        let _ = conn.batch("COMMIT");
        out
    })
}

/// `oq store head --store postgres://…`: each project's newest link, read from its newest
/// event (no walk), in one snapshot.
pub fn heads(target: &PgTarget) -> Result<Vec<Head>, OqError> {
    blocking(|| {
        let mut conn = target.connect()?;
        schema_state(&mut conn, target)?.ready(target)?;
        let rows = conn.query(HEADS, &[])?;
        Ok(rows
            .iter()
            .map(|r| Head {
                project_id: r.get(0),
                events: r.get(1),
                head: r
                    .get::<_, Option<Vec<u8>>>(2)
                    .map(hex::encode)
                    .unwrap_or_default(),
            })
            .collect())
    })
}

fn walk_all(conn: &mut Conn) -> Result<Verified, OqError> {
    let client = conn.client();
    let rows = client
        .query_raw(WALK, std::iter::empty::<i32>())
        .map_err(|e| to_domain(&e))?;
    let walked = rows.map_err(|e| to_domain(&e)).map(|r| {
        let text = |i: usize| r.get::<_, Option<String>>(i).map(String::into_bytes);
        Ok(Walked {
            position: r.get(0),
            link: as_link(r.get(1)),
            row: Row::new(
                std::array::from_fn(|i| text(2 + i)),
                r.get(10),
                text(11).unwrap_or_default(),
            ),
        })
    });
    walk(walked.iterator())
}

/// Chains a database's history once, when it migrates to the chained schema (v3): every
/// project's events in their order, inside the migration's transaction, as the owner
/// (the append-only trigger steps aside for this one UPDATE).
pub fn backfill(conn: &mut Conn) -> Result<(), OqError> {
    conn.batch("ALTER TABLE oq.events DISABLE TRIGGER events_refuse_change")?;
    let rows = conn.query(
        "SELECT seq, event_id, type, project_id, session_id, question_id, task_id, story_id,
                actor, at, payload::text
           FROM oq.events ORDER BY project_id, project_seq",
        &[],
    )?;
    let mut prev: HashMap<String, Link> = HashMap::new();
    for r in &rows {
        let e = RawEvent {
            seq: r.get(0),
            project_seq: 0,
            event_id: r.get(1),
            kind: r.get(2),
            project_id: r.get(3),
            session_id: r.get(4),
            question_id: r.get(5),
            task_id: r.get(6),
            story_id: r.get(7),
            actor: r.get(8),
            at: r.get(9),
            payload: r.get(10),
        };
        let before = prev.get(&e.project_id).copied().unwrap_or(GENESIS);
        let link = link_raw(&before, &e);
        conn.query(
            "UPDATE oq.events SET chain = $1 WHERE seq = $2",
            &[&link.as_slice(), &e.seq],
        )?;
        prev.insert(e.project_id, link);
    }
    conn.batch("ALTER TABLE oq.events ENABLE TRIGGER events_refuse_change")
}
