//! Sessions, stories and tasks: their kinds, states and ADR 0212's correction rule as
//! revised by ADR 0214 §8.

use serde::{Deserialize, Serialize};
use std::str::FromStr;

use super::error::{ErrorCode, OqError};
use super::events::Event;
use super::gate::{Gate, GateEvent};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionKind {
    Conversation,
    /// Its author is whoever activated execution (ADR 0214 §3).
    Execution,
}

impl SessionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionKind::Conversation => "conversation",
            SessionKind::Execution => "execution",
        }
    }
}

impl FromStr for SessionKind {
    type Err = OqError;
    fn from_str(s: &str) -> Result<Self, OqError> {
        match s {
            "conversation" => Ok(SessionKind::Conversation),
            "execution" => Ok(SessionKind::Execution),
            _ => Err(OqError::invalid(
                ErrorCode::InvalidKind,
                format!("session kind {s:?}: expected conversation or execution"),
            )),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub session_id: String,
    pub project_id: String,
    pub kind: SessionKind,
    pub author: String,
}

/// The states a story and a task move through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkState {
    Draft,
    Ready,
    InProgress,
    InReview,
    Done,
    Archived,
}

impl WorkState {
    pub const ALL: [WorkState; 6] = [
        WorkState::Draft,
        WorkState::Ready,
        WorkState::InProgress,
        WorkState::InReview,
        WorkState::Done,
        WorkState::Archived,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            WorkState::Draft => "draft",
            WorkState::Ready => "ready",
            WorkState::InProgress => "in_progress",
            WorkState::InReview => "in_review",
            WorkState::Done => "done",
            WorkState::Archived => "archived",
        }
    }
}

impl FromStr for WorkState {
    type Err = OqError;
    fn from_str(s: &str) -> Result<Self, OqError> {
        WorkState::ALL.into_iter().find(|w| w.as_str() == s).ok_or_else(|| {
            OqError::invalid(
                ErrorCode::InvalidState,
                format!("unknown state {s:?}: expected draft, ready, in_progress, in_review, done or archived"),
            )
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Story {
    pub story_id: String,
    pub project_id: String,
    pub title: String,
    pub state: WorkState,
}

impl Story {
    /// ADR 0212: archiving stays draft-only; any other move is free.
    pub fn check_move(&self, to: WorkState) -> Result<(), OqError> {
        if to == WorkState::Archived && self.state != WorkState::Draft {
            return Err(OqError::conflict(
                ErrorCode::InvalidTransition,
                format!(
                    "story {} is {}; only a draft story can be archived",
                    self.story_id,
                    self.state.as_str()
                ),
            ));
        }
        if self.state == WorkState::Archived {
            return Err(OqError::conflict(
                ErrorCode::InvalidTransition,
                format!("story {} is archived", self.story_id),
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    pub task_id: String,
    pub project_id: String,
    pub story_id: String,
    /// The execution session: its author answers QA's questions about this task.
    pub session_id: String,
    pub title: String,
    pub state: WorkState,
    pub gate: Gate,
}

impl Task {
    /// Folds one of the task's later events (the log's order) into its state and gate.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::TaskStateChanged { to, .. } => self.state = *to,
            Event::GateApproved { .. } => self.gate.apply(&GateEvent::Approved),
            Event::GateCorrectionCounted { corrections, .. } => {
                self.gate.apply(&GateEvent::CorrectionCounted {
                    corrections: *corrections,
                })
            }
            Event::GateRescueParked { question_id, .. } => self.gate.apply(&GateEvent::Parked {
                question_id: question_id.clone(),
            }),
            Event::GateResumed { .. } => self.gate.apply(&GateEvent::Resumed),
            _ => {}
        }
    }
}

/// What the correction rule needs to know about the question a correction cites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CitedQuestion {
    None,
    Open,
    Answered,
}

/// ADR 0212 as revised by ADR 0214 §8. A correction is refused while any task of the story
/// is `in_review` or `in_progress`; a `draft` story accepts it; a `ready` story only when
/// it cites an ANSWERED question; no other state accepts one.
pub fn check_story_correction(
    story: &Story,
    tasks: &[WorkState],
    cited: CitedQuestion,
) -> Result<(), OqError> {
    if tasks
        .iter()
        .any(|t| matches!(t, WorkState::InReview | WorkState::InProgress))
    {
        return Err(OqError::conflict(
            ErrorCode::TarefaEmAndamento,
            format!(
                "story {} has a task in review or in progress; correcting it is refused",
                story.story_id
            ),
        ));
    }
    match (story.state, cited) {
        (WorkState::Draft, _) => Ok(()),
        (WorkState::Ready, CitedQuestion::Answered) => Ok(()),
        (WorkState::Ready, CitedQuestion::Open) => Err(OqError::conflict(
            ErrorCode::PerguntaNaoRespondida,
            format!(
                "story {} is ready; the cited question is not answered yet",
                story.story_id
            ),
        )),
        (WorkState::Ready, CitedQuestion::None) => Err(OqError::conflict(
            ErrorCode::HistoriaProntaSemResposta,
            format!(
                "story {} is ready; a correction must cite an answered questionId",
                story.story_id
            ),
        )),
        (other, _) => Err(OqError::conflict(
            ErrorCode::HistoriaNaoCorrigivel,
            format!(
                "story {} is {}; only draft, or ready with an answered question, can be corrected",
                story.story_id,
                other.as_str()
            ),
        )),
    }
}
