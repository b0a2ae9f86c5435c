//! Words for times and texts that several panes and notices share: "5m ago", a text
//! clipped to one line. A leaf: it knows no other module of the TUI.

/// "just now", "5m ago": for sentences.
pub fn ago(now: i64, then: i64) -> String {
    match age(now, then).as_str() {
        "now" => "just now".into(),
        a => format!("{a} ago"),
    }
}

/// "now", "5m", "3h", "2d": compact ages for rows.
pub fn age(now: i64, then: i64) -> String {
    let s = (now - then).max(0) / 1000;
    match s {
        0..=59 => "now".into(),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// `s` on one line (whitespace runs as one space), at most `n` characters with `…`.
pub fn clip(s: &str, n: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= n {
        one
    } else {
        format!("{}…", one.chars().take(n - 1).collect::<String>())
    }
}
