//! The outbox overlay (the `outbox` key): this source's answers kept while it could not
//! be reached, newest first — the question, where each stands (queued, uncertain,
//! delivered, conflict with the other answer beside it, refused with the reason) and the
//! kept text. Any key closes it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use crate::source::outbox::State;
use crate::tui::model::{Model, ago};
use crate::tui::outbox::{kept_text, state_words};
use crate::tui::theme::Theme;

pub fn draw(frame: &mut Frame<'_>, area: Rect, model: &Model, theme: &Theme) {
    let w = area.width.saturating_sub(4).min(90);
    let h = area.height.saturating_sub(2);
    if w < 10 || h < 3 {
        return;
    }
    let inner_w = usize::from(w - 2);
    let mut lines: Vec<Line<'_>> = Vec::new();
    if model.outbox.is_empty() {
        lines.push(Line::styled(
            "the outbox is empty: every answer reached the source",
            theme.muted,
        ));
    }
    for e in model.outbox.iter().rev() {
        let style = match e.state {
            State::Conflict | State::Refused => theme.error,
            State::Delivered => theme.muted,
            State::Pending | State::Uncertain => theme.accent,
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{} ", e.question_id), theme.title),
            Span::styled(
                format!("· {} · ", ago(model.now, e.created_at)),
                theme.muted,
            ),
            Span::styled(state_words(e), style),
        ]));
        lines.push(Line::raw(format!(
            "  yours: «{}»",
            super::clip(&kept_text(e), inner_w.saturating_sub(11))
        )));
        if e.state == State::Conflict
            && let Some(other) = model.settled_elsewhere.get(&e.question_id)
        {
            lines.push(Line::styled(
                format!(
                    "  theirs: {}",
                    super::clip(other, inner_w.saturating_sub(10))
                ),
                theme.muted,
            ));
        }
    }
    let rect = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + 1,
        width: w,
        height: h,
    };
    frame.render_widget(Clear, rect);
    let pending = crate::tui::outbox::pending(model);
    let title = format!("Outbox — {pending} not delivered yet · any key closes");
    let block = super::queues::block(title, true, theme);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block),
        rect,
    );
}
