//! The help overlay: every row of the one table of keys (the panes, then the answer
//! field, then an options form) with its live keys, so it always shows the user's real
//! keys. Any key closes it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::tui::keymap::table::Place;
use crate::tui::model::Model;
use crate::tui::theme::Theme;

pub fn draw(frame: &mut Frame<'_>, area: Rect, model: &Model, theme: &Theme) {
    let rows = model.keymap.help_rows();
    let key_w = rows
        .iter()
        .map(|(_, k, _)| k.chars().count())
        .max()
        .unwrap_or(4)
        .min(16);
    let mut lines = Vec::new();
    let mut place = Place::Normal;
    for (p, keys, describe) in &rows {
        if *p != place {
            place = *p;
            let title = match p {
                Place::Field => " In the answer field",
                Place::Options => " In an options form",
                Place::Normal => "",
            };
            lines.push(Line::styled(title, theme.title));
        }
        lines.push(Line::from(vec![
            Span::styled(format!(" {keys:<key_w$} "), theme.key_hint),
            Span::raw(*describe),
        ]));
    }
    let w = (area.width.saturating_sub(4)).min(if lines.len() + 2 > area.height as usize {
        110
    } else {
        72
    });
    let two_columns = lines.len() + 2 > area.height.saturating_sub(2) as usize && w >= 60;
    let rows = if two_columns {
        lines.len().div_ceil(2)
    } else {
        lines.len()
    };
    let h = (rows as u16 + 2)
        .min(area.height.saturating_sub(2))
        .max(area.height.min(3));
    let rect = Rect {
        x: area.x + (area.width.saturating_sub(w)) / 2,
        y: area.y + (area.height.saturating_sub(h)) / 2,
        width: w,
        height: h,
    };
    frame.render_widget(Clear, rect);
    let block = super::queues::block("Keys — any key closes".into(), true, theme);
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    if two_columns {
        let right = lines.split_off(rows);
        let [a, b] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)])
            .areas(inner);
        frame.render_widget(Paragraph::new(lines), a);
        frame.render_widget(Paragraph::new(right), b);
    } else {
        frame.render_widget(Paragraph::new(lines), inner);
    }
}
