//! What `update` asks the world to do, as data, and what comes back, as messages.
//!
//! The driver (`app.rs`) runs each [`Effect`] and answers with a [`Msg`] carrying the id
//! or generation it was given, so `update` can drop a reply that a newer request has
//! made stale. Nothing in this file does anything.

use crossterm::event::KeyEvent;

use crate::domain::AnswerInput;
use crate::domain::readiness::ReadinessGate;
use crate::engine::StatusFilter;
use crate::wire::{QuestionItem, QuestionList, Readiness, WaitingItem};

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Load the list again from its start, `pages` pages of [`super::model::PAGE`].
    Load {
        id: u64,
        filter: StatusFilter,
        pages: usize,
    },
    /// The next page after `cursor`, appended to generation `id`.
    LoadMore {
        id: u64,
        filter: StatusFilter,
        cursor: String,
    },
    /// The banner's open count and the "Waiting for you" tasks.
    LoadCounts {
        id: u64,
    },
    Submit {
        id: u64,
        question_id: String,
        project: String,
        input: AnswerInput,
    },
    /// Answers to a question with options: one list of labels or typed text per prompt.
    SubmitChoices {
        question_id: String,
        answers: Vec<Vec<String>>,
    },
    Readiness {
        project: String,
        gate: ReadinessGate,
    },
    SaveDraft {
        question_id: String,
        text: String,
    },
    RemoveDraft {
        question_id: String,
    },
    Bell,
    /// An OSC 9 / OSC 777 desktop notification.
    Notify {
        title: String,
        body: String,
    },
    /// Suspend the screen, edit `text` in `$EDITOR`, resume.
    OpenEditor {
        question_id: String,
        text: String,
    },
    Quit,
}

/// Everything `update` reacts to. Errors arrive as their one-line text.
#[derive(Debug, Clone)]
pub enum Msg {
    Key(KeyEvent),
    Paste(String),
    Resize,
    /// The clock moved on (the driver's poll), and the source's revision then.
    Revision {
        now: i64,
        revision: Result<i64, String>,
    },
    Loaded {
        id: u64,
        append: bool,
        page: Result<QuestionList, String>,
    },
    Counts {
        id: u64,
        open: Result<u64, String>,
        waiting: Result<Vec<WaitingItem>, String>,
    },
    Answered {
        id: u64,
        question_id: String,
        result: Result<Box<QuestionItem>, String>,
    },
    ChoicesSent {
        question_id: String,
        result: Result<(), String>,
    },
    ReadinessRecorded {
        gate: ReadinessGate,
        result: Result<Readiness, String>,
    },
    EditorDone {
        question_id: String,
        result: Result<String, String>,
    },
    /// A signal or a vanished terminal: leave cleanly.
    Quit,
}
