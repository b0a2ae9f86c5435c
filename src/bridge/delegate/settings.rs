//! The persisted toggle `questionAutoDelegateEnabled` and its effect on pending requests.
//!
//! - Boot reads the setting asynchronously; the read carries the generation it was
//!   issued at, and an applied toggle bumps the generation, so a late read never beats
//!   a newer toggle.
//! - A failed read is `Unavailable`: off, coverage partial, never auto-answers.
//! - `ApplyEnabled` comes after a successful persist; only a real JSON boolean counts.
//!   `false` cancels timers, turns waiting and counting requests `Disabled` and reports a
//!   user takeover; `false → true` gives unclaimed, unpaused requests a fresh full window
//!   (directory-bound ones; the others wait for their directory); a repeated value is a
//!   no-op that keeps every deadline.
//!
//! Decision: a paused request stays paused across toggles: a pause is a person's (or the
//! goal's) decision about that request, and the toggle is not.

use super::machine::cancel_timer;
use super::messages::Effect;
use super::state::{PauseReason, RequestState, SettingsState};

impl super::Delegate {
    pub(super) fn settings_loaded(
        &mut self,
        now_ms: u64,
        generation: u64,
        value: Option<bool>,
        fx: &mut Vec<Effect>,
    ) {
        if self.settings != (SettingsState::Loading { generation }) {
            return; // A toggle was applied since this read was issued, or a stale read.
        }
        self.settings = match value {
            Some(enabled) => SettingsState::Ready { enabled },
            None => SettingsState::Unavailable,
        };
        self.changed = true;
        let waiting: Vec<String> = self
            .requests
            .values()
            .filter(|r| matches!(r.state, RequestState::Waiting { .. }))
            .map(|r| r.request_id.clone())
            .collect();
        for id in waiting {
            self.arm_or_wait(now_ms, &id, fx);
        }
    }

    pub(super) fn apply_enabled(
        &mut self,
        now_ms: u64,
        value: &serde_json::Value,
        fx: &mut Vec<Effect>,
    ) {
        let Some(enabled) = value.as_bool() else {
            return;
        };
        if self.settings == (SettingsState::Ready { enabled }) {
            return;
        }
        self.generation += 1;
        self.settings = SettingsState::Ready { enabled };
        self.changed = true;
        if enabled {
            let idle: Vec<String> = self
                .requests
                .values()
                .filter(|r| {
                    matches!(
                        r.state,
                        RequestState::Disabled | RequestState::Waiting { .. }
                    ) && r.session_id.is_some()
                })
                .map(|r| r.request_id.clone())
                .collect();
            for id in idle {
                self.arm_or_wait(now_ms, &id, fx);
            }
            return;
        }
        let pending: Vec<String> = self
            .requests
            .values()
            .filter(|r| {
                matches!(
                    r.state,
                    RequestState::Counting { .. }
                        | RequestState::Waiting { .. }
                        | RequestState::Paused {
                            reason: PauseReason::Unreachable
                        }
                )
            })
            .map(|r| r.request_id.clone())
            .collect();
        for id in pending {
            let Some(req) = self.requests.get(&id) else {
                continue;
            };
            cancel_timer(req, fx);
            let session = req.session_id.clone();
            self.set_state(&id, RequestState::Disabled);
            self.takeover(session.as_deref(), fx);
        }
    }
}
