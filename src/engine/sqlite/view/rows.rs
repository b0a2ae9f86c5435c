//! Rows of the log turned into the domain's values: a question with its answer, closure
//! and orphan mark; a session. Pure mapping, no queries.

use rusqlite::Row;

use crate::domain::choices::Closure;
use crate::domain::work::Session;
use crate::domain::{Answer, DecisionSource, Event, OqError, Question};

/// The columns that make a [`Question`]: the declaration, its session's author, and the
/// settlement (answer or closure) when there is one. `d` is the declaration event.
pub(super) const QUESTION_COLUMNS: &str = "
    d.seq, d.project_id, d.at, d.payload,
    (SELECT json_extract(s.payload, '$.author') FROM events s
      WHERE s.type = 'session.started' AND s.session_id = d.session_id),
    st.type, st.payload, st.at,
    EXISTS (SELECT 1 FROM events x WHERE x.type = 'open_question.orphaned' AND x.question_id = d.question_id)";

/// The settlement (`st`) of the declaration `d`, when there is one. Its condition is the
/// one-settlement index's own, word for word, so SQLite probes that unique index once
/// (two joins, one per kind, went through every event of the question instead).
pub(super) const SETTLEMENT_JOIN: &str = "
    LEFT JOIN events st ON st.type IN ('open_question.answered', 'open_question.closed')
                       AND st.question_id = d.question_id";

/// Only answered questions, after [`SETTLEMENT_JOIN`].
pub(super) const ANSWERED_ONLY: &str = "AND st.type = 'open_question.answered'";

pub(super) fn parse_event(payload: &str) -> Result<Event, OqError> {
    serde_json::from_str(payload)
        .map_err(|e| OqError::Internal(format!("unreadable event in the log: {e}")))
}

pub(super) fn question_from_row(row: &Row<'_>) -> rusqlite::Result<Result<Question, OqError>> {
    let seq: i64 = row.get(0)?;
    let project_id: String = row.get(1)?;
    let created_at: i64 = row.get(2)?;
    let payload: String = row.get(3)?;
    let session_author: Option<String> = row.get(4)?;
    let settled: Option<(String, String, i64)> = match row.get::<_, Option<String>>(5)? {
        Some(kind) => Some((kind, row.get(6)?, row.get(7)?)),
        None => None,
    };
    let orphaned: bool = row.get(8)?;
    let (answer, closure) = match settled {
        Some((kind, payload, at)) if kind == "open_question.answered" => {
            (Some((payload, at)), None)
        }
        Some((_, payload, at)) => (None, Some((payload, at))),
        None => (None, None),
    };
    Ok((|| {
        let Event::OpenQuestion {
            question_id,
            pergunta,
            sugestao,
            afeta,
            autor,
            session_id,
            source,
            prompts,
            upstream,
        } = parse_event(&payload)?
        else {
            return Err(OqError::Internal(format!("event {seq} is not a question")));
        };
        let answer = match answer {
            None => None,
            Some((p, answered_at)) => Some(
                Answer::from_event(parse_event(&p)?, answered_at).ok_or_else(|| {
                    OqError::Internal(format!("answer of {question_id} is not an answer"))
                })?,
            ),
        };
        let closure = match closure {
            None => None,
            Some((p, at)) => match parse_event(&p)? {
                Event::QuestionClosed {
                    reason,
                    by,
                    decision_source,
                    ..
                } => Some(Closure {
                    reason,
                    by,
                    at,
                    decision_source: decision_source.unwrap_or(DecisionSource::for_closure(reason)),
                }),
                _ => {
                    return Err(OqError::Internal(format!(
                        "closure of {question_id} is not a closure"
                    )));
                }
            },
        };
        Ok(Question {
            question_id,
            project_id,
            session_id,
            session_author: session_author.unwrap_or_default(),
            pergunta,
            sugestao,
            afeta,
            autor,
            source,
            created_at,
            seq,
            answer,
            prompts,
            upstream,
            closure,
            orphaned,
        })
    })())
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
