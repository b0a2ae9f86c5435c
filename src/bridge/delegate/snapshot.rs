//! The machine's view as the wire's [`UpstreamSnapshot`], the body of
//! `GET /api/question-auto-delegate` (the driver adds its name, project, clock and
//! connection time).
//!
//! Times (`deadline`) are on the driver's millisecond clock, the one it passes as `now_ms`.

use super::state::{RequestState, SettingsState, SettledHow};
use crate::wire::auto_delegate::{
    AutoState, CoverageSnapshot, RequestSnapshot, SettingsSnapshot, UpstreamSnapshot,
};

impl RequestState {
    /// The wire's state word.
    pub fn wire(&self) -> AutoState {
        match self {
            RequestState::Waiting { .. } => AutoState::Waiting,
            RequestState::Counting { .. } => AutoState::Counting,
            RequestState::Paused { .. } => AutoState::Paused,
            RequestState::Disabled => AutoState::Disabled,
            RequestState::Submitting { .. } => AutoState::Submitting,
            RequestState::Uncertain { .. } => AutoState::Uncertain,
            RequestState::Settled { .. } => AutoState::Settled,
        }
    }
}

impl super::Delegate {
    pub fn snapshot(&self) -> UpstreamSnapshot {
        let requests = self
            .requests
            .values()
            .map(|r| {
                let mut snap = RequestSnapshot {
                    request_id: r.request_id.clone(),
                    session_id: r.session_id.clone(),
                    directory: r.directory.clone(),
                    directory_authoritative: r.directory_authoritative,
                    question_count: r.question_count,
                    state: r.state.wire(),
                    deadline: None,
                    deadline_unix_ms: None,
                    pause_reason: None,
                    paused_by: None,
                    awaiting: None,
                    claimant: None,
                    settled: None,
                };
                match r.state {
                    RequestState::Waiting { awaiting } => snap.awaiting = Some(awaiting),
                    RequestState::Counting { deadline_ms, .. } => snap.deadline = Some(deadline_ms),
                    RequestState::Paused { reason } => {
                        snap.pause_reason = Some(reason);
                        snap.paused_by = r.paused_by.clone();
                    }
                    RequestState::Disabled => {}
                    RequestState::Submitting { claim } | RequestState::Uncertain { claim } => {
                        snap.claimant = Some(claim.by)
                    }
                    RequestState::Settled { how, .. } => {
                        if let SettledHow::Ours { claim } = how {
                            snap.claimant = Some(claim.by);
                        }
                        snap.settled = Some(how.word());
                    }
                }
                snap
            })
            .collect();
        UpstreamSnapshot {
            connected: self.connected,
            epoch: self.config.epoch,
            revision: self.revision,
            enabled: self.settings.auto_enabled(),
            window_ms: self.config.window_ms,
            settings: SettingsSnapshot {
                state: self.settings.name().to_string(),
                generation: self.generation,
            },
            coverage: CoverageSnapshot {
                partial: self.settings == SettingsState::Unavailable
                    || !self.coverage.failed.is_empty(),
                successful_directories: self.coverage.successful.iter().cloned().collect(),
            },
            requests,
            ..UpstreamSnapshot::default()
        }
    }
}
