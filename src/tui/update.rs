//! The pure heart of the TUI: `update(&mut Model, Msg) -> Vec<Effect>`.
//!
//! No IO, no clock, no async: time arrives in [`Msg::Revision`], replies carry the id
//! they were requested with and a stale one changes nothing. Keys are handled in
//! `keys.rs`: inside the answer field only the field keys act and everything else is
//! text, so "Accept suggestion" can never fire while typing.

use crossterm::event::KeyEventKind;

use super::cleanup::{ExitReason, Teardown, abort_open_work};
use super::effect::{Effect, Msg};
use super::link::{Fault, LinkError};
use super::model::{AnswerForm, Connection, Focus, Model, PAGE};
use super::notice::{error, info, link_error};

/// How many pages a reload fetches at most: the rows the user has scrolled through.
const MAX_RELOAD_PAGES: usize = 20;

/// The effects of starting up: the first page, the counts, the outbox.
pub fn init(model: &mut Model) -> Vec<Effect> {
    let mut fx = reload(model);
    fx.push(Effect::ReadOutbox);
    fx
}

pub fn update(model: &mut Model, msg: Msg) -> Vec<Effect> {
    let mut fx = step(model, msg);
    super::interaction::follow_interaction(model, &mut fx);
    fx
}

fn step(model: &mut Model, msg: Msg) -> Vec<Effect> {
    let mut fx = Vec::new();
    match msg {
        Msg::Key(k) => {
            if k.kind == KeyEventKind::Press {
                model.dirty = true;
                super::keys::key(model, &k, &mut fx);
            }
        }
        Msg::Paste(text) => super::keys::paste(model, &text, &mut fx),
        Msg::Resize => model.dirty = true,
        Msg::Revision { now, revision } => on_revision(model, now, revision, &mut fx),
        Msg::Loaded { id, append, page } => {
            if id != model.queue.generation {
                return fx;
            }
            model.dirty = true;
            model.queue.loading_more = false;
            match page {
                Ok(list) => {
                    if append {
                        model.queue.items.extend(list.items);
                    } else {
                        model.queue.items = list.items;
                    }
                    model.queue.total = list.total;
                    model.queue.total_is_lower_bound = list.total_is_lower_bound;
                    model.queue.cursor = list.cursor;
                    model.queue.loaded_once = true;
                    model.refresh_visible();
                    if model.queue.to_end {
                        super::paging::continue_to_end(model, &mut fx);
                    }
                    sync_form(model, &mut fx);
                }
                Err(e) => {
                    model.queue.to_end = false;
                    error(model, format!("could not load the questions: {e}"));
                }
            }
        }
        Msg::Counts {
            id,
            open,
            waiting,
            newest,
        } => {
            if id != model.counts_generation {
                return fx;
            }
            model.counts_in_flight = false;
            model.dirty = true;
            if let Ok(n) = open {
                super::notify::newest(model, &newest, &mut fx);
                model.open_count = Some(n);
            }
            if let Ok(w) = waiting {
                model.waiting = w;
                model.waiting_selected = model
                    .waiting_selected
                    .min(model.waiting.len().saturating_sub(1));
            }
        }
        Msg::Answered {
            id,
            question_id,
            result,
        } => super::submit::answered(model, id, &question_id, result.map(|q| *q), &mut fx),
        Msg::Queued { id, question_id } => super::submit::queued(model, id, &question_id),
        Msg::LookedUp {
            question_id,
            result,
        } => {
            let result = result.map(|q| *q);
            super::outbox::looked_up(model, &question_id, &result);
            super::modal::looked_up(model, &question_id, result);
        }
        Msg::Dismissed {
            question_id,
            result,
        } => {
            model.dirty = true;
            match result {
                Ok(()) => {
                    info(model, format!("dismissed {question_id}"));
                    // The confirmation said a draft of it is discarded.
                    super::submit::remove_draft(model, &question_id, &mut fx);
                    fx.extend(reload(model));
                }
                Err(e) => error(model, format!("dismiss refused: {e}")),
            }
        }
        Msg::ReadinessRecorded { gate, result } => {
            model.dirty = true;
            match result {
                Ok(r) => {
                    let n = r.notice.unwrap_or_else(|| "no questions are open".into());
                    info(model, format!("{} recorded — {n}", gate.label()));
                }
                Err(e) => error(model, e),
            }
        }
        Msg::EditorDone {
            question_id,
            result,
        } => {
            model.dirty = true;
            match result {
                Ok(text) => {
                    let text = text.trim_end_matches('\n').to_string();
                    model.form = Some(AnswerForm::new(&question_id, &text));
                    if model
                        .current()
                        .is_some_and(|q| q.question_id == question_id)
                    {
                        model.focus = Focus::Answer;
                    }
                    draft_changed(model, &mut fx);
                }
                Err(e) => error(model, format!("the editor failed: {e}")),
            }
        }
        m @ (Msg::AutoDelegate { .. } | Msg::AutoCommanded { .. } | Msg::Tick { .. }) => {
            super::auto::on_msg(model, m, &mut fx)
        }
        Msg::Quit => fx = abort_open_work(model, &ExitReason::Teardown(Teardown::Quit)),
        Msg::End(reason) => fx = abort_open_work(model, &reason),
        Msg::Outbox { entries } => super::outbox::snapshot(model, entries, &mut fx),
    }
    fx
}

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

fn on_revision(
    model: &mut Model,
    now: i64,
    revision: Result<i64, LinkError>,
    fx: &mut Vec<Effect>,
) {
    super::auto::set_now(model, now);
    let before = model.connection;
    match revision {
        Ok(r) => {
            link_cleared(model);
            if !matches!(model.connection, Connection::Live { .. }) {
                model.connection = Connection::Live { since: now };
            }
            if !model.attached {
                // (Re)attach: rehydrate the queue and deliver what waited in the outbox.
                model.attached = true;
                model.revision = Some(r);
                fx.extend(reload(model));
                fx.push(Effect::FlushOutbox);
            } else if model.revision != Some(r) {
                // Also the first time: a change between the first load and the first
                // poll must not be missed.
                model.revision = Some(r);
                fx.extend(reload(model));
            }
        }
        Err(e) => {
            fx.extend(abort_open_work(
                model,
                &ExitReason::Errored(e.message.clone()),
            ));
            link_failed(model, e);
            model.connection = match model.connection {
                Connection::Reconnecting { since }
                    if now - since >= model.behaviour.offline_after_ms =>
                {
                    Connection::Offline { since }
                }
                c @ (Connection::Reconnecting { .. } | Connection::Offline { .. }) => c,
                Connection::Live { .. } | Connection::Connecting => {
                    Connection::Reconnecting { since: now }
                }
            };
        }
    }
    if model.connection != before {
        model.dirty = true;
    }
}

/// A failed poll: its cause is kept for the status line and the field, and a cause
/// other than plain unreachability (a refused token, a gateway's 502, a refusal) is
/// also said in the source's own words on the notice line, once per change of cause.
fn link_failed(model: &mut Model, e: LinkError) {
    let changed = model.link_fault.as_ref().is_none_or(|l| l.fault != e.fault);
    if changed && e.fault != Fault::Unreachable {
        link_error(model, format!("{}: {}", e.fault.words(), e.message));
    }
    model.link_fault = Some(e);
}

/// The link is back: its cause goes, and so does what was said about it ("the source
/// is gone … reconnecting", "unauthorized: …") if that is still the notice on screen.
fn link_cleared(model: &mut Model) {
    model.link_fault = None;
    if let Some(said) = model.link_notice.take()
        && model.notice.as_ref().is_some_and(|n| n.text == said)
    {
        model.notice = None;
        model.dirty = true;
    }
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
        let kept = if model.drafts.contains_key(&id) {
            "Your text is kept as a draft: it is there when you open that question again."
        } else {
            "You had typed nothing yet."
        };
        super::modal::interrupt(model, &id, kept.into(), fx);
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
