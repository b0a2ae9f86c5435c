//! Drafts on disk: `<data dir>/drafts/<question id>.txt`, written as they are typed
//! (temp file + rename, so a kill mid-write leaves the old draft or the new one, never
//! half of one), read back at start, removed after a successful answer.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Drafts {
    dir: PathBuf,
}

/// Question ids are engine ids; anything else would not name a file safely.
fn safe(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        && !id.starts_with('.')
}

impl Drafts {
    pub fn new(data_dir: &Path) -> Self {
        Drafts {
            dir: data_dir.join("drafts"),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path(&self, question_id: &str) -> Option<PathBuf> {
        safe(question_id).then(|| self.dir.join(format!("{question_id}.txt")))
    }

    pub fn load_all(&self) -> HashMap<String, String> {
        let mut out = HashMap::new();
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return out;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(id) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".txt"))
            else {
                continue;
            };
            if safe(id)
                && let Ok(text) = std::fs::read_to_string(&path)
            {
                out.insert(id.to_string(), text);
            }
        }
        out
    }

    pub fn save(&self, question_id: &str, text: &str) -> std::io::Result<()> {
        let path = self
            .path(question_id)
            .ok_or_else(|| std::io::Error::other("not a question id"))?;
        crate::private_fs::write_atomically(&path, text.as_bytes())
    }

    pub fn remove(&self, question_id: &str) -> std::io::Result<()> {
        match self.path(question_id).map(std::fs::remove_file) {
            Some(Err(e)) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}
