//! The Decisions view (`tui::decisions`): the history's rows on the left (newest
//! decision first: how it ended, the question's start, who decided, how long ago), the
//! selected decision in full on the right — who decided, when (UTC and how long ago),
//! how (`decisionSource`), who asked, what it affects, the question, the suggestion and
//! the answer, wrapped and scrolled (`J`/`K`). Below 70 columns the list sits above the
//! decision.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use crate::domain::DecisionSource;
use crate::domain::date::format_utc;
use crate::tui::model::{Model, age, ago};
use crate::tui::theme::Theme;
use crate::wire::QuestionItem;

/// Who decided, when (Unix ms) and how.
fn decided(q: &QuestionItem) -> (String, i64, String) {
    if let Some(a) = &q.answer {
        let how = a
            .decision_source
            .unwrap_or_else(|| DecisionSource::for_answer(a.aceitou_sugestao));
        return (a.respondida_por.clone(), a.answered_at, how.as_str().into());
    }
    if let Some(c) = &q.closed {
        let how = c
            .decision_source
            .map_or_else(|| c.reason.clone(), |d| d.as_str().into());
        return (c.by.clone(), c.closed_at, how);
    }
    (String::new(), q.created_at, String::new())
}

pub fn draw(frame: &mut Frame<'_>, area: Rect, model: &Model, theme: &Theme, two: bool) {
    let [list, detail] = if two {
        let w = (area.width * 2 / 5).max(30);
        Layout::horizontal([Constraint::Length(w), Constraint::Min(0)]).areas(area)
    } else {
        Layout::vertical([Constraint::Percentage(40), Constraint::Min(0)]).areas(area)
    };
    draw_list(frame, list, model, theme);
    draw_detail(frame, detail, model, theme);
}

fn draw_list(frame: &mut Frame<'_>, area: Rect, model: &Model, theme: &Theme) {
    let d = &model.decisions;
    let loaded = d.items.len() as u64;
    let total = crate::wire::total_text(d.total, d.total_is_lower_bound, loaded);
    let mut title = if loaded < d.total || d.total_is_lower_bound {
        format!("Decisions ({loaded} of {total} loaded)")
    } else {
        format!("Decisions ({total})")
    };
    if !d.filter_text.is_empty() {
        title.push_str(&format!(" · {}", d.filter_text));
    }
    let b = super::queues::block(title, true, theme);
    let inner = b.inner(area);
    frame.render_widget(b, area);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let width = inner.width as usize;
    if let Some(e) = &d.error {
        let p = Paragraph::new(Span::styled(e.clone(), theme.error)).wrap(Wrap { trim: true });
        frame.render_widget(p, inner);
        return;
    }
    if d.items.is_empty() {
        let text = if !d.loaded_once {
            "loading…"
        } else if !d.filter_text.is_empty() {
            "no decision matches the filter"
        } else {
            "no decisions yet: nothing was answered or closed"
        };
        frame.render_widget(
            Paragraph::new(Span::styled(super::clip(text, width), theme.muted)),
            inner,
        );
        return;
    }
    let rows = inner.height as usize;
    let offset = (d.selected + 1).saturating_sub(rows);
    let mut lines = Vec::with_capacity(rows);
    for (pos, q) in d.items.iter().enumerate().skip(offset).take(rows) {
        let selected = pos == d.selected;
        let (by, at, _) = decided(q);
        let glyph = if q.answer.is_some() { '✓' } else { '×' };
        let mark = if selected { '>' } else { glyph };
        let right = format!(" {} {:>3}", super::clip(&by, 9), age(model.now, at));
        let right_w = right.chars().count().min(width.saturating_sub(6));
        let left_w = width.saturating_sub(right_w + 2);
        let text = super::clip(&q.pergunta, left_w);
        let pad = left_w.saturating_sub(text.chars().count());
        let style = if selected {
            theme.selection
        } else {
            Style::new()
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{mark} {text}{}", " ".repeat(pad)), style),
            Span::styled(
                super::clip(&right, right_w),
                if selected { style } else { theme.muted },
            ),
        ]));
    }
    if d.loading_more && lines.len() < rows {
        lines.push(Line::from(Span::styled("  loading more…", theme.muted)));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn field<'a>(label: &'a str, value: String, theme: &Theme) -> Line<'a> {
    Line::from(vec![
        Span::styled(format!("{label:<10} "), theme.muted),
        Span::raw(value),
    ])
}

fn affects(q: &QuestionItem) -> String {
    let a = &q.afeta;
    let kinds = [
        ("task", &a.tarefas),
        ("story", &a.historias),
        ("rule", &a.regras),
    ];
    let all: Vec<String> = kinds
        .iter()
        .flat_map(|(k, ids)| ids.iter().map(move |id| format!("{k} {id}")))
        .collect();
    if all.is_empty() {
        "nothing named".into()
    } else {
        all.join(" · ")
    }
}

fn draw_detail(frame: &mut Frame<'_>, area: Rect, model: &Model, theme: &Theme) {
    let d = &model.decisions;
    let b = super::queues::block("Decision".into(), false, theme);
    let inner = b.inner(area);
    let Some(q) = d.current() else {
        frame.render_widget(b, area);
        return;
    };
    let (by, at, how) = decided(q);
    let mut lines = vec![
        field(
            "decided by",
            format!("{by} · {} ({})", format_utc(at), ago(model.now, at)),
            theme,
        ),
        field("how", how, theme),
        field(
            "asked by",
            format!(
                "{} · session {} ({}) · {}",
                q.autor, q.session_id, q.session_author, q.project_id
            ),
            theme,
        ),
        field("affects", affects(q), theme),
        field("question", q.question_id.clone(), theme),
        Line::raw(""),
    ];
    lines.extend(
        q.pergunta
            .lines()
            .map(|l| Line::styled(l.to_string(), theme.title)),
    );
    if let Some(s) = &q.sugestao {
        lines.push(Line::raw(""));
        lines.push(Line::styled("Suggestion", theme.muted));
        lines.extend(s.lines().map(|l| Line::raw(l.to_string())));
    }
    lines.push(Line::raw(""));
    match (&q.answer, &q.closed) {
        (Some(a), _) => {
            lines.push(Line::styled("Answer", theme.muted));
            lines.extend(
                a.resposta
                    .lines()
                    .map(|l| Line::styled(l.to_string(), theme.accent)),
            );
        }
        (None, Some(c)) => lines.push(Line::styled(
            format!("Closed without an answer ({})", c.reason),
            theme.muted,
        )),
        (None, None) => {}
    }
    let p = Paragraph::new(lines).wrap(Wrap { trim: false });
    let total = p.line_count(inner.width) as u16;
    let scroll = d.scroll.min(total.saturating_sub(inner.height));
    let b = if total > inner.height {
        b.title_bottom(Span::styled(
            format!(" {}/{} J/K ", scroll + 1, total),
            theme.muted,
        ))
    } else {
        b
    };
    frame.render_widget(p.block(b).scroll((scroll, 0)), area);
}
