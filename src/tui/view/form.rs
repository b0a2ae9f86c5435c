//! The answer controls under the question. For the session's author: "Accept
//! suggestion" on its key and the "Answer" field (a `ratatui-textarea`). For anyone
//! else: the same controls drawn inert, with the reason in words. The field wraps and
//! shows a live count against the domain's limit on its bottom border. For an answered
//! question: who answered, when, and whether the suggestion was accepted (the text is in
//! the question pane, where it scrolls in full). For a question
//! with options: one prompt at a time, then the review step.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use crate::domain::question::RESPOSTA_MAX_CHARS;
use crate::domain::text::text_len;
use crate::tui::choices::ChoiceForm;
use crate::tui::keymap::Action;
use crate::tui::model::{Focus, Model, ago};
use crate::tui::theme::Theme;
use crate::wire::QuestionItem;

/// Rows the form wants at this width.
pub fn height(model: &Model, width: u16) -> u16 {
    let Some(q) = model.current() else { return 0 };
    let reason = reason_rows(q, width.saturating_sub(2));
    if q.answer.is_some() {
        // Who and how; the text itself is in the question pane, where it scrolls.
        return 4;
    }
    if !q.prompts.is_empty() {
        let rows = match &model.choices {
            Some(c) if c.review => c.prompts.len() + 1,
            Some(c) => c.rows(c.current) + 1,
            None => q
                .prompts
                .first()
                .map_or(0, |p| p.options.len() + usize::from(p.custom) + 1),
        };
        return rows.min(10) as u16 + 2 + reason;
    }
    if !q.can_answer {
        // Read-only text, not a field: the accept line, one line of words, the reason.
        return 4 + reason;
    }
    8 + reason
}

/// Lines the reason takes at this inner width (0 for the author).
fn reason_rows(q: &QuestionItem, width: u16) -> u16 {
    if q.can_answer {
        return 0;
    }
    let len = q.reason.as_deref().map_or(30, |r| r.chars().count()) + 2;
    (len.div_ceil(usize::from(width.max(1)))).clamp(1, 3) as u16
}

pub fn draw(frame: &mut Frame<'_>, area: Rect, model: &Model, theme: &Theme) {
    let Some(q) = model.current() else { return };
    if area.height == 0 || area.width == 0 {
        return;
    }
    let focused = matches!(model.focus, Focus::Answer | Focus::Choices);
    let title = if q.answer.is_some() {
        "Answered"
    } else {
        "Answer"
    };
    let b = super::queues::block(title.into(), focused, theme);
    let inner = b.inner(area);
    frame.render_widget(b, area);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    if q.answer.is_some() {
        answered(frame, inner, q, model, theme);
    } else if !q.prompts.is_empty() {
        options(frame, inner, q, model, theme);
    } else {
        text_form(frame, inner, q, model, theme);
    }
}

fn answered(frame: &mut Frame<'_>, area: Rect, q: &QuestionItem, model: &Model, theme: &Theme) {
    let Some(a) = &q.answer else { return };
    let how = if a.aceitou_sugestao {
        "accepted the suggestion"
    } else {
        "own answer"
    };
    let mut lines = vec![Line::from(vec![
        Span::styled("✓ answered by ", theme.muted),
        Span::styled(a.respondida_por.clone(), theme.title),
        Span::styled(
            format!(" · {} · {how}", ago(model.now, a.answered_at)),
            theme.muted,
        ),
    ])];
    lines.push(Line::styled(
        format!(
            "the answer in full is above ({}/{} scroll)",
            first(model.keymap.keys_for(Action::ScrollDown)),
            first(model.keymap.keys_for(Action::ScrollUp))
        ),
        theme.muted,
    ));
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
}

fn text_form(frame: &mut Frame<'_>, area: Rect, q: &QuestionItem, model: &Model, theme: &Theme) {
    let km = &model.keymap;
    let live = q.can_answer && model.in_flight.is_none();
    let reason_rows = reason_rows(q, area.width);
    let [accept, field, reason] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(reason_rows),
    ])
    .areas(area);
    let accept_line = match (&q.sugestao, q.can_answer) {
        (Some(_), true) => Line::from(vec![
            Span::styled(
                format!("[{}]", first(km.keys_for(Action::Accept))),
                theme.key_hint,
            ),
            Span::raw(" Accept suggestion"),
        ]),
        (Some(_), false) => Line::styled(
            format!("[{}] Accept suggestion", first(km.keys_for(Action::Accept))),
            theme.inert,
        ),
        (None, _) => Line::styled("no suggestion to accept", theme.muted),
    };
    frame.render_widget(Paragraph::new(accept_line), accept);
    let typing = model.focus == Focus::Answer;
    let offline = model.offline();
    // While the link is down its cause is named ("offline", "bad gateway (502)").
    let down = model.down_words();
    let queues = format!("{down} — Enter queues your answer");
    let sends = if offline {
        format!("queues your answer ({down})")
    } else {
        "sends".to_string()
    };
    // The live count, as the domain counts it (trimmed characters) against its limit.
    let count = model
        .form
        .as_ref()
        .filter(|f| f.question_id == q.question_id)
        .map_or(0, |f| text_len(&f.value()));
    let counter = Line::styled(
        format!(" {count}/{RESPOSTA_MAX_CHARS} "),
        if count > RESPOSTA_MAX_CHARS {
            theme.error
        } else {
            theme.muted
        },
    )
    .right_aligned();
    let box_title = if typing {
        format!(
            " {} {sends} · {} new line ",
            km.field_keys_for(Action::Submit),
            first(km.field_keys_for(Action::Newline))
        )
    } else if offline {
        format!(" Answer — {down} ")
    } else {
        " Answer ".to_string()
    };
    if live
        && let Some(form) = model
            .form
            .as_ref()
            .filter(|f| f.question_id == q.question_id)
    {
        let mut text = form.text.clone();
        let border = if typing { theme.focus } else { theme.border };
        text.set_block(
            Block::default()
                .borders(Borders::ALL)
                .border_style(border)
                .title(box_title)
                .title_bottom(counter),
        );
        text.set_cursor_line_style(Style::new());
        text.set_cursor_style(if typing {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            Style::new()
        });
        text.set_placeholder_text(if offline {
            queues.clone()
        } else {
            format!(
                "{} to type an answer · {} $EDITOR",
                first(km.keys_for(Action::Answer)),
                first(km.keys_for(Action::Editor))
            )
        });
        text.set_placeholder_style(theme.muted);
        frame.render_widget(&text, field);
    } else {
        // Not a field: no box, no cursor, words that say why nothing can be typed.
        let msg = if !q.can_answer {
            "read-only: you cannot type an answer here".to_string()
        } else if model.in_flight.is_some() {
            "sending…".to_string()
        } else if offline {
            queues
        } else if let Some(l) = &model.link_fault {
            // Down, and nothing would queue: a refused token, a refusal.
            format!(
                "{} — nothing can be sent until that changes",
                l.fault.words()
            )
        } else {
            "the answer field opens when the list is loaded again".to_string()
        };
        frame.render_widget(
            Paragraph::new(Span::styled(msg, theme.inert)).wrap(Wrap { trim: false }),
            field,
        );
    }
    if reason_rows > 0 {
        let why = q
            .reason
            .clone()
            .unwrap_or_else(|| "you cannot answer this question".into());
        let line = Line::from(vec![Span::styled("⊘ ", theme.error), Span::raw(why)]);
        frame.render_widget(Paragraph::new(line).wrap(Wrap { trim: false }), reason);
    }
}

fn options(frame: &mut Frame<'_>, area: Rect, q: &QuestionItem, model: &Model, theme: &Theme) {
    let fresh;
    let form = match model
        .choices
        .as_ref()
        .filter(|c| c.question_id == q.question_id)
    {
        Some(c) => c,
        None => {
            // Not open: drawn as its draft would open it.
            let mut f = ChoiceForm::new(&q.question_id, &q.prompts);
            if let Some(d) = model.drafts.get(&q.question_id) {
                f.restore(d);
            }
            fresh = f;
            &fresh
        }
    };
    let active = model.focus == Focus::Choices && q.can_answer;
    let width = usize::from(area.width);
    let base = if q.can_answer {
        Style::new()
    } else {
        theme.inert
    };
    let mut lines = Vec::new();
    if form.review {
        lines.push(Line::styled(
            "Review — Enter sends, Esc goes back",
            theme.title,
        ));
        for (i, (p, a)) in form.prompts.iter().zip(form.answers()).enumerate() {
            let shown = if a.is_empty() {
                "(no answer)".to_string()
            } else {
                a.join(", ")
            };
            lines.push(Line::from(vec![
                Span::styled(format!("{}. {}: ", i + 1, p.header), theme.muted),
                Span::raw(shown),
            ]));
        }
    } else if let Some(p) = form.prompts.get(form.current) {
        let kind = if p.multiple {
            "pick any, Space toggles"
        } else {
            "pick one"
        };
        lines.push(Line::from(vec![
            Span::styled(
                format!("{}/{} ", form.current + 1, form.prompts.len()),
                theme.muted,
            ),
            Span::styled(p.header.clone(), theme.title),
            Span::styled(format!(" ({kind})"), theme.muted),
        ]));
        let cursor = form.cursor.get(form.current).copied().unwrap_or(0);
        for (i, o) in p.options.iter().enumerate() {
            let on = form
                .picked
                .get(form.current)
                .and_then(|v| v.get(i))
                .copied()
                .unwrap_or(false);
            let mark = match (p.multiple, on) {
                (true, true) => "[x]",
                (true, false) => "[ ]",
                (false, true) => "(•)",
                (false, false) => "( )",
            };
            let style = if active && cursor == i {
                theme.selection
            } else {
                base
            };
            let desc = if o.description.is_empty() {
                String::new()
            } else {
                format!(" — {}", o.description)
            };
            let row = format!(
                "{} {mark} {}{desc}",
                if cursor == i { ">" } else { " " },
                o.label
            );
            lines.push(Line::styled(super::clip(&row, width), style));
        }
        if p.custom {
            let i = p.options.len();
            let typed = &form.custom[form.current];
            let style = if active && cursor == i {
                theme.selection
            } else {
                base
            };
            let text = if form.typing {
                format!("{typed}▏")
            } else if typed.is_empty() {
                "type your own answer".into()
            } else {
                typed.clone()
            };
            let row = format!("{} ✎ {text}", if cursor == i { ">" } else { " " });
            lines.push(Line::styled(super::clip(&row, width), style));
        }
    }
    let reason = (!q.can_answer).then(|| {
        let why = q
            .reason
            .clone()
            .unwrap_or_else(|| "you cannot answer this question".into());
        Line::from(vec![Span::styled("⊘ ", theme.error), Span::raw(why)])
    });
    // The options scroll with the cursor: the prompt's title stays on top and the
    // cursor's row is always in the box (one row per option: they are clipped, not
    // wrapped, so the rows can be counted).
    let room = usize::from(area.height)
        .saturating_sub(1 + usize::from(reason.is_some()))
        .max(1);
    let rows = lines.len().saturating_sub(1);
    if !form.review && rows > room {
        let cursor = form.cursor.get(form.current).copied().unwrap_or(0);
        let top = (cursor + 1).saturating_sub(room).min(rows - room);
        let shown: Vec<Line> = lines.drain(1..).skip(top).take(room).collect();
        let at = Span::styled(format!(" {}–{}/{rows}", top + 1, top + room), theme.accent);
        let after_title = lines[0].spans.len().min(2);
        lines[0].spans.insert(after_title, at);
        lines.extend(shown);
    }
    lines.extend(reason);
    if form.review || lines.is_empty() {
        frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
        return;
    }
    // The prompt's title on one row (clipped), so the rows below can be counted.
    let title = lines.remove(0);
    let [top, rest] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    frame.render_widget(Paragraph::new(title), top);
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), rest);
}

/// The first of "a/b" keys, for a hint that has room for one.
pub(super) fn first(keys: String) -> String {
    keys.split('/').next().unwrap_or_default().to_string()
}
