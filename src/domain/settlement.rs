//! How a question was settled (SPEC §2, `decisionSource`): who or what decided.
//!
//! Invariant: every answer and every closure in the log says how it was made, so no
//! record claims a person decided what a timer, a retry or another person did. Events
//! written before the field existed carry none; [`DecisionSource::for_answer`] and
//! [`DecisionSource::for_closure`] give what those events can only have meant.

use serde::{Deserialize, Serialize};

use super::choices::ClosedReason;

/// How a settlement was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionSource {
    /// The session's author typed (or chose) the answer.
    Person,
    /// The session's author accepted the agent's suggestion.
    Suggestion,
    /// A bridge's timer sent the fixed continuation text: nobody decided.
    AutoDelegate,
    /// A person pressed delegate: the continuation text, sent in their name as a delegation.
    Delegate,
    /// Answered in the agent's own UI (OpenCode, Claude Code), not in oq.
    Upstream,
    /// The agent lost the request (restart, abort): not an answer.
    Vanished,
    /// The session's author closed it without an answer.
    Dismissed,
    /// The declaring agent retracted it.
    Withdrawn,
}

impl DecisionSource {
    pub const ALL: [DecisionSource; 8] = [
        DecisionSource::Person,
        DecisionSource::Suggestion,
        DecisionSource::AutoDelegate,
        DecisionSource::Delegate,
        DecisionSource::Upstream,
        DecisionSource::Vanished,
        DecisionSource::Dismissed,
        DecisionSource::Withdrawn,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            DecisionSource::Person => "person",
            DecisionSource::Suggestion => "suggestion",
            DecisionSource::AutoDelegate => "auto_delegate",
            DecisionSource::Delegate => "delegate",
            DecisionSource::Upstream => "upstream",
            DecisionSource::Vanished => "vanished",
            DecisionSource::Dismissed => "dismissed",
            DecisionSource::Withdrawn => "withdrawn",
        }
    }

    /// A person's answer: typed, or the suggestion accepted.
    pub const fn for_answer(aceitou_sugestao: bool) -> DecisionSource {
        if aceitou_sugestao {
            DecisionSource::Suggestion
        } else {
            DecisionSource::Person
        }
    }

    /// What a closure recorded without the field meant: a dismissal by its author, or a
    /// settlement upstream.
    pub const fn for_closure(reason: ClosedReason) -> DecisionSource {
        match reason {
            ClosedReason::Rejected => DecisionSource::Dismissed,
            ClosedReason::External => DecisionSource::Upstream,
            ClosedReason::Withdrawn => DecisionSource::Withdrawn,
        }
    }

    /// A person of the project made this decision in oq (typed or accepted).
    pub const fn is_persons_own(self) -> bool {
        matches!(self, DecisionSource::Person | DecisionSource::Suggestion)
    }
}

impl std::fmt::Display for DecisionSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for DecisionSource {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        DecisionSource::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_names_are_serdes() {
        for d in DecisionSource::ALL {
            let json = serde_json::to_string(&d).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", d.as_str()));
            assert_eq!(d.as_str().parse(), Ok(d));
        }
    }
}
