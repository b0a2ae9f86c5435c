//! The triage overlay (`tui::triage`): the review of a bulk accept or dismiss — every
//! marked question with what will be recorded, or skipped with the reason, and the draft
//! each discards — then, after the one confirmation, the same list as the run's report:
//! each question's own outcome. The keys sit on the bottom border.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use crate::tui::model::Model;
use crate::tui::screens::triage::{Kind, Outcome, Plan, Screen, Stage};
use crate::tui::theme::Theme;

pub fn draw(frame: &mut Frame<'_>, area: Rect, model: &Model, s: &Screen, theme: &Theme) {
    let w = area.width.saturating_sub(2).min(100);
    let h = area.height.saturating_sub(2);
    if w < 10 || h < 3 {
        return;
    }
    let inner_w = usize::from(w - 2);
    let mut lines: Vec<Line<'_>> = Vec::new();
    for item in &s.items {
        lines.push(Line::from(vec![
            Span::styled(format!("{} ", item.question_id), theme.title),
            Span::raw(super::clip(
                &item.pergunta,
                inner_w.saturating_sub(item.question_id.chars().count() + 1),
            )),
        ]));
        let (text, style) = match (&item.outcome, &item.plan) {
            (Some(Outcome::Sending), _) => ("sending…".to_string(), theme.accent),
            (Some(Outcome::Recorded(t)), _) => (t.clone(), theme.accent),
            (Some(Outcome::Queued(t)), _) => (t.clone(), theme.notice),
            (Some(Outcome::Failed(t)), _) => (format!("failed: {t}"), theme.error),
            (None, Plan::Skip(why)) => (format!("skipped: {why}"), theme.muted),
            (None, Plan::Record { what, .. }) if s.stage == Stage::Running => {
                (format!("waiting: {what}"), theme.muted)
            }
            (None, Plan::Record { what, .. }) => (format!("records {what}"), theme.normal),
        };
        lines.push(Line::styled(format!("  {text}"), style));
        if let (None | Some(Outcome::Sending), Plan::Record { draft: Some(d), .. }) =
            (&item.outcome, &item.plan)
        {
            lines.push(Line::styled(
                format!(
                    "  your draft «{d}»: {} discards it",
                    s.kind.verb().to_lowercase()
                ),
                theme.error,
            ));
        }
    }
    let n = s.to_record();
    let (title, keys) = match s.stage {
        Stage::Review { disarmed } => {
            let verb = match s.kind {
                Kind::Accept => "Accept the suggestion of",
                Kind::Dismiss => "Dismiss",
            };
            let title = format!("{verb} {} marked — {n} to record", s.items.len());
            if disarmed {
                lines.push(Line::raw(""));
                lines.push(Line::styled(
                    "Another key came first, so nothing will be recorded: nothing typed here acts. Esc closes it.",
                    theme.error,
                ));
                (title, vec![("Esc".to_string(), "closes it")])
            } else if n == 0 {
                (
                    title,
                    vec![("Esc".to_string(), "closes: nothing to record")],
                )
            } else {
                let again = model.keymap.keys_for(s.kind.action());
                let again = again.split('/').next().unwrap_or_default().to_string();
                (
                    title,
                    vec![
                        (format!("{again} or Enter"), "records them"),
                        ("Esc".into(), "cancels"),
                        ("↑/↓".into(), "scroll"),
                    ],
                )
            }
        }
        Stage::Running => (
            format!("Recording {n}… {}", s.summary()),
            vec![("↑/↓".into(), "scroll")],
        ),
        Stage::Report => (
            format!("Done — {}", s.summary()),
            vec![("Esc or Enter".into(), "closes"), ("↑/↓".into(), "scroll")],
        ),
    };
    let mut spans = vec![Span::raw(" ")];
    for (i, (k, what)) in keys.into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", theme.muted));
        }
        spans.push(Span::styled(k, theme.key_hint));
        spans.push(Span::styled(format!(" {what}"), theme.muted));
    }
    spans.push(Span::raw(" "));
    let rect = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + 1,
        width: w,
        height: h,
    };
    frame.render_widget(Clear, rect);
    let block = super::queues::block(title, true, theme).title_bottom(Line::from(spans));
    let p = Paragraph::new(lines).wrap(Wrap { trim: false });
    let total = u16::try_from(p.line_count(w - 2)).unwrap_or(u16::MAX);
    let scroll = s.scroll.min(total.saturating_sub(h.saturating_sub(2)));
    frame.render_widget(p.block(block).scroll((scroll, 0)), rect);
}
