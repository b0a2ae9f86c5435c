//! ADR 0214 §5: readiness warns and moves on. "I'm ready" and "Confirm architecture ready"
//! are recorded and answered with how many questions are still open; they never block.

use serde::{Deserialize, Serialize};
use std::str::FromStr;

use super::error::{ErrorCode, OqError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReadinessGate {
    /// "I'm ready" (criativo).
    #[serde(rename = "im-ready")]
    ImReady,
    /// "Confirm architecture ready".
    #[serde(rename = "architecture-ready")]
    ArchitectureReady,
}

impl ReadinessGate {
    pub fn as_str(self) -> &'static str {
        match self {
            ReadinessGate::ImReady => "im-ready",
            ReadinessGate::ArchitectureReady => "architecture-ready",
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            ReadinessGate::ImReady => "I'm ready",
            ReadinessGate::ArchitectureReady => "Confirm architecture ready",
        }
    }
}

impl FromStr for ReadinessGate {
    type Err = OqError;
    fn from_str(s: &str) -> Result<Self, OqError> {
        match s {
            "im-ready" => Ok(ReadinessGate::ImReady),
            "architecture-ready" => Ok(ReadinessGate::ArchitectureReady),
            _ => Err(OqError::invalid(
                ErrorCode::InvalidGate,
                format!("readiness gate {s:?}: expected im-ready or architecture-ready"),
            )),
        }
    }
}

/// The notice for `open` questions; `None` when nothing is open (the banner goes away).
pub fn readiness_notice(open: u64) -> Option<String> {
    match open {
        0 => None,
        1 => Some("1 question is still open — answer".to_string()),
        n => Some(format!("{n} questions are still open — answer")),
    }
}
