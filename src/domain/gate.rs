//! The QA gate of a task (ADR 0207 extended by ADR 0214 §6): verdicts, the correction
//! counter and its ceiling, parking on a user decision, and the consolidation rule.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use super::error::{ErrorCode, OqError};

/// RN-762's correction ceiling when the project does not set one.
pub const DEFAULT_CORRECTION_CEILING: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Approved,
    ChangesRequested,
    NeedsUserDecision,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Approved => "approved",
            Verdict::ChangesRequested => "changes_requested",
            Verdict::NeedsUserDecision => "needs_user_decision",
        }
    }
    /// Precedence in a QA Lead consolidation: changes_requested > needs_user_decision > approved.
    fn weight(self) -> u8 {
        match self {
            Verdict::Approved => 0,
            Verdict::NeedsUserDecision => 1,
            Verdict::ChangesRequested => 2,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Verdict {
    type Err = OqError;
    fn from_str(s: &str) -> Result<Self, OqError> {
        [Verdict::Approved, Verdict::ChangesRequested, Verdict::NeedsUserDecision]
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| {
                OqError::invalid(
                    ErrorCode::InvalidVerdict,
                    format!("unknown verdict {s:?}: expected approved, changes_requested or needs_user_decision"),
                )
            })
    }
}

/// ADR 0214 §6: in a consolidation of several QA subspecialties, `needs_user_decision`
/// wins over `approved`, and `changes_requested` wins over both. `None` for no verdicts.
pub fn consolidate(verdicts: &[Verdict]) -> Option<Verdict> {
    verdicts.iter().copied().max_by_key(|v| v.weight())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateState {
    Active,
    Parked,
    Approved,
    Exhausted,
}

impl GateState {
    pub fn as_str(self) -> &'static str {
        match self {
            GateState::Active => "active",
            GateState::Parked => "parked",
            GateState::Approved => "approved",
            GateState::Exhausted => "exhausted",
        }
    }
}

/// A task's gate, folded from its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gate {
    pub state: GateState,
    pub corrections: u32,
    pub ceiling: u32,
    /// The open question the gate waits on while parked.
    pub parked_on: Option<String>,
}

impl Gate {
    pub fn new(ceiling: u32) -> Self {
        Gate {
            state: GateState::Active,
            corrections: 0,
            ceiling,
            parked_on: None,
        }
    }

    /// What a verdict does to the gate. `needs_user_decision` only parks here; recording the
    /// question is the engine's part of the same transaction.
    pub fn decide(&self, verdict: Verdict) -> Result<GateChange, OqError> {
        match self.state {
            GateState::Active => {}
            GateState::Parked => {
                return Err(OqError::conflict(
                    ErrorCode::GateParked,
                    format!(
                        "the gate is parked on question {} until its answer resumes it",
                        self.parked_on.as_deref().unwrap_or("?")
                    ),
                ));
            }
            GateState::Approved | GateState::Exhausted => {
                return Err(OqError::conflict(
                    ErrorCode::GateClosed,
                    format!("the gate is {}; no further verdicts", self.state.as_str()),
                ));
            }
        }
        Ok(match verdict {
            Verdict::Approved => GateChange::Approve,
            Verdict::ChangesRequested => {
                let corrections = self.corrections + 1;
                GateChange::CountCorrection {
                    corrections,
                    exhausted: corrections >= self.ceiling,
                }
            }
            // RN-762 stops counting this verdict: no cycle is spent.
            Verdict::NeedsUserDecision => GateChange::Park,
        })
    }

    /// Applies a recorded change (the fold used when reading the log).
    pub fn apply(&mut self, change: &GateEvent) {
        match change {
            GateEvent::Approved => self.state = GateState::Approved,
            GateEvent::CorrectionCounted { corrections } => {
                self.corrections = *corrections;
                if self.corrections >= self.ceiling {
                    self.state = GateState::Exhausted;
                }
            }
            GateEvent::Parked { question_id } => {
                self.state = GateState::Parked;
                self.parked_on = Some(question_id.clone());
            }
            GateEvent::Resumed => {
                self.state = GateState::Active;
                self.parked_on = None;
            }
        }
    }
}

/// The decision on a verdict, before ids are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateChange {
    Approve,
    CountCorrection { corrections: u32, exhausted: bool },
    Park,
}

/// What the log says happened to a gate, in fold order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateEvent {
    Approved,
    CorrectionCounted { corrections: u32 },
    Parked { question_id: String },
    Resumed,
}
