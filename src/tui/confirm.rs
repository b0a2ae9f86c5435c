//! Every key that writes to the log in the person's name is deliberate (issue 11,
//! item 6): accept, "I'm ready", "Confirm architecture ready", pause, delegate,
//! dismiss, snooze and unsnooze first show exactly what will be recorded, and wait for
//! the same key again or Enter as the very next key; Esc cancels. Any other key means
//! the person is not answering this question — typically typing a sentence where they
//! thought a field was open, whose letters would otherwise confirm it (the `a` of
//! "cards") or the Enter at its end. So the first other key disarms the question: from
//! then on it records nothing, whatever arrives, swallows every key, and only Esc
//! closes it. (The snooze's confirmation stands over its prompt: Esc there goes back to
//! the prompt with the text as typed.)
//!
//! How, without a second copy of each action's rules: the action is run on a clone of
//! the model (`update` is pure, so a trial costs nothing but memory). If the trial wants
//! to write, its effects are described in words and the real model only raises
//! [`Modal::Confirm`]; a trial that writes nothing (a refusal) is applied as it is. The
//! confirming key runs the action again on the model as it is then, and records only if
//! it still describes the same write; otherwise nothing is recorded and a notice says so.
//!
//! `[tui] confirm = false` skips the question, except that accepting over a draft is
//! always asked first: the draft would be discarded.

use crossterm::event::{KeyCode, KeyEvent};

use super::effect::{Effect, SnoozeChange};
use super::keymap::Action;
pub use super::modal::Confirm;
use super::modal::Modal;
use super::model::Model;
use crate::domain::date::format_day_time;

/// A writing action's key: run it, or ask first.
pub(super) fn gate(model: &mut Model, action: Action, fx: &mut Vec<Effect>) {
    let (trial, tfx) = try_write(model, action);
    let what = describe(model, &tfx);
    if what.is_empty() {
        *model = trial;
        fx.extend(tfx);
        return;
    }
    let draft = discarded_draft(model, &tfx);
    if !model.behaviour.confirm && draft.is_none() {
        *model = trial;
        fx.extend(tfx);
        return;
    }
    model.modal = Some(Modal::Confirm(Confirm {
        action,
        what,
        draft,
        disarmed: false,
    }));
    model.dirty = true;
}

/// A key while a confirmation stands.
pub(super) fn key(model: &mut Model, k: &KeyEvent, fx: &mut Vec<Effect>) {
    let Some(Modal::Confirm(c)) = &model.modal else {
        return;
    };
    let c = c.clone();
    let again = model.keymap.normal(k) == Some(c.action);
    if k.code == KeyCode::Esc {
        model.modal = None;
        super::notice::info(model, "cancelled: nothing was recorded".into());
        return;
    }
    if c.disarmed {
        return;
    }
    if !(again || k.code == KeyCode::Enter) {
        if let Some(Modal::Confirm(c)) = &mut model.modal {
            c.disarmed = true;
        }
        model.dirty = true;
        return;
    }
    model.modal = None;
    let (trial, tfx) = try_write(model, c.action);
    if describe(model, &tfx) == c.what {
        *model = trial;
        fx.extend(tfx);
    } else {
        super::notice::error(
            model,
            "the question changed meanwhile: nothing was recorded (look again, then retry)".into(),
        );
    }
}

fn try_write(model: &Model, action: Action) -> (Model, Vec<Effect>) {
    let mut trial = model.clone();
    let mut tfx = Vec::new();
    super::writes::write(&mut trial, action, &mut tfx);
    (trial, tfx)
}

/// The writes among `fx`, in words; empty when nothing would be recorded.
fn describe(model: &Model, fx: &[Effect]) -> Vec<String> {
    let who = &model.user;
    let suggestion = |id: &str| {
        model
            .queue
            .items
            .iter()
            .find(|q| q.question_id == id)
            .and_then(|q| q.sugestao.clone())
            .unwrap_or_default()
    };
    fx.iter()
        .filter_map(|e| match e {
            Effect::Submit {
                question_id, input, ..
            } if input.aceitar_sugestao == Some(true) => Some(format!(
                "Accept the suggestion as the answer to {question_id}, in your name ({who}): «{}»",
                suggestion(question_id)
            )),
            Effect::Submit {
                question_id, input, ..
            } => Some(format!(
                "Answer {question_id} in your name ({who}): «{}»",
                input.resposta.clone().unwrap_or_default()
            )),
            Effect::Readiness { project, gate } => Some(format!(
                "Record \"{}\" for project {project}, in your name ({who}).",
                gate.label()
            )),
            Effect::PauseAuto {
                question_id,
                reason,
            } => Some(format!(
                "Pause the auto-answer of {question_id} (reason: {}), in your name ({who}).",
                reason.as_str()
            )),
            Effect::DelegateNow { question_id } => Some(format!(
                "Delegate {question_id} now: the bridge sends its auto-answer upstream, in your name ({who})."
            )),
            Effect::Dismiss { question_id, .. } => Some(format!(
                "Dismiss {question_id}: close it without an answer, in your name ({who})."
            )),
            Effect::Snooze {
                question_id,
                change: SnoozeChange::Until(until),
                ..
            } => Some(format!(
                "Snooze {question_id} until {} UTC, in your name ({who}): it leaves your open view until then; it stays open for its agent.",
                format_day_time(*until)
            )),
            Effect::Snooze {
                question_id,
                change: SnoozeChange::Wake,
                ..
            } => Some(format!(
                "Unsnooze {question_id}: back in your open view now, in your name ({who})."
            )),
            _ => None,
        })
        .collect()
}

/// Accepting the suggestion over a draft of another answer, or dismissing a question
/// with a draft, discards that draft: (question id, the draft in words, the verb).
fn discarded_draft(model: &Model, fx: &[Effect]) -> Option<(String, String, &'static str)> {
    let (question_id, verb) = fx.iter().find_map(|e| match e {
        Effect::Submit {
            question_id, input, ..
        } if input.aceitar_sugestao == Some(true) => Some((question_id, "Accepting")),
        Effect::Dismiss { question_id, .. } => Some((question_id, "Dismissing")),
        _ => None,
    })?;
    let draft = model
        .drafts
        .get(question_id)
        .filter(|d| !d.trim().is_empty())?;
    let options = model
        .queue
        .items
        .iter()
        .any(|q| &q.question_id == question_id && !q.prompts.is_empty());
    let words = if options {
        super::choices::draft_summary(draft)
    } else {
        draft.clone()
    };
    Some((question_id.clone(), words, verb))
}
