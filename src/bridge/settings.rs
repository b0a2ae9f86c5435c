//! The persisted auto-delegate toggle of one upstream: `questionAutoDelegateEnabled` in
//! `<data_dir>/opencode-<name>.settings.json`, written atomically (a temporary file,
//! fsync, rename), so a crash leaves the old value or the new one, never half a file.
//!
//! Reading: no file yet means the configured default (`auto_delegate`, on unless said
//! otherwise); a file that cannot be read or parsed, or whose value is not a boolean,
//! is `None` — the machine's `unavailable`, which never auto-answers.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The field name, as in the seed's settings.
pub const FIELD: &str = "questionAutoDelegateEnabled";

pub fn path_for(data_dir: &Path, upstream: &str) -> PathBuf {
    data_dir.join(format!("opencode-{upstream}.settings.json"))
}

/// The stored toggle; `default` when nothing was stored; `None` when unreadable.
pub fn read(path: &Path, default: bool) -> Option<bool> {
    match std::fs::read(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(default),
        Err(_) => None,
        Ok(bytes) => {
            let v: Value = serde_json::from_slice(&bytes).ok()?;
            match v.get(FIELD) {
                None => Some(default),
                Some(b) => b.as_bool(),
            }
        }
    }
}

/// Stores the toggle atomically.
pub fn write(path: &Path, enabled: bool) -> std::io::Result<()> {
    crate::private_fs::write_atomically(path, json!({ FIELD: enabled }).to_string().as_bytes())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn missing_is_the_default_broken_is_unavailable_and_a_write_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let p = path_for(dir.path(), "oc");
        assert_eq!(read(&p, true), Some(true));
        assert_eq!(read(&p, false), Some(false));
        write(&p, false).unwrap();
        assert_eq!(read(&p, true), Some(false));
        std::fs::write(&p, "{not json").unwrap();
        assert_eq!(read(&p, true), None);
        std::fs::write(&p, "{\"questionAutoDelegateEnabled\": \"yes\"}").unwrap();
        assert_eq!(read(&p, true), None);
    }
}
