//! The top line: where oq is looking, and the link — source, live / reconnecting /
//! offline since when, outbox count, the user.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::link::Fault;
use crate::tui::model::{Connection, Model, ago};
use crate::tui::theme::Theme;

pub fn link(model: &Model) -> String {
    // A cause other than plain unreachability is named, never "offline" (`tui::link`).
    if let Some(l) = model
        .link_fault
        .as_ref()
        .filter(|l| l.fault != Fault::Unreachable)
        && let Connection::Reconnecting { since } | Connection::Offline { since } = model.connection
    {
        return format!("{} since {}", l.fault.words(), ago(model.now, since));
    }
    match model.connection {
        Connection::Connecting => "connecting".into(),
        Connection::Live { .. } => "live".into(),
        Connection::Reconnecting { since } => {
            format!("reconnecting since {}", ago(model.now, since))
        }
        Connection::Offline { since } => format!("offline since {}", ago(model.now, since)),
    }
}

pub fn draw(frame: &mut Frame<'_>, area: Rect, model: &Model, theme: &Theme) {
    let scope = model.project.as_deref().unwrap_or("all projects");
    let left = format!(" oq · {scope}");
    let right = format!(
        "{} · {} · {} · outbox {} ",
        model.source,
        link(model),
        model.user,
        crate::tui::outbox::pending(model)
    );
    let width = area.width as usize;
    let (l, r) = (left.chars().count(), right.chars().count());
    let line = if l + r < width {
        Line::from(vec![
            Span::raw(left),
            Span::raw(" ".repeat(width - l - r)),
            Span::raw(right),
        ])
    } else {
        Line::from(super::clip(&format!("{left} · {right}"), width))
    };
    frame.render_widget(Paragraph::new(line).style(theme.status), area);
}
