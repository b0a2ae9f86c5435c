//! Tamper evidence: every event carries `chain`, the SHA-256 of the previous event's
//! chain in its project (32 zero bytes for the first) followed by the event's canonical
//! bytes. It is computed by the writer and written in the INSERT that appends the
//! event, so no event exists without it. Editing, deleting, inserting or reordering
//! events by hand (plain SQL, the guards dropped) breaks the chain at that position;
//! `oq store verify` walks every project's chain and names the first break. A project's
//! newest chain value (`oq store head`) kept elsewhere also catches a history rewritten
//! whole from some point on, or cut short.
//!
//! The canonical bytes are every column the engine reads back except the positions
//! (`seq`, `project_seq`): each as a 1-byte tag (0 NULL, 1 text, 2 integer) and, for a
//! value, its length (u32, big-endian) and bytes (an integer as i64, big-endian). The
//! order of events is what the chain links, not a number in them.

use rusqlite::Connection;
use rusqlite::types::ValueRef;
use sha2::{Digest, Sha256};

/// A chain value (SHA-256).
pub type Link = [u8; 32];

/// Before a project's first event.
pub const GENESIS: Link = [0; 32];

/// The columns an event's chain covers, in their canonical order (`verify` reads them so).
pub const COVERED: &str =
    "event_id, type, project_id, session_id, question_id, task_id, story_id, actor, at, payload";

/// One event's covered columns, borrowed (text as its bytes).
pub struct Canonical<'a> {
    pub texts: [Option<&'a [u8]>; 8],
    pub at: i64,
    pub payload: &'a [u8],
}

impl Canonical<'_> {
    /// `sha256(prev || canonical bytes)`.
    pub fn link(&self, prev: &Link) -> Link {
        let mut h = Sha256::new();
        h.update(prev);
        let mut text = |t: Option<&[u8]>| match t {
            None => h.update([0u8]),
            Some(s) => {
                h.update([1u8]);
                h.update((s.len() as u32).to_be_bytes());
                h.update(s);
            }
        };
        for t in self.texts {
            text(t);
        }
        h.update([2u8]);
        h.update(8u32.to_be_bytes());
        h.update(self.at.to_be_bytes());
        h.update([1u8]);
        h.update((self.payload.len() as u32).to_be_bytes());
        h.update(self.payload);
        h.finalize().into()
    }
}

/// A stored chain value as a [`Link`] (`None` for a missing or malformed one).
pub fn as_link(stored: Option<Vec<u8>>) -> Option<Link> {
    stored.and_then(|v| v.try_into().ok())
}

/// Chains a store's history once, when it migrates to the chained schema: every
/// project's events in their order, inside the migration's transaction (the append-only
/// guard steps aside for this one UPDATE, as for `project_seq`).
pub fn backfill(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("DROP TRIGGER events_refuse_update;")?;
    {
        let mut read = conn.prepare(&format!(
            "SELECT seq, {COVERED} FROM events ORDER BY project_id, project_seq"
        ))?;
        let mut write = conn.prepare("UPDATE events SET chain = ?1 WHERE seq = ?2")?;
        let mut rows = read.query([])?;
        let mut project = String::new();
        let mut prev = GENESIS;
        while let Some(r) = rows.next()? {
            let row = Row::read(r, 1)?;
            if row.project_id() != project {
                project = row.project_id().to_string();
                prev = GENESIS;
            }
            prev = row.canonical().link(&prev);
            write.execute(rusqlite::params![prev.as_slice(), r.get::<_, i64>(0)?])?;
        }
    }
    conn.execute_batch(
        "CREATE TRIGGER events_refuse_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'oq: the event log is append-only; UPDATE is refused'); END;",
    )
}

/// An event's covered columns, owned, as `verify` and `backfill` read them: as bytes,
/// so a damaged value (not even UTF-8) is a broken link, not a failure to read.
pub struct Row {
    texts: [Option<Vec<u8>>; 8],
    at: i64,
    payload: Vec<u8>,
}

/// A column's bytes: text as stored, anything else by its SQL text (which the chain,
/// computed over text, then does not match).
fn bytes(v: ValueRef<'_>) -> Option<Vec<u8>> {
    match v {
        ValueRef::Null => None,
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(t.to_vec()),
        ValueRef::Integer(i) => Some(format!("\u{0}{i}").into_bytes()),
        ValueRef::Real(f) => Some(format!("\u{0}{f}").into_bytes()),
    }
}

impl Row {
    /// The covered columns in [`COVERED`]'s order: the eight texts, `at`, the payload.
    pub fn new(texts: [Option<Vec<u8>>; 8], at: i64, payload: Vec<u8>) -> Row {
        Row { texts, at, payload }
    }

    /// Reads [`COVERED`] from `r`, starting at column `from`.
    pub fn read(r: &rusqlite::Row<'_>, from: usize) -> rusqlite::Result<Row> {
        let mut texts: [Option<Vec<u8>>; 8] = Default::default();
        for (i, t) in texts.iter_mut().enumerate() {
            *t = bytes(r.get_ref(from + i)?);
        }
        let at = match r.get_ref(from + 8)? {
            ValueRef::Integer(i) => i,
            _ => i64::MIN,
        };
        Ok(Row {
            texts,
            at,
            payload: bytes(r.get_ref(from + 9)?).unwrap_or_default(),
        })
    }

    pub fn project_id(&self) -> &str {
        std::str::from_utf8(self.texts[2].as_deref().unwrap_or_default()).unwrap_or("")
    }

    pub fn event_id(&self) -> String {
        String::from_utf8_lossy(self.texts[0].as_deref().unwrap_or_default()).into_owned()
    }

    pub fn canonical(&self) -> Canonical<'_> {
        Canonical {
            texts: std::array::from_fn(|i| self.texts[i].as_deref()),
            at: self.at,
            payload: &self.payload,
        }
    }
}
