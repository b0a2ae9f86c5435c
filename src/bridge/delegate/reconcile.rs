//! What upstream tells the machine: a request asked, a session's directory resolved, a
//! list of pending requests, its own word on a request (replied, rejected, a tool part
//! inspected), and the outcome of our own POSTs.
//!
//! Kept here: a request's identity is bound by upstream only; a successful *scoped* list
//! settles missing requests for that directory alone (as `Gone`, then inspected), an
//! unscoped list only discovers, a failed list marks coverage partial and changes nothing
//! else; a definitive refusal releases the claim and pauses for a person; an unclear
//! outcome leaves an `Uncertain` tombstone; a settled request is never downgraded; and
//! upstream's word about a request we posted for is matched against what we sent, so a
//! POST whose outcome was unclear is recorded as ours once upstream shows it took it.

use std::collections::BTreeSet;

use super::machine::cancel_timer;
use super::messages::{
    Effect, Inspection, ListError, ListToken, PostOutcome, Settlement, UpstreamResult,
};
use super::state::{Claim, PauseReason, PendingRequest, PostKind, RequestState, SettledHow};
use crate::opencode::Request;

impl super::Delegate {
    /// A request seen upstream (event or list) in `directory` (authoritative when given).
    pub(super) fn observe(
        &mut self,
        now_ms: u64,
        request: &Request,
        directory: Option<&str>,
        fx: &mut Vec<Effect>,
    ) {
        let id = request.id.as_str();
        if self.forgotten.contains(id) {
            return;
        }
        let directory = directory
            .filter(|d| !d.is_empty())
            .map(str::to_string)
            .or_else(|| self.session_dirs.get(&request.session_id).cloned());
        let Some(req) = self.requests.get_mut(id) else {
            self.insert_request(request, directory.clone(), false);
            if let Some(dir) = directory {
                self.session_dirs
                    .entry(request.session_id.clone())
                    .or_insert(dir);
            }
            self.arm_or_wait(now_ms, id, fx);
            return;
        };
        if matches!(req.state, RequestState::Settled { .. }) {
            return;
        }
        if req.session_id.is_none() {
            req.session_id = Some(request.session_id.clone());
            self.changed = true;
        }
        if req.question_count.is_none() {
            req.question_count = Some(request.questions.len());
            self.changed = true;
        }
        if req.tool.is_none() && request.tool.is_some() {
            req.tool = request.tool.clone();
        }
        if let Some(dir) = directory {
            self.bind_directory(now_ms, id, &dir, fx);
        }
    }

    /// A new row for `request`, waiting for settings (the caller arms it).
    pub(super) fn insert_request(
        &mut self,
        request: &Request,
        directory: Option<String>,
        hinted: bool,
    ) {
        self.observations += 1;
        let fresh = PendingRequest {
            request_id: request.id.clone(),
            session_id: Some(request.session_id.clone()),
            directory_authoritative: directory.is_some() && !hinted,
            directory,
            question_count: Some(request.questions.len()),
            state: RequestState::Waiting {
                awaiting: super::Awaiting::Settings,
            },
            seen_at: self.observations,
            tool: request.tool.clone(),
            paused_by: None,
            last_claim: None,
            kept_deadline: None,
        };
        self.requests.insert(request.id.clone(), fresh);
        self.changed = true;
    }

    /// The `getSession` write-back: the session's directory is now authoritative for
    /// every request of that session that had none.
    pub(super) fn session_resolved(
        &mut self,
        now_ms: u64,
        session_id: &str,
        directory: &str,
        fx: &mut Vec<Effect>,
    ) {
        if directory.is_empty() {
            return;
        }
        self.session_dirs
            .insert(session_id.to_string(), directory.to_string());
        let ids: Vec<String> = self
            .requests
            .values()
            .filter(|r| !r.directory_authoritative && r.session_id.as_deref() == Some(session_id))
            .map(|r| r.request_id.clone())
            .collect();
        for id in ids {
            self.bind_directory(now_ms, &id, directory, fx);
        }
    }

    /// A `GET /question` came back for `directory` (`None` = unscoped).
    pub(super) fn list_result(
        &mut self,
        now_ms: u64,
        directory: Option<String>,
        token: ListToken,
        result: Result<Vec<Request>, ListError>,
        fx: &mut Vec<Effect>,
    ) {
        let listed = match result {
            Ok(listed) => listed,
            Err(_) => {
                // Partial coverage; every request keeps its state.
                let mut changed = self.coverage.failed.insert(directory.clone());
                if let Some(dir) = &directory {
                    changed |= self.coverage.successful.remove(dir);
                }
                self.changed |= changed;
                return;
            }
        };
        self.changed |= self.coverage.failed.remove(&directory);
        for request in &listed {
            self.observe(now_ms, request, directory.as_deref(), fx);
        }
        let Some(dir) = directory else {
            return; // Unscoped: discovery only, never "everything else is gone".
        };
        self.changed |= self.coverage.successful.insert(dir.clone());
        let present: BTreeSet<&str> = listed.iter().map(|r| r.id.as_str()).collect();
        let mut gone = Vec::new();
        let mut reinspect = Vec::new();
        for r in self.requests.values() {
            if r.authoritative_directory() != Some(dir.as_str()) {
                continue;
            }
            match r.state {
                // An inspection that failed earlier is tried again now.
                RequestState::Settled {
                    how: SettledHow::Gone,
                    ..
                } => reinspect.push(r.request_id.clone()),
                // Decision: a request with a POST in flight waits for its own outcome.
                RequestState::Settled { .. } | RequestState::Submitting { .. } => {}
                _ if r.seen_at <= token.0 && !present.contains(r.request_id.as_str()) => {
                    gone.push(r.request_id.clone())
                }
                _ => {}
            }
        }
        for id in gone {
            self.settle_gone(now_ms, &id, fx);
        }
        for id in reinspect {
            self.push_inspect(&id, fx);
        }
    }

    /// Upstream no longer holds the request and said nothing: `Gone`, and inspect.
    pub(super) fn settle_gone(&mut self, now_ms: u64, request_id: &str, fx: &mut Vec<Effect>) {
        let Some(req) = self.requests.get(request_id) else {
            return;
        };
        cancel_timer(req, fx);
        self.set_state(
            request_id,
            RequestState::Settled {
                how: SettledHow::Gone,
                at_ms: now_ms,
            },
        );
        self.push_inspect(request_id, fx);
    }

    fn push_inspect(&self, request_id: &str, fx: &mut Vec<Effect>) {
        if let Some(r) = self.requests.get(request_id) {
            fx.push(Effect::Inspect {
                request_id: request_id.to_string(),
                session_id: r.session_id.clone(),
                directory: r.directory.clone(),
                tool: r.tool.clone(),
            });
        }
    }

    /// What a gone request's tool part says. Matched against our last claim: the tool
    /// completed with what we sent (or dismissed after our reject) → ours.
    pub(super) fn inspected(&mut self, request_id: &str, found: Inspection, fx: &mut Vec<Effect>) {
        let Some(req) = self.requests.get(request_id) else {
            return;
        };
        let RequestState::Settled {
            how: SettledHow::Gone,
            at_ms,
        } = req.state
        else {
            return;
        };
        let last = req.last_claim.clone();
        let (how, settlement) = match found {
            Inspection::Unknown => return,
            Inspection::Lost => (SettledHow::Vanished, Settlement::Vanished),
            Inspection::Answered { answers } => match ours(&last, PostKind::Reply, &answers) {
                Some(claim) => (SettledHow::Ours { claim }, Settlement::Ours { claim }),
                None => (SettledHow::Replied, Settlement::Replied { answers }),
            },
            Inspection::Dismissed => match ours(&last, PostKind::Reject, &None) {
                Some(claim) => (SettledHow::Ours { claim }, Settlement::Ours { claim }),
                None => (SettledHow::Rejected, Settlement::Rejected),
            },
        };
        self.set_state(request_id, RequestState::Settled { how, at_ms });
        fx.push(Effect::Settle {
            request_id: request_id.to_string(),
            settlement,
        });
    }

    /// `question.replied`: settled. Ours when a claim of ours for a reply was in flight or
    /// uncertain and upstream reports what it sent (or reports no answers); otherwise
    /// answered in OpenCode itself.
    pub(super) fn replied_upstream(
        &mut self,
        now_ms: u64,
        request_id: &str,
        answers: Option<Vec<Vec<String>>>,
        fx: &mut Vec<Effect>,
    ) {
        let settlement = match self.pending_claim(request_id) {
            Some((claim, sent)) if claim.post == PostKind::Reply => match &answers {
                Some(a) if *a != sent => Settlement::Replied { answers },
                _ => Settlement::Ours { claim },
            },
            _ => Settlement::Replied { answers },
        };
        self.settle_by_word(now_ms, request_id, settlement, fx);
    }

    /// `question.rejected`: ours when our reject was in flight or uncertain.
    pub(super) fn rejected_upstream(
        &mut self,
        now_ms: u64,
        request_id: &str,
        fx: &mut Vec<Effect>,
    ) {
        let settlement = match self.pending_claim(request_id) {
            Some((claim, _)) if claim.post == PostKind::Reject => Settlement::Ours { claim },
            _ => Settlement::Rejected,
        };
        self.settle_by_word(now_ms, request_id, settlement, fx);
    }

    /// The claim in flight or tombstoned, with what it sent.
    fn pending_claim(&self, request_id: &str) -> Option<(Claim, Vec<Vec<String>>)> {
        let req = self.requests.get(request_id)?;
        match req.state {
            RequestState::Submitting { claim } | RequestState::Uncertain { claim } => {
                let sent = req
                    .last_claim
                    .as_ref()
                    .filter(|(c, _)| *c == claim)
                    .map(|(_, a)| a.clone())
                    .unwrap_or_default();
                Some((claim, sent))
            }
            _ => None,
        }
    }

    /// Settles a not-yet-settled request by upstream's word; a claim in flight is
    /// resolved with it (its POST's own result, arriving later, is stale).
    fn settle_by_word(
        &mut self,
        now_ms: u64,
        request_id: &str,
        settlement: Settlement,
        fx: &mut Vec<Effect>,
    ) {
        let Some(req) = self.requests.get(request_id) else {
            return;
        };
        if matches!(req.state, RequestState::Settled { .. }) {
            return;
        }
        cancel_timer(req, fx);
        let in_flight = match req.state {
            RequestState::Submitting { claim } => Some(claim),
            _ => None,
        };
        let how = match &settlement {
            Settlement::Ours { claim } => SettledHow::Ours { claim: *claim },
            Settlement::Replied { .. } => SettledHow::Replied,
            Settlement::Rejected => SettledHow::Rejected,
            Settlement::Vanished => SettledHow::Vanished,
        };
        let outcome = match &settlement {
            Settlement::Ours { .. } => PostOutcome::Applied,
            _ => PostOutcome::SettledElsewhere,
        };
        self.set_state(request_id, RequestState::Settled { how, at_ms: now_ms });
        fx.push(Effect::Settle {
            request_id: request_id.to_string(),
            settlement,
        });
        if let Some(claim) = in_flight {
            fx.push(Effect::Resolved {
                request_id: request_id.to_string(),
                claim,
                outcome,
            });
        }
    }

    /// The outcome of the POST made under `claim`. Applied only while that claim is the
    /// current one; anything else (settled since, an older claim) is a late result.
    pub(super) fn upstream_result(
        &mut self,
        now_ms: u64,
        request_id: &str,
        claim: Claim,
        result: UpstreamResult,
        fx: &mut Vec<Effect>,
    ) {
        let Some(req) = self.requests.get(request_id) else {
            return;
        };
        if req.state != (RequestState::Submitting { claim }) {
            return;
        }
        let outcome = PostOutcome::classify(result, req.directory_authoritative);
        match outcome {
            PostOutcome::Applied => {
                self.set_state(
                    request_id,
                    RequestState::Settled {
                        how: SettledHow::Ours { claim },
                        at_ms: now_ms,
                    },
                );
                fx.push(Effect::Settle {
                    request_id: request_id.to_string(),
                    settlement: Settlement::Ours { claim },
                });
            }
            PostOutcome::SettledElsewhere => {
                // Not ours (upstream said so): what happened is for the inspection.
                if let Some(r) = self.requests.get_mut(request_id) {
                    r.last_claim = None;
                }
                self.settle_gone(now_ms, request_id, fx);
            }
            PostOutcome::Refused { .. } | PostOutcome::NotSent => {
                // Released: nothing of it reached upstream, so nothing later is ours.
                if let Some(r) = self.requests.get_mut(request_id) {
                    r.last_claim = None;
                }
                self.set_state(
                    request_id,
                    RequestState::Paused {
                        reason: PauseReason::Refused,
                    },
                );
            }
            PostOutcome::Uncertain => {
                self.set_state(request_id, RequestState::Uncertain { claim });
            }
        }
        // Last, after the settlement: whoever waits on the claim reads it recorded.
        fx.push(Effect::Resolved {
            request_id: request_id.to_string(),
            claim,
            outcome,
        });
    }
}

/// `last` when it is the claim of this kind and upstream's answers (if reported) are the
/// ones it sent.
fn ours(
    last: &Option<(Claim, Vec<Vec<String>>)>,
    post: PostKind,
    answers: &Option<Vec<Vec<String>>>,
) -> Option<Claim> {
    let (claim, sent) = last.as_ref()?;
    if claim.post != post {
        return None;
    }
    match answers {
        Some(a) if a != sent => None,
        _ => Some(*claim),
    }
}
