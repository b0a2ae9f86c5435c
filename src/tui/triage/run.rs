//! A confirmed triage run (`review.rs`), one question at a time: an accept through the
//! one submission path (`submit::submit_to`: its own idempotency key, the outbox when
//! the source cannot be reached), a dismiss through the dismiss effect. Each reply
//! settles its own question's line and sends the next, so one refusal never stops or
//! undoes the others; when none is left the report stands and the queue reloads. An
//! answer the cleanup hands to the outbox (the link lost before its reply) is reported
//! so, and the run goes on (offline, the rest queue too). Pure, part of `update`.

use super::super::effect::Effect;
use super::super::model::Model;
use super::super::notice::info;
use super::review::{Kind, Outcome, Plan, Stage, Waiting};
use crate::domain::AnswerInput;
use crate::wire::QuestionItem;

/// Sends the next question of the run, or ends it with the report.
pub(super) fn next(model: &mut Model, fx: &mut Vec<Effect>) {
    let Some(s) = &mut model.triage.screen else {
        return;
    };
    let at = s
        .items
        .iter()
        .position(|i| matches!(i.plan, Plan::Record { .. }) && i.outcome.is_none());
    let Some(at) = at else {
        s.stage = Stage::Report;
        s.waiting = None;
        let text = format!("{} — the report lists each question", s.summary());
        info(model, text);
        fx.extend(super::super::reload::reload(model));
        return;
    };
    let item = &mut s.items[at];
    item.outcome = Some(Outcome::Sending);
    let (id, project) = (item.question_id.clone(), item.project.clone());
    match s.kind {
        Kind::Accept => {
            super::super::submit::submit_to(model, &id, &project, AnswerInput::accept(), fx);
            if let Some(s) = &mut model.triage.screen {
                s.waiting = Some(Waiting::Submit(model.submit_seq));
            }
        }
        Kind::Dismiss => {
            s.waiting = Some(Waiting::Dismiss(id.clone()));
            fx.push(Effect::Dismiss {
                question_id: id,
                project,
            });
        }
    }
}

/// Settles the line the run waits for with `outcome`, then sends the next.
fn settle(model: &mut Model, outcome: Outcome, fx: &mut Vec<Effect>) {
    let Some(s) = &mut model.triage.screen else {
        return;
    };
    s.waiting = None;
    if let Some(item) = s
        .items
        .iter_mut()
        .find(|i| i.outcome == Some(Outcome::Sending))
    {
        item.outcome = Some(outcome);
    }
    model.dirty = true;
    if !model.quit {
        next(model, fx);
    }
}

fn waits_for(model: &Model, w: &Waiting) -> bool {
    model
        .triage
        .screen
        .as_ref()
        .is_some_and(|s| s.waiting.as_ref() == Some(w))
}

/// [`Msg::Answered`](super::super::effect::Msg::Answered): `true` when it was the run's.
pub(crate) fn answered(
    model: &mut Model,
    id: u64,
    question_id: &str,
    result: &Result<QuestionItem, String>,
    fx: &mut Vec<Effect>,
) -> bool {
    if !waits_for(model, &Waiting::Submit(id)) {
        return false;
    }
    model.in_flight = None;
    let outcome = match result {
        Ok(q) => {
            super::super::submit::remove_draft(model, question_id, fx);
            super::super::submit::close_forms(model, question_id);
            let (by, decision) = q.answer.as_ref().map_or_else(Default::default, |a| {
                (a.respondida_por.clone(), a.decision_event_id.clone())
            });
            Outcome::Recorded(format!(
                "accepted: {by}'s answer, decision {decision} (decisionSource: suggestion)"
            ))
        }
        Err(e) => Outcome::Failed(e.clone()),
    };
    settle(model, outcome, fx);
    true
}

/// [`Msg::Queued`](super::super::effect::Msg::Queued): `true` when it was the run's.
pub(crate) fn queued(model: &mut Model, id: u64, question_id: &str, fx: &mut Vec<Effect>) -> bool {
    if !waits_for(model, &Waiting::Submit(id)) {
        return false;
    }
    model.in_flight = None;
    super::super::submit::close_forms(model, question_id);
    let down = model.down_words();
    settle(
        model,
        Outcome::Queued(format!(
            "{down}: queued in the outbox, sent when the source is back"
        )),
        fx,
    );
    true
}

/// [`Msg::Dismissed`](super::super::effect::Msg::Dismissed): `true` when it was the run's.
pub(crate) fn dismissed(
    model: &mut Model,
    question_id: &str,
    result: &Result<(), String>,
    fx: &mut Vec<Effect>,
) -> bool {
    if !waits_for(model, &Waiting::Dismiss(question_id.to_string())) {
        return false;
    }
    let outcome = match result {
        Ok(()) => {
            super::super::submit::remove_draft(model, question_id, fx);
            Outcome::Recorded("dismissed: closed without an answer".into())
        }
        Err(e) => Outcome::Failed(e.clone()),
    };
    settle(model, outcome, fx);
    true
}

/// After every `update`: an answer of the run that the cleanup handed to the outbox
/// (the connection ended before its reply) is reported so, and the run goes on.
pub(crate) fn follow(model: &mut Model, fx: &mut Vec<Effect>) {
    let Some(Waiting::Submit(id)) = model.triage.screen.as_ref().and_then(|s| s.waiting.clone())
    else {
        return;
    };
    if model.in_flight.as_ref().is_some_and(|f| f.id == id) {
        return;
    }
    settle(
        model,
        Outcome::Queued(
            "the connection ended before the reply: handed to the outbox, delivered once when the source is back"
                .into(),
        ),
        fx,
    );
}
