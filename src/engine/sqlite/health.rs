//! The store's standing in this process: sound, damaged (reads go on, writes are
//! refused) or failed (a write or flush hit an I/O error: nothing more is read or
//! written until the process restarts, reopens and checks the store).
//!
//! Failed is PostgreSQL's rule after a failed fsync: once the kernel has reported a
//! write-back error, what the page cache holds may not be what the disk holds, so no
//! later read or retry can be trusted to describe a durable state. A retry of an
//! acknowledged-nowhere answer must therefore never be answered "answered".

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

use super::fault;
use crate::domain::{ErrorCode, OqError};

/// Why this process no longer writes to the store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Standing {
    Sound,
    /// `oq store check` (or its quick form at `oq serve`'s start) found damage, or the
    /// schema's guards were altered: reads are served, writes refused.
    Damaged {
        reason: String,
    },
    /// A write or a flush failed with an I/O error: everything is refused.
    Failed {
        reason: String,
    },
}

pub struct Health {
    path: PathBuf,
    standing: Mutex<Standing>,
}

impl Health {
    pub fn new(path: &Path) -> Self {
        Health {
            path: path.to_path_buf(),
            standing: Mutex::new(Standing::Sound),
        }
    }

    pub fn standing(&self) -> Standing {
        self.standing
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Marks the store failed because `why` (the first reason stays) and says so
    /// loudly: in the log at error level and on stderr, where an operator looks.
    pub fn fail(&self, why: &str) -> OqError {
        let failed = fault::store_failed(&self.path, why);
        self.failed(&failed);
        failed
    }

    /// [`Health::fail`] with the refusal already made (a `store_failed` error).
    fn failed(&self, e: &OqError) {
        let mut standing = self.standing.lock().unwrap_or_else(|p| p.into_inner());
        if matches!(*standing, Standing::Failed { .. }) {
            return;
        }
        let reason = e.to_string();
        *standing = Standing::Failed {
            reason: reason.clone(),
        };
        drop(standing);
        tracing::error!(store = %self.path.display(), %reason,
            "STORE FAILED: refusing every read and write until restarted");
        eprintln!("oq: STORE FAILED: {reason}");
    }

    /// Marks the store damaged because `why`, unless it failed already.
    pub fn damage(&self, why: &str) {
        self.damaged(&fault::store_damaged(&self.path, why));
    }

    fn damaged(&self, e: &OqError) {
        let mut standing = self.standing.lock().unwrap_or_else(|p| p.into_inner());
        if *standing != Standing::Sound {
            return;
        }
        let reason = e.to_string();
        *standing = Standing::Damaged {
            reason: reason.clone(),
        };
        drop(standing);
        tracing::error!(store = %self.path.display(), %reason,
            "store damaged: refusing writes; reads go on");
    }

    /// `Err` with the reason when nothing may be written.
    pub fn writable(&self) -> Result<(), OqError> {
        match self.standing() {
            Standing::Sound => Ok(()),
            Standing::Damaged { reason } => Err(OqError::store(ErrorCode::StoreDamaged, reason)),
            Standing::Failed { reason } => Err(OqError::store(ErrorCode::StoreFailed, reason)),
        }
    }

    /// `Err` with the reason when nothing may be read either.
    pub fn readable(&self) -> Result<(), OqError> {
        match self.standing() {
            Standing::Failed { reason } => Err(OqError::store(ErrorCode::StoreFailed, reason)),
            _ => Ok(()),
        }
    }

    /// Takes note of a write's failure: an I/O error makes the store failed, damage
    /// found by SQLite makes it damaged.
    pub fn note(&self, e: &OqError) {
        match e.code() {
            ErrorCode::StoreFailed => self.failed(e),
            ErrorCode::StoreDamaged => self.damaged(e),
            _ => {}
        }
    }
}
