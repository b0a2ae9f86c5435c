//! The events of the append-only log, with ADR 0214's names on the wire.
//!
//! Every change is one of these; every state (a question's status, a gate, a story) is a
//! fold over them. The JSON form is what the store keeps and what `oq serve` streams.

use serde::{Deserialize, Serialize};

use super::choices::{ClosedReason, Prompt, Upstream};
use super::delegation::{Claimant, PauseReason, PostKind};
use super::gate::Verdict;
use super::question::Afeta;
use super::readiness::ReadinessGate;
use super::settlement::DecisionSource;
use super::work::{SessionKind, WorkState};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Event {
    #[serde(rename = "session.started", rename_all = "camelCase")]
    SessionStarted {
        session_id: String,
        kind: SessionKind,
        author: String,
    },

    #[serde(rename = "story.created", rename_all = "camelCase")]
    StoryCreated { story_id: String, title: String },
    #[serde(rename = "story.state_changed", rename_all = "camelCase")]
    StoryStateChanged {
        story_id: String,
        from: WorkState,
        to: WorkState,
    },
    /// ADR 0212/0214 §8: an accepted correction; `questionId` when it cites an answer.
    #[serde(rename = "story.corrected", rename_all = "camelCase")]
    StoryCorrected {
        story_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        question_id: Option<String>,
    },

    #[serde(rename = "task.created", rename_all = "camelCase")]
    TaskCreated {
        task_id: String,
        story_id: String,
        session_id: String,
        title: String,
        correction_ceiling: u32,
    },
    #[serde(rename = "task.state_changed", rename_all = "camelCase")]
    TaskStateChanged {
        task_id: String,
        from: WorkState,
        to: WorkState,
    },

    /// ADR 0214 §1, field names as written there.
    #[serde(rename = "artifact.open_question")]
    OpenQuestion {
        #[serde(rename = "questionId")]
        question_id: String,
        pergunta: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sugestao: Option<String>,
        afeta: Afeta,
        autor: String,
        #[serde(rename = "sessionId")]
        session_id: String,
        /// `oq` or `opencode` (a bridged upstream); not in the ADR, so English.
        #[serde(default = "default_source")]
        source: String,
        /// The parts of a question with options (an imported OpenCode request).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        prompts: Vec<Prompt>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        upstream: Option<Upstream>,
    },
    #[serde(rename = "open_question.answered")]
    QuestionAnswered {
        #[serde(rename = "questionId")]
        question_id: String,
        resposta: String,
        #[serde(rename = "aceitouSugestao")]
        aceitou_sugestao: bool,
        #[serde(rename = "decisionEventId")]
        decision_event_id: String,
        #[serde(rename = "respondidaPor")]
        respondida_por: String,
        /// For a question with options: the choices, one array per part.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        answers: Vec<Vec<String>>,
        /// The client's key for this answer: a retry with the same key gets this answer
        /// back instead of `pergunta_ja_respondida` (an offline outbox delivering twice).
        #[serde(
            default,
            rename = "idempotencyKey",
            skip_serializing_if = "Option::is_none"
        )]
        idempotency_key: Option<String>,
        /// How it was decided; absent in events written before the field existed (then
        /// [`DecisionSource::for_answer`] of `aceitouSugestao`).
        #[serde(
            default,
            rename = "decisionSource",
            skip_serializing_if = "Option::is_none"
        )]
        decision_source: Option<DecisionSource>,
    },
    /// The question left the queue without an answer: dismissed by its author, or
    /// settled upstream. Like an answer, it happens at most once.
    #[serde(rename = "open_question.closed", rename_all = "camelCase")]
    QuestionClosed {
        question_id: String,
        reason: ClosedReason,
        by: String,
        /// How it was settled; absent in events written before the field existed (then
        /// [`DecisionSource::for_closure`] of `reason`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decision_source: Option<DecisionSource>,
    },
    /// Upstream's session was aborted with the question pending (it stays listed there).
    #[serde(rename = "open_question.orphaned", rename_all = "camelCase")]
    QuestionOrphaned { question_id: String },
    /// The declaring agent (or the session's author) retracted the question, and why;
    /// written with the closure (reason `withdrawn`) that takes it out of the queue.
    #[serde(rename = "open_question.withdrawn", rename_all = "camelCase")]
    QuestionWithdrawn {
        question_id: String,
        by: String,
        reason: String,
    },
    /// Its answerer said "not now": hidden from their queue until `until` (Unix ms),
    /// still open for everything else (`domain::snooze`). A later snooze replaces it.
    #[serde(rename = "open_question.snoozed", rename_all = "camelCase")]
    QuestionSnoozed {
        question_id: String,
        until: i64,
        by: String,
    },
    /// The snooze ended before its time: back in the queue now.
    #[serde(rename = "open_question.unsnoozed", rename_all = "camelCase")]
    QuestionUnsnoozed { question_id: String, by: String },
    /// RN-505's generic decision artifact, recorded with every answer.
    #[serde(rename = "decision_record", rename_all = "camelCase")]
    DecisionRecord {
        decision_event_id: String,
        actor: String,
        context: String,
        choice: String,
        consequences: Afeta,
        question_id: String,
    },

    /// emit_qa_verdict, as consolidated.
    #[serde(rename = "qa.verdict", rename_all = "camelCase")]
    QaVerdict {
        task_id: String,
        verdict: Verdict,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        subspecialty: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        open_question_id: Option<String>,
    },
    #[serde(rename = "gate.correction_counted", rename_all = "camelCase")]
    GateCorrectionCounted {
        task_id: String,
        corrections: u32,
        ceiling: u32,
    },
    #[serde(rename = "gate.approved", rename_all = "camelCase")]
    GateApproved { task_id: String },
    #[serde(rename = "gate.exhausted", rename_all = "camelCase")]
    GateExhausted { task_id: String, corrections: u32 },
    /// ADR 0207's parking, here on a pending user decision.
    #[serde(rename = "gate.rescue_parked", rename_all = "camelCase")]
    GateRescueParked {
        task_id: String,
        question_id: String,
    },
    /// GateRescuer.retomar_estacionado: the answer turns the gate back on.
    #[serde(rename = "gate.resumed", rename_all = "camelCase")]
    GateResumed {
        task_id: String,
        question_id: String,
        decision_event_id: String,
    },

    #[serde(rename = "readiness.recorded", rename_all = "camelCase")]
    ReadinessRecorded {
        gate: ReadinessGate,
        by: String,
        open_questions: u64,
    },

    /// Claude Code's hook stopped waiting for an answer in oq and let Claude Code show
    /// its own dialog (`to`: `claude-code`): the question stays open, but only that
    /// dialog (or its Esc) settles it now; an answer in oq would reach nobody.
    #[serde(rename = "open_question.handed_off", rename_all = "camelCase")]
    QuestionHandedOff {
        question_id: String,
        to: String,
        by: String,
    },
    /// A bridge armed the auto-answer timer of an imported question: it answers at
    /// `deadline` (Unix ms) unless someone does first. Kept so a restart keeps it.
    #[serde(rename = "open_question.countdown", rename_all = "camelCase")]
    QuestionCountdown { question_id: String, deadline: i64 },
    /// A person paused a bridged question's timer.
    #[serde(rename = "open_question.paused", rename_all = "camelCase")]
    QuestionPaused {
        question_id: String,
        reason: PauseReason,
        by: String,
    },
    /// A person lifted the pause: a fresh window.
    #[serde(rename = "open_question.resumed", rename_all = "camelCase")]
    QuestionResumed { question_id: String, by: String },
    /// A bridge sent a reply or a reject upstream for this question, before its outcome
    /// is known: the person's answer, the timer's or a delegating person's
    /// continuation. The settlement that follows says how it ended; none after it
    /// means the outcome is still unknown (never sent again).
    #[serde(rename = "open_question.submitted", rename_all = "camelCase")]
    QuestionSubmitted {
        question_id: String,
        claimant: Claimant,
        post: PostKind,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        answers: Vec<Vec<String>>,
        by: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        idempotency_key: Option<String>,
    },
    /// An admin changed an OpenCode upstream's auto-delegate toggle.
    #[serde(rename = "bridge.settings_changed", rename_all = "camelCase")]
    BridgeSettingsChanged {
        upstream: String,
        enabled: bool,
        by: String,
    },
}

fn default_source() -> String {
    "oq".to_string()
}

impl Event {
    pub fn type_name(&self) -> &'static str {
        match self {
            Event::SessionStarted { .. } => "session.started",
            Event::StoryCreated { .. } => "story.created",
            Event::StoryStateChanged { .. } => "story.state_changed",
            Event::StoryCorrected { .. } => "story.corrected",
            Event::TaskCreated { .. } => "task.created",
            Event::TaskStateChanged { .. } => "task.state_changed",
            Event::OpenQuestion { .. } => "artifact.open_question",
            Event::QuestionAnswered { .. } => "open_question.answered",
            Event::QuestionClosed { .. } => "open_question.closed",
            Event::QuestionOrphaned { .. } => "open_question.orphaned",
            Event::QuestionWithdrawn { .. } => "open_question.withdrawn",
            Event::QuestionSnoozed { .. } => "open_question.snoozed",
            Event::QuestionUnsnoozed { .. } => "open_question.unsnoozed",
            Event::DecisionRecord { .. } => "decision_record",
            Event::QaVerdict { .. } => "qa.verdict",
            Event::GateCorrectionCounted { .. } => "gate.correction_counted",
            Event::GateApproved { .. } => "gate.approved",
            Event::GateExhausted { .. } => "gate.exhausted",
            Event::GateRescueParked { .. } => "gate.rescue_parked",
            Event::GateResumed { .. } => "gate.resumed",
            Event::ReadinessRecorded { .. } => "readiness.recorded",
            Event::QuestionHandedOff { .. } => "open_question.handed_off",
            Event::QuestionCountdown { .. } => "open_question.countdown",
            Event::QuestionPaused { .. } => "open_question.paused",
            Event::QuestionResumed { .. } => "open_question.resumed",
            Event::QuestionSubmitted { .. } => "open_question.submitted",
            Event::BridgeSettingsChanged { .. } => "bridge.settings_changed",
        }
    }

    /// The session whose log holds this event, when there is one.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Event::SessionStarted { session_id, .. }
            | Event::OpenQuestion { session_id, .. }
            | Event::TaskCreated { session_id, .. } => Some(session_id),
            _ => None,
        }
    }

    pub fn question_id(&self) -> Option<&str> {
        match self {
            Event::OpenQuestion { question_id, .. }
            | Event::QuestionAnswered { question_id, .. }
            | Event::QuestionClosed { question_id, .. }
            | Event::QuestionOrphaned { question_id }
            | Event::QuestionWithdrawn { question_id, .. }
            | Event::QuestionSnoozed { question_id, .. }
            | Event::QuestionUnsnoozed { question_id, .. }
            | Event::DecisionRecord { question_id, .. }
            | Event::GateRescueParked { question_id, .. }
            | Event::GateResumed { question_id, .. }
            | Event::QuestionHandedOff { question_id, .. }
            | Event::QuestionCountdown { question_id, .. }
            | Event::QuestionPaused { question_id, .. }
            | Event::QuestionResumed { question_id, .. }
            | Event::QuestionSubmitted { question_id, .. } => Some(question_id),
            Event::StoryCorrected { question_id, .. }
            | Event::QaVerdict {
                open_question_id: question_id,
                ..
            } => question_id.as_deref(),
            _ => None,
        }
    }

    pub fn task_id(&self) -> Option<&str> {
        match self {
            Event::TaskCreated { task_id, .. }
            | Event::TaskStateChanged { task_id, .. }
            | Event::QaVerdict { task_id, .. }
            | Event::GateCorrectionCounted { task_id, .. }
            | Event::GateApproved { task_id }
            | Event::GateExhausted { task_id, .. }
            | Event::GateRescueParked { task_id, .. }
            | Event::GateResumed { task_id, .. } => Some(task_id),
            _ => None,
        }
    }

    pub fn story_id(&self) -> Option<&str> {
        match self {
            Event::StoryCreated { story_id, .. }
            | Event::StoryStateChanged { story_id, .. }
            | Event::StoryCorrected { story_id, .. }
            | Event::TaskCreated { story_id, .. } => Some(story_id),
            _ => None,
        }
    }
}

/// An event as the log holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredEvent {
    /// The position in the whole log: internal (ordering, the store's own bookkeeping),
    /// never shown to a client, since it counts every project's changes.
    pub seq: i64,
    /// The position within its project (1, 2, 3…, no gap): the revision that project's
    /// event stream announces and `Last-Event-ID` names.
    pub project_seq: i64,
    pub event_id: String,
    pub project_id: String,
    pub actor: String,
    pub at: i64,
    pub event: Event,
}
