//! The screen as a function of the model: `draw(frame, model, theme)`.
//!
//! One file per pane: `status` (top line), `banner` (readiness), `queues` (open
//! questions and "Waiting for you"), `question` (the question in full), `form` (the
//! answer controls, inert for a non-author, the answered record, the options form),
//! `hints` (the bottom line), `help` and `outbox` (overlays), `snooze` (the snooze
//! prompt) and `modal` (a notice that takes every key). Nothing here changes the model;
//! sizes down to 1×1 are drawn without panicking, and below 70 columns one column shows
//! either the queues or the question, following the focus.

mod banner;
mod decisions;
mod form;
mod help;
mod hints;
mod modal;
mod outbox;
mod question;
mod queues;
mod snooze;
mod status;
mod triage;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

use super::model::{Focus, Model};
use super::theme::Theme;

/// Narrower than this, one column at a time.
const TWO_COLUMNS: u16 = 70;

pub fn draw(frame: &mut Frame<'_>, model: &Model, theme: &Theme) {
    let area = frame.area();
    if area.width == 0 || area.height == 0 {
        return;
    }
    let [top, banner_area, body, bottom] = rows(area);
    status::draw(frame, top, model, theme);
    banner::draw(frame, banner_area, model, theme);
    hints::draw(frame, bottom, model, theme);
    if model.decisions.open {
        decisions::draw(frame, body, model, theme, area.width >= TWO_COLUMNS);
    } else if area.width >= TWO_COLUMNS {
        let [left, right] = columns(body);
        queues::draw(frame, left, model, theme);
        detail(frame, right, model, theme);
    } else if matches!(model.focus, Focus::Queue | Focus::Waiting | Focus::Search) {
        queues::draw(frame, body, model, theme);
    } else {
        detail(frame, body, model, theme);
    }
    if let Some(h) = &model.help {
        help::draw(frame, area, model, h, theme);
    }
    if model.show_outbox {
        outbox::draw(frame, area, model, theme);
    }
    if let Some(s) = &model.triage.screen {
        triage::draw(frame, area, model, s, theme);
    }
    if let Some(p) = model
        .snooze
        .prompt
        .as_ref()
        .filter(|_| model.modal.is_none())
    {
        snooze::draw(frame, area, model, p, theme);
    }
    if let Some(m) = &model.modal {
        modal::draw(frame, area, m, &model.keymap, theme);
    }
}

/// The status line, the banner, the body and the hint bar.
fn rows(area: Rect) -> [Rect; 4] {
    let banner_rows = u16::from(area.height >= 8);
    let hint_rows = u16::from(area.height >= 4);
    Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(banner_rows),
        Constraint::Min(0),
        Constraint::Length(hint_rows),
    ])
    .areas(area)
}

/// The queues on the left, the question on the right.
fn columns(body: Rect) -> [Rect; 2] {
    let left_width = (body.width * 2 / 5).max(30);
    Layout::horizontal([Constraint::Length(left_width), Constraint::Min(0)]).areas(body)
}

/// How many question rows the queue pane shows on the last frame's screen
/// (`model.screen`): PgDn/PgUp's step.
pub fn queue_rows(model: &Model) -> usize {
    let (width, height) = model.screen;
    let [_, _, body, _] = rows(Rect::new(0, 0, width, height));
    let pane = if width >= TWO_COLUMNS {
        columns(body)[0]
    } else {
        body
    };
    queues::open_rows(pane, model)
}

/// The question in full above its form.
fn detail(frame: &mut Frame<'_>, area: Rect, model: &Model, theme: &Theme) {
    let wanted = form::height(model, area.width);
    let form_rows = if area.height >= wanted + 5 {
        wanted
    } else {
        area.height.saturating_sub(4).min(wanted)
    };
    let [q, f] = Layout::vertical([Constraint::Min(0), Constraint::Length(form_rows)]).areas(area);
    question::draw(frame, q, model, theme);
    form::draw(frame, f, model, theme);
}

/// Cuts `s` to `width` columns with an ellipsis.
pub(crate) fn clip(s: &str, width: usize) -> String {
    let one_line: String = s.chars().map(|c| if c == '\n' { ' ' } else { c }).collect();
    if one_line.chars().count() <= width {
        return one_line;
    }
    if width == 0 {
        return String::new();
    }
    let mut out: String = one_line.chars().take(width - 1).collect();
    out.push('…');
    out
}
