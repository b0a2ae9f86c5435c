//! The help overlay (`tui::help`): the rows of the one table of keys that the filter
//! keeps, with the live keys, one column, scrolled so the rows past the box are reached;
//! the filter and the position on its bottom border.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::tui::help::{Help, HelpLine};
use crate::tui::model::Model;
use crate::tui::theme::Theme;

pub fn draw(frame: &mut Frame<'_>, area: Rect, model: &Model, help: &Help, theme: &Theme) {
    let found = help.lines(&model.keymap);
    let key_w = found
        .iter()
        .filter_map(|l| match l {
            HelpLine::Row(k, _) => Some(k.chars().count()),
            HelpLine::Section(_) => None,
        })
        .max()
        .unwrap_or(4)
        .min(16);
    let mut lines: Vec<Line<'_>> = found
        .iter()
        .map(|l| match l {
            HelpLine::Section(title) => Line::styled(format!(" {title}"), theme.title),
            HelpLine::Row(keys, words) => Line::from(vec![
                Span::styled(format!(" {keys:<key_w$} "), theme.key_hint),
                Span::raw(*words),
            ]),
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::styled(
            format!(" no key matches «{}»", help.filter),
            theme.muted,
        ));
    }
    let w = area.width.saturating_sub(4).min(76);
    let h = (lines.len() as u16 + 2)
        .min(area.height.saturating_sub(2))
        .max(area.height.min(3));
    if w < 3 || h < 3 {
        return;
    }
    let rect = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    let rows = usize::from(h - 2);
    let top = usize::from(help.scroll).min(lines.len().saturating_sub(rows));
    let shown = lines.len().min(top + rows);
    let mut bottom = vec![Span::raw(" ")];
    if help.filter.is_empty() {
        bottom.push(Span::styled("type to filter", theme.muted));
    } else {
        bottom.push(Span::styled("filter: ", theme.muted));
        bottom.push(Span::styled(help.filter.clone(), theme.key_hint));
        bottom.push(Span::styled("▏", theme.focus));
    }
    if lines.len() > rows {
        bottom.push(Span::styled(
            format!(" · {}–{shown} of {} ↑↓", top + 1, lines.len()),
            theme.muted,
        ));
    }
    bottom.push(Span::raw(" "));
    frame.render_widget(Clear, rect);
    let block = super::queues::block("Keys — Esc, q or ? closes".into(), true, theme)
        .title_bottom(Line::from(bottom));
    frame.render_widget(
        Paragraph::new(lines).scroll((top as u16, 0)).block(block),
        rect,
    );
}
