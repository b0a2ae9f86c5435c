//! What raises and closes [`Modal::Interrupted`]: the field or form the person was
//! typing in closed under them (answered or closed elsewhere, the source lost); the
//! look-up that names who settled the question; the keys while any notice is up (only
//! Esc or Enter close it; Ctrl-C still quits). The modal itself is data (`modal.rs`).

use crossterm::event::{KeyCode, KeyEvent};

use super::effect::Effect;
use super::keymap::Action;
use super::link::{Fault, LinkError};
use super::modal::{Interruption, Modal, settled};
use super::model::Model;
use crate::wire::QuestionItem;

/// What became of the typed text, told by whether the question still takes an answer:
/// open, the draft comes back with the field; settled (or no longer theirs), nothing can
/// send it, so the notice says where it stays rather than promising it back.
fn kept(model: &Model, question_id: &str, answerable: bool) -> String {
    if !model.drafts.contains_key(question_id) {
        return "You had typed nothing yet.".into();
    }
    if answerable {
        "Your text is kept as a draft: it is there when you open that question again.".into()
    } else {
        format!(
            "This question takes no answer now, so your text was not sent: it stays \
             on disk as drafts/{question_id}.txt in oq's data directory."
        )
    }
}

/// The field closed under the person: raise the notice, and ask the source who settled
/// the question when the list no longer shows it.
pub(super) fn interrupt(model: &mut Model, question_id: &str, fx: &mut Vec<Effect>) {
    let listed = model
        .queue
        .items
        .iter()
        .find(|q| q.question_id == question_id)
        .filter(|q| q.status != "open" || !q.can_answer)
        .cloned();
    let looking_up = listed.is_none();
    // Until the look-up says otherwise, a question the list no longer shows may be open.
    let kept = kept(model, question_id, looking_up);
    let what = match listed {
        Some(q) => settled(model.now, &q),
        None => "answered or closed elsewhere (looking up who…)".into(),
    };
    if looking_up {
        fx.push(Effect::LookUp {
            question_id: question_id.to_string(),
        });
    }
    model.modal = Some(Modal::Interrupted(Interruption {
        question_id: question_id.to_string(),
        what,
        kept,
        looking_up,
        lost: None,
    }));
    model.dirty = true;
}

/// The source lost while typing: the notice names the cause, and says what the typed
/// text can still do under it. Only an unreachable server (or one behind a gateway that
/// cannot reach it) lets Enter queue the answer; a refused token or another refusal
/// would refuse it again, so nothing was sent or queued and typing does not help.
pub(super) fn source_lost(model: &mut Model, question_id: &str, why: String, fault: Fault) {
    let lost = Some((why.clone(), fault));
    let draft = if model.drafts.contains_key(question_id) {
        "Your text is kept as a draft"
    } else {
        "You had typed nothing yet"
    };
    let (what, kept) = match fault {
        Fault::Unreachable => (
            why,
            format!(
                "{draft}. Offline, the field still works: open it again and Enter queues \
                 your answer in the outbox, sent when the source is back."
            ),
        ),
        Fault::Gateway(_) => (
            format!("{}: {why}", fault.words()),
            format!(
                "{draft}. The server behind the gateway cannot be reached, so the field \
                 still works: open it again and Enter queues your answer in the outbox, \
                 sent when the gateway relays again."
            ),
        ),
        Fault::Unauthorized => (
            format!("unauthorized: {why}"),
            format!(
                "The server refused your token: nothing was sent or queued, and typing \
                 here cannot change that. {draft}: give oq a valid token (--token, \
                 OQ_TOKEN or the profile) and start it again."
            ),
        ),
        Fault::Refused(code) => (
            format!("{}: {why}", fault.words()),
            format!(
                "The server refused ({code}): nothing was sent or queued. {draft}, there \
                 when the link is back."
            ),
        ),
    };
    model.modal = Some(Modal::Interrupted(Interruption {
        question_id: question_id.to_string(),
        what,
        kept,
        looking_up: false,
        lost,
    }));
    model.dirty = true;
}

/// The poll classified why the link is down: a notice raised under another cause (the
/// connection cut that came first reads as offline) is said again under this one, so a
/// gateway's 502 or a refused token is named, and Enter is promised only where it queues.
/// The words become the poll's own ("… refused the token"), not the cut's.
pub(super) fn link_cause(model: &mut Model, link: &LinkError) {
    let Some(Modal::Interrupted(i)) = &model.modal else {
        return;
    };
    if let Some((_, was)) = &i.lost
        && *was != link.fault
    {
        let id = i.question_id.clone();
        let why = format!("the source failed: {}", link.message);
        source_lost(model, &id, why, link.fault);
    }
}

/// The reply of [`Effect::LookUp`]: fills in who settled the question.
pub(super) fn looked_up(
    model: &mut Model,
    question_id: &str,
    result: Result<QuestionItem, String>,
) {
    let now = model.now;
    let answerable = match &result {
        Ok(q) => q.status == "open" && q.can_answer,
        Err(_) => false,
    };
    let words = kept(model, question_id, answerable);
    let Some(Modal::Interrupted(i)) = &mut model.modal else {
        return;
    };
    if i.question_id != question_id || !i.looking_up {
        return;
    }
    i.looking_up = false;
    i.what = match result {
        Ok(q) => settled(now, &q),
        Err(e) => format!("no longer open here (the source says: {e})"),
    };
    i.kept = words;
    model.dirty = true;
}

/// A key while a notice is up: it never reaches the keymap. Esc or Enter close it.
pub(super) fn key(model: &mut Model, k: &KeyEvent) {
    if matches!(k.code, KeyCode::Esc | KeyCode::Enter) {
        model.modal = None;
    }
}

/// Ctrl-C (the quit key with Ctrl) ends oq from under any modal, through the one cleanup.
pub(super) fn is_hard_quit(model: &Model, k: &KeyEvent) -> bool {
    k.modifiers
        .contains(crossterm::event::KeyModifiers::CONTROL)
        && model.keymap.normal(k) == Some(Action::Quit)
}
