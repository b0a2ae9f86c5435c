//! The serialisable view of the machine, the body of `GET /api/question-auto-delegate`.
//!
//! Field names are camelCase as in the seed's `core.d.ts` (`requestID`, `sessionID`).
//! Times (`deadline`) are on the driver's millisecond clock, the one it passes as `now_ms`.

use serde::Serialize;

use super::state::{Awaiting, Claimant, PauseReason, RequestState, SettingsState, SettledHow};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub epoch: u64,
    pub revision: u64,
    /// Settings ready and the feature on.
    pub enabled: bool,
    pub window_ms: u64,
    pub settings: SettingsSnapshot,
    pub coverage: CoverageSnapshot,
    pub requests: Vec<RequestSnapshot>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsSnapshot {
    /// `loading`, `ready` or `unavailable`.
    pub state: &'static str,
    pub generation: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CoverageSnapshot {
    /// A list failed or the settings are unreadable: absence proves nothing everywhere.
    pub partial: bool,
    pub successful_directories: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestSnapshot {
    #[serde(rename = "requestID")]
    pub request_id: String,
    #[serde(rename = "sessionID")]
    pub session_id: Option<String>,
    pub directory: Option<String>,
    pub directory_authoritative: bool,
    pub question_count: Option<usize>,
    /// `waiting`, `counting`, `paused`, `disabled`, `submitting`, `uncertain`, `settled`.
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pause_reason: Option<PauseReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub awaiting: Option<Awaiting>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claimant: Option<Claimant>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settled: Option<SettledHow>,
}

impl super::Delegate {
    pub fn snapshot(&self) -> Snapshot {
        let requests = self
            .requests
            .values()
            .map(|r| {
                let (mut deadline, mut pause_reason, mut awaiting, mut claimant, mut settled) =
                    (None, None, None, None, None);
                match r.state {
                    RequestState::Waiting { awaiting: a } => awaiting = Some(a),
                    RequestState::Counting { deadline_ms, .. } => deadline = Some(deadline_ms),
                    RequestState::Paused { reason } => pause_reason = Some(reason),
                    RequestState::Disabled => {}
                    RequestState::Submitting { claim } | RequestState::Uncertain { claim } => {
                        claimant = Some(claim.by)
                    }
                    RequestState::Settled { how } => settled = Some(how),
                }
                RequestSnapshot {
                    request_id: r.request_id.clone(),
                    session_id: r.session_id.clone(),
                    directory: r.directory.clone(),
                    directory_authoritative: r.directory_authoritative,
                    question_count: r.question_count,
                    state: r.state.name(),
                    deadline,
                    pause_reason,
                    awaiting,
                    claimant,
                    settled,
                }
            })
            .collect();
        Snapshot {
            epoch: self.config.epoch,
            revision: self.revision,
            enabled: self.settings.auto_enabled(),
            window_ms: self.config.window_ms,
            settings: SettingsSnapshot {
                state: self.settings.name(),
                generation: self.generation,
            },
            coverage: CoverageSnapshot {
                partial: self.settings == SettingsState::Unavailable
                    || !self.coverage.failed.is_empty(),
                successful_directories: self.coverage.successful.iter().cloned().collect(),
            },
            requests,
        }
    }
}
