//! Running the delegate machine's effects: timers, POSTs, session lookups, lists, tips.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::task::AbortHandle;

use super::*;
use crate::bridge::delegate::{Claim, Effect, Input, Refusal, UpstreamResult};

impl Upstream {
    // ---- the machine ----------------------------------------------------------------

    /// Applies one input and runs its effects; returns them (a route looks for its claim).
    pub fn feed(self: &Arc<Self>, input: Input) -> Result<Vec<Effect>, Refusal> {
        let mut inner = self.lock();
        self.feed_locked(&mut inner, input)
    }

    pub(crate) fn feed_locked(
        self: &Arc<Self>,
        inner: &mut Inner,
        input: Input,
    ) -> Result<Vec<Effect>, Refusal> {
        let now = self.now_ms();
        let fx = inner.delegate.handle(now, input)?;
        self.run_effects(inner, fx.clone());
        self.settle_in_engine(inner);
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
                    inner.armed.insert(timer_id, (request_id.clone(), at_ms));
                    if let Some(conn) = inner.conn.as_mut() {
                        let h = self.spawn_timer(request_id, timer_id, at_ms);
                        if let Some(old) = conn.timers.insert(timer_id, h) {
                            old.abort();
                        }
                    }
                }
                Effect::CancelTimer { timer_id, .. } => {
                    inner.armed.remove(&timer_id);
                    if let Some(h) = inner.conn.as_mut().and_then(|c| c.timers.remove(&timer_id)) {
                        h.abort();
                    }
                }
                Effect::PostReply {
                    request_id,
                    directory,
                    answers,
                    claim,
                } => self.start_post(inner, request_id, directory, Some(answers), claim),
                Effect::PostReject {
                    request_id,
                    directory,
                    claim,
                } => self.start_post(inner, request_id, directory, None, claim),
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
                Effect::PersistSetting(enabled) => {
                    let me = self.clone();
                    tokio::spawn(async move {
                        let _ = me.persist_and_apply(enabled).await;
                    });
                }
                Effect::NotifyTip { epoch, revision } => {
                    let _ = self.tips.send(DelegateTip {
                        project: self.cfg.project.clone(),
                        kind: TIP_TYPE,
                        upstream: self.cfg.name.clone(),
                        epoch,
                        revision,
                    });
                }
            }
        }
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
        })
        .abort_handle()
    }

    /// Re-spawns a task for every armed deadline (after a rehydrate): a deadline that
    /// passed while disconnected fires now, against an upstream we just listed.
    pub(crate) fn respawn_timers(self: &Arc<Self>, inner: &mut Inner) {
        let armed: Vec<(u64, String, u64)> = inner
            .armed
            .iter()
            .map(|(id, (r, at))| (*id, r.clone(), *at))
            .collect();
        for (timer_id, request_id, at_ms) in armed {
            let Some(conn) = inner.conn.as_mut() else {
                return;
            };
            if conn.timers.contains_key(&timer_id) {
                continue;
            }
            let h = self.spawn_timer(request_id, timer_id, at_ms);
            if let Some(conn) = inner.conn.as_mut() {
                conn.timers.insert(timer_id, h);
            }
        }
    }

    pub(super) fn start_post(
        self: &Arc<Self>,
        inner: &mut Inner,
        request_id: String,
        directory: Option<String>,
        answers: Option<Vec<Vec<String>>>,
        claim: Claim,
    ) {
        let me = self.clone();
        let Some(conn) = inner.conn.as_mut() else {
            // Disconnected: nothing is sent; the claim is released and the request paused.
            tokio::spawn(async move {
                me.finish_post(None, request_id, claim, UpstreamResult::not_sent())
                    .await
            });
            return;
        };
        let conn_id = conn.id;
        let rid = request_id.clone();
        let timeout = self.cfg.timing.post_timeout;
        let task = tokio::spawn(async move {
            me.stats.posts.fetch_add(1, Ordering::Relaxed);
            let result = crate::bridge::post::send(
                &me.client,
                &rid,
                directory.as_deref(),
                answers.as_deref(),
                timeout,
            )
            .await;
            me.finish_post(Some(conn_id), rid, claim, result).await;
        });
        conn.posts
            .insert(claim.id, (request_id, claim, task.abort_handle()));
    }

    /// Feeds a POST's outcome, wakes the route waiting for it, and for an accepted
    /// continuation (auto or delegate) closes the question in the engine.
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
        self.flush_closes().await;
    }

    /// Applies the outcome of `claim` to the machine and hands it to its waiter (if any).
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
        if let Some(tx) = inner.waiters.remove(&claim.id) {
            let _ = tx.send(result);
        }
    }
}
