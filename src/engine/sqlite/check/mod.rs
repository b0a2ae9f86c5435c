//! Damage detection: what `oq store check` runs, and what `oq serve` runs at start in
//! its quick form. A store is checked against its own log: SQLite's `integrity_check`
//! for the file's structure, the schema against the one the migrations write, and every
//! index the engine reads (the open set, the links, the one-settlement rule, sessions)
//! recomputed from the events alone (`derived.rs`); the full form also walks the hash
//! chains (`verify.rs`), so an event whose bytes changed is found too.

pub mod derived;
pub mod schema;

use rusqlite::Connection;
use serde::Serialize;

use super::verify::{self, Break};

/// How much to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// `quick_check`, the schema and the recomputed indexes: `oq serve`'s start.
    Quick,
    /// `integrity_check` (indexes against their tables too) and the chains as well.
    Full,
}

/// What a check found; clean when every list is empty and the chain holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub events: i64,
    /// SQLite's own findings about the file.
    pub integrity: Vec<String>,
    /// Objects the migrations did not write, or that are missing.
    pub schema: Vec<String>,
    /// Where an index disagrees with the log.
    pub indexes: Vec<String>,
    /// The first break of a hash chain (full form only).
    pub chain: Option<Break>,
}

impl Report {
    pub fn is_clean(&self) -> bool {
        self.integrity.is_empty()
            && self.schema.is_empty()
            && self.indexes.is_empty()
            && self.chain.is_none()
    }

    /// Every finding, one line each.
    pub fn findings(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .integrity
            .iter()
            .map(|s| format!("file: {s}"))
            .collect();
        out.extend(self.schema.iter().map(|s| format!("schema: {s}")));
        out.extend(self.indexes.iter().cloned());
        if let Some(b) = &self.chain {
            out.push(format!(
                "chain: project {} position {}: {:?} — {}",
                b.project_id, b.position, b.kind, b.detail
            ));
        }
        out
    }
}

/// Checks the store `conn` reads (a read transaction of its own is the caller's).
pub fn run(conn: &Connection, depth: Depth) -> Report {
    let mut report = Report::default();
    let pragma = match depth {
        Depth::Quick => "PRAGMA quick_check",
        Depth::Full => "PRAGMA integrity_check",
    };
    let integrity = conn.prepare(pragma).and_then(|mut s| {
        s.query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<String>>>()
    });
    match integrity {
        Ok(lines) => report.integrity = lines.into_iter().filter(|l| l != "ok").collect(),
        Err(e) => report.integrity.push(e.to_string()),
    }
    match schema::differences(conn) {
        Ok(d) => report.schema = d,
        Err(e) => report.schema.push(e.to_string()),
    }
    report.indexes = derived::disagreements(conn);
    report.events = conn
        .query_row("SELECT count(*) FROM events NOT INDEXED", [], |r| r.get(0))
        .unwrap_or(0);
    if depth == Depth::Full {
        match verify::verify(conn) {
            Ok(v) => report.chain = v.first_break,
            Err(e) => report
                .integrity
                .push(format!("the chains cannot be read: {e}")),
        }
    }
    report
}
