//! The snooze prompt (`tui::snooze`): a small box in the middle naming the question,
//! the time being typed, the forms it takes, and why the last Enter was refused; the
//! keys on its bottom border. Drawn over the panes; a confirmation over it takes its
//! place on screen (the prompt comes back if it is cancelled).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::tui::model::Model;
use crate::tui::screens::snooze::SnoozePrompt;
use crate::tui::theme::Theme;

pub fn draw(frame: &mut Frame<'_>, area: Rect, model: &Model, p: &SnoozePrompt, theme: &Theme) {
    // The question's first line, within the box (`modal::centred`: 64 wide at most).
    let inner_w = usize::from(area.width.saturating_sub(6).min(62));
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
            "30m · 2h · 1d · tomorrow 9:00 · 18:30 · 2026-12-04 (UTC)",
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
    let title = format!("Snooze {} — not now", p.question_id);
    super::modal::centred(frame, area, title, lines, keys, theme);
}
