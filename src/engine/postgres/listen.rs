//! LISTEN/NOTIFY: every commit on the database (by any server) notifies one channel, and
//! each server's listener wakes its own event-stream subscribers, which then read what is
//! new from the log — so the stream's order and ids stay the log's, whoever wrote.
//!
//! Chosen over logical decoding: it needs no replication slot (nothing left to grow on
//! the database when a server dies), no extra privilege, and the payload is only a wake-up;
//! what changed is always read back from the log. A lost listening connection is
//! reconnected with backoff and followed by one wake-up, for whatever it missed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use fallible_iterator::FallibleIterator;

use super::conn::{Backoff, PgTarget};
use super::schema::CHANNEL;
use crate::domain::OqError;

/// How often the listener looks at its stop flag while nothing arrives.
const TICK: Duration = Duration::from_millis(200);

/// The listening thread; stops (and is joined) when dropped.
pub struct Listener {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Listener {
    pub fn start(
        target: PgTarget,
        on_change: impl Fn() + Send + 'static,
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

fn run(target: &PgTarget, stop: &AtomicBool, on_change: &dyn Fn()) {
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
            on_change();
        }
        first = false;
        loop {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let got = conn.client().notifications().timeout_iter(TICK).next();
            match got {
                Ok(Some(_)) => {
                    // Coalesce what else already arrived into one wake-up (not waiting).
                    let mut pending = conn.client().notifications();
                    let mut ready = pending.iter();
                    while let Ok(Some(_)) = ready.next() {}
                    on_change();
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
