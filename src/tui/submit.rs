//! The one submission state, for typed text and chosen options alike (pure, part of
//! `update`):
//!
//! - [`submit`] claims [`Model::in_flight`] with a fresh id and idempotency key and sends
//!   one [`Effect::Submit`]; while it is out no second answer is sent (the refusal says
//!   so). Both forms go through it, so an options answer has its key and its outbox
//!   entry like a text one (`Source::answer_once`).
//! - Its reply ([`Msg::Answered`] or [`Msg::Queued`]) carries that id; one with another
//!   id is stale (the cleanup already handed that answer to the outbox) and changes
//!   nothing.
//! - Recorded: the draft is removed, the form closed. Queued (the source unreachable):
//!   the form closes and the draft stays on disk until the outbox reports that very
//!   answer delivered (`outbox.rs`). Refused: the form and the draft stay, the refusal
//!   is on the notice line.

use super::effect::Effect;
use super::model::{Focus, InFlight, Model};
use super::notice::{error, info};
use crate::domain::AnswerInput;
use crate::wire::QuestionItem;

/// Sends `input` as the answer to the selected question (the caller checked it may).
pub(super) fn submit(model: &mut Model, input: AnswerInput, fx: &mut Vec<Effect>) {
    let Some(q) = model.current() else { return };
    let (question_id, project) = (q.question_id.clone(), q.project_id.clone());
    submit_to(model, &question_id, &project, input, fx);
}

/// Sends `input` as the answer to `question_id` (a triage run's, one at a time).
pub(super) fn submit_to(
    model: &mut Model,
    question_id: &str,
    project: &str,
    input: AnswerInput,
    fx: &mut Vec<Effect>,
) {
    let (question_id, project) = (question_id.to_string(), project.to_string());
    model.submit_seq += 1;
    let id = model.submit_seq;
    let key = format!("{}-{id}", model.client_nonce);
    model.in_flight = Some(InFlight {
        id,
        key: key.clone(),
        question_id: question_id.clone(),
        project: project.clone(),
        input: input.clone(),
    });
    info(model, "sending…".into());
    fx.push(Effect::Submit {
        id,
        key,
        question_id,
        project,
        input,
    });
}

/// Whether a reply with `id` is for the answer in flight (else it is stale); if so the
/// claim is lifted.
fn settle_claim(model: &mut Model, id: u64) -> bool {
    if model.in_flight.as_ref().is_none_or(|f| f.id != id) {
        return false;
    }
    model.in_flight = None;
    model.dirty = true;
    true
}

/// [`Msg::Answered`](super::effect::Msg::Answered).
pub(super) fn answered(
    model: &mut Model,
    id: u64,
    question_id: &str,
    result: Result<QuestionItem, String>,
    fx: &mut Vec<Effect>,
) {
    if !settle_claim(model, id) {
        return;
    }
    match result {
        Ok(q) => {
            let how = match &q.answer {
                Some(a) if a.aceitou_sugestao => "suggestion accepted",
                _ => "answer recorded",
            };
            info(model, format!("{how}: {}", first_line(&q.pergunta)));
            remove_draft(model, question_id, fx);
            close_forms(model, question_id);
            fx.extend(super::reload::reload(model));
        }
        Err(e) => error(model, e),
    }
}

/// [`Msg::Queued`](super::effect::Msg::Queued): the answer is on disk in the outbox.
pub(super) fn queued(model: &mut Model, id: u64, question_id: &str) {
    if !settle_claim(model, id) {
        return;
    }
    close_forms(model, question_id);
    let down = model.down_words();
    info(
        model,
        format!("{down} — your answer to {question_id} is queued, sent when the source is back"),
    );
}

/// The draft of an answer that is recorded has done its job.
pub(super) fn remove_draft(model: &mut Model, question_id: &str, fx: &mut Vec<Effect>) {
    if model.drafts.remove(question_id).is_some() {
        fx.push(Effect::RemoveDraft {
            question_id: question_id.to_string(),
        });
    }
}

/// The answer left its form: the field or the options form closes, the focus goes back
/// to the queue.
pub(super) fn close_forms(model: &mut Model, question_id: &str) {
    if model
        .form
        .as_ref()
        .is_some_and(|f| f.question_id == question_id)
    {
        model.form = None;
    }
    if model
        .choices
        .as_ref()
        .is_some_and(|c| c.question_id == question_id)
    {
        model.choices = None;
    }
    if matches!(model.focus, Focus::Answer | Focus::Choices) {
        model.focus = Focus::Queue;
    }
}

fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or_default();
    if line.chars().count() > 60 {
        format!("{}…", line.chars().take(59).collect::<String>())
    } else {
        line.into()
    }
}
