//! Snoozes in PostgreSQL, the same meaning as the SQLite store's
//! (`sqlite/view/snoozes.rs`): a question is snoozed while its newest snooze event is a
//! snooze whose `until` is ahead of the engine's clock. Read per question through the
//! snooze events' own index (`events_snoozes`, schema v5); no table of its own (none
//! could follow the clock).

use postgres::Row;
use postgres::types::ToSql;

use super::list::{Param, refs};
use crate::domain::snooze;
use crate::domain::{OqError, Question};
use crate::engine::fold::parse_event;
use crate::engine::{SnoozeFilter, SnoozedCount};

pub(super) const KINDS: &str = "('open_question.snoozed', 'open_question.unsnoozed')";

fn until(qid: &str) -> String {
    format!(
        "(SELECT (z.payload ->> 'until')::bigint FROM oq.events z
           WHERE z.question_id = {qid} AND z.type IN {KINDS} ORDER BY z.seq DESC LIMIT 1)"
    )
}

/// True while a snooze hides `qid` at `$now`; outside the open set, only an open
/// question counts.
fn snoozed_now(qid: &str, open: bool, now: usize) -> String {
    let open_check = if open {
        String::new()
    } else {
        format!(" AND EXISTS (SELECT 1 FROM oq.open_questions oo WHERE oo.question_id = {qid})")
    };
    format!("(coalesce({}, 0) > ${now}{open_check})", until(qid))
}

/// Adds `f`'s condition to `filter` (nothing for `Show`).
pub(super) fn filter(
    f: SnoozeFilter,
    qid: &str,
    open: bool,
    now: i64,
    filter: &mut String,
    params: &mut Vec<Param>,
) {
    let not = match f {
        SnoozeFilter::Show => return,
        SnoozeFilter::Hide => "NOT ",
        SnoozeFilter::Only => "",
    };
    params.push(Param::Int(now));
    filter.push_str(&format!(
        " AND {not}{}",
        snoozed_now(qid, open, params.len())
    ));
}

/// The SQL counting `from … WHERE base` hidden by a snooze at `now`, and the soonest
/// `until`, with its parameters.
pub(super) fn count_sql(
    from: &str,
    base: &str,
    base_params: &[Param],
    qid: &str,
    open: bool,
    now: i64,
) -> (String, Vec<Param>) {
    let mut params = base_params.to_vec();
    params.push(Param::Int(now));
    let sql = format!(
        "SELECT count(*), min({}) FROM {from} WHERE {base} AND {}",
        until(qid),
        snoozed_now(qid, open, params.len())
    );
    (sql, params)
}

/// The view's query: the SQL and its values in `$n` order.
pub(super) type Rows<'a> = &'a dyn Fn(&str, &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, OqError>;

fn column<'r, T: postgres::types::FromSql<'r>>(row: &'r Row, i: usize) -> Result<T, OqError> {
    row.try_get(i)
        .map_err(|e| OqError::Internal(format!("store: column {i}: {e}")))
}

pub(super) fn count(rows: Rows<'_>, sql: &str, params: &[Param]) -> Result<SnoozedCount, OqError> {
    let found = rows(sql, &refs(params))?;
    let Some(row) = found.first() else {
        return Ok(SnoozedCount::default());
    };
    Ok(SnoozedCount {
        count: column::<i64>(row, 0)? as u64,
        next_wake: column(row, 1)?,
    })
}

/// A question's newest snooze event (`$1`: its id); public for the plan tests.
pub fn newest_sql() -> String {
    format!(
        "SELECT payload::text FROM oq.events WHERE question_id = $1 AND type IN {KINDS}
          ORDER BY seq DESC LIMIT 1"
    )
}

/// Sets each open question's current snooze from its newest snooze event.
pub(super) fn attach(rows: Rows<'_>, questions: &mut [Question]) -> Result<(), OqError> {
    let sql = newest_sql();
    for q in questions
        .iter_mut()
        .filter(|q| q.answer.is_none() && q.closure.is_none())
    {
        let found = rows(&sql, &[&q.question_id])?;
        q.snooze = match found.first() {
            Some(r) => snooze::current(&[parse_event(&column::<String>(r, 0)?)?]),
            None => None,
        };
    }
    Ok(())
}
