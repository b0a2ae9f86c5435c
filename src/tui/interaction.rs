//! The author's open form and the bridged countdown (issue 13): the moment the session's
//! author opens the answer field or the options form on a bridged question that counts
//! (or waits to), its countdown is paused with reason `interaction` — no confirmation: it
//! records no decision, only the pause and its actor. Leaving the form without an answer
//! lifts it (a fresh window), and so does the session's end with the form open; sending
//! the answer settles the question, so nothing is lifted.

use super::auto::{may_pause, request};
use super::effect::Effect;
use super::model::{Focus, Model};
use crate::domain::delegation::PauseReason;
use crate::wire::AutoState;

/// Pauses the countdown the moment the author's field or options form opens on a bridged
/// question, and resumes it when the form closes without an answer (an answer sent, in
/// flight or queued settles it instead). Run after every update: every way a form opens
/// or closes goes through it.
pub(super) fn follow_interaction(model: &mut Model, fx: &mut Vec<Effect>) {
    let typing = match model.focus {
        Focus::Answer => model.form.as_ref().map(|f| f.question_id.clone()),
        Focus::Choices => model.choices.as_ref().map(|c| c.question_id.clone()),
        _ => None,
    };
    if model.auto.interaction.as_ref().map(|(id, _)| id) == typing.as_ref() {
        // Sending settles it: nothing to resume once the answer is out. A refused answer
        // leaves the author in the field over their own pause: theirs to resume again.
        let sending = model.in_flight.as_ref().map(|f| f.question_id.clone());
        let own_pause = typing
            .as_deref()
            .is_some_and(|id| interaction_paused(model, id));
        if let Some((id, resume)) = &mut model.auto.interaction {
            *resume = if sending.as_ref() == Some(id) {
                false
            } else {
                *resume || own_pause
            };
        }
        return;
    }
    lift_interaction(model, fx);
    let Some(id) = typing else { return };
    let paused = match model.queue.items.iter().find(|q| q.question_id == id) {
        Some(q) if q.status == "open" && q.can_answer => match request(model, q) {
            Some(r) if may_pause(r.state) => {
                fx.push(Effect::PauseAuto {
                    question_id: id.clone(),
                    reason: PauseReason::Interaction,
                });
                true
            }
            // Reopened over its own interaction pause: still the author's to resume.
            Some(_) => interaction_paused(model, &id),
            None => false,
        },
        _ => false,
    };
    model.auto.interaction = Some((id, paused));
}

/// The form that paused a countdown is gone (closed, or the session ends with it open):
/// the pause is lifted unless an answer sent, in flight or queued settles the question.
pub(super) fn lift_interaction(model: &mut Model, fx: &mut Vec<Effect>) {
    let Some((id, true)) = model.auto.interaction.take() else {
        return;
    };
    let open = model
        .queue
        .items
        .iter()
        .any(|q| q.question_id == id && q.status == "open");
    let answering = model
        .in_flight
        .as_ref()
        .is_some_and(|f| f.question_id == id)
        || super::outbox::already_queued(model, &id).is_some();
    if open && !answering {
        fx.push(Effect::ResumeAuto { question_id: id });
    }
}

/// The view shows `id` paused for an author's interaction.
pub(super) fn interaction_paused(model: &Model, id: &str) -> bool {
    model
        .queue
        .items
        .iter()
        .find(|q| q.question_id == id)
        .and_then(|q| request(model, q))
        .is_some_and(|r| {
            r.state == AutoState::Paused && r.pause_reason.as_deref() == Some("interaction")
        })
}
