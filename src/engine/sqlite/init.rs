//! `oq store init`: a new, empty store made deliberately. An ordinary open makes a store
//! only where there is nothing at all (the first run); a lost store — an empty
//! `oq.sqlite3`, or a `-wal`/`-shm` without it — is refused there (`open::preflight`),
//! and only this step replaces it. What it replaces is moved aside, never deleted: a
//! lost store's leftovers are what a person may still want to recover from.

use std::path::{Path, PathBuf};

use super::open::{self, Found};
use crate::domain::{ErrorCode, OqError};

/// What `oq store init` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Initialised {
    /// A new, empty store; the leftovers of a lost one moved aside to these paths.
    Created { moved_aside: Vec<PathBuf> },
    /// An oq store was already there: left exactly as it was.
    AlreadyThere,
}

/// Makes a new store at `path` unless an oq store is already there. A file that is not
/// an oq store, or one newer than this binary, is refused as on every open.
pub fn init(path: &Path) -> Result<Initialised, OqError> {
    let lost = match open::preflight(path) {
        Ok(Found::Store) => return Ok(Initialised::AlreadyThere),
        Ok(Found::Nothing) => false,
        Err(e)
            if matches!(
                e.code(),
                ErrorCode::StoreFileEmpty | ErrorCode::StoreFileMissing
            ) =>
        {
            true
        }
        Err(e) => return Err(e),
    };
    let mut moved_aside = Vec::new();
    if lost {
        let stamp = super::now_ms();
        for file in [
            path.to_path_buf(),
            open::sidecar(path, "-wal"),
            open::sidecar(path, "-shm"),
        ] {
            if std::fs::symlink_metadata(&file).is_err() {
                continue;
            }
            let mut aside = file.as_os_str().to_owned();
            aside.push(format!(".lost-{stamp}"));
            let aside = PathBuf::from(aside);
            std::fs::rename(&file, &aside).map_err(|e| {
                OqError::store(
                    ErrorCode::DataDirNotWritable,
                    format!("{} could not be moved aside: {e}", file.display()),
                )
            })?;
            moved_aside.push(aside);
        }
    }
    open::create(path)?;
    Ok(Initialised::Created { moved_aside })
}
