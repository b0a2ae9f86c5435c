//! Fetching the list again, and keeping the forms on what it shows: the helpers that
//! `update`, the keys, the cleanup, the countdown, the outbox and the submission share.
//! They sit below all of them (never the reverse), so the TUI core imports as a DAG.

use super::effect::Effect;
use super::model::{AnswerForm, Focus, Model, PAGE};

/// How many pages a reload fetches at most: the rows the user has scrolled through.
const MAX_RELOAD_PAGES: usize = 20;

/// Fetch the list again (as many pages as are loaded) and the counts, with new ids.
pub fn reload(model: &mut Model) -> Vec<Effect> {
    let pages = model
        .queue
        .items
        .len()
        .div_ceil(PAGE)
        .clamp(1, MAX_RELOAD_PAGES);
    reload_pages(model, pages)
}

/// The list again from its start, `pages` pages of it, and the counts.
pub(super) fn reload_pages(model: &mut Model, pages: usize) -> Vec<Effect> {
    model.queue.generation += 1;
    model.queue.loading_more = false;
    model.queue.reloading = true;
    model.counts_generation += 1;
    model.counts_in_flight = true;
    vec![
        Effect::Load {
            id: model.queue.generation,
            query: model.list_query(),
            pages,
        },
        Effect::LoadCounts {
            id: model.counts_generation,
        },
    ]
}

/// Keeps the answer form and the options form on the selected question. When this
/// closes the field or form the person was typing in (the question answered or closed
/// elsewhere, a reload that moved the selection), the typed text is saved as a draft
/// and a modal notice says what happened: the next keys are the notice's, never
/// commands. Our own answer in flight is not an interruption.
pub(super) fn sync_form(model: &mut Model, fx: &mut Vec<Effect>) {
    let typing_in = match model.focus {
        Focus::Answer => model.form.as_ref().map(|f| f.question_id.clone()),
        Focus::Choices => model.choices.as_ref().map(|c| c.question_id.clone()),
        _ => None,
    };
    draft_changed(model, fx);
    let current = model.current().map(|q| {
        (
            q.question_id.clone(),
            q.status == "open" && q.can_answer,
            q.prompts.is_empty(),
        )
    });
    match current {
        Some((id, true, true)) => {
            if model.form.as_ref().is_none_or(|f| f.question_id != id) {
                let draft = model.drafts.get(&id).cloned().unwrap_or_default();
                model.form = Some(AnswerForm::new(&id, &draft));
                if model.focus == Focus::Answer {
                    model.focus = Focus::Queue;
                }
            }
        }
        _ => {
            model.form = None;
            if model.focus == Focus::Answer {
                model.focus = Focus::Queue;
            }
        }
    }
    let keep_choices = matches!((&model.choices, model.current()), (Some(c), Some(q)) if c.question_id == q.question_id && q.status == "open");
    if !keep_choices {
        model.choices = None;
        if model.focus == Focus::Choices {
            model.focus = Focus::Queue;
        }
    }
    let ours = |id: &str| {
        model
            .in_flight
            .as_ref()
            .is_some_and(|f| f.question_id == id)
    };
    if let Some(id) = typing_in
        && !matches!(model.focus, Focus::Answer | Focus::Choices)
        && !ours(&id)
    {
        super::interrupt::interrupt(model, &id, fx);
    }
}

pub(super) fn draft_changed(model: &mut Model, fx: &mut Vec<Effect>) {
    let Some(form) = &model.form else { return };
    let (id, text) = (form.question_id.clone(), form.value());
    if text.trim().is_empty() {
        if model.drafts.remove(&id).is_some() {
            fx.push(Effect::RemoveDraft { question_id: id });
        }
    } else if model.drafts.get(&id) != Some(&text) {
        model.drafts.insert(id.clone(), text.clone());
        fx.push(Effect::SaveDraft {
            question_id: id,
            text,
        });
    }
}

/// Another list in the same pane (a filter, the snoozed list): the rows go, the
/// selection follows, and the list is loaded from its start.
pub(super) fn new_list(model: &mut Model, fx: &mut Vec<Effect>) {
    model.queue.items.clear();
    model.queue.cursor = None;
    model.queue.loaded_once = false;
    // A `G` still loading pages was for the old list.
    model.queue.to_end = false;
    model.reselect();
    sync_form(model, fx);
    fx.extend(reload(model));
}
