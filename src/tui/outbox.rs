//! The outbox as the TUI knows it (pure, part of `update`): the entries of this source as
//! last read from disk ([`Model::outbox`], from [`Msg::Outbox`]), and what each one's
//! change means.
//!
//! - A question's outbox state is its newest entry's: queued (pending), uncertain,
//!   delivered, conflict (answered or closed elsewhere first: the answer that won is
//!   looked up and shown beside the kept text), refused (with the reason).
//! - While a question has an answer queued or uncertain, no second answer is sent for it:
//!   the refusal says it is queued already (a second key would be a second answer).
//! - An entry that leaves pending/uncertain is announced once, by the diff of two
//!   snapshots: delivered answers remove their question's draft (its own answer is
//!   recorded now) and reload the queue; a conflict or a refusal keeps the draft and says
//!   so. An entry first seen already settled (an answer delivered at once) is not news.
//!
//! [`Msg::Outbox`]: super::effect::Msg::Outbox

use super::effect::Effect;
use super::model::Model;
use super::notice::{error, info};
use crate::source::outbox::{Entry, State};
use crate::wire::QuestionItem;

/// Not settled yet: delivered (again) on the next attach.
pub fn waiting(e: &Entry) -> bool {
    matches!(e.state, State::Pending | State::Uncertain)
}

/// How many of this source's answers are not settled: the status line's count.
pub fn pending(model: &Model) -> usize {
    model.outbox.iter().filter(|e| waiting(e)).count()
}

/// The newest entry for `question_id`.
pub fn latest<'a>(model: &'a Model, question_id: &str) -> Option<&'a Entry> {
    model
        .outbox
        .iter()
        .rev()
        .find(|e| e.question_id == question_id)
}

/// The answer as kept: the typed text, "accept the suggestion", or the chosen options.
pub fn kept_text(e: &Entry) -> String {
    if let Some(t) = &e.body.resposta {
        return t.clone();
    }
    if let Some(parts) = &e.body.answers {
        return parts
            .iter()
            .map(|p| p.join(", "))
            .collect::<Vec<_>>()
            .join(" · ");
    }
    "accept the suggestion".into()
}

/// The state in words: "queued — sent when the source is back", "refused — …".
pub fn state_words(e: &Entry) -> String {
    let detail = e.detail.as_deref().unwrap_or_default();
    match e.state {
        State::Pending => "queued — sent when the source is back".into(),
        State::Uncertain => {
            format!(
                "uncertain — the server's upstream may have it; asked again on delivery ({detail})"
            )
        }
        State::Delivered => "delivered".into(),
        State::Conflict => format!("conflict — {detail}"),
        State::Refused => format!("refused — {detail}"),
    }
}

/// Why a new answer to `question_id` must wait, when one is queued already.
pub fn already_queued(model: &Model, question_id: &str) -> Option<String> {
    latest(model, question_id).filter(|e| waiting(e)).map(|_| {
        let key = model.keymap.keys_for(super::keymap::Action::Outbox);
        format!("your answer is already queued in the outbox ({key} lists it); it is sent when the source is back")
    })
}

/// [`Msg::Outbox`](super::effect::Msg::Outbox): the new entries, and what changed.
pub(super) fn snapshot(model: &mut Model, entries: Vec<Entry>, fx: &mut Vec<Effect>) {
    let was = |key: &str| model.outbox.iter().find(|e| e.key == key).map(|e| e.state);
    let (mut delivered, mut troubled, mut conflicts) = (Vec::new(), Vec::new(), Vec::new());
    for e in &entries {
        let before = was(&e.key);
        if !before.is_some_and(|s| matches!(s, State::Pending | State::Uncertain)) {
            continue;
        }
        match e.state {
            State::Delivered => delivered.push(e.question_id.clone()),
            State::Conflict | State::Refused => {
                if e.state == State::Conflict {
                    conflicts.push(e.question_id.clone());
                }
                troubled.push(format!("{}: {}", e.question_id, state_words(e)))
            }
            State::Uncertain if before != Some(State::Uncertain) => {
                troubled.push(format!("{}: {}", e.question_id, state_words(e)))
            }
            State::Pending | State::Uncertain => {}
        }
    }
    if model.outbox != entries {
        model.dirty = true;
    }
    model.outbox = entries;
    for q in &delivered {
        if latest(model, q).is_some_and(|e| e.state == State::Delivered) {
            super::submit::remove_draft(model, q, fx);
        }
    }
    if !troubled.is_empty() {
        error(
            model,
            format!("{} — your text is kept", troubled.join("; ")),
        );
    } else if !delivered.is_empty() {
        let n = delivered.len();
        let s = if n == 1 { "" } else { "s" };
        info(model, format!("{n} queued answer{s} delivered"));
    }
    // Who won, to show beside the kept text.
    fx.extend(
        conflicts
            .into_iter()
            .map(|question_id| Effect::LookUp { question_id }),
    );
    if !delivered.is_empty() || !troubled.is_empty() {
        fx.extend(super::reload::reload(model));
    }
}

/// The reply of a [`Effect::LookUp`]: for a question our outbox holds in conflict, the
/// answer that won, in words.
pub(super) fn looked_up(
    model: &mut Model,
    question_id: &str,
    result: &Result<QuestionItem, String>,
) {
    let conflicted = latest(model, question_id).is_some_and(|e| e.state == State::Conflict);
    if let (true, Ok(q)) = (conflicted, result) {
        let words = super::modal::settled(model.now, q);
        model
            .settled_elsewhere
            .insert(question_id.to_string(), words);
        model.dirty = true;
    }
}
