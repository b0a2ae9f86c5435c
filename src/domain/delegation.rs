//! The words of a bridged question's delegation (seed 002), shared by the log, the
//! bridge's machine and the wire: why a timer is paused, who claimed a request, and
//! whether a POST replied or rejected.

use serde::{Deserialize, Serialize};

/// Why a bridged question's timer is paused. A paused request is not re-armed by the
/// toggle.
///
/// `Interaction`, `User` and `Goal` are the seed's; `Refused` and `Unreachable` are the
/// bridge's own, so a pause never claims a person asked for it when none did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PauseReason {
    /// The author has the question open in a client's form (`reason: "interaction"`).
    Interaction,
    /// A person asked to handle it themselves.
    User,
    /// The session tree's goal was paused or aborted.
    Goal,
    /// Upstream refused a POST, or it never left the process: waits for a person (a
    /// resume, an answer or a delegate); never retried on its own.
    Refused,
    /// The upstream cannot be reached: nothing counts while it is away, and a fresh
    /// window starts when it is back.
    Unreachable,
    /// A reason a newer server sends.
    #[serde(other)]
    Unknown,
}

impl PauseReason {
    pub fn as_str(self) -> &'static str {
        match self {
            PauseReason::Interaction => "interaction",
            PauseReason::User => "user",
            PauseReason::Goal => "goal",
            PauseReason::Refused => "refused",
            PauseReason::Unreachable => "unreachable",
            PauseReason::Unknown => "unknown",
        }
    }

    /// A pause a person made (and may lift with a resume).
    pub fn is_persons(self) -> bool {
        matches!(self, PauseReason::Interaction | PauseReason::User)
    }
}

/// Who holds (or held) the single-flight claim of a bridged request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Claimant {
    /// The window ran out: the fixed continuation text.
    Auto,
    /// A person's reply or reject, forwarded as given.
    Manual,
    /// An explicit single-shot delegate: the fixed continuation text.
    Delegate,
}

/// Which upstream POST a claim sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PostKind {
    Reply,
    Reject,
}

/// Whether a question's events (oldest first) hold a claim still outstanding: a
/// submission noted — its POST may have left — with no countdown, pause or resume after
/// it to say the claim was released. While one is, no second submission is noted
/// ([`crate::engine`]'s `note` refuses it inside the write transaction): the claim is a
/// row of the log, so it holds across every server on one store and across a failover
/// in mid-claim, where a mutex of one process could not.
pub fn outstanding_submission(events: &[super::Event]) -> bool {
    use super::Event;
    events.iter().fold(false, |open, e| match e {
        Event::QuestionSubmitted { .. } => true,
        Event::QuestionCountdown { .. }
        | Event::QuestionPaused { .. }
        | Event::QuestionResumed { .. } => false,
        _ => open,
    })
}
