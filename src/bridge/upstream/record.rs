//! What the log records of a bridged upstream: the settlements the machine decided, each
//! as what it was, and the notes a restart needs (countdowns, submissions).
//!
//! Writes decided under the lock are queued ([`Write`]) and run after it by
//! [`Upstream::flush_writes`], one flusher at a time, in the order decided; a route
//! waiting on a claim is woken only after the writes decided before its outcome ran, so
//! it reads its own answer back.
//!
//! How each settlement is recorded:
//! - ours, a person's reply: their answer (`answer_once` with their idempotency key, so
//!   an outbox delivering again gets it back); a person's reject: their dismissal;
//! - ours, a continuation: an answer with the text sent, whose decision record names the
//!   timer (`bridge:<name>`, `auto_delegate`) or the person who delegated (`delegate`);
//! - replied in OpenCode itself: an answer by `opencode` (`upstream`), with the answers
//!   when upstream reported them; rejected there: a closure (`upstream`);
//! - vanished: a closure (`vanished`), not an answer.

use std::sync::Arc;

use super::*;
use crate::bridge::delegate::{Claimant, Inspection, Settlement, UpstreamResult};
use crate::domain::choices::ClosedReason;
use crate::domain::{AnswerInput, DecisionSource, Event};
use crate::engine::ImportedSettlement;
use crate::opencode::ToolRef;
use crate::opencode::types::DISMISSED_ERROR;
use crate::opencode::types::OPENCODE_AUTHOR;

/// One write the log owes.
pub(crate) enum Write {
    /// A note (countdown, pause, resume) by `actor`.
    Note { actor: Actor, event: Box<Event> },
    /// The settlement of a request, with the submission it was ours under.
    Settle {
        request_id: String,
        settlement: Settlement,
        submission: Option<Submission>,
    },
    /// Wake the route waiting on a claim.
    Wake { claim_id: u64, outcome: PostOutcome },
}

impl Upstream {
    pub(crate) fn queue(&self, write: Write) {
        self.writes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(write);
    }

    /// Runs every queued write, in order.
    pub(crate) async fn flush_writes(self: &Arc<Self>) {
        let _one = self.writing.lock().await;
        loop {
            let batch: Vec<Write> =
                std::mem::take(&mut *self.writes.lock().unwrap_or_else(|p| p.into_inner()));
            if batch.is_empty() {
                return;
            }
            for write in batch {
                match write {
                    Write::Note { actor, event } => {
                        let kind = event.type_name();
                        if let Err(e) = self.note(actor, *event).await {
                            tracing::warn!(upstream = %self.cfg.name, kind, error = %e, "could not note it in the log");
                        }
                    }
                    Write::Settle {
                        request_id,
                        settlement,
                        submission,
                    } => {
                        self.settle_in_log(&request_id, settlement, submission)
                            .await
                    }
                    Write::Wake { claim_id, outcome } => {
                        let waiter = self.lock().waiters.remove(&claim_id);
                        if let Some(tx) = waiter {
                            let _ = tx.send(outcome);
                        }
                    }
                }
            }
        }
    }

    /// Appends a note about a question (written only while it is open) or the upstream.
    pub(crate) async fn note(&self, actor: Actor, event: Event) -> Result<bool, OqError> {
        let project = self.cfg.project.clone();
        self.on_engine(true, move |e| e.note(&actor, &project, event))
            .await
    }

    /// Notes that `claim`'s POST is about to leave. `Err` says what to feed instead of
    /// sending: `NotSent` when it could not be noted (a POST the log does not know of
    /// would be unaccountable after a crash); `Uncertain` when the store refused it
    /// because a submission of another claim is outstanding — another server on the
    /// store (a failover in mid-claim) may have sent it, so it is a tombstone here too,
    /// and nothing here releases that claim.
    pub(super) async fn note_submission(
        &self,
        request_id: &str,
        claim: Claim,
        s: &Submission,
    ) -> Result<(), UpstreamResult> {
        let event = Event::QuestionSubmitted {
            question_id: request_id.to_string(),
            claimant: claim.by,
            post: claim.post,
            answers: s.post.answers().to_vec(),
            by: s.actor.id().to_string(),
            idempotency_key: s.key.clone(),
        };
        match self.note(self.service.clone(), event).await {
            Ok(_) => Ok(()),
            Err(e) if e.code() == crate::domain::ErrorCode::QuestionSubmissionClaimed => {
                tracing::warn!(upstream = %self.cfg.name, request = %request_id, "already claimed in the store (another server?); not sending it");
                Err(UpstreamResult::Uncertain)
            }
            Err(e) => {
                tracing::warn!(upstream = %self.cfg.name, request = %request_id, error = %e, "could not note the submission; not sending it");
                Err(UpstreamResult::NotSent)
            }
        }
    }

    async fn settle_in_log(
        &self,
        request_id: &str,
        settlement: Settlement,
        submission: Option<Submission>,
    ) {
        let (project, id) = (self.cfg.project.clone(), request_id.to_string());
        let service = self.service.clone();
        tracing::info!(upstream = %self.cfg.name, request = %request_id, ?settlement, "settled");
        let out = match (settlement, submission) {
            (Settlement::Ours { claim }, Some(s)) if claim.by == Claimant::Manual => match s.post {
                crate::bridge::delegate::Post::Reply { answers } => {
                    let input = AnswerInput {
                        answers: Some(answers),
                        ..AnswerInput::default()
                    };
                    self.on_engine(true, move |e| {
                        e.answer_once(&s.actor, Some(&project), &id, &input, s.key.as_deref())
                            .map(|_| ())
                    })
                    .await
                }
                crate::bridge::delegate::Post::Reject => {
                    self.on_engine(true, move |e| {
                        e.close_question(&s.actor, Some(&project), &id, ClosedReason::Rejected)
                            .map(|_| ())
                    })
                    .await
                }
            },
            (Settlement::Ours { claim }, Some(s)) => {
                // A continuation (the timer's, or a person's delegate): an answer whose
                // decision names who sent it, never the author as if they had decided.
                let source = if claim.by == Claimant::Auto {
                    DecisionSource::AutoDelegate
                } else {
                    DecisionSource::Delegate
                };
                let how = ImportedSettlement::Answered {
                    source,
                    by: s.actor.id().to_string(),
                    answers: s.post.answers().to_vec(),
                };
                self.on_engine(true, move |e| {
                    e.settle_imported(&service, &project, &id, how).map(|_| ())
                })
                .await
            }
            (settlement, _) => {
                let how = match settlement {
                    Settlement::Replied { answers } => ImportedSettlement::Answered {
                        source: DecisionSource::Upstream,
                        by: OPENCODE_AUTHOR.to_string(),
                        answers: answers.unwrap_or_default(),
                    },
                    Settlement::Rejected => ImportedSettlement::Closed {
                        source: DecisionSource::Upstream,
                    },
                    // Ours without a submission cannot be told apart from upstream's own.
                    Settlement::Ours { .. } => ImportedSettlement::Closed {
                        source: DecisionSource::Upstream,
                    },
                    Settlement::Vanished => ImportedSettlement::Closed {
                        source: DecisionSource::Vanished,
                    },
                };
                self.on_engine(true, move |e| {
                    e.settle_imported(&service, &project, &id, how).map(|_| ())
                })
                .await
            }
        };
        if let Err(e) = out {
            tracing::warn!(upstream = %self.cfg.name, request = %request_id, error = %e, "could not record the settlement");
        }
    }

    /// What the request's tool part says now that upstream no longer lists it.
    pub(super) async fn inspect(
        &self,
        session_id: Option<String>,
        directory: Option<String>,
        tool: Option<ToolRef>,
    ) -> Inspection {
        let (Some(session), Some(tool)) = (session_id, tool) else {
            return Inspection::Lost;
        };
        let directory = directory.unwrap_or_else(|| self.cfg.directories[0].clone());
        match self
            .client
            .tool_part(&session, &directory, &tool.call_id)
            .await
        {
            Err(_) => Inspection::Unknown,
            Ok(None) => Inspection::Lost,
            Ok(Some(part)) => {
                let state = part
                    .state
                    .unwrap_or_else(|| crate::opencode::types::ToolState {
                        status: String::new(),
                        error: None,
                        metadata: None,
                        time: None,
                    });
                match state.status.as_str() {
                    "completed" => Inspection::Answered {
                        answers: state.metadata.and_then(|m| m.answers),
                    },
                    "error"
                        if state
                            .error
                            .as_deref()
                            .is_some_and(|e| e.contains(DISMISSED_ERROR)) =>
                    {
                        Inspection::Dismissed
                    }
                    _ => Inspection::Lost,
                }
            }
        }
    }
}
