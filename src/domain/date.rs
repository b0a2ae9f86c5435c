//! Calendar dates in UTC, both ways: what `oq decisions --since` reads and what its CSV
//! and text print. Pure arithmetic on the proleptic Gregorian calendar (Howard Hinnant's
//! days-from-civil), so oq needs no date crate for two formats.
//!
//! Invariant: a parsed date is a real day of a year in [`MIN_YEAR`]..=[`MAX_YEAR`],
//! `format_utc(parse_utc(t))` gives `t` back for the full form, and
//! `parse_utc(&format_utc_exact(ms)) == ms` for every time in range.

use super::{ErrorCode, OqError};

/// The log's times are Unix milliseconds: nothing before 1970.
pub const MIN_YEAR: i64 = 1970;
/// Far enough for any schedule, near enough that the milliseconds never overflow.
pub const MAX_YEAR: i64 = 9999;

const DAY_MS: i64 = 86_400_000;

/// Days since 1970-01-01 of a (valid) civil date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `YYYY-MM-DD` (midnight UTC) or `YYYY-MM-DDTHH:MM:SS[.mmm]Z`, as Unix milliseconds.
pub fn parse_utc(text: &str) -> Result<i64, OqError> {
    let bad = |why: &str| {
        OqError::invalid(
            ErrorCode::InvalidDate,
            format!(
                "date {text:?}: {why} (expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[.mmm]Z, UTC)"
            ),
        )
    };
    let (date, time) = match text.split_once('T') {
        Some((d, t)) => (d, Some(t.strip_suffix('Z').ok_or_else(|| bad("no Z"))?)),
        None => (text, None),
    };
    let num = |s: &str, len: usize| -> Option<i64> {
        (s.len() == len && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let parts: Vec<&str> = date.split('-').collect();
    let [y, m, d] = parts[..] else {
        return Err(bad("not a date"));
    };
    let (y, m, d) = match (num(y, 4), num(m, 2), num(d, 2)) {
        (Some(y), Some(m), Some(d)) => (y, m, d),
        _ => return Err(bad("not a date")),
    };
    if !(MIN_YEAR..=MAX_YEAR).contains(&y) {
        return Err(bad(&format!("year {y} outside {MIN_YEAR}–{MAX_YEAR}")));
    }
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return Err(bad("no such day"));
    }
    let mut ms = days_from_civil(y, m, d) * DAY_MS;
    if let Some(time) = time {
        let parts: Vec<&str> = time.split(':').collect();
        let [h, mi, s] = parts[..] else {
            return Err(bad("not a time"));
        };
        // Milliseconds, when given, are exactly three digits: what `format_utc` prints.
        let (s, frac) = match s.split_once('.') {
            Some((s, f)) => (s, Some(num(f, 3).ok_or_else(|| bad("not a time"))?)),
            None => (s, None),
        };
        match (num(h, 2), num(mi, 2), num(s, 2)) {
            (Some(h), Some(mi), Some(s)) if h < 24 && mi < 60 && s < 60 => {
                ms += ((h * 60 + mi) * 60 + s) * 1000 + frac.unwrap_or(0);
            }
            _ => return Err(bad("not a time")),
        }
    }
    Ok(ms)
}

/// `YYYY-MM-DDTHH:MM:SSZ` of Unix milliseconds (the seconds truncated), as the text and
/// CSV renderings print a time.
pub fn format_utc(ms: i64) -> String {
    let (days, rest) = (ms.div_euclid(DAY_MS), ms.rem_euclid(DAY_MS) / 1000);
    let (y, m, d) = civil_from_days(days);
    let (h, mi, s) = (rest / 3600, rest / 60 % 60, rest % 60);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// [`format_utc`] with the milliseconds (`…:SS.mmmZ`) when there are any: what a source
/// sends another oq, so a bound such as `--since` crosses HTTP exactly.
pub fn format_utc_exact(ms: i64) -> String {
    let whole = format_utc(ms);
    match ms.rem_euclid(1000) {
        0 => whole,
        frac => format!("{}.{frac:03}Z", &whole[..whole.len() - 1]),
    }
}

/// `Thu 3 Dec 18:00` (UTC, the seconds truncated): a time near enough to need no year,
/// as the TUI names when a snooze ends.
pub fn format_day_time(ms: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (days, rest) = (ms.div_euclid(DAY_MS), ms.rem_euclid(DAY_MS) / 60_000);
    let (_, m, d) = civil_from_days(days);
    // 1970-01-01 was a Thursday.
    let weekday = DAYS[days.rem_euclid(7) as usize];
    let month = MONTHS[(m - 1).clamp(0, 11) as usize];
    format!("{weekday} {d} {month} {:02}:{:02}", rest / 60, rest % 60)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_near_time_is_named_by_its_weekday() {
        assert_eq!(format_day_time(0), "Thu 1 Jan 00:00");
        assert_eq!(
            format_day_time(parse_utc("2026-12-03T18:00:59Z").unwrap()),
            "Thu 3 Dec 18:00"
        );
        assert_eq!(
            format_day_time(parse_utc("2026-01-04T09:05:00Z").unwrap()),
            "Sun 4 Jan 09:05"
        );
    }

    #[test]
    fn dates_and_times_read_as_utc_milliseconds_and_print_back() {
        assert_eq!(parse_utc("1970-01-01").unwrap(), 0);
        assert_eq!(parse_utc("2026-11-03").unwrap(), 1_793_664_000_000);
        let t = "2024-02-29T23:59:58Z";
        assert_eq!(format_utc(parse_utc(t).unwrap()), t);
        assert_eq!(format_utc(1_793_664_000_999), "2026-11-03T00:00:00Z");
        assert_eq!(
            format_utc(parse_utc("9999-12-31").unwrap()),
            "9999-12-31T00:00:00Z"
        );
    }

    #[test]
    fn an_exact_time_keeps_its_milliseconds_both_ways() {
        for ms in [
            0,
            999,
            1_793_664_000_001,
            1_793_664_000_999,
            1_793_664_001_000,
        ] {
            assert_eq!(parse_utc(&format_utc_exact(ms)).unwrap(), ms, "{ms}");
        }
        assert_eq!(
            format_utc_exact(1_793_664_000_042),
            "2026-11-03T00:00:00.042Z"
        );
        assert_eq!(format_utc_exact(1_793_664_000_000), "2026-11-03T00:00:00Z");
    }

    #[test]
    fn a_bad_date_is_refused_by_name() {
        for (text, why) in [
            ("yesterday", "not a date"),
            ("2026-2-03", "not a date"),
            ("2025-02-29", "no such day"),
            ("2026-13-01", "no such day"),
            ("1969-12-31", "year 1969"),
            ("2026-11-03T10:00:00", "no Z"),
            ("2026-11-03T24:00:00Z", "not a time"),
            ("+026-11-03", "not a date"),
            ("2026-11-03T10:00:00.5Z", "not a time"),
            ("2026-11-03T10:00:00.Z", "not a time"),
            ("2026-11-03T10:00:00.1234Z", "not a time"),
        ] {
            let e = parse_utc(text).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidDate, "{text}");
            assert!(e.to_string().contains(why), "{text}: {e}");
            assert!(e.to_string().contains("[.mmm]Z"), "the forms it takes: {e}");
        }
    }
}
