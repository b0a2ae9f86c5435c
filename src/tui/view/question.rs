//! The selected question in full: the text (wrapped, scrollable), who asked (agent, the
//! agent's door when it is `mcp` or `claude-code`, session, session author; the working
//! directory Claude Code asked in), the project and age, what it affects, the suggestion,
//! the earlier answer it resembles with its copy key (`tui::memory`), where an answer of
//! ours stands in the outbox (`tui::outbox`), the answered record
//! with its whole text (scrolled in full, the position on the border); and
//! for a bridged OpenCode question, its auto-answer on the pane's last row (not scrolled
//! away): the countdown and the pause / delegate keys, inert for anyone but the author.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::form::first;
use crate::domain::text::one_line as clip;
use crate::tui::auto::{AutoLine, line as auto_line};
use crate::tui::keymap::Action;
use crate::tui::model::{Focus, Model, ago};
use crate::tui::theme::Theme;

fn field<'a>(label: &'a str, value: String, theme: &Theme) -> Line<'a> {
    Line::from(vec![
        Span::styled(format!("{label:<9} "), theme.muted),
        Span::raw(value),
    ])
}

pub fn draw(frame: &mut Frame<'_>, area: Rect, model: &Model, theme: &Theme) {
    let b = super::queues::block("Question".into(), model.focus == Focus::Question, theme);
    let inner = b.inner(area);
    frame.render_widget(b, area);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let Some(q) = model.current() else {
        let text = if model.queue.loaded_once {
            "no question selected"
        } else {
            "loading…"
        };
        frame.render_widget(Paragraph::new(Span::styled(text, theme.muted)), inner);
        return;
    };
    let auto = auto_line(model, q);
    let inner = match &auto {
        Some(a) if inner.height >= 3 => {
            let line = auto_spans(a, q.can_answer, theme);
            let rows = (line.width().div_ceil(usize::from(inner.width)) as u16)
                .clamp(1, (inner.height / 3).max(1));
            let [text, last] =
                Layout::vertical([Constraint::Min(0), Constraint::Length(rows)]).areas(inner);
            frame.render_widget(Paragraph::new(line).wrap(Wrap { trim: true }), last);
            text
        }
        _ => inner,
    };
    let mut lines: Vec<Line> = q
        .pergunta
        .lines()
        .map(|l| Line::styled(l.to_string(), theme.title))
        .collect();
    lines.push(Line::raw(""));
    if q.orphaned && q.status == "open" {
        lines.push(Line::styled(
            format!(
                "orphaned: its session was aborted upstream, nothing waits for this answer \
                 — dismiss it ({})",
                first(model.keymap.keys_for(Action::Dismiss))
            ),
            theme.error,
        ));
    }
    if q.handed_off && q.status == "open" {
        lines.push(Line::styled(
            format!(
                "{}: Claude Code's hook stopped waiting, an answer here would reach nobody",
                crate::domain::claude_code::HANDED_OFF
            ),
            theme.error,
        ));
    }
    // An agent's own door says which: `oq mcp` or Claude Code's hook.
    let via = match q.source.as_str() {
        s @ ("mcp" | "claude-code") => format!(" via {s}"),
        _ => String::new(),
    };
    lines.push(field(
        "asked by",
        format!(
            "{}{via} · session {} ({})",
            q.autor, q.session_id, q.session_author
        ),
        theme,
    ));
    if let Some(up) = q.upstream.as_ref().filter(|u| u.kind == "claude-code") {
        lines.push(field("in", up.directory.clone(), theme));
    }
    lines.push(field(
        "project",
        format!(
            "{} · {} · {}",
            q.project_id,
            ago(model.now, q.created_at),
            q.question_id
        ),
        theme,
    ));
    let a = &q.afeta;
    let mut parts = Vec::new();
    for (noun, ids) in [
        ("rules", &a.regras),
        ("stories", &a.historias),
        ("tasks", &a.tarefas),
    ] {
        if !ids.is_empty() {
            parts.push(format!("{noun} {}", ids.join(", ")));
        }
    }
    let affects = if parts.is_empty() {
        "nothing named".to_string()
    } else {
        parts.join(" · ")
    };
    lines.push(field("affects", affects, theme));
    match &q.sugestao {
        Some(s) => lines.push(field("suggests", s.clone(), theme)),
        None => lines.push(Line::from(vec![
            Span::styled(format!("{:<9} ", "suggests"), theme.muted),
            Span::styled("no suggestion", theme.muted),
        ])),
    }
    if let Some(s) = q
        .snooze
        .as_ref()
        .filter(|s| q.status == "open" && s.holds_at(model.now))
    {
        lines.push(field(
            "snoozed",
            format!(
                "until {} UTC (back in {}) — {} wakes it now",
                crate::domain::date::format_day_time(s.until),
                crate::tui::model::age(s.until, model.now),
                first(model.keymap.keys_for(Action::Unsnooze))
            ),
            theme,
        ));
    }
    if let Some(s) = model.memory.for_question(&q.question_id) {
        // The memory of answers: shown with its key, copied only by it, never sent.
        lines.push(Line::from(vec![
            Span::styled(format!("{:<9} ", "similar"), theme.muted),
            Span::styled(
                format!(
                    "{}: «{}»",
                    s.lead(Some(&model.user), model.now),
                    clip(&s.resposta, 160)
                ),
                theme.accent,
            ),
            Span::styled(" — ", theme.muted),
            Span::styled(
                first(model.keymap.keys_for(Action::CopySimilar)),
                theme.key_hint,
            ),
            Span::styled(" copies it to edit", theme.muted),
        ]));
        lines.push(field("", format!("to «{}»", clip(&s.pergunta, 100)), theme));
    }
    if let Some(e) = crate::tui::outbox::latest(model, &q.question_id)
        .filter(|e| e.state != crate::source::outbox::State::Delivered)
    {
        let style = if crate::tui::outbox::waiting(e) {
            theme.accent
        } else {
            theme.error
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{:<9} ", "outbox"), theme.muted),
            Span::styled(crate::tui::outbox::state_words(e), style),
            Span::raw(format!(" · yours: «{}»", crate::tui::outbox::kept_text(e))),
        ]));
    }
    for (i, p) in q.prompts.iter().enumerate() {
        lines.push(Line::raw(""));
        let kind = if p.multiple { "pick any" } else { "pick one" };
        lines.push(Line::from(vec![
            Span::styled(format!("{}. {} ", i + 1, p.header), theme.accent),
            Span::raw(format!("{} ({kind})", p.question)),
        ]));
    }
    if let Some(a) = &q.answer {
        let how = if a.aceitou_sugestao {
            "accepted the suggestion"
        } else {
            "own answer"
        };
        lines.push(Line::raw(""));
        lines.push(Line::from(vec![
            Span::styled("✓ answered by ", theme.muted),
            Span::styled(a.respondida_por.clone(), theme.title),
            Span::styled(
                format!(" · {} · {how}", ago(model.now, a.answered_at)),
                theme.muted,
            ),
        ]));
        lines.extend(a.resposta.lines().map(|l| Line::raw(l.to_string())));
    }
    // Scrolled in full: never past the last row, and the position on the border when
    // there is more than fits.
    let para = Paragraph::new(lines).wrap(Wrap { trim: false });
    let total = u16::try_from(para.line_count(inner.width)).unwrap_or(u16::MAX);
    let top = model.detail_scroll.min(total.saturating_sub(inner.height));
    frame.render_widget(para.scroll((top, 0)), inner);
    if total > inner.height && area.height >= 2 && area.width > 4 {
        let km = &model.keymap;
        let at = format!(
            " {}/{} {}–{} of {} ",
            first(km.keys_for(Action::ScrollDown)),
            first(km.keys_for(Action::ScrollUp)),
            top + 1,
            (top + inner.height).min(total),
            total
        );
        let border = Rect {
            x: area.x + 2,
            y: area.y + area.height - 1,
            width: area.width - 4,
            height: 1,
        };
        frame.render_widget(
            Paragraph::new(Line::styled(at, theme.muted).right_aligned()),
            border,
        );
    }
}

/// "⏱ auto-answers in 23 s — p pause · d delegate now"; the keys in the key style for the
/// author, inert for anyone else.
fn auto_spans<'a>(a: &AutoLine, live: bool, theme: &Theme) -> Line<'a> {
    let text_style = if a.counting {
        theme.accent
    } else {
        theme.muted
    };
    let mut spans = vec![Span::styled(format!("⏱ {}", a.text), text_style)];
    for (i, (keys, label)) in a.keys.iter().enumerate() {
        spans.push(Span::styled(
            if i == 0 { " — " } else { " · " },
            theme.muted,
        ));
        let (k, l) = if live {
            (theme.key_hint, theme.muted)
        } else {
            (theme.inert, theme.inert)
        };
        spans.push(Span::styled(keys.clone(), k));
        spans.push(Span::styled(format!(" {label}"), l));
    }
    Line::from(spans)
}
