//! The offline mirror: the last list a remote source gave, per (source, project,
//! status), in `<data dir>/mirror/`, read back while the source cannot be reached.
//!
//! Each list is one JSON file written atomically (temp file, fsync, rename, fsync of the
//! directory), so a kill mid-write leaves the previous list or the new one, never half.
//! Only first pages are kept (a cursor is the server's and means nothing offline). The
//! mirror also remembers since when a source has been unreachable (`offline-<hash>`), so
//! "offline since" survives from one door to the next. It never holds answers: those go
//! to the outbox.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::engine::StatusFilter;
use crate::wire::{QuestionItem, QuestionList};

#[derive(Debug, Clone)]
pub struct Mirror {
    dir: PathBuf,
}

/// One saved list and when it was saved (Unix ms).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Saved {
    pub source: String,
    pub project: Option<String>,
    pub status: String,
    pub saved_at: i64,
    pub list: QuestionList,
}

fn hash(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    hex::encode(&h.finalize()[..12])
}

impl Mirror {
    pub fn new(data_dir: &Path) -> Mirror {
        Mirror {
            dir: data_dir.join("mirror"),
        }
    }

    /// The limit is part of the name: a one-row count query must not replace the page.
    fn list_path(
        &self,
        source: &str,
        project: Option<&str>,
        status: StatusFilter,
        limit: usize,
    ) -> PathBuf {
        let limit = limit.to_string();
        let name = hash(&[source, project.unwrap_or("*"), status.as_str(), &limit]);
        self.dir.join(format!("list-{name}.json"))
    }

    fn offline_path(&self, source: &str) -> PathBuf {
        self.dir.join(format!("offline-{}", hash(&[source])))
    }

    fn write_atomic(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        crate::private_fs::write_atomically(path, bytes)
    }

    /// Saves a first page after a successful list.
    pub fn save(
        &self,
        source: &str,
        project: Option<&str>,
        status: StatusFilter,
        limit: usize,
        list: &QuestionList,
        now: i64,
    ) -> std::io::Result<()> {
        let saved = Saved {
            source: source.into(),
            project: project.map(str::to_string),
            status: status.as_str().into(),
            saved_at: now,
            list: list.clone(),
        };
        let bytes = serde_json::to_vec(&saved).map_err(std::io::Error::other)?;
        self.write_atomic(&self.list_path(source, project, status, limit), &bytes)
    }

    /// The last list saved for these, if any.
    pub fn load(
        &self,
        source: &str,
        project: Option<&str>,
        status: StatusFilter,
        limit: usize,
    ) -> Option<Saved> {
        let bytes = std::fs::read(self.list_path(source, project, status, limit)).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// A question as the mirror last saw it, from any of the source's saved lists.
    pub fn question(
        &self,
        source: &str,
        project: Option<&str>,
        question_id: &str,
    ) -> Option<QuestionItem> {
        let mut saved: Vec<Saved> = std::fs::read_dir(&self.dir)
            .ok()?
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("list-"))
            .filter_map(|e| std::fs::read(e.path()).ok())
            .filter_map(|b| serde_json::from_slice::<Saved>(&b).ok())
            .filter(|s| {
                s.source == source && (project.is_none() || s.project.as_deref() == project)
            })
            .collect();
        // The newest view of the question wins.
        saved.sort_by_key(|s| std::cmp::Reverse(s.saved_at));
        saved
            .into_iter()
            .flat_map(|s| s.list.items)
            .find(|q| q.question_id == question_id)
    }

    /// Records that `source` is unreachable, keeping the first moment it was seen so.
    /// Returns since when it is offline.
    pub fn mark_offline(&self, source: &str, now: i64) -> i64 {
        if let Some(since) = self.offline_since(source) {
            return since;
        }
        let _ = self.write_atomic(&self.offline_path(source), now.to_string().as_bytes());
        now
    }

    pub fn mark_online(&self, source: &str) {
        let _ = std::fs::remove_file(self.offline_path(source));
    }

    pub fn offline_since(&self, source: &str) -> Option<i64> {
        std::fs::read_to_string(self.offline_path(source))
            .ok()?
            .trim()
            .parse()
            .ok()
    }
}
