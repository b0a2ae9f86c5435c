//! The snooze prompt (`tui::snooze`): a small box in the middle naming the question,
//! the time being typed, the forms it takes, and why the last Enter was refused; the
//! keys on its bottom border. Drawn over the panes, under a confirmation.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use crate::tui::model::Model;
use crate::tui::screens::snooze::SnoozePrompt;
use crate::tui::theme::Theme;

pub fn draw(frame: &mut Frame<'_>, area: Rect, model: &Model, p: &SnoozePrompt, theme: &Theme) {
    let w = area.width.saturating_sub(4).min(64);
    if w < 3 || area.height < 3 {
        return;
    }
    let inner_w = usize::from(w.saturating_sub(2)).max(1);
    let asked = model
        .queue
        .items
        .iter()
        .find(|q| q.question_id == p.question_id)
        .map_or_else(String::new, |q| q.pergunta.clone());
    let mut lines = vec![
        Line::raw(super::clip(&asked, inner_w)),
        Line::raw(""),
        Line::from(vec![
            Span::styled("Back at: ", theme.muted),
            Span::raw(p.text.clone()),
            Span::styled("▏", theme.focus),
        ]),
        Line::styled(
            "30m · 2h · 1d · tomorrow · tomorrow 9:00 · 18:30 · 2026-12-04 (UTC)",
            theme.muted,
        ),
    ];
    if let Some(why) = &p.refused {
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            format!("refused, nothing recorded: {why}"),
            theme.error,
        ));
    }
    let keys = Line::from(vec![
        Span::raw(" "),
        Span::styled("Enter", theme.key_hint),
        Span::styled(" snoozes (asks first) · ", theme.muted),
        Span::styled("Esc", theme.key_hint),
        Span::styled(" cancels ", theme.muted),
    ]);
    let rows: usize = lines
        .iter()
        .map(|l| l.width().div_ceil(inner_w).max(1))
        .sum();
    let h = (rows as u16 + 2).min(area.height);
    let rect = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    frame.render_widget(Clear, rect);
    let title = format!("Snooze {} — not now", p.question_id);
    let block = super::queues::block(title, true, theme).title_bottom(keys);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block),
        rect,
    );
}
