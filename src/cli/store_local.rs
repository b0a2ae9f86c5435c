//! `oq store check|verify|head|backup` on the local store: a report in words (or `--json`) and
//! an exit code a script can branch on — 0 when the store is sound, 14
//! (`exit::DAMAGED`) when damage or tampering was found, 9 when the store could not
//! even be opened. Each opens the store read-only in effect: nothing is written, apart
//! from a migration an older store would get on any open.

use std::path::Path;

use serde_json::json;

use crate::domain::error::exit;
use crate::domain::{ErrorCode, OqError};
use crate::engine::SqliteStore;
use crate::engine::sqlite::{Depth, Head, Report, Verified};

/// `oq store check [--quick]`.
pub fn check(dir: &Path, quick: bool, json: bool) -> Result<i32, OqError> {
    let depth = if quick { Depth::Quick } else { Depth::Full };
    let report = match SqliteStore::open_in(dir) {
        Ok(store) => store.check(depth)?,
        // A file SQLite itself calls damaged is a finding, not a failure to check.
        Err(e) if e.code() == ErrorCode::StoreDamaged => Report {
            integrity: vec![e.to_string()],
            ..Report::default()
        },
        Err(e) => return Err(e),
    };
    if json {
        let mut v = serde_json::to_value(&report).map_err(|e| OqError::Internal(e.to_string()))?;
        v["clean"] = json!(report.is_clean());
        println!("{v}");
    } else if report.is_clean() {
        println!(
            "{}: sound — {} events; the file, the schema, the indexes{} agree with the log",
            dir.display(),
            report.events,
            if quick { "" } else { " and the hash chains" }
        );
    } else {
        println!("{}: DAMAGED", dir.display());
        for f in report.findings() {
            println!("  {f}");
        }
        println!(
            "writes are refused on this store; restore a backup (README, \"Backup and restore\")"
        );
    }
    Ok(if report.is_clean() {
        exit::OK
    } else {
        exit::DAMAGED
    })
}

/// `oq store verify`.
pub fn verify(dir: &Path, json: bool) -> Result<i32, OqError> {
    let v: Verified = SqliteStore::open_in(dir)?.verify()?;
    Ok(report_verified(&dir.display().to_string(), &v, json))
}

/// What `verify` found in the store `name`, in words or `--json`; the exit code.
pub fn report_verified(name: &str, v: &Verified, json: bool) -> i32 {
    if json {
        let mut out = serde_json::to_value(v).unwrap_or_default();
        out["intact"] = json!(v.first_break.is_none());
        println!("{out}");
    } else {
        match &v.first_break {
            None => println!("{name}: every chain holds ({} events)", v.events),
            Some(b) => println!(
                "{name}: TAMPERED — project {}, position {}: {} ({})",
                b.project_id,
                b.position,
                format!("{:?}", b.kind).to_lowercase(),
                b.detail
            ),
        }
        for h in &v.projects {
            println!("  {}  {} events  {}", h.project_id, h.events, h.head);
        }
    }
    if v.first_break.is_none() {
        exit::OK
    } else {
        exit::DAMAGED
    }
}

/// `oq store head`.
pub fn head(dir: &Path, json: bool) -> Result<i32, OqError> {
    let heads = SqliteStore::open_in(dir)?.heads()?;
    Ok(report_heads(&heads, json))
}

/// Each project's chain head in words or `--json`, whichever store it came from.
pub fn report_heads(heads: &[Head], json: bool) -> i32 {
    if json {
        println!("{}", json!({ "projects": heads }));
    } else {
        for h in heads {
            println!("{}  {}  {}", h.project_id, h.events, h.head);
        }
    }
    exit::OK
}

/// `oq store backup FILE`.
pub fn backup(dir: &Path, file: &Path, json: bool) -> Result<i32, OqError> {
    let report = SqliteStore::open_in(dir)?.backup_to(file)?;
    if json {
        println!(
            "{}",
            json!({ "file": file, "events": report.events, "checked": true })
        );
    } else {
        println!(
            "{}: a copy of {} ({} events), checked whole: the file, the indexes and the chains",
            file.display(),
            dir.display(),
            report.events
        );
    }
    Ok(exit::OK)
}
