//! `oq store verify`: every project's chain walked from its first event, and the first
//! position where it breaks named with what happened there — an event edited, deleted,
//! inserted, or events reordered — told apart by how the chain around it still links.
//! `oq store head` is each project's newest link, to keep elsewhere.

use rusqlite::Connection;
use serde::Serialize;

use super::chain::{self, GENESIS, Link, Row};

/// What was done at the first break.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tamper {
    /// The event's content no longer matches its link (the link itself still chains on).
    Edited,
    /// Positions are missing here: events were removed.
    Deleted,
    /// An event oq did not write sits here (no valid link, or the chain resumes after it).
    Inserted,
    /// The event that belongs here is elsewhere in the project: events were moved.
    Reordered,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Break {
    pub project_id: String,
    /// The project position (1, 2, 3…) where the chain stops holding.
    pub position: i64,
    pub kind: Tamper,
    pub detail: String,
}

/// A project's chain: how many events, and the newest link (hex).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Head {
    pub project_id: String,
    pub events: i64,
    pub head: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verified {
    pub events: i64,
    /// Each project's head, as far as its chain holds.
    pub projects: Vec<Head>,
    /// The first break, project by project in name order; none when every chain holds.
    pub first_break: Option<Break>,
}

/// Each project's newest link, read from the newest event (no walk).
pub fn heads(conn: &Connection) -> rusqlite::Result<Vec<Head>> {
    let mut stmt = conn.prepare(
        "SELECT e.project_id, e.project_seq, e.chain FROM events e
           JOIN (SELECT project_id, max(project_seq) AS top FROM events GROUP BY project_id) t
             ON e.project_id = t.project_id AND e.project_seq = t.top
          ORDER BY e.project_id",
    )?;
    let rows = stmt.query_map([], |r| {
        let link: Option<Vec<u8>> = r.get(2)?;
        Ok(Head {
            project_id: r.get(0)?,
            events: r.get(1)?,
            head: link.map(hex::encode).unwrap_or_default(),
        })
    })?;
    rows.collect()
}

/// One event as the walk reads it.
pub struct Walked {
    pub position: i64,
    pub link: Option<Link>,
    pub row: Row,
}

/// Walks every chain; stops at the first break.
pub fn verify(conn: &Connection) -> rusqlite::Result<Verified> {
    let mut stmt = conn.prepare(&format!(
        "SELECT project_seq, chain, {} FROM events ORDER BY project_id, project_seq",
        chain::COVERED
    ))?;
    let rows = stmt.query_map([], |r| {
        Ok(Walked {
            position: r.get(0)?,
            link: chain::as_link(r.get(1)?),
            row: Row::read(r, 2)?,
        })
    })?;
    walk(rows)
}

/// The walk over every event ordered by project, then project position, whichever
/// store read them (the PostgreSQL store walks its log the same way).
pub fn walk<E>(mut rows: impl Iterator<Item = Result<Walked, E>>) -> Result<Verified, E> {
    let mut out = Verified {
        events: 0,
        projects: Vec::new(),
        first_break: None,
    };
    // The project being walked: its events so far, and the last link that held.
    let mut current: Option<(String, i64, Link)> = None;
    let mut pending: Option<Walked> = None;
    loop {
        let walked = match pending.take() {
            Some(w) => Some(w),
            None => rows.next().transpose()?,
        };
        let Some(w) = walked else { break };
        let same = matches!(&current, Some((p, ..)) if p == w.row.project_id());
        if !same {
            if let Some((project_id, events, head)) = current.take() {
                out.projects.push(Head {
                    project_id,
                    events,
                    head: hex::encode(head),
                });
            }
            current = Some((w.row.project_id().to_string(), 0, GENESIS));
        }
        let Some((project_id, events, prev)) = current.as_mut() else {
            break;
        };
        out.events += 1;
        let expected = *events + 1;
        let holds = w.position == expected && w.link == Some(w.row.canonical().link(prev));
        if holds {
            *events = expected;
            *prev = w.link.unwrap_or(GENESIS);
            continue;
        }
        // The first break: what comes after it tells what happened.
        let project_id = project_id.clone();
        let prev = *prev;
        let mut rest = vec![w];
        for r in rows.by_ref() {
            let r = r?;
            if r.row.project_id() != project_id {
                break;
            }
            rest.push(r);
        }
        out.first_break = Some(classify(&project_id, expected, &prev, &rest));
        out.projects.push(Head {
            project_id,
            events: expected - 1,
            head: hex::encode(prev),
        });
        return Ok(out);
    }
    if let Some((project_id, events, head)) = current.take() {
        out.projects.push(Head {
            project_id,
            events,
            head: hex::encode(head),
        });
    }
    Ok(out)
}

/// The break at `expected` (the walk's next position, after link `prev`); `rest` is the
/// project from there on, its first event the one that did not hold.
fn classify(project_id: &str, expected: i64, prev: &Link, rest: &[Walked]) -> Break {
    let at = |kind, detail: String| Break {
        project_id: project_id.to_string(),
        position: expected,
        kind,
        detail,
    };
    let here = &rest[0];
    if here.position > expected {
        return at(
            Tamper::Deleted,
            format!(
                "positions {expected}–{} are missing: those events were deleted",
                here.position - 1
            ),
        );
    }
    if here.position < expected {
        return at(
            Tamper::Inserted,
            format!(
                "a second event at position {}: one was inserted",
                here.position
            ),
        );
    }
    let Some(link) = here.link else {
        return at(
            Tamper::Inserted,
            format!(
                "the event {} has no chain link: oq did not write it",
                here.row.event_id()
            ),
        );
    };
    // The event that should follow `prev` is further on: moved, or this one inserted.
    if let Some(j) = rest[1..]
        .iter()
        .position(|w| w.link == Some(w.row.canonical().link(prev)))
    {
        let belongs = &rest[1 + j];
        let moved = rest
            .iter()
            .any(|w| w.link.map(|l| here.row.canonical().link(&l)) == Some(link));
        return if moved {
            at(
                Tamper::Reordered,
                format!(
                    "the event that belongs here ({}) is at position {}; {} was moved here",
                    belongs.row.event_id(),
                    belongs.position,
                    here.row.event_id()
                ),
            )
        } else {
            at(
                Tamper::Inserted,
                format!(
                    "{} is not in the chain; it resumes after it with {}",
                    here.row.event_id(),
                    belongs.row.event_id()
                ),
            )
        };
    }
    let next_holds = rest
        .get(1)
        .is_some_and(|n| n.link == Some(n.row.canonical().link(&link)));
    let detail = if next_holds || rest.len() == 1 {
        format!(
            "the event {} was changed after it was written",
            here.row.event_id()
        )
    } else {
        format!(
            "the event {} does not follow from the one before it (changed, or an event before it removed)",
            here.row.event_id()
        )
    };
    at(Tamper::Edited, detail)
}
