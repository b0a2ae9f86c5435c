//! The modal notice over the screen (`tui::modal`): a box in the middle with its title,
//! what happened in words, and the keys that close it on its bottom border. Drawn last,
//! over everything.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use crate::tui::keymap::Keymap;
use crate::tui::modal::Modal;
use crate::tui::theme::Theme;

pub fn draw(frame: &mut Frame<'_>, area: Rect, modal: &Modal, km: &Keymap, theme: &Theme) {
    let mut lines: Vec<Line<'_>> = Vec::new();
    for (i, text) in modal.lines().into_iter().enumerate() {
        if i > 0 {
            lines.push(Line::raw(""));
        }
        lines.push(Line::raw(text));
    }
    // The closing keys sit on the bottom border: a long text never pushes them out.
    let mut keys = vec![Span::raw(" ")];
    for (i, (k, what)) in modal.keys(km).into_iter().enumerate() {
        if i > 0 {
            keys.push(Span::styled(" · ", theme.muted));
        }
        keys.push(Span::styled(k, theme.key_hint));
        keys.push(Span::styled(format!(" {what}"), theme.muted));
    }
    keys.push(Span::raw(" "));
    centred(
        frame,
        area,
        modal.title().into(),
        lines,
        Line::from(keys),
        theme,
    );
}

/// A box in the middle of `area`, at most 64 wide and as tall as its wrapped `lines`,
/// titled, with `keys` on its bottom border: the modal's and the snooze prompt's.
pub(super) fn centred(
    frame: &mut Frame<'_>,
    area: Rect,
    title: String,
    lines: Vec<Line<'_>>,
    keys: Line<'_>,
    theme: &Theme,
) {
    let w = area.width.saturating_sub(4).min(64);
    if w < 3 || area.height < 3 {
        return;
    }
    let inner_w = usize::from(w.saturating_sub(2)).max(1);
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
    let block = super::queues::block(title, true, theme).title_bottom(keys);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block),
        rect,
    );
}
