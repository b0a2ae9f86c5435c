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
//! Data, below the model that holds it: `update` raises a modal (`interrupt.rs` for the
//! notices and their keys, `confirm.rs` for the confirmation), the view draws it. Ctrl-C
//! still quits (the one cleanup keeps every draft).

use super::keymap::{Action, Keymap};
use super::link::Fault;
use super::words::{ago, clip};
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
    /// The question is being looked up to say who settled it
    /// ([`Effect::LookUp`](super::effect::Effect::LookUp)).
    pub looking_up: bool,
    /// Raised by the link breaking: the words it was given and the cause it was told
    /// under. The first sign of a break (a connection cut) is taken as "offline";
    /// when the poll's cause turns out otherwise (a gateway's 502, a refused token), the
    /// notice is said again under it (`interrupt::link_cause`).
    pub lost: Option<(String, Fault)>,
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

/// A write waiting for its confirming key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirm {
    pub action: Action,
    /// What will be recorded, one sentence a line.
    pub what: Vec<String>,
    /// The draft this write discards, when there is one: (question id, its words, the
    /// verb that discards it: "Accepting", "Dismissing").
    pub draft: Option<(String, String, &'static str)>,
    /// Another key came first: nothing can be recorded from here; Esc closes.
    pub disarmed: bool,
}
