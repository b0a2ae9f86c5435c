//! Rows of `oq.events` turned into the domain's values: the columns that make a
//! question (the declaration `d`, its session's author, its settlement `st`, its orphan
//! and hand-off marks) and their mapping. Pure mapping, no queries.

use postgres::Row;

use crate::domain::OqError;
use crate::engine::fold::QuestionRow;

/// The columns that make a [`Question`]; `d` is the declaration, `st` its settlement.
pub(super) const QUESTION_COLUMNS: &str = "
    d.seq, d.project_id, d.at, d.payload::text,
    (SELECT s.payload ->> 'author' FROM oq.events s
      WHERE s.type = 'session.started' AND s.session_id = d.session_id),
    st.type, st.payload::text, st.at,
    EXISTS (SELECT 1 FROM oq.events x WHERE x.type = 'open_question.orphaned' AND x.question_id = d.question_id),
    EXISTS (SELECT 1 FROM oq.events x WHERE x.type = 'open_question.handed_off' AND x.question_id = d.question_id)";

/// How many columns [`QUESTION_COLUMNS`] selects: what a query selects after them starts
/// at this index (a column added above moves it, so it is said once).
pub(super) const AFTER_QUESTION: usize = 10;

/// The settlement of `d`: the one-settlement index's own condition.
pub(super) const SETTLEMENT_JOIN: &str = "
    LEFT JOIN oq.events st ON st.type IN ('open_question.answered', 'open_question.closed')
                          AND st.question_id = d.question_id";

/// The tasks parked on `d` right now (the gates an answer resumes), in parking order.
pub(super) const PARKED_ON: &str = "ARRAY(SELECT p.task_id FROM oq.events p
      WHERE p.type = 'gate.rescue_parked' AND p.question_id = d.question_id
        AND NOT EXISTS (SELECT 1 FROM oq.events r WHERE r.type = 'gate.resumed'
                        AND r.question_id = d.question_id AND r.task_id = p.task_id)
      ORDER BY p.seq)";

pub(super) fn get<'a, T: postgres::types::FromSql<'a>>(
    row: &'a Row,
    i: usize,
) -> Result<T, OqError> {
    row.try_get(i)
        .map_err(|e| OqError::Internal(format!("store: column {i}: {e}")))
}

pub(super) fn question_row(r: &Row) -> Result<QuestionRow, OqError> {
    let settlement = match get::<Option<String>>(r, 5)? {
        Some(kind) => Some((kind, get(r, 6)?, get(r, 7)?)),
        None => None,
    };
    Ok(QuestionRow {
        seq: get(r, 0)?,
        project_id: get(r, 1)?,
        created_at: get(r, 2)?,
        payload: get(r, 3)?,
        session_author: get(r, 4)?,
        settlement,
        orphaned: get(r, 8)?,
        handed_off: get(r, 9)?,
    })
}
