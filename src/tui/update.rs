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
use super::model::{AnswerForm, Connection, Focus, Model};
use super::notice::{error, info, link_error};
pub use super::reload::reload;
use super::reload::{draft_changed, sync_form};

/// The effects of starting up: the first page, the counts, the outbox.
pub fn init(model: &mut Model) -> Vec<Effect> {
    let mut fx = reload(model);
    fx.push(Effect::ReadOutbox);
    fx
}

pub fn update(model: &mut Model, msg: Msg) -> Vec<Effect> {
    let mut fx = step(model, msg);
    super::triage::run::follow(model, &mut fx);
    super::interaction::follow_interaction(model, &mut fx);
    super::memory::follow(model, &mut fx);
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
            if !append {
                model.queue.reloading = false;
            }
            match page {
                Ok(list) => {
                    if append {
                        model.queue.items.extend(list.items);
                    } else {
                        model.queue.items = list.items;
                    }
                    model.queue.total = list.total;
                    model.queue.total_is_lower_bound = list.total_is_lower_bound;
                    model.queue.snoozed = list.snoozed;
                    model.queue.snoozed_next_return = list.snoozed_next_return;
                    model.queue.cursor = list.cursor;
                    model.queue.loaded_once = true;
                    if !append {
                        super::snooze::loaded(model, &mut fx);
                    }
                    model.reselect();
                    super::triage::prune(model);
                    if model.queue.to_end {
                        super::paging::continue_to_end(model, &mut fx);
                    } else {
                        // A reload may have replaced rows the selection was near the end of.
                        super::paging::maybe_load_more(model, &mut fx);
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
        } => {
            let result = result.map(|q| *q);
            if !super::triage::run::answered(model, id, &question_id, &result, &mut fx) {
                super::submit::answered(model, id, &question_id, result, &mut fx);
            }
        }
        Msg::Queued { id, question_id } => {
            if !super::triage::run::queued(model, id, &question_id, &mut fx) {
                super::submit::queued(model, id, &question_id);
            }
        }
        Msg::Snoozed {
            question_id,
            change,
            result,
        } => {
            let result = result.map(|q| *q);
            super::snooze::recorded(model, &question_id, change, result, &mut fx);
        }
        Msg::LookedUp {
            question_id,
            result,
        } => {
            let result = result.map(|q| *q);
            super::outbox::looked_up(model, &question_id, &result);
            super::interrupt::looked_up(model, &question_id, result);
        }
        Msg::Dismissed {
            question_id,
            result,
        } => {
            model.dirty = true;
            if super::triage::run::dismissed(model, &question_id, &result, &mut fx) {
                return fx;
            }
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
        Msg::Recalled {
            question_id,
            result,
        } => super::memory::recalled(model, &question_id, result),
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
        Msg::Tick { now } if model.queue.snoozed_next_return.is_some_and(|t| t <= now) => {
            // A snooze ended: the question is back in the open view on its own, and rings.
            let from = model.queue.snoozed_next_return.take().unwrap_or(now);
            fx = super::reload::reload(model);
            super::snooze::woke(model, from, now, &mut fx);
            super::auto::on_msg(model, Msg::Tick { now }, &mut fx);
        }
        m @ (Msg::AutoDelegate { .. } | Msg::AutoCommanded { .. } | Msg::Tick { .. }) => {
            super::auto::on_msg(model, m, &mut fx)
        }
        Msg::Quit => fx = abort_open_work(model, &ExitReason::Teardown(Teardown::Quit)),
        Msg::End(reason) => fx = abort_open_work(model, &reason),
        Msg::Outbox { entries } => super::outbox::snapshot(model, entries, &mut fx),
        Msg::Decisions { id, append, page } => super::decisions::loaded(model, id, append, page),
    }
    fx
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
            // The cause first, so the cleanup's notice says what it allows (a refused
            // token queues nothing); then the cause in the source's words over it.
            let message = e.message.clone();
            let said = link_failed(model, e);
            fx.extend(abort_open_work(model, &ExitReason::Errored(message)));
            if let Some(said) = said {
                link_error(model, said);
            }
            if let Some(l) = model.link_fault.clone() {
                super::interrupt::link_cause(model, &l);
            }
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

/// A failed poll: its cause is kept for the status line, the field and the cleanup, and
/// a cause other than plain unreachability (a refused token, a gateway's 502, a refusal)
/// is returned to be said in the source's own words on the notice line, once per change
/// of cause.
fn link_failed(model: &mut Model, e: LinkError) -> Option<String> {
    let changed = model.link_fault.as_ref().is_none_or(|l| l.fault != e.fault);
    let said = (changed && e.fault != Fault::Unreachable)
        .then(|| format!("{}: {}", e.fault.words(), e.message));
    model.link_fault = Some(e);
    said
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
