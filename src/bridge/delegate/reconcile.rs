//! What upstream tells the machine: a request asked, a session's directory resolved, a
//! list of pending requests, and the outcome of our own POSTs.
//!
//! Kept here: a request's identity is bound by upstream only; a successful *scoped* list
//! settles missing requests as `External` for that directory alone, an unscoped list only
//! discovers, a failed list marks coverage partial and changes nothing else; a definitive
//! refusal releases the claim and pauses for a person; an unclear outcome leaves an
//! `Uncertain` tombstone; a settled request is never downgraded.

use std::collections::BTreeSet;

use super::machine::cancel_timer;
use super::messages::{Effect, ListError, ListToken, QuestionRequest, UpstreamResult};
use super::state::{Claim, PauseReason, PendingRequest, PostKind, RequestState, SettledHow};

/// What an upstream outcome means for the claim that produced it.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// Upstream applied it.
    Done,
    /// Upstream does not have the request (404).
    Gone,
    /// Upstream refused it, or it never left: release the claim, a person decides.
    Refused,
    /// It may or may not have been applied.
    Unclear,
}

fn verdict(result: &UpstreamResult) -> Verdict {
    if result.not_sent {
        Verdict::Refused
    } else if result.ok {
        Verdict::Done
    } else if result.uncertain {
        Verdict::Unclear
    } else {
        match result.status {
            404 => Verdict::Gone,
            // 400/409/422 are the seed's definitive rejects. Decision: every other 4xx
            // (401, 403, 413…) is a refusal the server made before applying anything, so
            // it is definitive too; 5xx, a bare 0 and anything else may have been applied.
            400..=499 => Verdict::Refused,
            _ => Verdict::Unclear,
        }
    }
}

impl super::Delegate {
    /// A request seen upstream (event or list) in `directory` (authoritative when given).
    pub(super) fn observe(
        &mut self,
        now_ms: u64,
        request: &QuestionRequest,
        directory: Option<&str>,
        fx: &mut Vec<Effect>,
    ) {
        let id = request.id.as_str();
        let directory = directory
            .filter(|d| !d.is_empty())
            .map(str::to_string)
            .or_else(|| self.session_dirs.get(&request.session_id).cloned());
        let Some(req) = self.requests.get_mut(id) else {
            self.observations += 1;
            let fresh = PendingRequest {
                request_id: id.to_string(),
                session_id: Some(request.session_id.clone()),
                directory_authoritative: directory.is_some(),
                directory: directory.clone(),
                question_count: Some(request.questions.len()),
                state: RequestState::Waiting {
                    awaiting: super::Awaiting::Settings,
                },
                seen_at: self.observations,
            };
            self.requests.insert(id.to_string(), fresh);
            self.changed = true;
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
        if let Some(dir) = directory {
            self.bind_directory(now_ms, id, &dir, fx);
        }
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
        result: Result<Vec<QuestionRequest>, ListError>,
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
        let gone: Vec<String> = self
            .requests
            .values()
            .filter(|r| {
                r.authoritative_directory() == Some(dir.as_str())
                    && r.seen_at <= token.0
                    && !present.contains(r.request_id.as_str())
                    // Decision: a request with a POST in flight waits for its own outcome.
                    && !matches!(
                        r.state,
                        RequestState::Settled { .. } | RequestState::Submitting { .. }
                    )
            })
            .map(|r| r.request_id.clone())
            .collect();
        for id in gone {
            if let Some(req) = self.requests.get(&id) {
                cancel_timer(req, fx);
            }
            self.set_state(
                &id,
                RequestState::Settled {
                    how: SettledHow::External,
                },
            );
        }
    }

    /// The outcome of the POST made under `claim`. Applied only while that claim is the
    /// current one; anything else (settled since, an older claim) is a late result.
    pub(super) fn upstream_result(
        &mut self,
        request_id: &str,
        claim: Claim,
        result: UpstreamResult,
    ) {
        let Some(req) = self.requests.get(request_id) else {
            return;
        };
        if req.state != (RequestState::Submitting { claim }) {
            return;
        }
        let state = match verdict(&result) {
            Verdict::Done => RequestState::Settled {
                how: match claim.post {
                    PostKind::Reply => SettledHow::Replied,
                    PostKind::Reject => SettledHow::Rejected,
                },
            },
            // Only the request's own directory can say it is gone; a 404 from a hinted
            // one may just be the wrong directory.
            Verdict::Gone if req.directory_authoritative => RequestState::Settled {
                how: SettledHow::External,
            },
            Verdict::Gone | Verdict::Refused => RequestState::Paused {
                reason: PauseReason::User,
            },
            Verdict::Unclear => RequestState::Uncertain { claim },
        };
        self.set_state(request_id, state);
    }
}
