//! "Not now" on a question (issue 17 part 4): a snooze hides an open question from its
//! answerer's queue until a time, and nothing else. It is an event in the log
//! (`open_question.snoozed {until, by}`; `open_question.unsnoozed {by}` ends it early),
//! never a settlement: the question stays open for every other purpose — an agent's
//! `wait_for_answer` still reports it open, readiness still counts it, and it can be
//! answered or dismissed at any time (a settlement ends the snooze with the question).
//!
//! Whether a question IS snoozed is the log and the clock together: its newest snooze
//! event is a snooze whose `until` is still ahead. Nothing is written when the time
//! passes; the question is simply back. Pure: the caller gives `now`.
//!
//! Who may snooze: the question's answerer (its session's author), the one person whose
//! queue it sits in — snoozing is their "not now", as answering is theirs; anyone else
//! is refused as an answer would be (`so_o_autor_da_sessao`), before the question's
//! state is looked at.

use serde::{Deserialize, Serialize};

use super::answering::check_author_and_open;
use super::{Actor, ErrorCode, Event, OqError, Question};

/// The farthest a snooze may reach: 90 days. "Not now" is not "never"; a question that
/// should not be answered is dismissed, not hidden for a year.
pub const MAX_SNOOZE_MS: i64 = 90 * DAY_MS;

const MINUTE_MS: i64 = 60_000;
const HOUR_MS: i64 = 60 * MINUTE_MS;
const DAY_MS: i64 = 24 * HOUR_MS;

/// The question's current snooze as the log has it: the newest snooze event, when it is
/// a snooze (an unsnooze after it is `None`). In effect while `until` is ahead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snooze {
    /// Unix milliseconds: back in the queue from then on.
    pub until: i64,
    /// Who snoozed it.
    pub by: String,
}

impl Snooze {
    /// Whether it hides the question at `now`.
    pub fn holds_at(&self, now: i64) -> bool {
        self.until > now
    }
}

/// What a snooze request asks for: exactly one of an absolute time or a duration from
/// the deciding clock (the server's, for a remote source, so a client's skew counts
/// only in `until`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SnoozeInput {
    /// Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_seconds: Option<i64>,
}

impl SnoozeInput {
    pub fn until(ms: i64) -> SnoozeInput {
        SnoozeInput {
            until: Some(ms),
            for_seconds: None,
        }
    }

    pub fn for_seconds(s: i64) -> SnoozeInput {
        SnoozeInput {
            until: None,
            for_seconds: Some(s),
        }
    }

    /// The time the snooze ends, checked against `now`: after it, and at most
    /// [`MAX_SNOOZE_MS`] later.
    pub fn resolve(&self, now: i64) -> Result<i64, OqError> {
        let until = match (self.until, self.for_seconds) {
            (Some(u), None) => u,
            (None, Some(s)) => now.saturating_add(s.saturating_mul(1000)),
            _ => {
                return Err(OqError::invalid(
                    ErrorCode::InvalidSnooze,
                    "a snooze names exactly one of `until` (Unix ms) or `forSeconds`",
                ));
            }
        };
        if until <= now {
            return Err(OqError::invalid(
                ErrorCode::SnoozeInPast,
                format!(
                    "snooze until {} is not in the future (now {})",
                    super::date::format_utc(until),
                    super::date::format_utc(now)
                ),
            ));
        }
        if until - now > MAX_SNOOZE_MS {
            return Err(OqError::invalid(
                ErrorCode::SnoozeTooFar,
                format!(
                    "snooze until {} is more than 90 days away: dismiss a question that should not come back",
                    super::date::format_utc(until)
                ),
            ));
        }
        Ok(until)
    }
}

/// The events a snooze records, or the refusal: author first (a non-author learns
/// nothing of the question's state), then still open, then the time.
pub fn decide_snooze(
    question: &Question,
    actor: &Actor,
    input: &SnoozeInput,
    now: i64,
) -> Result<Event, OqError> {
    check_author_and_open(question, actor)?;
    let until = input.resolve(now)?;
    Ok(Event::QuestionSnoozed {
        question_id: question.question_id.clone(),
        until,
        by: actor.id().to_string(),
    })
}

/// Waking a question before its time: the author's, on an open question that is snoozed
/// at `now` (`not_snoozed` otherwise: nothing to end, nothing written).
pub fn decide_unsnooze(question: &Question, actor: &Actor, now: i64) -> Result<Event, OqError> {
    check_author_and_open(question, actor)?;
    if !question.snooze.as_ref().is_some_and(|s| s.holds_at(now)) {
        return Err(OqError::conflict(
            ErrorCode::NotSnoozed,
            format!("question {} is not snoozed", question.question_id),
        ));
    }
    Ok(Event::QuestionUnsnoozed {
        question_id: question.question_id.clone(),
        by: actor.id().to_string(),
    })
}

/// The question's snooze from its events, oldest first: the newest snooze or unsnooze
/// decides; events of other kinds are ignored.
pub fn current<'a>(events: impl IntoIterator<Item = &'a Event>) -> Option<Snooze> {
    let mut out = None;
    for e in events {
        match e {
            Event::QuestionSnoozed { until, by, .. } => {
                out = Some(Snooze {
                    until: *until,
                    by: by.clone(),
                })
            }
            Event::QuestionUnsnoozed { .. } => out = None,
            _ => {}
        }
    }
    out
}

/// A duration as people type it: a number and a unit, `90s`, `45m`, `2h`, `3d`, `1w`
/// (one unit; no fractions). In seconds.
pub fn parse_duration(text: &str) -> Result<i64, OqError> {
    let bad = || {
        OqError::invalid(
            ErrorCode::InvalidSnooze,
            format!("duration {text:?}: expected a number and a unit: 90s, 45m, 2h, 3d or 1w"),
        )
    };
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (n, unit) = t.split_at(split);
    let n: i64 = n.parse().map_err(|_| bad())?;
    let unit_s = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => return Err(bad()),
    };
    n.checked_mul(unit_s).ok_or_else(bad)
}

/// The next 09:00 in the given UTC offset after `now` ("tomorrow morning" in the TUI's
/// prompt): today's when it is still ahead, else tomorrow's.
pub fn next_morning(now: i64, offset_ms: i64) -> i64 {
    let local = now + offset_ms;
    let day = local.div_euclid(DAY_MS) * DAY_MS;
    let nine = day + 9 * HOUR_MS;
    let at = if nine > local { nine } else { nine + DAY_MS };
    at - offset_ms
}

/// A "not now" as a person types it in the TUI's prompt, resolved against `now` to the
/// time the snooze ends (checked as [`SnoozeInput::resolve`] checks it: ahead, within 90
/// days). Clock times are in the UTC offset given (the TUI passes 0: oq reads and prints
/// times in UTC). Forms:
/// - a duration, as [`parse_duration`] reads it: `30m`, `2h`, `1d`;
/// - `tomorrow` (09:00) or `tomorrow 9:00`, `today 18:30`, a bare `18:30` (today);
/// - `morning`: the next 09:00 ([`next_morning`]);
/// - a date or time as [`super::date::parse_utc`] reads it: `2026-12-04T09:00:00Z`.
pub fn parse_when(text: &str, now: i64, offset_ms: i64) -> Result<i64, OqError> {
    let t = text.trim().to_ascii_lowercase();
    let bad = || {
        OqError::invalid(
            ErrorCode::InvalidSnooze,
            format!(
                "{:?} is not a time: try 30m, 2h, 1d, tomorrow, tomorrow 9:00, 18:30 or 2026-12-04T09:00:00Z",
                text.trim()
            ),
        )
    };
    let local_day = (now + offset_ms).div_euclid(DAY_MS) * DAY_MS - offset_ms;
    let mut words = t.split_whitespace();
    let until = match (words.next(), words.next(), words.next()) {
        (None, ..) => return Err(bad()),
        (Some("morning"), None, _) => next_morning(now, offset_ms),
        (Some("tomorrow"), None, _) => local_day + DAY_MS + 9 * HOUR_MS,
        (Some("tomorrow"), Some(at), None) => local_day + DAY_MS + clock(at).ok_or_else(bad)?,
        (Some("today"), Some(at), None) => local_day + clock(at).ok_or_else(bad)?,
        (Some(one), None, _) if one.contains(':') && !one.contains('-') => {
            local_day + clock(one).ok_or_else(bad)?
        }
        (Some(one), None, _)
            if one.starts_with(|c: char| c.is_ascii_digit()) && one.contains('-') =>
        {
            super::date::parse_utc(&text.trim().to_ascii_uppercase())?
        }
        (Some(one), None, _) => {
            now.saturating_add(parse_duration(one).map_err(|_| bad())?.saturating_mul(1000))
        }
        _ => return Err(bad()),
    };
    SnoozeInput::until(until).resolve(now)
}

/// `9:00`, `18:30` as milliseconds after midnight.
fn clock(text: &str) -> Option<i64> {
    let (h, m) = text.split_once(':')?;
    let digits = |s: &str, max: i64| {
        (!s.is_empty() && s.len() <= 2 && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<i64>().ok())
            .flatten()
            .filter(|n| *n <= max)
    };
    let (h, m) = (digits(h, 23)?, digits(m, 59)?);
    (text.len() >= 4).then_some(h * HOUR_MS + m * MINUTE_MS)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_type_them() {
        assert_eq!(parse_duration("90s").unwrap(), 90);
        assert_eq!(parse_duration("2h").unwrap(), 7_200);
        assert_eq!(parse_duration("1w").unwrap(), 604_800);
        for bad in [
            "",
            "h",
            "2",
            "2x",
            "1.5h",
            "-2h",
            "2 h",
            "99999999999999999999d",
        ] {
            let e = parse_duration(bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidSnooze, "{bad}");
        }
    }

    #[test]
    fn a_snooze_is_ahead_and_within_ninety_days() {
        let now = 1_000_000_000_000;
        assert_eq!(
            SnoozeInput::for_seconds(60).resolve(now).unwrap(),
            now + 60_000
        );
        assert_eq!(SnoozeInput::until(now + 1).resolve(now).unwrap(), now + 1);
        let max = SnoozeInput::until(now + MAX_SNOOZE_MS);
        assert_eq!(max.resolve(now).unwrap(), now + MAX_SNOOZE_MS);
        let code = |i: SnoozeInput| i.resolve(now).unwrap_err().code();
        assert_eq!(code(SnoozeInput::until(now)), ErrorCode::SnoozeInPast);
        assert_eq!(code(SnoozeInput::for_seconds(0)), ErrorCode::SnoozeInPast);
        assert_eq!(code(SnoozeInput::for_seconds(-5)), ErrorCode::SnoozeInPast);
        assert_eq!(
            code(SnoozeInput::until(now + MAX_SNOOZE_MS + 1)),
            ErrorCode::SnoozeTooFar
        );
        assert_eq!(code(SnoozeInput::default()), ErrorCode::InvalidSnooze);
        let both = SnoozeInput {
            until: Some(now + 5),
            for_seconds: Some(5),
        };
        assert_eq!(code(both), ErrorCode::InvalidSnooze);
    }

    #[test]
    fn the_newest_snooze_event_decides() {
        let s = |until| Event::QuestionSnoozed {
            question_id: "q".into(),
            until,
            by: "dev-a".into(),
        };
        let off = Event::QuestionUnsnoozed {
            question_id: "q".into(),
            by: "dev-a".into(),
        };
        assert_eq!(current(&[]), None);
        assert_eq!(current(&[s(5), s(3)]).unwrap().until, 3);
        assert_eq!(current(&[s(5), off.clone()]), None);
        assert_eq!(current(&[s(5), off, s(9)]).unwrap().until, 9);
        let snooze = current(&[s(9)]).unwrap();
        assert!(snooze.holds_at(8) && !snooze.holds_at(9));
    }

    #[test]
    fn tomorrow_morning_is_the_next_nine_oclock() {
        let day = 20_000 * DAY_MS;
        assert_eq!(next_morning(day + 8 * HOUR_MS, 0), day + 9 * HOUR_MS);
        assert_eq!(
            next_morning(day + 9 * HOUR_MS, 0),
            day + DAY_MS + 9 * HOUR_MS
        );
        // At UTC-3, 09:00 local is 12:00 UTC.
        assert_eq!(
            next_morning(day + 10 * HOUR_MS, -3 * HOUR_MS),
            day + 12 * HOUR_MS
        );
    }

    #[test]
    fn the_prompt_reads_durations_clock_times_and_dates() {
        // 2026-01-01T12:00:00Z, a Thursday.
        let now = 1_767_268_800_000;
        let day = now - 12 * HOUR_MS;
        let when = |t: &str| parse_when(t, now, 0);
        assert_eq!(when("2h").unwrap(), now + 2 * HOUR_MS);
        assert_eq!(when(" 30m ").unwrap(), now + 30 * MINUTE_MS);
        assert_eq!(when("tomorrow").unwrap(), day + DAY_MS + 9 * HOUR_MS);
        assert_eq!(when("Tomorrow 9:00").unwrap(), day + DAY_MS + 9 * HOUR_MS);
        assert_eq!(
            when("tomorrow 18:30").unwrap(),
            day + DAY_MS + 18 * HOUR_MS + 30 * MINUTE_MS
        );
        assert_eq!(when("18:00").unwrap(), day + 18 * HOUR_MS);
        assert_eq!(
            when("today 13:05").unwrap(),
            day + 13 * HOUR_MS + 5 * MINUTE_MS
        );
        assert_eq!(when("morning").unwrap(), day + DAY_MS + 9 * HOUR_MS);
        assert_eq!(
            when("2026-01-02T08:00:00Z").unwrap(),
            day + DAY_MS + 8 * HOUR_MS
        );
        assert_eq!(when("2026-01-03").unwrap(), day + 2 * DAY_MS);
        // At UTC-3 it is 09:00 local: tomorrow's 09:00 local is 12:00 UTC.
        assert_eq!(
            parse_when("tomorrow", now, -3 * HOUR_MS).unwrap(),
            day + DAY_MS + 12 * HOUR_MS
        );
        let code = |t: &str| when(t).unwrap_err().code();
        assert_eq!(code("11:00"), ErrorCode::SnoozeInPast);
        assert_eq!(code("2025-12-31"), ErrorCode::SnoozeInPast);
        assert_eq!(code("0m"), ErrorCode::SnoozeInPast);
        assert_eq!(code("91d"), ErrorCode::SnoozeTooFar);
        for bad in [
            "",
            "soon",
            "2 h",
            "tomorrow at 9",
            "25:00",
            "9:60",
            "tomorrow 9",
            "2x",
        ] {
            assert_eq!(code(bad), ErrorCode::InvalidSnooze, "{bad}");
        }
        assert_eq!(code("2026-13-01"), ErrorCode::InvalidDate);
    }
}
