//! Rows of the log turned into the domain's values: a question with its answer, closure
//! orphan and hand-off marks; a session. Pure mapping, no queries.

use rusqlite::Row;

use crate::domain::work::Session;
use crate::domain::{Event, OqError, Question};
use crate::engine::fold::QuestionRow;

/// The columns that make a [`Question`]: the declaration, its session's author, and the
/// settlement (answer or closure) when there is one. `d` is the declaration event.
pub(super) const QUESTION_COLUMNS: &str = "
    d.seq, d.project_id, d.at, d.payload,
    (SELECT json_extract(s.payload, '$.author') FROM events s
      WHERE s.type = 'session.started' AND s.session_id = d.session_id),
    st.type, st.payload, st.at,
    EXISTS (SELECT 1 FROM events x WHERE x.type = 'open_question.orphaned' AND x.question_id = d.question_id),
    EXISTS (SELECT 1 FROM events x WHERE x.type = 'open_question.handed_off' AND x.question_id = d.question_id)";

/// How many columns [`QUESTION_COLUMNS`] selects: what a query selects after them starts
/// at this index (a column added above moves it, so it is said once).
pub(super) const AFTER_QUESTION: usize = 10;

/// The settlement (`st`) of the declaration `d`, when there is one. Its condition is the
/// one-settlement index's own, word for word, so SQLite probes that unique index once
/// (two joins, one per kind, went through every event of the question instead).
pub(super) const SETTLEMENT_JOIN: &str = "
    LEFT JOIN events st ON st.type IN ('open_question.answered', 'open_question.closed')
                       AND st.question_id = d.question_id";

pub(super) fn parse_event(payload: &str) -> Result<Event, OqError> {
    serde_json::from_str(payload)
        .map_err(|e| OqError::Internal(format!("unreadable event in the log: {e}")))
}

pub(super) fn question_from_row(row: &Row<'_>) -> rusqlite::Result<Result<Question, OqError>> {
    let settlement = match row.get::<_, Option<String>>(5)? {
        Some(kind) => Some((kind, row.get(6)?, row.get(7)?)),
        None => None,
    };
    let parts = QuestionRow {
        seq: row.get(0)?,
        project_id: row.get(1)?,
        created_at: row.get(2)?,
        payload: row.get(3)?,
        session_author: row.get(4)?,
        settlement,
        orphaned: row.get(8)?,
        handed_off: row.get(9)?,
    };
    // The mapping itself is the one both stores share.
    Ok(parts.into_question())
}

pub(super) fn collect<T>(
    rows: impl Iterator<Item = rusqlite::Result<Result<T, OqError>>>,
) -> Result<Vec<T>, OqError> {
    let mut out = Vec::new();
    for r in rows {
        out.push(r??);
    }
    Ok(out)
}

pub(super) fn session_from(project_id: String, event: Event) -> Result<Session, OqError> {
    match event {
        Event::SessionStarted {
            session_id,
            kind,
            author,
        } => Ok(Session {
            session_id,
            project_id,
            kind,
            author,
        }),
        other => Err(OqError::Internal(format!(
            "expected a session event, found {}",
            other.type_name()
        ))),
    }
}

/// `AND column = :project` when a project is given, nothing otherwise. Two plans rather
/// than `(:project IS NULL OR …)`, which keeps SQLite off the project indexes.
pub(super) fn scope(sql: &str, column: &str, project: Option<&str>) -> String {
    let clause = match project {
        Some(_) => format!("AND {column} = :project"),
        None => String::new(),
    };
    sql.replace("{scope}", &clause)
}

/// The named parameters, plus `:project` when given.
pub(super) fn bind<'a>(
    mut params: Vec<(&'a str, &'a dyn rusqlite::ToSql)>,
    project: &'a Option<&'a str>,
) -> Vec<(&'a str, &'a dyn rusqlite::ToSql)> {
    if project.is_some() {
        params.push((":project", project));
    }
    params
}

#[cfg(test)]
mod tests {
    #[test]
    fn after_question_counts_the_question_columns() {
        let columns = crate::engine::fold::select_columns(super::QUESTION_COLUMNS);
        assert_eq!(
            columns,
            super::AFTER_QUESTION,
            "{}",
            super::QUESTION_COLUMNS
        );
    }
}
