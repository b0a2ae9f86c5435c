//! What people and clients ask for: a manual reply or reject, an explicit delegate, a
//! pause and its resume, and a goal pause over a session tree.
//!
//! The rules kept here: one synchronous single-flight claim per request shared with the
//! timer (a loser is refused with [`Refusal::Claimed`] before anything changes); client
//! hints never override a bound identity ([`Refusal::IdentityConflict`]); manual answers
//! are forwarded as given; nothing is claimed while the upstream is unreachable
//! ([`Refusal::Unreachable`]); an unknown request is recovered through a list, never
//! invented.

use super::machine::{cancel_timer, push_once};
use super::messages::{Effect, Hints, Refusal};
use super::state::{Claim, Claimant, PauseReason, PendingRequest, Post, RequestState};

/// Refuse a client whose hints contradict the bound identity. A session is bound once
/// known; a directory only when authoritative (a hinted one can still be corrected).
fn check_identity(req: &PendingRequest, hints: &Hints) -> Result<(), Refusal> {
    if let (Some(hint), Some(bound)) = (hints.session(), req.session_id.as_deref())
        && hint != bound
    {
        return Err(Refusal::IdentityConflict);
    }
    if let (Some(hint), Some(bound)) = (hints.directory(), req.authoritative_directory())
        && hint != bound
    {
        return Err(Refusal::IdentityConflict);
    }
    Ok(())
}

/// Whether a claimant may take this request now.
fn check_claimable(req: &PendingRequest) -> Result<(), Refusal> {
    match req.state {
        RequestState::Settled { .. } => Err(Refusal::Settled),
        RequestState::Submitting { .. } | RequestState::Uncertain { .. } => Err(Refusal::Claimed),
        _ => Ok(()),
    }
}

impl super::Delegate {
    /// A person's reply (`answers: Some`) or reject (`None`).
    ///
    /// Decision: a request the machine has never seen is still claimed (so a second
    /// manual POST racing the first loses) and posted to the hinted directory; it is not
    /// given a session or a question count, which only upstream may bind.
    pub(super) fn manual(
        &mut self,
        request_id: &str,
        post: Post,
        hints: &Hints,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        match self.requests.get(request_id) {
            Some(req) => {
                check_identity(req, hints)?;
                check_claimable(req)?;
                if !self.connected {
                    return Err(Refusal::Unreachable);
                }
                cancel_timer(req, fx);
            }
            None if !self.connected => return Err(Refusal::Unreachable),
            None => {
                self.observations += 1;
                let adhoc = PendingRequest {
                    request_id: request_id.to_string(),
                    session_id: None,
                    directory: None,
                    directory_authoritative: false,
                    question_count: None,
                    state: RequestState::Disabled,
                    seen_at: self.observations,
                    tool: None,
                    paused_by: None,
                    last_claim: None,
                    kept_deadline: None,
                };
                self.requests.insert(request_id.to_string(), adhoc);
                self.changed = true;
            }
        }
        let claim = Claim {
            id: self.fresh_id(),
            by: Claimant::Manual,
            post: post.kind(),
        };
        // An authoritative directory was checked against the hint above; otherwise the
        // client's hint is where it expects the request, so the POST goes there.
        if let Some(req) = self.requests.get_mut(request_id)
            && !req.directory_authoritative
            && let Some(hint) = hints.directory()
            && req.directory.as_deref() != Some(hint)
        {
            req.directory = Some(hint.to_string());
            self.changed = true;
        }
        self.set_state(request_id, RequestState::Submitting { claim });
        let Some(req) = self.requests.get_mut(request_id) else {
            return Ok(());
        };
        req.last_claim = Some((claim, post.answers().to_vec()));
        let directory = req.directory.clone();
        let session = req.session_id.clone();
        fx.push(match post {
            Post::Reply { answers } => Effect::PostReply {
                request_id: request_id.to_string(),
                directory,
                answers,
                claim,
            },
            Post::Reject => Effect::PostReject {
                request_id: request_id.to_string(),
                directory,
                claim,
            },
        });
        self.takeover(session.as_deref(), fx);
        Ok(())
    }

    /// One explicit continuation, allowed with the feature off. It needs what auto needs
    /// besides the toggle: the question count and an authoritative directory; without
    /// them it asks for recovery (a scoped list, the session) and posts nothing.
    pub(super) fn delegate(
        &mut self,
        request_id: &str,
        hints: &Hints,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let Some(req) = self.requests.get(request_id) else {
            fx.push(recover(request_id, hints.directory()));
            return Ok(());
        };
        check_identity(req, hints)?;
        check_claimable(req)?;
        let (Some(directory), Some(count)) = (req.authoritative_directory(), req.question_count)
        else {
            let scope = req.directory.as_deref().or(hints.directory());
            fx.push(recover(request_id, scope));
            if let Some(session_id) = req.session_id.clone() {
                push_once(fx, Effect::ResolveSession { session_id });
            }
            return Ok(());
        };
        if !self.connected {
            return Err(Refusal::Unreachable);
        }
        let directory = directory.to_string();
        cancel_timer(req, fx);
        self.post_continuation(request_id, directory, count, Claimant::Delegate, fx);
        Ok(())
    }

    /// Stop the timer for a person or a client showing the question. Works without a
    /// directory, and while the upstream is unreachable (a person's pause outlasts the
    /// outage). A `User` pause is a takeover of the session's tree.
    pub(super) fn pause(
        &mut self,
        request_id: &str,
        reason: PauseReason,
        by: Option<String>,
        hints: &Hints,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let Some(req) = self.requests.get(request_id) else {
            fx.push(recover(request_id, hints.directory()));
            return Ok(());
        };
        check_identity(req, hints)?;
        check_claimable(req)?;
        cancel_timer(req, fx);
        let session = req.session_id.clone();
        self.set_state(request_id, RequestState::Paused { reason });
        if let Some(req) = self.requests.get_mut(request_id)
            && req.paused_by != by
        {
            req.paused_by = by;
            self.changed = true;
        }
        if reason == PauseReason::User {
            self.takeover(session.as_deref(), fx);
        }
        Ok(())
    }

    /// Lift a pause: the request counts again from a fresh window (or waits for what it
    /// lacks). An outage's own pause is lifted only by `Connected`; a request that is
    /// not paused is left as it is.
    pub(super) fn resume(
        &mut self,
        now_ms: u64,
        request_id: &str,
        hints: &Hints,
        fx: &mut Vec<Effect>,
    ) -> Result<(), Refusal> {
        let Some(req) = self.requests.get(request_id) else {
            fx.push(recover(request_id, hints.directory()));
            return Ok(());
        };
        check_identity(req, hints)?;
        check_claimable(req)?;
        match req.state {
            RequestState::Paused { reason } if reason != PauseReason::Unreachable => {
                self.arm_or_wait(now_ms, request_id, fx);
            }
            _ => {}
        }
        Ok(())
    }

    /// The goal of `root_session`'s tree stopped: every unclaimed request of the tree that
    /// could count (counting, waiting, disabled, or paused by the machine itself) is paused
    /// with reason `Goal`. Requests a person paused keep their reason.
    pub(super) fn goal_paused(&mut self, root_session: &str, fx: &mut Vec<Effect>) {
        let root = self.root_of(root_session);
        let ids: Vec<String> = self
            .requests
            .values()
            .filter(|r| {
                matches!(
                    r.state,
                    RequestState::Counting { .. }
                        | RequestState::Waiting { .. }
                        | RequestState::Disabled
                        | RequestState::Paused {
                            reason: PauseReason::Unreachable | PauseReason::Refused
                        }
                ) && r
                    .session_id
                    .as_deref()
                    .is_some_and(|s| self.root_of(s) == root)
            })
            .map(|r| r.request_id.clone())
            .collect();
        for id in ids {
            if let Some(req) = self.requests.get(&id) {
                cancel_timer(req, fx);
            }
            self.set_state(
                &id,
                RequestState::Paused {
                    reason: PauseReason::Goal,
                },
            );
        }
    }
}

fn recover(request_id: &str, directory: Option<&str>) -> Effect {
    Effect::RecoverViaList {
        request_id: request_id.to_string(),
        directory: directory.map(str::to_string),
    }
}
