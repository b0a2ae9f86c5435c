//! LISTEN/NOTIFY: every commit on the database (by any server) notifies one channel, and
//! each server's listener wakes its own event-stream subscribers. The notification
//! carries the heads of what the batch appended ([`payload`]: positions, projects,
//! revisions, kinds — never a payload), delivered in commit order, so a server's feed
//! takes another server's batch without reading the log; a batch too large for one
//! notification carries its last position only, and the feed reads the log as before.
//!
//! Chosen over logical decoding: it needs no replication slot (nothing left to grow on
//! the database when a server dies), no extra privilege; what a stream sends is always
//! the log's own heads, read back or carried. A lost listening connection is
//! reconnected with backoff and followed by one wake-up, for whatever it missed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use fallible_iterator::FallibleIterator;

use super::conn::{Backoff, PgTarget};
use super::schema::CHANNEL;
use crate::domain::OqError;
use crate::engine::store::LogHead;

/// The largest notification payload sent with heads (PostgreSQL's limit is 8,000 bytes).
const MAX_PAYLOAD: usize = 7_900;

/// How often the listener looks at its stop flag while nothing arrives.
const TICK: Duration = Duration::from_millis(200);

/// The listening thread; stops (and is joined) when dropped.
pub struct Listener {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Listener {
    /// `on_change` runs after each commit heard (with what it appended when the
    /// notifications carried it all, in order) and once after a lost connection is back.
    pub fn start(
        target: PgTarget,
        on_change: impl Fn(Option<Vec<LogHead>>) + Send + 'static,
    ) -> Result<Listener, OqError> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("oq-pg-listen".into())
            .spawn(move || run(&target, &flag, &on_change))
            .map_err(|e| OqError::Internal(format!("cannot start the listener: {e}")))?;
        Ok(Listener {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(target: &PgTarget, stop: &AtomicBool, on_change: &dyn Fn(Option<Vec<LogHead>>)) {
    let backoff = Backoff::default();
    let mut first = true;
    while !stop.load(Ordering::Relaxed) {
        if !backoff.ready() {
            std::thread::sleep(backoff.remaining().min(TICK));
            continue;
        }
        let mut conn = match target.connect() {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(store = target.shown(), "listener: {e}");
                backoff.failed();
                continue;
            }
        };
        if let Err(e) = conn.batch(&format!("LISTEN {CHANNEL}")) {
            tracing::warn!(store = target.shown(), "listener: {e}");
            backoff.failed();
            continue;
        }
        backoff.succeeded();
        if !first {
            // Back after a loss: whatever was committed meanwhile was not heard.
            on_change(None);
        }
        first = false;
        loop {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let got = conn.client().notifications().timeout_iter(TICK).next();
            match got {
                Ok(Some(heard)) => {
                    // Coalesce what else already arrived into one wake-up (not waiting).
                    let mut heads = heads_of(heard.payload());
                    let mut pending = conn.client().notifications();
                    let mut ready = pending.iter();
                    while let Ok(Some(n)) = ready.next() {
                        heads = heads.zip(heads_of(n.payload())).map(|(mut a, b)| {
                            a.extend(b);
                            a
                        });
                    }
                    on_change(heads);
                }
                Ok(None) => {
                    if conn.is_closed() {
                        break;
                    }
                }
                Err(e) => {
                    tracing::warn!(store = target.shown(), "listener lost its connection: {e}");
                    backoff.failed();
                    break;
                }
            }
        }
    }
}

/// A batch's notification: its heads as `[[seq, project, revision, kind], …]` when they
/// fit, else its last position `last` alone.
pub fn payload(heads: &[LogHead], last: i64) -> String {
    let rows: Vec<serde_json::Value> = heads
        .iter()
        .map(|h| serde_json::json!([h.seq, h.project_id, h.project_seq, h.kind]))
        .collect();
    match serde_json::to_string(&rows) {
        Ok(text) if text.len() <= MAX_PAYLOAD => text,
        _ => last.to_string(),
    }
}

/// The heads a notification carries; `None` for one that carries only a position (or
/// anything unreadable: the feed then reads the log).
pub fn heads_of(payload: &str) -> Option<Vec<LogHead>> {
    let rows: Vec<(i64, String, i64, String)> = serde_json::from_str(payload).ok()?;
    Some(
        rows.into_iter()
            .map(|(seq, project_id, project_seq, kind)| LogHead {
                seq,
                project_id,
                project_seq,
                kind,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(seq: i64) -> LogHead {
        LogHead {
            seq,
            project_id: "it's".into(),
            project_seq: seq - 10,
            kind: "open_question.answered".into(),
        }
    }

    #[test]
    fn heads_that_fit_travel_whole_and_a_larger_batch_sends_its_position() {
        let heads: Vec<LogHead> = (11..14).map(head).collect();
        assert_eq!(heads_of(&payload(&heads, 13)), Some(heads));
        let many: Vec<LogHead> = (11..1_000).map(head).collect();
        let sent = payload(&many, 999);
        assert_eq!(sent, "999");
        assert_eq!(heads_of(&sent), None);
        assert_eq!(heads_of("not json"), None);
    }
}
