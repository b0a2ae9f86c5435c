//! The bottom line: the search being typed, else the last notice, else the keys that
//! matter in the focused pane, read from the live keymap.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::tui::keymap::Action;
use crate::tui::model::{Focus, Model, NoticeKind};
use crate::tui::theme::Theme;

pub fn draw(frame: &mut Frame<'_>, area: Rect, model: &Model, theme: &Theme) {
    if area.height == 0 {
        return;
    }
    let width = area.width as usize;
    if model.focus == Focus::Search {
        let line = Line::from(vec![
            Span::styled(" / ", theme.key_hint),
            Span::raw(super::clip(&model.search, width.saturating_sub(4))),
            Span::styled("▏", theme.focus),
        ]);
        frame.render_widget(Paragraph::new(line), area);
        return;
    }
    if let Some(n) = &model.notice {
        let style = if n.kind == NoticeKind::Error {
            theme.error
        } else {
            theme.notice
        };
        frame.render_widget(
            Paragraph::new(Span::styled(
                super::clip(&format!(" {}", n.text), width),
                style,
            )),
            area,
        );
        return;
    }
    let km = &model.keymap;
    let pairs: Vec<(String, &str)> = match model.focus {
        Focus::Answer => vec![
            (km.field_keys_for(Action::Submit), "send"),
            (km.field_keys_for(Action::Newline), "new line"),
            (km.field_keys_for(Action::Editor), "$EDITOR"),
            ("Ctrl-u/Ctrl-r".into(), "undo/redo"),
            (km.field_keys_for(Action::Back), "leave"),
        ],
        Focus::Choices => vec![
            ("Space".into(), "pick"),
            ("Enter".into(), "next / send"),
            (km.keys_for(Action::NextPane), "next question"),
            (km.keys_for(Action::Back), "leave"),
        ],
        _ => {
            let q = model
                .current()
                .filter(|q| q.status == "open" && q.can_answer);
            let accept = q.is_some_and(|q| q.sugestao.is_some() && q.prompts.is_empty());
            let mut pairs = vec![
                (km.keys_for(Action::Help), "help"),
                (
                    format!(
                        "{}/{}",
                        first(km.keys_for(Action::Down)),
                        first(km.keys_for(Action::Up))
                    ),
                    "move",
                ),
            ];
            // Only what applies to the selected question.
            if accept {
                pairs.push((first(km.keys_for(Action::Accept)), "accept"));
            }
            if q.is_some() {
                pairs.push((first(km.keys_for(Action::Answer)), "answer"));
            }
            pairs.extend([
                (first(km.keys_for(Action::Filter)), "filter"),
                (first(km.keys_for(Action::Search)), "search"),
                (first(km.keys_for(Action::Sort)), "sort"),
                (first(km.keys_for(Action::NextPane)), "pane"),
                (first(km.keys_for(Action::Quit)), "quit"),
            ]);
            pairs
        }
    };
    let mut spans = vec![Span::raw(" ")];
    let mut used = 1;
    for (keys, label) in pairs {
        let w = keys.chars().count() + label.chars().count() + 3;
        if keys.is_empty() || used + w > width {
            continue;
        }
        used += w;
        spans.push(Span::styled(keys, theme.key_hint));
        spans.push(Span::styled(format!(" {label}  "), theme.muted));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn first(keys: String) -> String {
    keys.split('/').next().unwrap_or_default().to_string()
}
