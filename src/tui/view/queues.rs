//! The pending block: "Open questions (N)" and "Waiting for you (N)", each with its own
//! title and count (never summed). A row is the question's start, who asked, what it
//! affects and its age; only the rows on screen are built, whatever the list's size.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::engine::StatusFilter;
use crate::tui::model::{Focus, Model, Sort, age, sort_label};
use crate::tui::theme::Theme;
use crate::wire::QuestionItem;

pub fn block<'a>(title: String, focused: bool, theme: &Theme) -> Block<'a> {
    let (border, title_style) = if focused {
        (theme.focus, theme.focus)
    } else {
        (theme.border, theme.title)
    };
    let marker = if focused { "▶ " } else { "" };
    Block::default()
        .borders(Borders::ALL)
        .border_style(border)
        .title(Span::styled(format!(" {marker}{title} "), title_style))
}

/// The open questions' pane and the "Waiting for you" pane below it (empty when short).
fn split(area: Rect, model: &Model) -> (Rect, Rect, u16) {
    let waiting_rows = if area.height >= 12 {
        model.waiting.len().clamp(1, 4) as u16 + 2
    } else {
        0
    };
    let [open, waiting] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(waiting_rows)]).areas(area);
    (open, waiting, waiting_rows)
}

/// The question rows inside the open pane of `area` (its borders aside).
pub fn open_rows(area: Rect, model: &Model) -> usize {
    split(area, model).0.height.saturating_sub(2) as usize
}

pub fn draw(frame: &mut Frame<'_>, area: Rect, model: &Model, theme: &Theme) {
    let (open, waiting, waiting_rows) = split(area, model);
    draw_open(frame, open, model, theme, waiting_rows == 0);
    if waiting_rows > 0 {
        draw_waiting(frame, waiting, model, theme);
    }
}

fn affects(q: &QuestionItem) -> String {
    let a = &q.afeta;
    a.tarefas
        .first()
        .or(a.historias.first())
        .or(a.regras.first())
        .cloned()
        .unwrap_or_default()
}

fn draw_open(
    frame: &mut Frame<'_>,
    area: Rect,
    model: &Model,
    theme: &Theme,
    waiting_in_footer: bool,
) {
    let snoozed_list = model.snooze.show && model.filter == StatusFilter::Open;
    let noun = match model.filter {
        StatusFilter::Open if snoozed_list => "Snoozed questions".to_string(),
        StatusFilter::Open => "Open questions".to_string(),
        StatusFilter::Answered => "Answered questions".to_string(),
        StatusFilter::Closed => "Closed questions".to_string(),
        StatusFilter::All => "All questions".to_string(),
        StatusFilter::Decided(source) => format!("Settled: {source}"),
    };
    let loaded = model.queue.items.len() as u64;
    let total = model.queue.total;
    let lower_bound = model.queue.total_is_lower_bound;
    let counted = crate::wire::total_text(total, lower_bound, loaded);
    let mut title = if loaded < total || lower_bound {
        format!("{noun} ({loaded} of {counted} loaded)")
    } else {
        format!("{noun} ({total})")
    };
    if model.queue.snoozed > 0 && model.filter == StatusFilter::Open && !snoozed_list {
        title.push_str(&format!(" · {} snoozed", model.queue.snoozed));
    }
    if model.sort != Sort::Oldest {
        title.push_str(&format!(" · {}", sort_label(model.sort)));
    }
    if !model.search.is_empty() {
        title.push_str(&format!(" · /{}", model.search));
    }
    let marked = model
        .triage
        .marked_count(&model.queue.items, model.selected);
    if marked > 0 {
        title.push_str(&format!(" · {marked} marked"));
    }
    let focused = matches!(model.focus, Focus::Queue | Focus::Search);
    let mut b = block(title, focused, theme);
    if waiting_in_footer {
        b = b.title_bottom(Span::styled(
            format!(" Waiting for you ({}) ", model.waiting.len()),
            theme.title,
        ));
    }
    let inner = b.inner(area);
    frame.render_widget(b, area);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let rows = inner.height as usize;
    let width = inner.width as usize;
    if model.queue.items.is_empty() {
        let text = if !model.queue.loaded_once {
            "loading…"
        } else if !model.search.is_empty() {
            "nothing matches the search"
        } else if snoozed_list {
            "nothing is snoozed"
        } else if model.filter == StatusFilter::Open {
            "no open questions — nothing waits on you"
        } else {
            "no questions"
        };
        frame.render_widget(
            Paragraph::new(Span::styled(super::clip(text, width), theme.muted)),
            inner,
        );
        return;
    }
    let offset = (model.selected + 1).saturating_sub(rows);
    let mut lines = Vec::with_capacity(rows);
    for (pos, q) in model.queue.items.iter().enumerate().skip(offset).take(rows) {
        let selected = pos == model.selected;
        let mark = match (selected, q.status == "open", q.can_answer) {
            (true, _, _) => ">",
            (false, false, _) => "✓",
            (false, true, true) => "●",
            (false, true, false) => "○",
        };
        let affected = affects(q);
        // The snoozed list says when each is back instead of its age.
        let when = match q.snooze.as_ref().filter(|_| snoozed_list) {
            Some(s) => format!("back in {}", age(s.until, model.now)),
            None => format!("{:>3}", age(model.now, q.created_at)),
        };
        let right = if width >= 56 && !affected.is_empty() {
            format!(
                " {} · {} {when}",
                super::clip(&q.autor, 10),
                super::clip(&affected, 10),
            )
        } else {
            format!(" {} {when}", super::clip(&q.autor, 9))
        };
        let right_w = right.chars().count().min(width.saturating_sub(6));
        let left_w = width.saturating_sub(right_w + 2);
        // An orphan (its session aborted upstream: nobody waits for the answer) says so.
        // One handed to Claude Code's own dialog is answered there.
        let title = if q.handed_off && q.status == "open" {
            format!("in Claude · {}", q.pergunta)
        } else if q.orphaned && q.status == "open" {
            format!("orphaned · {}", q.pergunta)
        } else {
            q.pergunta.clone()
        };
        let text = super::clip(&title, left_w);
        let pad = left_w.saturating_sub(text.chars().count());
        let marked = model
            .triage
            .is_marked(&model.queue.items, model.selected, pos);
        let style = if selected && focused {
            theme.selection
        } else if selected || marked {
            theme.accent
        } else {
            Style::new()
        };
        let right_style = if selected { style } else { theme.muted };
        // A marked row: `*` after its glyph (triage's bulk accept or dismiss).
        let gap = if marked { '*' } else { ' ' };
        lines.push(Line::from(vec![
            Span::styled(format!("{mark}{gap}{text}{}", " ".repeat(pad)), style),
            Span::styled(super::clip(&right, right_w), right_style),
        ]));
    }
    if model.queue.loading_more && lines.len() < rows {
        lines.push(Line::from(Span::styled("  loading more…", theme.muted)));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

fn draw_waiting(frame: &mut Frame<'_>, area: Rect, model: &Model, theme: &Theme) {
    let focused = model.focus == Focus::Waiting;
    let b = block(
        format!("Waiting for you ({})", model.waiting.len()),
        focused,
        theme,
    );
    let inner = b.inner(area);
    frame.render_widget(b, area);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    let width = inner.width as usize;
    if model.waiting.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled("no task is parked on you", theme.muted)),
            inner,
        );
        return;
    }
    let rows = inner.height as usize;
    let offset = (model.waiting_selected + 1).saturating_sub(rows);
    let lines: Vec<Line> = model
        .waiting
        .iter()
        .enumerate()
        .skip(offset)
        .take(rows)
        .map(|(i, w)| {
            let selected = i == model.waiting_selected;
            let right = format!(" parked {}", age(model.now, w.parked_at));
            let left_w = width.saturating_sub(right.chars().count() + 2);
            let text = super::clip(&format!("{} {}", w.task.task_id, w.task.title), left_w);
            let pad = left_w.saturating_sub(text.chars().count());
            let style = if selected && focused {
                theme.selection
            } else {
                Style::new()
            };
            let mark = if selected { ">" } else { " " };
            Line::from(vec![
                Span::styled(format!("{mark} {text}{}", " ".repeat(pad)), style),
                Span::styled(
                    right,
                    if selected && focused {
                        style
                    } else {
                        theme.muted
                    },
                ),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}
