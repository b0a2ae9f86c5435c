//! The machine across connections and restarts: the upstream going away and coming back,
//! requests restored from the log after the driver restarted, and settled requests
//! leaving the table after their retention.
//!
//! - `Disconnected`: every counting request stops (`Paused{Unreachable}`) and nothing
//!   arms until `Connected`; a person's pause, a tombstone or a claim keep their state.
//! - `Connected` (after the rehydrate): what the outage paused gets a fresh window.
//!   Decision: a fresh window rather than the time that was left, since nobody could
//!   answer through oq while the upstream was away, and a deadline that passed meanwhile
//!   must not fire the instant it is back.
//! - `Restore`: a person's pause holds (with its actor); a POST recorded as sent with no
//!   outcome is an `Uncertain` tombstone carrying what it sent; otherwise the last armed
//!   deadline is kept when it is still ahead on reconnect (Decision: a deadline that
//!   passed while the driver itself was down gets a fresh window, as after an outage).

use super::machine::cancel_timer;
use super::messages::{Effect, Restored};
use super::state::{Claim, PauseReason, RequestState};
use crate::opencode::Request;

/// How many forgotten request ids are remembered, so a late list never revives one.
const FORGOTTEN_MAX: usize = 10_000;

impl super::Delegate {
    pub(super) fn disconnected(&mut self, fx: &mut Vec<Effect>) {
        self.changed |= self.connected;
        self.connected = false;
        let counting: Vec<String> = self
            .requests
            .values()
            .filter(|r| matches!(r.state, RequestState::Counting { .. }))
            .map(|r| r.request_id.clone())
            .collect();
        for id in counting {
            if let Some(req) = self.requests.get(&id) {
                cancel_timer(req, fx);
            }
            self.set_state(
                &id,
                RequestState::Paused {
                    reason: PauseReason::Unreachable,
                },
            );
        }
    }

    pub(super) fn connected(&mut self, now_ms: u64, fx: &mut Vec<Effect>) {
        self.changed |= !self.connected;
        self.connected = true;
        let idle: Vec<String> = self
            .requests
            .values()
            .filter(|r| {
                matches!(
                    r.state,
                    RequestState::Paused {
                        reason: PauseReason::Unreachable
                    } | RequestState::Waiting { .. }
                )
            })
            .map(|r| r.request_id.clone())
            .collect();
        for id in idle {
            self.arm_or_wait(now_ms, &id, fx);
        }
    }

    pub(super) fn restore(
        &mut self,
        now_ms: u64,
        request: &Request,
        directory: &str,
        restored: Restored,
        fx: &mut Vec<Effect>,
    ) {
        if self.requests.contains_key(&request.id) || self.forgotten.contains(&request.id) {
            return;
        }
        self.insert_request(request, Some(directory.to_string()), false);
        let id = request.id.as_str();
        self.session_dirs
            .entry(request.session_id.clone())
            .or_insert_with(|| directory.to_string());
        if let Some((by, post, sent)) = restored.submitted {
            let claim = Claim {
                id: self.fresh_id(),
                by,
                post,
            };
            if let Some(req) = self.requests.get_mut(id) {
                req.last_claim = Some((claim, sent));
            }
            self.set_state(id, RequestState::Uncertain { claim });
            return;
        }
        if let Some((reason, by)) = restored.pause {
            self.set_state(id, RequestState::Paused { reason });
            if let Some(req) = self.requests.get_mut(id) {
                req.paused_by = by;
            }
            return;
        }
        if let Some(req) = self.requests.get_mut(id) {
            req.kept_deadline = restored.deadline_ms;
        }
        self.arm_or_wait(now_ms, id, fx);
    }

    /// Drops settled requests older than the retention; their ids are remembered (a
    /// bounded number) so nothing revives them.
    pub(super) fn forget_settled(&mut self, now_ms: u64) {
        let retention = self.config.settled_retention_ms;
        let old: Vec<String> = self
            .requests
            .values()
            .filter(|r| match r.state {
                RequestState::Settled { at_ms, how } => {
                    how != super::SettledHow::Gone && at_ms.saturating_add(retention) <= now_ms
                }
                _ => false,
            })
            .map(|r| r.request_id.clone())
            .collect();
        for id in old {
            self.requests.remove(&id);
            self.changed = true;
            if self.forgotten.insert(id.clone()) {
                self.forgotten_order.push_back(id);
            }
            while self.forgotten_order.len() > FORGOTTEN_MAX {
                if let Some(oldest) = self.forgotten_order.pop_front() {
                    self.forgotten.remove(&oldest);
                }
            }
        }
    }
}
