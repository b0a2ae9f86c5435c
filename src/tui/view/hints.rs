//! The bottom line: the search being typed, else the last notice, else the keys that
//! apply now (the focused pane, the selected question), read from the one table of keys
//! with their live bindings.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::keymap::table::{Place, TABLE, When};
use crate::tui::model::{Focus, Model, NoticeKind};
use crate::tui::theme::Theme;

pub fn draw(frame: &mut Frame<'_>, area: Rect, model: &Model, theme: &Theme) {
    if area.height == 0 {
        return;
    }
    let width = area.width as usize;
    if let Some(text) = model
        .decisions
        .editing
        .as_ref()
        .filter(|_| model.decisions.open)
    {
        let mut spans = vec![
            Span::styled(" filter ", theme.key_hint),
            Span::raw(super::clip(text, width.saturating_sub(9))),
            Span::styled("▏", theme.focus),
        ];
        // A refused filter stays on the line to be fixed: its reason beside it.
        if let Some(n) = model
            .notice
            .as_ref()
            .filter(|n| n.kind == NoticeKind::Error)
        {
            spans.push(Span::styled(format!("  {}", n.text), theme.error));
        }
        frame.render_widget(Paragraph::new(Line::from(spans)), area);
        return;
    }
    if model.focus == Focus::Search {
        let line = Line::from(vec![
            Span::styled(" / ", theme.key_hint),
            Span::raw(super::clip(&model.search, width.saturating_sub(4))),
            Span::styled("▏", theme.focus),
        ]);
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    if let Some(n) = &model.notice {
        let style = if n.kind == NoticeKind::Error {
            theme.error
        } else {
            theme.notice
        };
        frame.render_widget(
            Paragraph::new(Span::styled(
                super::clip(&format!(" {}", n.text), width),
                style,
            )),
            area,
        );
        return;
    }
    let pairs = pairs(model);
    let mut spans = vec![Span::raw(" ")];
    let mut used = 1;
    for (keys, label) in pairs {
        let w = keys.chars().count() + label.chars().count() + 3;
        if keys.is_empty() || used + w > width {
            continue;
        }
        used += w;
        spans.push(Span::styled(keys, theme.key_hint));
        spans.push(Span::styled(format!(" {label}  "), theme.muted));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The hints of [`TABLE`] that apply now, each with the first of its live keys; rows
/// in a row with the same word share it ("j/k move").
fn pairs(model: &Model) -> Vec<(String, &'static str)> {
    let (home, now) = match model.focus {
        Focus::Answer => (Place::Field, vec![When::Field]),
        Focus::Choices => (Place::Options, vec![When::Options]),
        _ if model.decisions.open => (Place::Normal, vec![When::Decisions]),
        _ => {
            let q = model
                .current()
                .filter(|q| q.status == "open" && q.can_answer);
            let mut now = vec![When::Panes];
            // The snoozed list's own keys take the accept hint's room.
            let snoozed = model.snooze.show && model.filter == crate::engine::StatusFilter::Open;
            if snoozed {
                now.push(When::Snoozed);
            }
            if q.is_some() {
                now.push(When::Answerable);
            }
            // With marks, the accept key is the marked ones' (`triage`).
            if !model.triage.marks.is_empty() {
                now.push(When::Marked);
            } else if !snoozed && q.is_some_and(|q| q.sugestao.is_some() && q.prompts.is_empty()) {
                now.push(When::Acceptable);
            }
            (Place::Normal, now)
        }
    };
    // The place's own keys first (an options form's pick and next before the moves).
    let rows = TABLE
        .iter()
        .filter(|r| r.place == home)
        .chain(TABLE.iter().filter(|r| r.place != home));
    let mut pairs: Vec<(String, &'static str)> = Vec::new();
    for row in rows {
        for (when, label) in row.hints {
            if !now.contains(when) {
                continue;
            }
            let Some(key) = model
                .keymap
                .keys_in(row.place, row.action)
                .into_iter()
                .next()
            else {
                continue;
            };
            match pairs.last_mut() {
                Some((keys, l)) if l == label => {
                    keys.push('/');
                    keys.push_str(&key);
                }
                _ => pairs.push((key, label)),
            }
        }
    }
    pairs
}
