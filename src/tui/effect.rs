//! What `update` asks the world to do, as data, and what comes back, as messages.
//!
//! The driver (`app.rs`) runs each [`Effect`] and answers with a [`Msg`] carrying the id
//! or generation it was given, so `update` can drop a reply that a newer request has
//! made stale. Nothing in this file does anything, and it names nothing of the TUI
//! above it: only the data it carries (`link.rs`'s cause, `exit.rs`'s reason).

use crossterm::event::KeyEvent;

use crate::domain::AnswerInput;
use crate::domain::delegation::PauseReason;
use crate::domain::readiness::ReadinessGate;
use crate::engine::ListQuery;
use crate::source::outbox::Entry;
use crate::wire::{
    AutoCommand, AutoDelegate, QuestionItem, QuestionList, Readiness, SimilarAnswer, WaitingItem,
};

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Load the list again from its start, `pages` pages of `query`, and the
    /// auto-delegate view ([`Msg::AutoDelegate`] under the same id).
    Load {
        id: u64,
        query: ListQuery,
        pages: usize,
    },
    /// The page `query` names (its cursor: after the loaded rows), appended to
    /// generation `id`.
    LoadMore {
        id: u64,
        query: ListQuery,
    },
    /// The banner's open count and the "Waiting for you" tasks.
    LoadCounts {
        id: u64,
    },
    /// Send an answer, typed text or chosen options, under its idempotency key
    /// (`Source::answer_once`); replied to with [`Msg::Answered`] or [`Msg::Queued`]
    /// under `id`, then [`Msg::Outbox`].
    Submit {
        id: u64,
        key: String,
        question_id: String,
        project: String,
        input: AnswerInput,
    },
    /// Stop the revision watcher of a dead connection: abort the poll in flight and drop
    /// any reply it may still send. The next tick is a reconnect attempt.
    StopWatcher,
    /// An answer whose fate is unknown: write it to the outbox under its key, to be
    /// reconciled (sent again, applied once) on the next attach or start.
    Reconcile {
        key: String,
        question_id: String,
        project: String,
        input: AnswerInput,
    },
    /// Deliver the outbox's pending answers for this source, then [`Msg::Outbox`].
    FlushOutbox,
    /// Read this source's outbox entries ([`Msg::Outbox`]).
    ReadOutbox,
    /// Close a question without an answer (`Source::dismiss`).
    Dismiss {
        question_id: String,
        project: String,
    },
    /// Snooze a question until a time, or end its snooze (`Source::snooze` /
    /// `Source::unsnooze`); replied to with [`Msg::Snoozed`]. Never queued offline.
    Snooze {
        question_id: String,
        project: String,
        change: SnoozeChange,
    },
    /// Fetch one question (`Source::question`) to say who settled it.
    LookUp {
        question_id: String,
    },
    Readiness {
        project: String,
        gate: ReadinessGate,
    },
    /// The memory of answers: read one question (`Source::question`) for the earlier
    /// answer it resembles, replied to with [`Msg::Recalled`]. Only reads.
    RecallSimilar {
        question_id: String,
        project: String,
    },
    /// Pause a bridged question's auto-answer (`Source::pause_auto`): `User` from the
    /// pause key, `Interaction` while the author has its answer field or options form open.
    PauseAuto {
        question_id: String,
        reason: PauseReason,
    },
    /// Lift the author's interaction pause: the field closed without an answer
    /// (`Source::resume_auto`, a fresh window).
    ResumeAuto {
        question_id: String,
    },
    /// Send a bridged question's auto-answer now (`Source::delegate_now`).
    DelegateNow {
        question_id: String,
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
    /// A page of the decision history (`Source::decisions`) in `project` (or the
    /// projects in view), replied to with [`Msg::Decisions`] under `id`.
    LoadDecisions {
        id: u64,
        project: Option<String>,
        query: crate::engine::DecisionQuery,
        append: bool,
    },
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
        revision: Result<i64, super::link::LinkError>,
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
        /// The newest open questions (one page, newest first): who may be notified.
        newest: Vec<QuestionItem>,
    },
    Answered {
        id: u64,
        question_id: String,
        result: Result<Box<QuestionItem>, String>,
    },
    /// The reply to [`Effect::Dismiss`].
    Dismissed {
        question_id: String,
        result: Result<(), String>,
    },
    /// The reply to [`Effect::Snooze`]: the question as recorded, or the refusal.
    Snoozed {
        question_id: String,
        change: SnoozeChange,
        result: Result<Box<QuestionItem>, String>,
    },
    /// The reply to [`Effect::LookUp`].
    LookedUp {
        question_id: String,
        result: Result<Box<QuestionItem>, String>,
    },
    /// The reply to [`Effect::RecallSimilar`].
    Recalled {
        question_id: String,
        result: Result<Option<SimilarAnswer>, String>,
    },
    ReadinessRecorded {
        gate: ReadinessGate,
        result: Result<Readiness, String>,
    },
    EditorDone {
        question_id: String,
        result: Result<String, String>,
    },
    /// The auto-delegate view that goes with the list of [`Effect::Load`] `id`; `None`
    /// when the source has no bridge.
    AutoDelegate {
        id: u64,
        view: Result<Option<AutoDelegate>, String>,
    },
    /// The reply to [`Effect::PauseAuto`], [`Effect::ResumeAuto`] or [`Effect::DelegateNow`]; a refusal as
    /// `code: message` (`question_submission_claimed: …`).
    AutoCommanded {
        question_id: String,
        action: AutoAction,
        result: Result<AutoCommand, String>,
    },
    /// The countdown's second went by (sent only while one is on screen).
    Tick {
        now: i64,
    },
    /// The quit key's twin for callers outside the keymap: a teardown.
    Quit,
    /// A connection or the session ends without a clean reply: every terminal path is one
    /// of these reasons, and all of them go through `cleanup::abort_open_work`.
    End(super::exit::ExitReason),
    /// The source could not be reached: the answer of submission `id` is in the outbox.
    Queued {
        id: u64,
        question_id: String,
    },
    /// This source's outbox entries as on disk, oldest first (after a read, a delivery,
    /// a submission or a hand-over).
    Outbox {
        entries: Vec<Entry>,
    },
    /// The reply to [`Effect::LoadDecisions`].
    Decisions {
        id: u64,
        append: bool,
        page: Result<QuestionList, String>,
    },
}

/// What a snooze effect records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnoozeChange {
    /// Hidden from the open view until this time (Unix ms), read by the TUI's prompt
    /// and sent as it was shown in the confirmation.
    Until(i64),
    /// Back in the open view now.
    Wake,
}

/// Pause or delegate, for messages and replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoAction {
    Pause,
    Delegate,
    /// The pause the author's open form makes (reason `interaction`).
    Interaction,
    /// The form closed without an answer: the interaction pause is lifted.
    Resume,
}
