//! The modal layer over the screen. While a [`Modal`] is up it takes every key, so a
//! letter typed for an answer can never act as a command:
//!
//! - [`Modal::Interrupted`]: the field or form the person was typing in closed for a
//!   reason they did not choose (answered or closed elsewhere, the source lost, a
//!   reload). It says what happened in words and what became of the typed text (kept as
//!   a draft); only Esc or Enter close it.
//! - [`Modal::Inert`]: an answering key on a question this person cannot answer. The
//!   reason in words; Esc or Enter close it, and nothing typed meanwhile acts.
//!
//! - [`Modal::Confirm`]: a write waiting for its confirming key as the very next key;
//!   any other key disarms it (`confirm.rs`).
//!
//! Pure: `update` raises a modal, the view draws it. Ctrl-C still quits (the one
//! cleanup keeps every draft).

use crossterm::event::{KeyCode, KeyEvent};

use super::confirm::Confirm;
use super::effect::Effect;
use super::keymap::{Action, Keymap};
use super::link::Fault;
use super::model::{Model, ago};
use crate::wire::QuestionItem;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Modal {
    Interrupted(Interruption),
    Inert { question_id: String, reason: String },
    Confirm(Confirm),
}

/// What happened to the field the person was typing in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interruption {
    pub question_id: String,
    /// What happened, in words: "answered by ana 3 s ago: «…»".
    pub what: String,
    /// What became of the typed text: "your text is kept as a draft".
    pub kept: String,
    /// The question is being looked up to say who settled it ([`Effect::LookUp`]).
    pub looking_up: bool,
}

impl Modal {
    pub fn title(&self) -> &'static str {
        match self {
            Modal::Interrupted(_) => "The answer field closed",
            Modal::Inert { .. } => "You cannot answer this question",
            Modal::Confirm(_) => "Record this in your name?",
        }
    }

    /// The keys that close it, with what they do, from the live keymap.
    pub fn keys(&self, km: &Keymap) -> Vec<(String, &'static str)> {
        match self {
            Modal::Confirm(c) if c.disarmed => vec![("Esc".into(), "closes it")],
            Modal::Confirm(c) => {
                let again = km.keys_for(c.action);
                let again = again.split('/').next().unwrap_or_default();
                vec![
                    (format!("{again} or Enter"), "records it"),
                    ("Esc".into(), "cancels"),
                ]
            }
            _ => vec![("Esc or Enter".into(), "to go on")],
        }
    }

    /// The body, one paragraph a line.
    pub fn lines(&self) -> Vec<String> {
        match self {
            Modal::Interrupted(i) => vec![
                format!("{}: {}", i.question_id, i.what),
                i.kept.clone(),
                "Nothing you typed since was recorded.".into(),
            ],
            Modal::Inert {
                question_id,
                reason,
            } => vec![
                format!("{question_id}: {reason}."),
                "Its controls are read-only: nothing you type here is recorded.".into(),
            ],
            Modal::Confirm(c) => {
                let mut lines = c.what.clone();
                if let Some((id, text, verb)) = &c.draft {
                    lines.push(format!(
                        "You have a draft for {id}: «{}». {verb} discards it.",
                        clip(text, 60)
                    ));
                }
                if c.disarmed {
                    lines.push(
                        "Another key came first, so this will not be recorded: nothing typed here acts. Esc closes it."
                            .into(),
                    );
                }
                lines
            }
        }
    }
}

/// The field closed under the person: raise the notice, and ask the source who settled
/// the question when the list no longer shows it.
pub(super) fn interrupt(model: &mut Model, question_id: &str, kept: String, fx: &mut Vec<Effect>) {
    let listed = model
        .queue
        .items
        .iter()
        .find(|q| q.question_id == question_id)
        .filter(|q| q.status != "open" || !q.can_answer)
        .cloned();
    let looking_up = listed.is_none();
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
    }));
    model.dirty = true;
}

/// The source lost while typing: the notice names the cause, and says what the typed
/// text can still do under it. Only an unreachable server (or one behind a gateway that
/// cannot reach it) lets Enter queue the answer; a refused token or another refusal
/// would refuse it again, so nothing was sent or queued and typing does not help.
pub(super) fn source_lost(model: &mut Model, question_id: &str, why: String, fault: Fault) {
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
    }));
    model.dirty = true;
}

/// The reply of [`Effect::LookUp`]: fills in who settled the question.
pub(super) fn looked_up(
    model: &mut Model,
    question_id: &str,
    result: Result<QuestionItem, String>,
) {
    let now = model.now;
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
    model.dirty = true;
}

/// "answered by ana 3 s ago: «Pix first»", "dismissed by dev-a just now"…
pub fn settled(now: i64, q: &QuestionItem) -> String {
    if let Some(a) = &q.answer {
        let how = if a.aceitou_sugestao {
            " (accepted the suggestion)"
        } else {
            ""
        };
        return format!(
            "answered by {} {}{how}: «{}»",
            a.respondida_por,
            ago(now, a.answered_at),
            clip(&a.resposta, 60)
        );
    }
    if let Some(c) = &q.closed {
        let how = if c.reason == "rejected" {
            "dismissed"
        } else {
            "closed"
        };
        return format!("{how} by {} {}", c.by, ago(now, c.closed_at));
    }
    match (&q.reason, q.can_answer) {
        (Some(r), false) => format!("you can no longer answer it: {r}"),
        _ => "it left the list you were looking at".into(),
    }
}

pub(super) fn clip(s: &str, n: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= n {
        one
    } else {
        format!("{}…", one.chars().take(n - 1).collect::<String>())
    }
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
