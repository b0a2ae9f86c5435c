//! The top line: where oq is looking, and the link — source, live / reconnecting /
//! offline since when, a disconnected OpenCode upstream and since when (UTC, the
//! server's clock), outbox count, the user.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::link::Fault;
use crate::tui::model::{Connection, Model, ago};
use crate::tui::theme::Theme;

/// The link, and after it each upstream the server's bridge has lost: "live · OpenCode
/// laptop unreachable since 12:03 UTC".
pub fn link(model: &Model) -> String {
    let mut words = connection(model);
    for (name, since) in crate::tui::auto::unreachable(model).unwrap_or_default() {
        words.push_str(&if since > 0 {
            let hm = &crate::domain::date::format_utc(since)[11..16];
            format!(" · OpenCode {name} unreachable since {hm} UTC")
        } else {
            format!(" · OpenCode {name} not connected yet")
        });
    }
    words
}

fn connection(model: &Model) -> String {
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
