//! Following one upstream: connect, rehydrate, follow, and the ONE cleanup.
//!
//! [`Upstream::run`] is the upstream's task for the server's lifetime. It first restores
//! the machine from the log (what a previous run left open: deadlines, pauses,
//! submissions) and loads the setting; every directory counts as not listed yet
//! (coverage partial) until a list of it succeeds. Each round opens a connection: it
//! subscribes to `/event?directory=` for every configured directory, then rehydrates
//! from `GET /question?directory=` for each (the event stream alone is never trusted:
//! what was asked while we were away is only in the list), tells the machine
//! `Connected` (windows count again, fresh), and follows the events. A round ends in exactly one of the [`End`]s, and
//! every end goes through [`Upstream::release`] — the stall backstop, a stream or HTTP
//! error, the upstream dying, and the server's shutdown alike; nothing else clears
//! connection state. Then it waits a backoff (doubling, with jitter) and starts over,
//! unless the server is stopping.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::{mpsc, watch};

use super::delegate::{Input, ListError, UpstreamResult};
use super::upstream::Health;
use super::upstream::{Conn, Upstream};
use crate::opencode::{Envelope, Event, Scope, events};

/// Why a connection ended. All of them are non-clean: a clean end does not exist for a
/// stream meant to last as long as the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// No event (not even a heartbeat) within the stall backstop.
    Stalled,
    /// The stream broke or closed, or a read failed.
    StreamError(String),
    /// The upstream could not be reached (subscribe refused, connection refused).
    UpstreamDied(String),
    /// The server is stopping.
    Shutdown,
}

impl Upstream {
    /// THE cleanup of connection `conn_id`. Idempotent: several paths may report the same
    /// end (a stall and then the shutdown, a broken stream and its reader's error), and
    /// only the first one finds the connection; the others return `false`.
    ///
    /// It releases everything the connection holds:
    /// - the event stream readers (aborted);
    /// - the timer tasks (aborted), and the machine is told `Disconnected`: what was
    ///   counting is paused (`unreachable`), nothing is armed until the next rehydrate,
    ///   which starts fresh windows;
    /// - the POSTs in flight (aborted): their claims are resolved `uncertain` — a POST we
    ///   stopped may have reached upstream, so it is a tombstone, never retried, and the
    ///   route waiting on it answers 502 `upstream_uncertain`;
    /// - the coverage: every directory is marked not listed (a failed list for the
    ///   machine), so absence proves nothing until the next rehydrate lists it again;
    /// - the health: disconnected, since now (the list, the snapshot and the event
    ///   stream's tip say so).
    ///
    /// No flag: shutdown and the other ends release the same things (what the machine
    /// decided and the log holds — deadlines, pauses, tombstones — outlives them all).
    ///
    /// The caller flushes the log writes the release queued ([`Upstream::flush_writes`]).
    pub fn release(self: &Arc<Self>, conn_id: u64, end: End) -> bool {
        let mut inner = self.lock();
        let Some(conn) = inner.conn.take_if(|c| c.id == conn_id) else {
            return false;
        };
        let Conn {
            timers,
            posts,
            streams,
            coverage: _,
            ..
        } = conn;
        for h in streams {
            h.abort();
        }
        for (_, h) in timers {
            h.abort();
        }
        for (_, (request_id, claim, h)) in posts {
            h.abort();
            self.resolve_claim(&mut inner, &request_id, claim, UpstreamResult::Uncertain);
        }
        if inner.health.connected {
            inner.health = Health {
                connected: false,
                since_unix_ms: crate::engine::sqlite::now_ms(),
            };
        }
        let _ = self.feed_locked(&mut inner, Input::Disconnected);
        let token = inner.delegate.list_token();
        for dir in self.cfg.directories.clone() {
            let _ = self.feed_locked(
                &mut inner,
                Input::ListResult {
                    directory: Some(dir),
                    token,
                    result: Err(ListError(format!("connection ended: {end:?}"))),
                },
            );
        }
        self.stats.releases.fetch_add(1, Ordering::Relaxed);
        tracing::info!(upstream = %self.cfg.name, conn_id, ?end, "opencode connection ended; released");
        true
    }

    /// The id of the live connection, if any.
    pub fn connection_id(&self) -> Option<u64> {
        self.lock().conn.as_ref().map(|c| c.id)
    }

    /// What the live connection holds: (timer tasks, POSTs in flight, stream readers).
    /// All zero when disconnected — a test's proof that nothing leaked.
    pub fn held(&self) -> (usize, usize, usize) {
        let inner = self.lock();
        inner
            .conn
            .as_ref()
            .map(|c| (c.timers.len(), c.posts.len(), c.streams.len()))
            .unwrap_or((0, 0, 0))
    }

    /// Forces the cleanup of the live connection as if it had ended by `end` (tests,
    /// and the server's shutdown). Returns whether anything was released.
    pub async fn end_connection(self: &Arc<Self>, end: End) -> bool {
        let released = match self.connection_id() {
            Some(id) => self.release(id, end),
            None => false,
        };
        self.flush_writes().await;
        released
    }

    fn open_conn(&self) -> u64 {
        let mut inner = self.lock();
        let id = inner.next_conn;
        inner.next_conn += 1;
        inner.conn = Some(Conn::new(id));
        self.stats.opened.fetch_add(1, Ordering::Relaxed);
        id
    }

    /// The upstream's task for the server's life: wait for the upstream's lease (at once
    /// on SQLite), drive it until the server stops or the lease is lost, and after a
    /// loss forget everything and wait again. A clean stop gives the lease up.
    pub async fn run(self: Arc<Self>, mut stopping: watch::Receiver<bool>) {
        while let Some(sent) = self.wait_for_lease(&mut stopping).await {
            self.driving();
            let (end_tx, end_rx) = watch::channel(false);
            let keeper = tokio::spawn(self.clone().keep_lease(sent, stopping.clone(), end_tx));
            self.clone().drive(end_rx).await;
            let lost = keeper.await.unwrap_or(false);
            if !lost {
                break;
            }
            self.forget_all();
        }
        self.give_up_lease().await;
    }

    /// Driving the upstream: restore from the log, then rounds of
    /// connect–rehydrate–follow until `stopping` (the server's stop or a lost lease).
    async fn drive(self: Arc<Self>, mut stopping: watch::Receiver<bool>) {
        self.restore_from_log().await;
        self.load_settings().await;
        {
            // Nothing is listed yet: absence proves nothing anywhere (coverage partial).
            let mut inner = self.lock();
            let token = inner.delegate.list_token();
            for dir in self.cfg.directories.clone() {
                let _ = self.feed_locked(
                    &mut inner,
                    Input::ListResult {
                        directory: Some(dir),
                        token,
                        result: Err(ListError("not listed yet".into())),
                    },
                );
            }
        }
        self.flush_writes().await;
        // What a person asked through another server (PostgreSQL): run here, the driver.
        let commands = tokio::spawn(self.clone().follow_commands(stopping.clone()));
        let mut failures: u32 = 0;
        loop {
            if *stopping.borrow() {
                break;
            }
            let conn_id = self.open_conn();
            let end = self.round(conn_id, &mut stopping, &mut failures).await;
            let shutdown = end == End::Shutdown;
            self.release(conn_id, end);
            self.flush_writes().await;
            if shutdown {
                break;
            }
            failures = failures.saturating_add(1);
            let wait = backoff(
                self.cfg.timing.backoff_min,
                self.cfg.timing.backoff_max,
                failures,
            );
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = stopping.changed() => {}
            }
        }
        self.end_connection(End::Shutdown).await;
        let _ = commands.await;
    }

    async fn round(
        self: &Arc<Self>,
        conn_id: u64,
        stopping: &mut watch::Receiver<bool>,
        failures: &mut u32,
    ) -> End {
        let (tx, mut rx) = mpsc::channel::<Result<Envelope, String>>(1024);
        for dir in self.cfg.directories.clone() {
            let head = tokio::time::timeout(
                self.cfg.timing.subscribe_timeout,
                events::subscribe(&self.client, Scope::Directory(&dir)),
            );
            let stream = tokio::select! {
                s = head => s,
                _ = stopping.changed() => return End::Shutdown,
            };
            let mut stream = match stream {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => return End::UpstreamDied(e.to_string()),
                Err(_) => return End::UpstreamDied("no answer to the event stream request".into()),
            };
            let tx = tx.clone();
            let reader = tokio::spawn(async move {
                while let Some(item) = stream.next().await {
                    let item = item.map_err(|e| e.to_string());
                    let failed = item.is_err();
                    if tx.send(item).await.is_err() || failed {
                        return;
                    }
                }
                let _ = tx.send(Err("the event stream closed".into())).await;
            });
            let mut inner = self.lock();
            match inner.conn.as_mut() {
                Some(c) if c.id == conn_id => c.streams.push(reader.abort_handle()),
                _ => {
                    // Released from elsewhere while subscribing: this round is over.
                    reader.abort();
                    return End::StreamError("released while subscribing".into());
                }
            }
        }
        drop(tx);
        self.stats.connects.fetch_add(1, Ordering::Relaxed);

        // Rehydrate: every directory listed, after subscribing, so nothing falls between.
        let mut any = false;
        for dir in self.cfg.directories.clone() {
            any |= self.list_and_sync(&dir).await;
        }
        self.stats.rehydrates.fetch_add(1, Ordering::Relaxed);
        if any {
            *failures = 0;
        }
        {
            let mut inner = self.lock();
            if inner.conn.as_ref().is_some_and(|c| c.id == conn_id) {
                inner.health = Health {
                    connected: true,
                    since_unix_ms: crate::engine::sqlite::now_ms(),
                };
                tracing::info!(upstream = %self.cfg.name, conn_id, "opencode connected and rehydrated");
                let _ = self.feed_locked(&mut inner, Input::Connected);
            }
        }
        self.flush_writes().await;

        let stall = self.cfg.timing.stall;
        loop {
            tokio::select! {
                _ = stopping.changed() => return End::Shutdown,
                msg = tokio::time::timeout(stall, rx.recv()) => match msg {
                    Err(_) => return End::Stalled,
                    Ok(None) => return End::StreamError("every event stream ended".into()),
                    Ok(Some(Err(e))) => return End::StreamError(e),
                    Ok(Some(Ok(env))) => self.on_event(env).await,
                },
            }
            if self.connection_id() != Some(conn_id) {
                // Released from elsewhere (a test, the shutdown): this round is over.
                return End::StreamError("released".into());
            }
        }
    }

    async fn on_event(self: &Arc<Self>, env: Envelope) {
        if let Some(session) = env.event.aborted_session() {
            let session = session.to_string();
            self.session_aborted(&session).await;
            return;
        }
        match env.event {
            Event::QuestionAsked(request) => self.asked(request, env.directory).await,
            Event::QuestionReplied {
                request_id,
                answers,
                ..
            } => {
                let _ = self
                    .feed(Input::Replied {
                        request_id,
                        // OpenCode always reports them; none reported says nothing.
                        answers: (!answers.is_empty()).then_some(answers),
                    })
                    .await;
            }
            Event::QuestionRejected { request_id, .. } => {
                let _ = self.feed(Input::Rejected { request_id }).await;
            }
            _ => {}
        }
    }
}

/// `min · 2^(failures-1)`, capped at `max`, times a jitter in [0.5, 1.0).
fn backoff(min: Duration, max: Duration, failures: u32) -> Duration {
    let exp = failures.saturating_sub(1).min(16);
    let base = min.saturating_mul(1u32 << exp).min(max);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let jitter = 0.5 + (nanos % 1000) as f64 / 2000.0;
    base.mul_f64(jitter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_caps_and_jitters_below_the_base() {
        let (min, max) = (Duration::from_millis(100), Duration::from_secs(1));
        for f in 1..20 {
            let b = backoff(min, max, f);
            let base = min.saturating_mul(1 << (f - 1).min(16)).min(max);
            assert!(b >= base / 2 && b <= base, "{f}: {b:?} vs {base:?}");
        }
    }
}
