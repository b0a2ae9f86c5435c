//! `GET /projects/{projectId}/events`: Server-Sent Events, one tip `{type, revision}` per
//! change of the project, `id:` the revision, so `Last-Event-ID` resumes exactly after the
//! last event a client saw — no gap, no duplicate — because the log's order is the stream's.
//!
//! The revision is the project's own sequence (`project_seq`: 1, 2, 3…), never the log's
//! position: a member of one project learns nothing of when or how much another writes.
//! A `Last-Event-ID` beyond the project's revision was never sent by this server (another
//! server, a store restored from backup): it is refused rather than left silent forever.
//!
//! Subscribers do not poll, nor read the log each on their own: the server reads what is
//! new once per change (`feed`) and each stream takes its project's tips from that window;
//! a stream behind it (a resume, a slow client) reads the log itself until it is back.
//! [`poll_store`] is the change notifier's second source: it looks at the store's revision
//! periodically, so writes by other processes show up too.

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
use super::feed::Taken;
use crate::domain::{ErrorCode, OqError};
use crate::engine::Store;

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
    // The log's revision and the project's, in one snapshot: the stream's place in the
    // server's shared window (`feed`) and in its project's numbering.
    let (seen, now) = st
        .read(move |e| {
            e.store()
                .read(|v| Ok((v.revision()?, v.project_revision(&project)?)))
        })
        .await?;
    // Without Last-Event-ID a subscriber starts at "now": only changes after it connected.
    let (start, seen) = match resume {
        Some(r) if r > now => {
            return Err(ApiError::from(OqError::invalid(
                ErrorCode::InvalidLastEventId,
                format!("Last-Event-ID {r} is beyond this project's revision {now}"),
            )));
        }
        // Where revision r sits in the log is not known: read the log first.
        Some(r) if r < now => (r, None),
        Some(r) => (r, Some(seen)),
        None => (now, Some(seen)),
    };
    let heartbeat = st.options().heartbeat;
    let sub = Subscriber {
        state: st.clone(),
        project: who.project,
        last: start,
        seen,
        pending: VecDeque::new(),
        window: st.feed().subscribe(),
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
    /// The log position up to which every event of the project was sent: where the
    /// stream is in the server's window; `None` when it must read the log itself.
    seen: Option<i64>,
    pending: VecDeque<SseEvent>,
    /// The server's window of the log's tail moved.
    window: watch::Receiver<u64>,
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
            // Mark the window's generation seen before looking, so a change that lands
            // meanwhile wakes us again instead of being missed.
            self.window.borrow_and_update();
            let found = match self.seen {
                Some(seen) => self.take_window(seen),
                None => self.read_log().await?,
            };
            if found {
                continue;
            }
            tokio::select! {
                changed = self.window.changed() => changed.ok()?,
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
        }
    }

    /// Queues the project's new events from the server's window; `true` when the stream
    /// has something to send or must look again (fallen behind the window: the log).
    fn take_window(&mut self, seen: i64) -> bool {
        match self.state.feed().take(&self.project, seen) {
            Taken::Behind => {
                self.seen = None;
                true
            }
            Taken::Events(entries, now) => {
                let mut queued = false;
                for e in entries {
                    if e.revision <= self.last {
                        continue; // sent already (read from the log before)
                    }
                    if e.revision != self.last + 1 {
                        // Not the next one: never expected, but the log decides.
                        self.seen = None;
                        return true;
                    }
                    queued |= self.queue(e.revision, &e.kind);
                }
                self.seen = Some(now);
                queued
            }
        }
    }

    /// Reads the project's events after the last one sent from the log itself, with the
    /// log's revision of the same snapshot (the stream's place in the window again).
    /// `None` when the store cannot be read (the stream ends).
    async fn read_log(&mut self) -> Option<bool> {
        let (project, after) = (self.project.clone(), self.last);
        let (batch, revision) = self
            .state
            .read(move |e| {
                e.store()
                    .read(|v| Ok((v.events_after(Some(&project), after, BATCH)?, v.revision()?)))
            })
            .await
            .ok()?;
        // A full batch: the window is further still; the next look reads on from here.
        self.seen = if batch.len() == BATCH {
            batch.last().map(|e| e.seq)
        } else {
            Some(revision)
        };
        let mut queued = false;
        for e in batch {
            queued |= self.queue(e.project_seq, e.event.type_name());
        }
        Some(queued)
    }

    /// Queues the tip of the project's event `revision`; `false` if it could not be made.
    fn queue(&mut self, revision: i64, kind: &str) -> bool {
        self.last = revision;
        let tip = Tip {
            kind: kind.to_string(),
            revision,
        };
        match SseEvent::default().id(revision.to_string()).json_data(&tip) {
            Ok(ev) => {
                self.pending.push_back(ev);
                true
            }
            Err(_) => false,
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
