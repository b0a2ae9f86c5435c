//! Human text for the script doors. `--json` output is in `crate::wire`, not here.

use crate::wire::{QuestionItem, QuestionList, TaskItem, WaitingItem};

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

fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        flat.chars().take(max.saturating_sub(1)).collect::<String>() + "…"
    }
}

pub fn question_list(list: &QuestionList, now_ms: i64) -> String {
    if list.items.is_empty() {
        return format!("no questions ({} in all)\n", list.total);
    }
    let mut out = String::new();
    for q in &list.items {
        let mark = if q.status == "open" {
            if q.can_answer { "●" } else { "○" }
        } else {
            "✓"
        };
        out.push_str(&format!(
            "{mark} {:<16} {:<10} {:<9} {:>4}  {}\n",
            q.question_id,
            one_line(&q.project_id, 10),
            q.autor,
            age(now_ms, q.created_at),
            one_line(&q.pergunta, 60)
        ));
    }
    out.push_str(&format!("{} of {}", list.items.len(), list.total));
    if let Some(c) = &list.cursor {
        out.push_str(&format!(" · next page: --cursor {c}"));
    }
    out.push('\n');
    out
}

pub fn question(q: &QuestionItem, now_ms: i64) -> String {
    let mut out = format!(
        "{}  [{}]  {}\n\n{}\n\n",
        q.question_id, q.status, q.project_id, q.pergunta
    );
    out.push_str(&format!(
        "asked by  {} · session {} ({}) · {} ago\n",
        q.autor,
        q.session_id,
        q.session_author,
        age(now_ms, q.created_at)
    ));
    let affects = q.afeta.describe();
    out.push_str(&format!("affects   {affects}\n"));
    if let Some(s) = &q.sugestao {
        out.push_str(&format!("suggests  {s}\n"));
    }
    match &q.answer {
        Some(a) => out.push_str(&format!(
            "answered  by {} {} ago{}\n          {}\n",
            a.respondida_por,
            age(now_ms, a.answered_at),
            if a.aceitou_sugestao {
                " (accepted the suggestion)"
            } else {
                ""
            },
            a.resposta
        )),
        None if q.can_answer && q.sugestao.is_some() => out.push_str(&format!(
            "you can answer: oq answer {} --text \"…\" (or --accept)\n",
            q.question_id
        )),
        None if q.can_answer => out.push_str(&format!(
            "you can answer: oq answer {} --text \"…\"\n",
            q.question_id
        )),
        None => out.push_str(&format!(
            "you cannot answer: {}\n",
            q.reason.as_deref().unwrap_or("")
        )),
    }
    out
}

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
