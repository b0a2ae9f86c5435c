//! Running the delegate machine's effects: timers, POSTs, session lookups, lists,
//! inspections, tips; and queuing what the log must record.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::task::AbortHandle;

use super::record::Write;
use super::*;
use crate::bridge::TIP_TYPE;
use crate::bridge::delegate::{Claimant, Effect, Input, Refusal, UpstreamResult};
use crate::domain::Event;

impl Upstream {
    /// Applies one input and runs its effects; returns them (a route looks for its claim).
    /// The log writes it queued run before this returns.
    pub async fn feed(self: &Arc<Self>, input: Input) -> Result<Vec<Effect>, Refusal> {
        let fx = {
            let mut inner = self.lock();
            self.feed_locked(&mut inner, input)?
        };
        self.flush_writes().await;
        Ok(fx)
    }

    /// [`Upstream::feed`] under a lock the caller holds; the caller flushes after.
    pub(crate) fn feed_locked(
        self: &Arc<Self>,
        inner: &mut Inner,
        input: Input,
    ) -> Result<Vec<Effect>, Refusal> {
        let now = self.now_ms();
        let fx = inner.delegate.handle(now, input)?;
        self.run_effects(inner, fx.clone());
        Ok(fx)
    }

    pub(super) fn run_effects(self: &Arc<Self>, inner: &mut Inner, fx: Vec<Effect>) {
        for effect in fx {
            match effect {
                Effect::ArmTimer {
                    request_id,
                    timer_id,
                    at_ms,
                } => {
                    if let Some(conn) = inner.conn.as_mut() {
                        let h = self.spawn_timer(request_id.clone(), timer_id, at_ms);
                        if let Some(old) = conn.timers.insert(timer_id, h) {
                            old.abort();
                        }
                    }
                    if inner.noted_deadlines.get(&request_id) != Some(&at_ms) {
                        inner.noted_deadlines.insert(request_id.clone(), at_ms);
                        self.queue(Write::Note {
                            actor: self.service.clone(),
                            event: Box::new(Event::QuestionCountdown {
                                question_id: request_id,
                                deadline: self.unix_of(at_ms),
                            }),
                        });
                    }
                }
                Effect::CancelTimer { timer_id, .. } => {
                    if let Some(h) = inner.conn.as_mut().and_then(|c| c.timers.remove(&timer_id)) {
                        h.abort();
                    }
                }
                Effect::PostReply {
                    request_id,
                    directory,
                    answers,
                    claim,
                } => self.start_post(inner, request_id, directory, Post::Reply { answers }, claim),
                Effect::PostReject {
                    request_id,
                    directory,
                    claim,
                } => self.start_post(inner, request_id, directory, Post::Reject, claim),
                Effect::Resolved {
                    request_id,
                    claim,
                    outcome,
                } => {
                    if matches!(outcome, PostOutcome::Refused { .. } | PostOutcome::NotSent) {
                        // Released and paused by the bridge itself: noted, so a restart
                        // does not take the submission noted before it for a tombstone.
                        inner.submissions.remove(&claim.id);
                        self.queue(Write::Note {
                            actor: self.service.clone(),
                            event: Box::new(Event::QuestionPaused {
                                question_id: request_id,
                                reason: crate::domain::delegation::PauseReason::Refused,
                                by: self.service.id().to_string(),
                            }),
                        });
                    }
                    self.queue(Write::Wake {
                        claim_id: claim.id,
                        outcome,
                    })
                }
                Effect::Settle {
                    request_id,
                    settlement,
                } => {
                    let submission = match &settlement {
                        crate::bridge::delegate::Settlement::Ours { claim } => {
                            inner.submissions.remove(&claim.id)
                        }
                        _ => None,
                    };
                    inner.known.remove(&request_id);
                    inner.noted_deadlines.remove(&request_id);
                    self.tick_after(self.cfg.timing.settled_retention);
                    self.queue(Write::Settle {
                        request_id,
                        settlement,
                        submission,
                    });
                }
                Effect::Inspect {
                    request_id,
                    session_id,
                    directory,
                    tool,
                } => {
                    let me = self.clone();
                    tokio::spawn(async move {
                        let found = me.inspect(session_id, directory, tool).await;
                        let _ = me.feed(Input::Inspected { request_id, found }).await;
                    });
                }
                Effect::ResolveSession { session_id } => {
                    let me = self.clone();
                    tokio::spawn(async move { me.resolve_session(session_id).await });
                }
                Effect::RecoverViaList { directory, .. } => {
                    let me = self.clone();
                    let dirs = match directory {
                        Some(d) if self.cfg.directories.contains(&d) => vec![d],
                        _ => self.cfg.directories.clone(),
                    };
                    tokio::spawn(async move {
                        for d in dirs {
                            me.list_and_sync(&d).await;
                        }
                    });
                }
                Effect::UserTakeover { root_session, .. } => {
                    // No session-goal loop runs inside oq serve: the takeover is kept and
                    // reported by GET …/sessions/{id}/blocking to whatever continues it.
                    self.stats.takeovers.fetch_add(1, Ordering::Relaxed);
                    inner.takeovers.insert(root_session, self.now_ms());
                }
                Effect::PersistSetting(_) => {
                    // Only `set_enabled` asks for a toggle, and it persists it itself.
                }
                Effect::NotifyTip { epoch, revision } => {
                    let _ = self.tips.send(DelegateTip {
                        project: self.cfg.project.clone(),
                        kind: TIP_TYPE,
                        upstream: self.cfg.name.clone(),
                        epoch,
                        revision,
                        connected: inner.health.connected,
                        since_unix_ms: inner.health.since_unix_ms,
                    });
                }
            }
        }
    }

    /// Feeds `Tick` after `wait` (a settled request's retention), so it leaves the
    /// snapshot even when nothing else happens. Holds the upstream weakly.
    fn tick_after(self: &Arc<Self>, wait: Duration) {
        let me = Arc::downgrade(self);
        tokio::spawn(async move {
            tokio::time::sleep(wait + Duration::from_millis(1)).await;
            if let Some(me) = me.upgrade() {
                let _ = me.feed(Input::Tick).await;
            }
        });
    }

    pub(super) fn spawn_timer(
        self: &Arc<Self>,
        request_id: String,
        timer_id: u64,
        at_ms: u64,
    ) -> AbortHandle {
        let me = self.clone();
        let wait = Duration::from_millis(at_ms.saturating_sub(self.now_ms()));
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            {
                let mut inner = me.lock();
                if let Some(conn) = inner.conn.as_mut() {
                    conn.timers.remove(&timer_id);
                }
                let _ = me.feed_locked(
                    &mut inner,
                    Input::TimerFired {
                        request_id,
                        timer_id,
                    },
                );
            }
            me.flush_writes().await;
        })
        .abort_handle()
    }

    /// Starts the POST of `claim`: first its submission is noted in the log (who, what),
    /// then it is sent. A note that cannot be written means nothing is sent.
    pub(super) fn start_post(
        self: &Arc<Self>,
        inner: &mut Inner,
        request_id: String,
        directory: Option<String>,
        post: Post,
        claim: Claim,
    ) {
        let submission = inner
            .submissions
            .entry(claim.id)
            .or_insert_with(|| Submission {
                // The timer speaks for the bridge itself; a route inserts the person's.
                actor: self.service.clone(),
                post: post.clone(),
                key: None,
            })
            .clone();
        let me = self.clone();
        let Some(conn) = inner.conn.as_mut() else {
            tokio::spawn(async move {
                me.finish_post(None, request_id, claim, UpstreamResult::NotSent)
                    .await
            });
            return;
        };
        let conn_id = conn.id;
        let rid = request_id.clone();
        let timeout = self.cfg.timing.post_timeout;
        let task = tokio::spawn(async move {
            if let Err(instead) = me.note_submission(&rid, claim, &submission).await {
                me.finish_post(Some(conn_id), rid, claim, instead).await;
                return;
            }
            me.stats.posts.fetch_add(1, Ordering::Relaxed);
            if claim.by == Claimant::Auto {
                tracing::info!(upstream = %me.cfg.name, request = %rid, "auto-delegate: posting the continuation text");
            } else {
                tracing::info!(upstream = %me.cfg.name, request = %rid, claimant = ?claim.by, post = ?claim.post, actor = %submission.actor.id(), "posting upstream");
            }
            let result =
                crate::bridge::post::send(&me.client, &rid, directory.as_deref(), &post, timeout)
                    .await;
            tracing::info!(upstream = %me.cfg.name, request = %rid, ?result, "upstream answered the post");
            me.finish_post(Some(conn_id), rid, claim, result).await;
        });
        conn.posts
            .insert(claim.id, (request_id, claim, task.abort_handle()));
    }

    /// Feeds a POST's outcome and runs what it decided.
    pub(crate) async fn finish_post(
        self: &Arc<Self>,
        conn_id: Option<u64>,
        request_id: String,
        claim: Claim,
        result: UpstreamResult,
    ) {
        {
            let mut inner = self.lock();
            if let Some(conn) = inner.conn.as_mut()
                && Some(conn.id) == conn_id
            {
                conn.posts.remove(&claim.id);
            }
            self.resolve_claim(&mut inner, &request_id, claim, result);
        }
        self.flush_writes().await;
    }

    /// Applies the outcome of `claim` to the machine (the caller flushes the writes).
    pub(crate) fn resolve_claim(
        self: &Arc<Self>,
        inner: &mut Inner,
        request_id: &str,
        claim: Claim,
        result: UpstreamResult,
    ) {
        let _ = self.feed_locked(
            inner,
            Input::UpstreamResult {
                request_id: request_id.to_string(),
                claim,
                result,
            },
        );
    }
}
