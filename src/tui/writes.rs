//! The actions that write to the log in the person's name, and the checks before them:
//! accepting or sending an answer, readiness, pause, delegate, dismiss, snooze and
//! unsnooze. Each either
//! pushes the effect that records it or says in words why not, and pushes nothing.
//! The keys reach [`write`] only through `confirm.rs`, which runs it on a trial copy
//! first to show what would be recorded; a typed answer goes to `submit.rs` from the
//! field (sending it is its own confirmation). Pure: no IO, no clock.

use super::effect::{Effect, SnoozeChange};
use super::keymap::Action;
use super::modal::Modal;
use super::model::{Connection, Focus, Model};
use super::notice::{error, info};
use super::submit::submit;
use crate::domain::AnswerInput;
use crate::domain::readiness::ReadinessGate;

/// Why the current question cannot take an answer now, in words; `None` when it can.
pub(super) fn refusal(model: &Model) -> Option<String> {
    let Some(q) = model.current() else {
        return Some("no question is selected".into());
    };
    if q.status != "open" {
        return Some("this question is already answered".into());
    }
    if !q.can_answer {
        return Some(
            q.reason
                .clone()
                .unwrap_or_else(|| "you cannot answer this question".into()),
        );
    }
    if model.in_flight.is_some() {
        return Some("an answer is being sent".into());
    }
    super::outbox::already_queued(model, &q.question_id)
}

/// An answering key was refused. On a question this person cannot answer the refusal is
/// a modal: what they type next (believing they are in a field) must not act.
pub(super) fn refuse(model: &mut Model, why: String) {
    match model.current() {
        Some(q) if q.status == "open" && !q.can_answer => {
            model.modal = Some(Modal::Inert {
                question_id: q.question_id.clone(),
                reason: why,
            });
        }
        _ => error(model, why),
    }
}

fn readiness(model: &mut Model, gate: ReadinessGate, fx: &mut Vec<Effect>) {
    let project = model
        .project
        .clone()
        .or_else(|| model.current().map(|q| q.project_id.clone()));
    match project {
        Some(project) => {
            info(
                model,
                format!("recording \"{}\" for {project}…", gate.label()),
            );
            fx.push(Effect::Readiness { project, gate });
        }
        None => error(
            model,
            "select a question of the project first (or start with --project)".into(),
        ),
    }
}

/// The actions that write to the log, run for real (behind `confirm::gate`).
pub(super) fn write(model: &mut Model, action: Action, fx: &mut Vec<Effect>) {
    match action {
        Action::Accept => match refusal(model) {
            Some(why) => refuse(model, why),
            None => match model.current() {
                Some(q) if !q.prompts.is_empty() => error(
                    model,
                    "this question is answered by choosing options (i)".into(),
                ),
                Some(q) if q.sugestao.is_none() => {
                    error(model, "this question has no suggestion to accept".into())
                }
                _ => submit(model, AnswerInput::accept(), fx),
            },
        },
        Action::ImReady => readiness(model, ReadinessGate::ImReady, fx),
        Action::ArchitectureReady => readiness(model, ReadinessGate::ArchitectureReady, fx),
        Action::PauseAuto | Action::DelegateNow => super::auto::key(model, action, fx),
        Action::Dismiss => dismiss(model, fx),
        Action::Snooze => snooze(model, fx),
        Action::Unsnooze => unsnooze(model, fx),
        _ => {}
    }
}

/// Closes the selected question without an answer (its author only, like answering).
fn dismiss(model: &mut Model, fx: &mut Vec<Effect>) {
    if let Some(why) = refusal(model) {
        return refuse(model, why);
    }
    let Some(q) = model.current() else { return };
    let (question_id, project) = (q.question_id.clone(), q.project_id.clone());
    // The person closes it: leaving its form is their choice, not an interruption.
    if matches!(model.focus, Focus::Answer | Focus::Choices) {
        model.focus = Focus::Queue;
    }
    info(model, format!("dismissing {question_id}…"));
    fx.push(Effect::Dismiss {
        question_id,
        project,
    });
}

/// Why no snooze can be recorded now: the source is out of reach. A snooze is not
/// queued (the house's choice: "not now" said offline would land at an unknown time,
/// perhaps after the question came back), so it is refused and said so.
pub(super) fn snooze_offline(model: &Model) -> Option<String> {
    matches!(
        model.connection,
        Connection::Reconnecting { .. } | Connection::Offline { .. }
    )
    .then(|| {
        format!(
            "the source is {}: a snooze is not queued, nothing was recorded (snooze again when it is back)",
            model.down_words()
        )
    })
}

/// Records the snooze prompt's time (`snooze.rs` read it on Enter) for its question:
/// the author's, open, and the source in reach.
fn snooze(model: &mut Model, fx: &mut Vec<Effect>) {
    let Some(p) = model.snooze.prompt.clone() else {
        return;
    };
    let Some(until) = p.until else { return };
    if let Some(why) = snooze_offline(model) {
        return error(model, why);
    }
    let Some(q) = model
        .queue
        .items
        .iter()
        .find(|q| q.question_id == p.question_id)
    else {
        return error(
            model,
            format!("{} left the list: nothing was recorded", p.question_id),
        );
    };
    if q.status != "open" || !q.can_answer {
        let why = q.reason.clone().unwrap_or_else(|| "it is settled".into());
        return error(model, format!("{} cannot be snoozed: {why}", p.question_id));
    }
    let project = q.project_id.clone();
    model.snooze.prompt = None;
    info(model, format!("snoozing {}…", p.question_id));
    fx.push(Effect::Snooze {
        question_id: p.question_id,
        project,
        change: SnoozeChange::Until(until),
    });
}

/// Ends the selected question's snooze before its time (its author's, like answering).
fn unsnooze(model: &mut Model, fx: &mut Vec<Effect>) {
    let Some(q) = model.current() else {
        return error(model, "no question is selected".into());
    };
    if q.status == "open" && !q.can_answer {
        let why = q.reason.clone().unwrap_or_default();
        return refuse(model, why);
    }
    if !q.snooze.as_ref().is_some_and(|s| s.holds_at(model.now)) || q.status != "open" {
        return error(model, format!("{} is not snoozed", q.question_id));
    }
    if let Some(why) = snooze_offline(model) {
        return error(model, why);
    }
    let (question_id, project) = (q.question_id.clone(), q.project_id.clone());
    info(model, format!("unsnoozing {question_id}…"));
    fx.push(Effect::Snooze {
        question_id,
        project,
        change: SnoozeChange::Wake,
    });
}
