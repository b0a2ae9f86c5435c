//! Human text for the script doors. `--json` output is in `crate::wire`, not here.

mod question;

pub use question::{question, question_list};

use crate::wire::{TaskItem, WaitingItem};

/// "42s", "5m", "3h", "2d": how long ago `then_ms` was.
pub fn age(now_ms: i64, then_ms: i64) -> String {
    let s = (now_ms - then_ms).max(0) / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3_599 => format!("{}m", s / 60),
        3_600..=86_399 => format!("{}h", s / 3_600),
        _ => format!("{}d", s / 86_400),
    }
}

pub(super) use crate::domain::text::one_line;

pub fn task(t: &TaskItem) -> String {
    let mut out = format!(
        "{}  {}  [{}]\nstory {} · session {}\ngate  {} · corrections {}/{}",
        t.task_id,
        t.title,
        t.state,
        t.story_id,
        t.session_id,
        t.gate.state,
        t.gate.corrections,
        t.gate.ceiling
    );
    if let Some(q) = &t.gate.parked_on {
        out.push_str(&format!(" · parked on {q}"));
    }
    out.push('\n');
    out
}

pub fn waiting(items: &[WaitingItem], now_ms: i64) -> String {
    if items.is_empty() {
        return "nothing is waiting for you\n".into();
    }
    let mut out = format!("Waiting for you ({})\n", items.len());
    for w in items {
        out.push_str(&format!(
            "  {:<12} {:<40} parked {} · answer {}\n",
            w.task.task_id,
            one_line(&w.task.title, 40),
            age(now_ms, w.parked_at),
            w.question_id
        ));
    }
    out
}
