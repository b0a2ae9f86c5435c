//! `oq store backup FILE`: SQLite's online backup of the store, taken in one step under
//! one read transaction, so the copy is the store at one moment however busy its
//! writers are (WAL: they go on meanwhile). The copy is written beside FILE, flushed,
//! checked whole (`check` in full, chains included) and only then moved into place,
//! private (0600); FILE must not exist yet.

use std::path::Path;

use rusqlite::Connection;

use super::check::{self, Depth, Report};
use super::{SqliteStore, fault};
use crate::domain::{ErrorCode, OqError};

impl SqliteStore {
    /// Copies the store to `file` and returns the copy's own check.
    pub fn backup_to(&self, file: &Path) -> Result<Report, OqError> {
        self.health.readable()?;
        if file.exists() {
            return Err(OqError::invalid(
                ErrorCode::InvalidConfig,
                format!(
                    "{} already exists; a backup never overwrites a file",
                    file.display()
                ),
            ));
        }
        let mut temp = file.as_os_str().to_owned();
        temp.push(format!(".part-{}", std::process::id()));
        let temp = std::path::PathBuf::from(temp);
        let made = self.copy_into(&temp);
        let report = made.and_then(|()| {
            let copy = Connection::open(&temp).map_err(|e| fault::classify_at(&temp, 0, e))?;
            let report = check::run(&copy, Depth::Full);
            copy.close()
                .map_err(|(_, e)| fault::classify_at(&temp, 0, e))?;
            Ok(report)
        });
        let placed = report.and_then(|r| {
            if !r.is_clean() {
                return Err(OqError::store(
                    ErrorCode::StoreDamaged,
                    format!("the copy did not check clean: {}", r.findings().join("; ")),
                ));
            }
            std::fs::rename(&temp, file).map_err(|e| {
                OqError::store(
                    ErrorCode::DataDirNotWritable,
                    format!("{} cannot be written: {e}", file.display()),
                )
            })?;
            Ok(r)
        });
        if placed.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        placed
    }

    fn copy_into(&self, temp: &Path) -> Result<(), OqError> {
        crate::private_fs::ensure_file(temp).map_err(|e| {
            OqError::store(
                ErrorCode::DataDirNotWritable,
                format!("{} cannot be written: {e}", temp.display()),
            )
        })?;
        let mut dest = Connection::open(temp).map_err(|e| fault::classify_at(temp, 0, e))?;
        {
            let source = self.reader()?;
            let backup = rusqlite::backup::Backup::new(&source, &mut dest)
                .map_err(|e| fault::classify_at(temp, 0, e))?;
            // Every page in one step: one read snapshot, never restarted by a write.
            backup
                .step(-1)
                .map_err(|e| fault::classify_at(temp, 0, e))?;
        }
        // A file on its own: no -wal beside it to lose when it is copied on.
        dest.pragma_update(None, "journal_mode", "DELETE")
            .map_err(|e| fault::classify_at(temp, 0, e))?;
        dest.close()
            .map_err(|(_, e)| fault::classify_at(temp, 0, e))?;
        std::fs::File::open(temp)
            .and_then(|f| f.sync_all())
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ENOSPC | libc::EDQUOT) => fault::disk_full(temp),
                _ => OqError::store(
                    ErrorCode::DataDirNotWritable,
                    format!("{} cannot be flushed: {e}", temp.display()),
                ),
            })
    }
}
