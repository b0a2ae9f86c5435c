//! Snoozes in SQL (issue 17 part 4): whether a question is snoozed at a time, for the
//! list's filter and its count, and each listed open question's current snooze.
//!
//! No table is derived for it: a snooze is "the newest snooze event is a snooze whose
//! `until` is ahead", a fact of the log AND the clock, which no trigger could keep. The
//! set of questions ever snoozed comes from the `events_snoozed` index (snoozes are
//! few), so a list with no snooze in it pays one empty probe; only a question in that
//! set has its newest snooze event looked up (`events_by_question`).

use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension};

use super::rows::parse_event;
use crate::domain::snooze;
use crate::domain::{OqError, Question};
use crate::engine::SnoozeFilter;

const KINDS: &str = "('open_question.snoozed', 'open_question.unsnoozed')";

/// True for the question `qid` while a snooze hides it at `:now`. `open` says the
/// driving table is the open set already; otherwise the question must be in it (a
/// settled question's last snooze hides nothing).
pub(super) fn snoozed_now(qid: &str, open: bool) -> String {
    let open_check = if open {
        String::new()
    } else {
        format!(" AND {qid} IN (SELECT question_id FROM open_questions)")
    };
    format!(
        "({qid} IN (SELECT question_id FROM events WHERE type = 'open_question.snoozed'){open_check}
          AND coalesce({}, 0) > :now)",
        until(qid)
    )
}

/// The `until` of the question's newest snooze event (NULL after an unsnooze).
fn until(qid: &str) -> String {
    format!(
        "(SELECT json_extract(z.payload, '$.until') FROM events z
           WHERE z.question_id = {qid} AND z.type IN {KINDS} ORDER BY z.seq DESC LIMIT 1)"
    )
}

/// [`any`]'s SQL (its plan is tested in `questions.rs`).
pub(super) const ANY: &str =
    "SELECT EXISTS (SELECT 1 FROM events WHERE type = 'open_question.snoozed')";

/// Whether the log holds any snooze at all (one probe of `events_snoozed`). Most stores
/// hold none: then nothing is hidden and nothing is counted, and a queue of 100,000
/// open questions pays no per-row test for it (it cost 23 ms a page before).
pub(super) fn any(conn: &Connection) -> rusqlite::Result<bool> {
    conn.prepare_cached(ANY)?.query_row([], |r| r.get(0))
}

/// The filter's condition for `f` (nothing for `Show`, nor for `Hide` when the log
/// holds no snooze: `any`), binding `:now`.
#[allow(clippy::too_many_arguments)]
pub(super) fn filter(
    f: SnoozeFilter,
    any: bool,
    qid: &str,
    open: bool,
    now: i64,
    filter: &mut String,
    params: &mut Vec<(String, Value)>,
) {
    let cond = match f {
        SnoozeFilter::Show => return,
        SnoozeFilter::Hide if !any => return,
        SnoozeFilter::Only if !any => return filter.push_str(" AND 0"),
        SnoozeFilter::Hide => format!(" AND NOT {}", snoozed_now(qid, open)),
        SnoozeFilter::Only => format!(" AND {}", snoozed_now(qid, open)),
    };
    filter.push_str(&cond);
    params.push((":now".into(), Value::Integer(now)));
}

/// How many of `from … WHERE base` a snooze hides at `now`, and the soonest `until`.
#[allow(clippy::too_many_arguments)]
pub(super) fn count(
    conn: &Connection,
    any: bool,
    from: &str,
    base: &str,
    params: &[(String, Value)],
    qid: &str,
    open: bool,
    now: i64,
) -> Result<crate::engine::SnoozedCount, OqError> {
    if !any {
        return Ok(crate::engine::SnoozedCount::default());
    }
    let sql = format!(
        "SELECT count(*), min({}) FROM {from} WHERE {base} AND {}",
        until(qid),
        snoozed_now(qid, open)
    );
    let mut params = params.to_vec();
    params.push((":now".into(), Value::Integer(now)));
    let (count, next_wake): (i64, Option<i64>) = conn
        .prepare_cached(&sql)?
        .query_row(&*super::questions::bound(&params), |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?;
    Ok(crate::engine::SnoozedCount {
        count: count as u64,
        next_wake,
    })
}

/// Sets each open question's current snooze from its newest snooze event.
pub(super) fn attach(conn: &Connection, questions: &mut [Question]) -> Result<(), OqError> {
    let sql = format!(
        "SELECT payload FROM events WHERE question_id = ?1 AND type IN {KINDS}
          ORDER BY seq DESC LIMIT 1"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    for q in questions
        .iter_mut()
        .filter(|q| q.answer.is_none() && q.closure.is_none())
    {
        let newest: Option<String> = stmt.query_row([&q.question_id], |r| r.get(0)).optional()?;
        q.snooze = match newest {
            Some(p) => snooze::current(&[parse_event(&p)?]),
            None => None,
        };
    }
    Ok(())
}

/// [`attach`] for one question.
pub(super) fn attach_one(
    conn: &Connection,
    q: Option<Question>,
) -> Result<Option<Question>, OqError> {
    let mut q = q;
    if let Some(q) = q.as_mut() {
        attach(conn, std::slice::from_mut(q))?;
    }
    Ok(q)
}
