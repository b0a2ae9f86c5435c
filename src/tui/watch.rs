//! The revision watcher: one poll of the source's revision at a time, under a silence
//! backstop, turned into messages for `update`.
//!
//! - A reply → [`Msg::Revision`].
//! - No reply within the backstop → [`Msg::End`] with [`ExitReason::Stalled`] (the poll
//!   is dropped: a silent source must not hold the watcher forever).
//! - The peer is gone (connection refused, …) → [`ExitReason::PeerDied`], then the
//!   failed [`Msg::Revision`] (two paths for one exit: the cleanup is idempotent).
//!
//! [`Watcher`] owns the poll task. `stop` (the cleanup's [`super::effect::Effect::StopWatcher`])
//! aborts it and moves the epoch on, so a reply of the dead connection is never
//! delivered into the next one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

use super::effect::Msg;
use super::exit::ExitReason;
use crate::engine::sqlite::now_ms;
use crate::source::Source;
use crate::source::resilient::is_unreachable;

/// How long the source may stay silent on one poll before the connection is declared
/// stalled. `OQ_WATCH_BACKSTOP_MS` overrides it (tests shrink it to force a stall).
pub const DEFAULT_BACKSTOP: Duration = Duration::from_secs(20);

pub fn backstop() -> Duration {
    std::env::var("OQ_WATCH_BACKSTOP_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(DEFAULT_BACKSTOP, Duration::from_millis)
}

/// One poll under the backstop, as the messages `update` receives.
pub async fn watch_once<S: Source>(
    source: &S,
    project: Option<&str>,
    backstop: Duration,
) -> Vec<Msg> {
    match tokio::time::timeout(backstop, source.revision(project)).await {
        Err(_) => vec![Msg::End(ExitReason::Stalled)],
        Ok(Ok(r)) => vec![Msg::Revision {
            now: now_ms(),
            revision: Ok(r),
        }],
        Ok(Err(e)) => {
            let text = e.to_string();
            let mut out = Vec::new();
            if is_unreachable(&e) {
                out.push(Msg::End(ExitReason::PeerDied(text.clone())));
            }
            out.push(Msg::Revision {
                now: now_ms(),
                revision: Err(super::link::LinkError::of(&e)),
            });
            out
        }
    }
}

#[derive(Default)]
struct State {
    task: Option<JoinHandle<()>>,
}

/// The poll task of the current connection, and its epoch.
#[derive(Clone, Default)]
pub struct Watcher {
    epoch: Arc<AtomicU64>,
    state: Arc<Mutex<State>>,
}

impl Watcher {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts a poll unless one is in flight.
    pub fn poll<S: Source + Clone + 'static>(
        &self,
        source: &S,
        project: Option<String>,
        backstop: Duration,
        tx: &UnboundedSender<Msg>,
    ) {
        let mut st = self.state();
        if st.task.as_ref().is_some_and(|t| !t.is_finished()) {
            return;
        }
        let (source, tx, epoch) = (source.clone(), tx.clone(), Arc::clone(&self.epoch));
        let mine = epoch.load(Ordering::SeqCst);
        st.task = Some(tokio::spawn(async move {
            let msgs = watch_once(&source, project.as_deref(), backstop).await;
            // A reply of a stopped watcher belongs to a dead connection: dropped.
            if epoch.load(Ordering::SeqCst) == mine {
                for m in msgs {
                    let _ = tx.send(m);
                }
            }
        }));
    }

    /// Stops the current poll and disowns any reply it may still produce. Idempotent.
    pub fn stop(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        if let Some(t) = self.state().task.take() {
            t.abort();
        }
    }
}
