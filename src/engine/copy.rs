//! `oq store copy`: a whole log from one store into another, row for row — every event
//! with its positions (`seq`, `project_seq`), id, time and payload text as they were — and
//! then verified event by event, so a client's cursors and `Last-Event-ID`s mean the same
//! events afterwards, and nothing was lost or changed on the way.
//!
//! The target must be empty (a copy never merges two histories). Its derived indexes (the
//! open set, the links) are rebuilt by its own triggers as the rows go in, inside one
//! transaction: a copy that fails leaves the target as empty as it was.

use std::path::PathBuf;

use super::postgres::{self, PgTarget};
use super::sqlite;
use crate::domain::{ErrorCode, OqError};

/// One row of the log exactly as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEvent {
    pub seq: i64,
    pub project_seq: i64,
    pub event_id: String,
    pub kind: String,
    pub project_id: String,
    pub session_id: Option<String>,
    pub question_id: Option<String>,
    pub task_id: Option<String>,
    pub story_id: Option<String>,
    pub actor: String,
    pub at: i64,
    pub payload: String,
}

/// Rows read per page while copying and verifying.
pub const PAGE: usize = 1000;

/// A store to copy from or to.
#[derive(Debug, Clone)]
pub enum Endpoint {
    /// A SQLite store's data dir.
    Sqlite(PathBuf),
    Postgres(PgTarget),
}

impl Endpoint {
    pub fn describe(&self) -> String {
        match self {
            Endpoint::Sqlite(dir) => dir.display().to_string(),
            Endpoint::Postgres(t) => t.shown().to_string(),
        }
    }

    fn read(&self, after: i64) -> Result<Vec<RawEvent>, OqError> {
        match self {
            Endpoint::Sqlite(dir) => sqlite::raw::read(dir, after, PAGE),
            Endpoint::Postgres(t) => postgres::raw::read(t, after, PAGE),
        }
    }
}

/// What a copy did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copied {
    pub events: u64,
    pub verified: u64,
}

/// Copies every event of `from` into the empty `to`, then compares the two logs event by
/// event.
pub fn copy(from: &Endpoint, to: &Endpoint) -> Result<Copied, OqError> {
    let mut source = Pager::new(from);
    let events = match to {
        Endpoint::Sqlite(dir) => sqlite::raw::write_all(dir, &mut || source.next_page())?,
        Endpoint::Postgres(t) => postgres::raw::write_all(t, &mut || source.next_page())?,
    };
    let verified = verify(from, to)?;
    if verified != events {
        return Err(mismatch(format!(
            "{events} events copied but {verified} compared equal"
        )));
    }
    Ok(Copied { events, verified })
}

/// Compares two logs event by event; the number of events, or where they differ.
pub fn verify(a: &Endpoint, b: &Endpoint) -> Result<u64, OqError> {
    let (mut pa, mut pb) = (Pager::new(a), Pager::new(b));
    let mut n = 0u64;
    loop {
        let (ra, rb) = (pa.next_page()?, pb.next_page()?);
        if ra.is_empty() && rb.is_empty() {
            return Ok(n);
        }
        for (i, (x, y)) in ra.iter().zip(&rb).enumerate() {
            if x != y {
                return Err(mismatch(format!(
                    "event at position {} differs after the copy: {} has {:?}, {} has {:?}",
                    x.seq,
                    a.describe(),
                    x,
                    b.describe(),
                    y
                )));
            }
            n += 1;
            let _ = i;
        }
        if ra.len() != rb.len() {
            return Err(mismatch(format!(
                "{} and {} hold a different number of events (after {n} equal ones)",
                a.describe(),
                b.describe()
            )));
        }
    }
}

fn mismatch(message: String) -> OqError {
    OqError::store(ErrorCode::StoreCopyMismatch, message)
}

/// Pages through a store's log in order.
struct Pager<'a> {
    from: &'a Endpoint,
    after: i64,
}

impl<'a> Pager<'a> {
    fn new(from: &'a Endpoint) -> Self {
        Pager { from, after: 0 }
    }

    fn next_page(&mut self) -> Result<Vec<RawEvent>, OqError> {
        let rows = self.from.read(self.after)?;
        if let Some(last) = rows.last() {
            self.after = last.seq;
        }
        Ok(rows)
    }
}
