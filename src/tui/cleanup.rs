//! The one cleanup for every non-clean end of a client connection (SPEC §6, seed 001's
//! HUB-1), as a pure function: it changes the model and returns the effects the driver
//! runs. No terminal path clears anything itself; each names its [`ExitReason`] and
//! calls [`abort_open_work`], so a path added later cannot forget a clear.
//!
//! What a connection holds open while it works, and how each is released:
//!
//! | held | kept in | released by |
//! |---|---|---|
//! | the revision watcher (a poll in flight, its backstop timer) | `Model::attached`; the driver's poll task | [`Effect::StopWatcher`]: the driver aborts the poll and drops its late reply |
//! | an answer submission in flight, and its claim | `Model::in_flight` | [`Effect::Reconcile`]: the answer goes to the outbox under its own key (sent again on the next attach, applied once); the claim is lifted (one sent offline settles by its own reply) |
//! | the answer form and its draft | `Model::form`, `Model::drafts` | [`Effect::SaveDraft`] when the text is not on disk yet (never dropped); the form of an attached connection is reset and rebuilt from the draft by the next list (one opened offline stays: typing offline queues) |
//! | progress indicators | `queue.loading_more`, a "sending…" notice | cleared |
//! | a pending notification | `Model::counts_in_flight`: a counts reply that may ring the bell | `counts_generation` moves on, so that reply is dropped |
//! | the terminal's modes | the driver's `TerminalGuard` | [`Effect::Quit`]: the driver drops the guard (teardown only) |
//!
//! Idempotent: each release happens only while the thing is held, so a second call for
//! the same exit (a peer that dies AND errors, then a teardown) releases nothing twice.

use super::effect::Effect;
pub use super::exit::{ClearFlags, ExitReason, Teardown};
use super::link::Fault;
use super::model::{Focus, Model};
use super::notice::link_error;
use super::reload::draft_changed;

/// Releases everything the connection holds (see the module doc), once.
pub fn abort_open_work(model: &mut Model, reason: &ExitReason) -> Vec<Effect> {
    let flags = reason.flags();
    let mut fx = Vec::new();
    // Why the link broke, as the poll classified it (`update` keeps it before calling
    // here); a stall or a dead peer is unreachable whatever was said before.
    let fault = match reason {
        ExitReason::Errored(_) => model
            .link_fault
            .as_ref()
            .map_or(Fault::Unreachable, |l| l.fault),
        _ => Fault::Unreachable,
    };
    let was_attached = model.attached;

    // The watcher.
    if model.attached {
        model.attached = false;
        fx.push(Effect::StopWatcher);
    }
    // The submission in flight and its claim: its fate is unknown, so the outbox owns it.
    // One sent while offline belongs to no connection: its own reply (queued) settles it.
    let mut had_progress = model.queue.loading_more;
    if let Some(f) = model
        .in_flight
        .take_if(|_| was_attached || flags.release_terminal)
    {
        had_progress = true;
        fx.push(Effect::Reconcile {
            key: f.key,
            question_id: f.question_id,
            project: f.project,
            input: f.input,
        });
    }
    model.queue.loading_more = false;
    model.queue.reloading = false;
    // The draft: on disk before anything else happens to the form.
    draft_changed(model, &mut fx);
    // The session ends with the field open over its own interaction pause: lifted, or
    // the countdown would stay held on the server after the person has gone.
    if matches!(reason, ExitReason::Teardown(_)) {
        super::interaction::lift_interaction(model, &mut fx);
    }
    if flags.reset_form && was_attached && (model.form.is_some() || model.choices.is_some()) {
        let typing_in = match model.focus {
            Focus::Answer => model.form.as_ref().map(|f| f.question_id.clone()),
            Focus::Choices => model.choices.as_ref().map(|c| c.question_id.clone()),
            _ => None,
        };
        model.form = None;
        model.choices = None;
        if let Some(id) = typing_in {
            // The keys that keep coming are the notice's, never commands.
            model.focus = Focus::Queue;
            super::interrupt::source_lost(model, &id, reason.describe(), fault);
        }
    }
    // A pending notification.
    if model.counts_in_flight {
        model.counts_in_flight = false;
        model.counts_generation += 1;
    }
    // The terminal.
    if flags.release_terminal && !model.quit {
        model.quit = true;
        fx.push(Effect::Quit);
    }
    if !flags.release_terminal && (was_attached || had_progress || !fx.is_empty()) {
        let meanwhile = if fault.queues() {
            "reconnecting; answers go to the outbox"
        } else {
            "nothing is sent or queued until that changes"
        };
        link_error(model, format!("{} — {meanwhile}", reason.describe()));
    }
    model.dirty = true;
    fx
}
