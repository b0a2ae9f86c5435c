//! The Decisions view (the `decisions` key): every answered or closed question of the
//! projects in view, newest decision first, with who decided, when, how
//! (`decisionSource`), what it affects, the question and the answer in full. It is the
//! source's decision history (`Source::decisions`), never the loaded queue: the filter
//! line (`filter.rs`) is answered over the whole history, and pages follow the history's
//! keyset cursor as the queue's do. Esc goes back to the queue, as it was.
//!
//! Part of the pure `update`: keys change the state and push [`Effect::LoadDecisions`];
//! a reply under another generation is stale. Nothing here records anything: the
//! writing keys do nothing in this view.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::cleanup::{ExitReason, Teardown};
use super::effect::Effect;
use super::keymap::Action;
use super::model::{Model, PAGE};
use super::notice::error;
use super::screens::decision_filter as filter;
pub use super::screens::decisions::DecisionsView;
use crate::wire::QuestionList;

/// The filter line's ceiling, well above what the search itself takes.
const FILTER_MAX_CHARS: usize = 1_000;

/// The `decisions` key in the panes: open the view on its first page.
pub(super) fn open(model: &mut Model, fx: &mut Vec<Effect>) {
    model.decisions.open = true;
    model.decisions.editing = None;
    model.dirty = true;
    load(model, None, fx);
}

/// The first page (`cursor: None`) or the next one.
fn load(model: &mut Model, cursor: Option<String>, fx: &mut Vec<Effect>) {
    let d = &mut model.decisions;
    let append = cursor.is_some();
    if !append {
        d.generation += 1;
    }
    d.loading_more = append;
    let project = d.filter.project.clone().or_else(|| model.project.clone());
    let query = d.filter.query.clone().limit(PAGE).after(cursor.as_deref());
    fx.push(Effect::LoadDecisions {
        id: d.generation,
        project,
        query,
        append,
    });
}

/// [`Msg::Decisions`](super::effect::Msg::Decisions).
pub(super) fn loaded(model: &mut Model, id: u64, append: bool, page: Result<QuestionList, String>) {
    let d = &mut model.decisions;
    if id != d.generation {
        return;
    }
    model.dirty = true;
    d.loading_more = false;
    d.loaded_once = true;
    match page {
        Ok(list) => {
            if append {
                d.items.extend(list.items);
            } else {
                d.items = list.items;
                d.selected = 0;
                d.scroll = 0;
            }
            d.total = list.total;
            d.total_is_lower_bound = list.total_is_lower_bound;
            d.cursor = list.cursor;
            d.error = None;
            d.selected = d.selected.min(d.items.len().saturating_sub(1));
        }
        Err(e) => {
            if !append {
                d.items.clear();
                d.total = 0;
                d.total_is_lower_bound = false;
                d.cursor = None;
            }
            d.error = Some(e);
        }
    }
}

/// The screens over the queue, after the overlays: a triage review or report, then
/// this view. `true` when one of them took the key (the quit key through the cleanup).
pub(super) fn screen_key(model: &mut Model, k: &KeyEvent, fx: &mut Vec<Effect>) -> bool {
    let quits = if model.triage.screen.is_some() {
        let hard = super::interrupt::is_hard_quit(model, k);
        if !hard {
            super::triage::review::key(model, k, fx);
        }
        hard
    } else if model.decisions.open {
        key(model, k, fx) == Some(Action::Quit)
    } else {
        return false;
    };
    if quits {
        let reason = ExitReason::Teardown(Teardown::Quit);
        fx.extend(super::cleanup::abort_open_work(model, &reason));
    }
    true
}

/// What a key does while the view is up; `Some(Action::Quit)` when it ends oq.
fn key(model: &mut Model, k: &KeyEvent, fx: &mut Vec<Effect>) -> Option<Action> {
    if model.decisions.editing.is_some() {
        edit_key(model, k, fx);
        return None;
    }
    let action = model.keymap.normal(k)?;
    let rows = super::view::queue_rows(model).max(1);
    let d = &mut model.decisions;
    let last = d.items.len().saturating_sub(1);
    let moved = |d: &mut DecisionsView, to: usize| {
        d.selected = to.min(last);
        d.scroll = 0;
    };
    match action {
        Action::Down => moved(d, d.selected + 1),
        Action::Up => moved(d, d.selected.saturating_sub(1)),
        Action::PageDown => moved(d, d.selected + rows),
        Action::PageUp => moved(d, d.selected.saturating_sub(rows)),
        Action::Top => moved(d, 0),
        Action::Bottom => moved(d, last),
        Action::ScrollDown => d.scroll = d.scroll.saturating_add(1),
        Action::ScrollUp => d.scroll = d.scroll.saturating_sub(1),
        Action::Search => d.editing = Some(d.filter_text.clone()),
        Action::Back | Action::Decisions => {
            d.open = false;
            model.notice = None;
        }
        Action::Help => model.help = Some(super::help::Help::default()),
        Action::Quit => return Some(Action::Quit),
        // Nothing records from the history, and the queue's own keys wait for it.
        _ => {}
    }
    let d = &model.decisions;
    if matches!(action, Action::Down | Action::PageDown | Action::Bottom)
        && !d.loading_more
        && d.selected + PAGE / 2 >= d.items.len()
        && let Some(cursor) = d.cursor.clone()
    {
        load(model, Some(cursor), fx);
    }
    None
}

/// The filter line: Enter applies it (each part checked), Esc leaves it unchanged.
fn edit_key(model: &mut Model, k: &KeyEvent, fx: &mut Vec<Effect>) {
    let Some(text) = &mut model.decisions.editing else {
        return;
    };
    match k.code {
        KeyCode::Esc => model.decisions.editing = None,
        KeyCode::Enter => {
            let typed = text.clone();
            match filter::parse(&typed) {
                Err(e) => error(model, e),
                Ok(f) => match (&model.project, &f.project) {
                    (Some(mine), Some(asked)) if mine != asked => error(
                        model,
                        format!(
                            "project {asked} is not in view: oq was started with --project {mine}"
                        ),
                    ),
                    _ => {
                        let d = &mut model.decisions;
                        d.editing = None;
                        d.filter_text = typed.trim().to_string();
                        d.filter = f;
                        model.notice = None;
                        load(model, None, fx);
                    }
                },
            }
        }
        KeyCode::Backspace => {
            text.pop();
            // The refusal was of the text as it was.
            model.notice = None;
        }
        KeyCode::Char(c)
            if !k
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            push(model, &c.to_string());
        }
        _ => {}
    }
}

/// Appends typed or pasted text to the filter line, within its ceiling.
fn push(model: &mut Model, s: &str) {
    let Some(text) = &mut model.decisions.editing else {
        return;
    };
    model.notice = None;
    if text.chars().count() + s.chars().count() > FILTER_MAX_CHARS {
        return error(
            model,
            format!("the filter is at most {FILTER_MAX_CHARS} characters"),
        );
    }
    text.push_str(s);
}

/// Pasted text while the view is up: the filter line's, when it is being typed.
pub(super) fn paste(model: &mut Model, text: &str) {
    push(model, text.lines().next().unwrap_or_default());
    model.dirty = true;
}
