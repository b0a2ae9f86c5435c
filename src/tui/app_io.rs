//! The driver's IO helpers: loading several pages of the list, and `$EDITOR` around the
//! terminal guard. No state here.

use std::io;
use std::path::Path;

use super::terminal::TerminalGuard;
use crate::engine::ListQuery;
use crate::source::Source;
use crate::wire::QuestionList;

fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}

pub(super) async fn load_pages<S: Source>(
    source: &S,
    project: Option<&str>,
    query: ListQuery,
    pages: usize,
) -> Result<QuestionList, String> {
    let mut list = source.list(project, &query).await.map_err(text)?;
    for _ in 1..pages {
        let Some(cursor) = list.cursor.clone() else {
            break;
        };
        let next = source
            .list(project, &query.clone().after(Some(&cursor)))
            .await
            .map_err(text)?;
        list.items.extend(next.items);
        list.cursor = next.cursor;
        list.total = next.total;
        list.total_is_lower_bound = next.total_is_lower_bound;
        list.snoozed = next.snoozed;
        list.snoozed_next_return = next.snoozed_next_return;
    }
    Ok(list)
}

/// `$VISUAL`, `$EDITOR` or `vi` on a temp file holding `text`; the file's text after.
pub(super) fn edit(
    guard: &TerminalGuard,
    dir: &Path,
    question_id: &str,
    text: &str,
) -> Result<String, String> {
    crate::private_fs::create_dir(dir).map_err(text_err)?;
    let path = dir.join(format!(".edit-{}-{question_id}.md", std::process::id()));
    crate::private_fs::create(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
        .map_err(text_err)?;
    let editor = std::env::var("VISUAL")
        .ok()
        .or_else(|| std::env::var("EDITOR").ok())
        .filter(|e| !e.trim().is_empty())
        .unwrap_or_else(|| "vi".into());
    guard.suspend();
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&path)
        .status();
    let resumed = guard.resume();
    let result = match status {
        Ok(s) if s.success() => std::fs::read_to_string(&path).map_err(text_err),
        Ok(s) => Err(format!("{editor} exited with {s}")),
        Err(e) => Err(format!("{editor}: {e}")),
    };
    let _ = std::fs::remove_file(&path);
    resumed.map_err(text_err)?;
    result
}

fn text_err(e: io::Error) -> String {
    e.to_string()
}
