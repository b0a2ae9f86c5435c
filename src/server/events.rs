//! `GET /projects/{projectId}/events`: Server-Sent Events, one tip `{type, revision}` per
//! change of the project, `id:` the revision, so `Last-Event-ID` resumes exactly after the
//! last event a client saw — no gap, no duplicate — because the log's order is the stream's.
//!
//! The revision is the project's own sequence (`project_seq`: 1, 2, 3…), never the log's
//! position: a member of one project learns nothing of when or how much another writes.
//! A `Last-Event-ID` beyond the project's revision was never sent by this server (another
//! server, a store restored from backup): it is refused rather than left silent forever.
//!
//! Subscribers do not poll: each waits on the server's one change notifier, then reads what
//! is new for its project from the log. [`poll_store`] is the notifier's second source: it
//! looks at the store's revision periodically, so writes by other processes show up too.

use std::collections::VecDeque;
use std::convert::Infallible;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::Stream;
use futures_util::stream;
use serde::Serialize;
use tokio::sync::watch;

use super::AppState;
use super::auth::InProject;
use super::error::{ApiError, ApiResult};
use crate::domain::{ErrorCode, OqError};

/// Events read from the log per wake; a long backlog streams in batches of this size.
const BATCH: usize = 256;

/// The tip a subscriber receives: enough to know what changed and refetch it.
#[derive(Debug, Clone, Serialize)]
pub struct Tip {
    #[serde(rename = "type")]
    pub kind: String,
    pub revision: i64,
}

pub async fn stream(
    State(st): State<AppState>,
    who: InProject,
    headers: HeaderMap,
) -> ApiResult<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>> {
    let resume = match headers.get("last-event-id") {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|s| s.trim().parse::<i64>().ok())
                .filter(|n| *n >= 0)
                .ok_or_else(|| {
                    ApiError::from(OqError::invalid(
                        ErrorCode::InvalidLastEventId,
                        "Last-Event-ID must be a revision this server sent",
                    ))
                })?,
        ),
    };
    let slot = st.streams().enter(who.actor.id()).ok_or_else(|| {
        ApiError::new(
            axum::http::StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::TooManyStreams,
            "this token holds its limit of event streams (limits.max_streams_per_token); close one",
        )
    })?;
    let project = who.project.clone();
    let now = st.read(move |e| e.project_revision(Some(&project))).await?;
    // Without Last-Event-ID a subscriber starts at "now": only changes after it connected.
    let start = match resume {
        Some(r) if r > now => {
            return Err(ApiError::from(OqError::invalid(
                ErrorCode::InvalidLastEventId,
                format!("Last-Event-ID {r} is beyond this project's revision {now}"),
            )));
        }
        Some(r) => r,
        None => now,
    };
    let heartbeat = st.options().heartbeat;
    let sub = Subscriber {
        state: st.clone(),
        project: who.project,
        last: start,
        pending: VecDeque::new(),
        changes: st.changes(),
        stopping: st.stopping(),
        tips: st.bridges().tips(),
        _slot: slot,
    };
    let events = stream::unfold(sub, |mut sub| async move {
        let ev = sub.next().await?;
        Some((Ok(ev), sub))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(heartbeat).text("heartbeat")))
}

struct Subscriber {
    state: AppState,
    project: String,
    /// The project revision of the last event sent (or the starting point).
    last: i64,
    pending: VecDeque<SseEvent>,
    changes: watch::Receiver<u64>,
    stopping: watch::Receiver<bool>,
    /// Auto-delegate tips of the bridges: sent as they come, without an `id:` (they are
    /// not log events, so a client's `Last-Event-ID` keeps naming the log's revision).
    tips: tokio::sync::broadcast::Receiver<crate::bridge::DelegateTip>,
    /// Held while the stream lives: its client's place under `max_streams_per_token`.
    _slot: super::throttle::StreamSlot,
}

impl Subscriber {
    /// The next event to send; `None` ends the stream (server stopping or store failing).
    async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(ev) = self.pending.pop_front() {
                return Some(ev);
            }
            if *self.stopping.borrow() {
                return None;
            }
            // Mark the current generation seen before reading, so a write that lands
            // during the read wakes us again instead of being missed.
            self.changes.borrow_and_update();
            let (project, after) = (self.project.clone(), self.last);
            let batch = self
                .state
                .read(move |e| e.events_after(Some(&project), after, BATCH))
                .await
                .ok()?;
            if batch.is_empty() {
                tokio::select! {
                    changed = self.changes.changed() => changed.ok()?,
                    _ = self.stopping.changed() => return None,
                    tip = self.tips.recv() => {
                        if let Ok(tip) = tip
                            && tip.project == self.project
                            && let Ok(ev) = SseEvent::default().json_data(&tip)
                        {
                            return Some(ev);
                        }
                    }
                }
                continue;
            }
            for e in batch {
                self.last = e.project_seq;
                let tip = Tip {
                    kind: e.event.type_name().to_string(),
                    revision: e.project_seq,
                };
                let ev = SseEvent::default()
                    .id(e.project_seq.to_string())
                    .json_data(&tip)
                    .ok()?;
                self.pending.push_back(ev);
            }
        }
    }
}

/// Wakes the subscribers when the store's revision moves for a reason this server did not
/// cause (another process writing the same store). Ends when the server stops.
pub async fn poll_store(state: AppState) {
    let mut stopping = state.stopping();
    let mut seen = state.read(|e| e.revision()).await.unwrap_or(0);
    let period = state.options().poll;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(period) => {}
            _ = stopping.changed() => return,
        }
        if *stopping.borrow() {
            return;
        }
        if let Ok(rev) = state.read(|e| e.revision()).await
            && rev != seen
        {
            seen = rev;
            state.0.changes.send_modify(|g| *g = g.wrapping_add(1));
        }
    }
}
