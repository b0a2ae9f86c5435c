//! The readiness banner: "N questions are still open — answer (o)" while N > 0, beside
//! the readiness actions ("I'm ready", "Confirm architecture ready") and their keys.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::keymap::Action;
use crate::tui::model::Model;
use crate::tui::theme::Theme;

pub fn draw(frame: &mut Frame<'_>, area: Rect, model: &Model, theme: &Theme) {
    if area.height == 0 {
        return;
    }
    let km = &model.keymap;
    let mut spans = Vec::new();
    if let Some(n) = model.open_count.filter(|n| *n > 0) {
        let noun = if n == 1 {
            "question is"
        } else {
            "questions are"
        };
        spans.push(Span::styled(
            format!(
                " ! {n} {noun} still open — answer ({}) ",
                km.keys_for(Action::JumpToQueue)
            ),
            theme.banner,
        ));
        spans.push(Span::raw("  "));
    } else {
        spans.push(Span::raw(" "));
    }
    for (i, (action, label)) in [
        (Action::ImReady, "I'm ready"),
        (Action::ArchitectureReady, "Confirm architecture ready"),
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            spans.push(Span::styled(" · ", theme.muted));
        }
        spans.push(Span::styled(km.keys_for(action), theme.key_hint));
        spans.push(Span::styled(format!(" {label}"), theme.muted));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}
