//! The auto-delegate of `oq serve`'s OpenCode bridges on the wire: the snapshot the
//! server sends (`GET /api/question-auto-delegate`, the replies to pause, resume and
//! delegate, the tips on the event stream) and the client's merged view of it.
//!
//! One set of types for both ends: the server serialises what the bridge's machine
//! knows, the HTTP source deserialises the same structs; a field a newer server adds is
//! ignored, a state it adds reads as `Unknown`. Pause reasons and claimants are the
//! domain's words ([`crate::domain::delegation`]), the same the log records.
//!
//! Clock: `deadline` and `nowMs` come from one clock (the bridge's machine), so
//! `deadline - nowMs` is the time left whatever the skew between the two machines;
//! `deadlineUnixMs` is the server's wall clock, a fallback.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::domain::delegation::{Claimant, PauseReason};

/// Seed 002's request states; a state a newer server adds reads as `Unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AutoState {
    /// Known, but not armed (no authoritative directory yet, or settings not loaded).
    Waiting,
    Counting,
    Paused,
    /// The feature is off.
    Disabled,
    Submitting,
    /// Upstream may already have an answer: never sent again.
    Uncertain,
    Settled,
    #[serde(other)]
    Unknown,
}

impl AutoState {
    pub fn as_str(self) -> &'static str {
        match self {
            AutoState::Waiting => "waiting",
            AutoState::Counting => "counting",
            AutoState::Paused => "paused",
            AutoState::Disabled => "disabled",
            AutoState::Submitting => "submitting",
            AutoState::Uncertain => "uncertain",
            AutoState::Settled => "settled",
            AutoState::Unknown => "unknown",
        }
    }
}

/// What a pending request without a timer is waiting for before it can be armed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Awaiting {
    /// The settings are still loading.
    Settings,
    /// The feature is on but the request's directory is not authoritative yet.
    Directory,
}

/// How a settled request left the pending world.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SettledWord {
    /// Replied: by our POST (`claimant` says whose) or in OpenCode itself.
    Replied,
    /// Rejected: by our POST or in OpenCode itself.
    Rejected,
    /// Gone from upstream without a word; being inspected.
    Gone,
    /// Upstream lost it (restarted, aborted): not an answer.
    Vanished,
    #[serde(other)]
    Unknown,
}

/// `GET /api/question-auto-delegate`: the upstreams of the caller's projects.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DelegateSnapshot {
    #[serde(default)]
    pub upstreams: Vec<UpstreamSnapshot>,
}

/// One upstream: its connection, settings, coverage and requests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpstreamSnapshot {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub project: String,
    #[serde(default)]
    pub connected: bool,
    /// Since when (Unix ms, the server's clock) the connection is in its present state;
    /// 0 when it never was connected since the server started.
    #[serde(default)]
    pub since_unix_ms: i64,
    /// Another `oq serve` on the same database holds the upstream's lease and drives it;
    /// this one neither connects nor counts (its `requests` are empty) and passes the
    /// upstream's commands to that one through the database.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub driven_elsewhere: bool,
    /// The machine's clock now, the clock of every `deadline`.
    #[serde(default)]
    pub now_ms: Option<u64>,
    #[serde(default)]
    pub epoch: u64,
    #[serde(default)]
    pub revision: u64,
    /// Settings ready and the feature on.
    #[serde(default)]
    pub enabled: bool,
    #[serde(default)]
    pub window_ms: u64,
    #[serde(default)]
    pub settings: SettingsSnapshot,
    #[serde(default)]
    pub coverage: CoverageSnapshot,
    /// Directories listed successfully on the present connection.
    #[serde(default)]
    pub listed_directories: Vec<String>,
    #[serde(default)]
    pub requests: Vec<RequestSnapshot>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsSnapshot {
    /// `loading`, `ready` or `unavailable`.
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub generation: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CoverageSnapshot {
    /// A directory is not listed (yet), a list failed, or the settings are unreadable:
    /// absence proves nothing everywhere.
    #[serde(default)]
    pub partial: bool,
    #[serde(default)]
    pub successful_directories: Vec<String>,
}

/// One request as the machine knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestSnapshot {
    #[serde(rename = "requestID")]
    pub request_id: String,
    #[serde(default, rename = "sessionID")]
    pub session_id: Option<String>,
    #[serde(default)]
    pub directory: Option<String>,
    #[serde(default)]
    pub directory_authoritative: bool,
    #[serde(default)]
    pub question_count: Option<usize>,
    pub state: AutoState,
    /// While counting: when it auto-answers, on the machine's clock (see `nowMs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<u64>,
    /// The same deadline on the server's wall clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_unix_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_reason: Option<PauseReason>,
    /// Who paused it, for a person's pause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub awaiting: Option<Awaiting>,
    /// Who holds the claim (submitting, uncertain), or whose POST settled it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimant: Option<Claimant>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<SettledWord>,
}

/// The reply to a pause, a resume or a delegate: the request's state after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandReply {
    pub upstream: String,
    #[serde(rename = "requestID")]
    pub request_id: String,
    #[serde(default)]
    pub request: Option<RequestSnapshot>,
}

/// An upstream's connection, as the question list and the TUI's status line show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgeHealth {
    /// The upstream's name in the server's configuration.
    pub name: String,
    pub connected: bool,
    /// Since when (Unix ms, the server's clock) it is in this state; 0: never connected.
    #[serde(default)]
    pub since_unix_ms: i64,
    /// Driven by another `oq serve` on the same database (not disconnected: not ours).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub driven_elsewhere: bool,
}

impl From<&UpstreamSnapshot> for BridgeHealth {
    fn from(u: &UpstreamSnapshot) -> Self {
        BridgeHealth {
            name: u.name.clone(),
            connected: u.connected,
            since_unix_ms: u.since_unix_ms,
            driven_elsewhere: u.driven_elsewhere,
        }
    }
}

/// The client's view (every upstream of the caller merged): per question id (an
/// imported question's id is OpenCode's request id), its state and countdown.
/// A source without a bridge has none (`Source::auto_delegate` → `None`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AutoDelegate {
    /// The feature is on for at least one of the caller's upstreams.
    pub enabled: bool,
    /// By question id.
    pub requests: BTreeMap<String, AutoRequest>,
    /// Each upstream's connection.
    #[serde(default)]
    pub bridges: Vec<BridgeHealth>,
}

/// One request of the client's view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AutoRequest {
    pub state: AutoState,
    /// When it auto-answers, in Unix ms on the client's clock (the server's remaining
    /// time added to the client's clock when the snapshot arrived, so a skewed clock does
    /// not shift the countdown); only while counting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_unix_ms: Option<i64>,
    /// `interaction`, `user`, `goal`, `refused` or `unreachable`, while paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause_reason: Option<String>,
    /// Who paused it (a person's pause).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_by: Option<String>,
    /// The feature is on for this request's upstream.
    pub enabled: bool,
}

/// The client's reading of a command's reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AutoCommand {
    /// Kept for older servers, which answered an unknown request with `recovering`.
    #[serde(default)]
    pub recovering: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<AutoState>,
}

impl DelegateSnapshot {
    /// The client's view; `local_now` is this machine's Unix ms when the reply arrived.
    pub fn into_view(self, local_now: i64) -> AutoDelegate {
        let mut view = AutoDelegate::default();
        for up in self.upstreams {
            view.enabled |= up.enabled;
            view.bridges.push(BridgeHealth::from(&up));
            for r in up.requests {
                let deadline_unix_ms = match (r.deadline, up.now_ms) {
                    (Some(d), Some(now)) => Some(local_now + (d as i64 - now as i64)),
                    _ => r.deadline_unix_ms,
                };
                view.requests.insert(
                    r.request_id,
                    AutoRequest {
                        state: r.state,
                        deadline_unix_ms: deadline_unix_ms
                            .filter(|_| r.state == AutoState::Counting),
                        pause_reason: r.pause_reason.map(|p| p.as_str().to_string()),
                        paused_by: r.paused_by,
                        enabled: up.enabled,
                    },
                );
            }
        }
        view
    }
}

impl From<CommandReply> for AutoCommand {
    fn from(b: CommandReply) -> Self {
        AutoCommand {
            recovering: false,
            state: b.request.map(|r| r.state),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_counting_deadline_moves_onto_the_local_clock_and_unknown_words_survive() {
        let body = r#"{"upstreams":[{"name":"oc","connected":true,"nowMs":1000,"enabled":true,
            "requests":[{"requestID":"que_1","state":"counting","deadline":4000},
                        {"requestID":"que_2","state":"paused","pauseReason":"moonphase"},
                        {"requestID":"que_3","state":"teleporting"}]}]}"#;
        let snap: DelegateSnapshot = serde_json::from_str(body).unwrap();
        let view = snap.into_view(50_000);
        assert_eq!(view.requests["que_1"].deadline_unix_ms, Some(53_000));
        assert_eq!(
            view.requests["que_2"].pause_reason.as_deref(),
            Some("unknown")
        );
        assert_eq!(view.requests["que_3"].state, AutoState::Unknown);
        assert!(view.bridges[0].connected);
    }
}
