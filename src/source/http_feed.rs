//! The live side of the HTTP source: one `GET /projects/{id}/events` stream per project,
//! kept open, resumed with `Last-Event-ID` after every drop so no change is missed or
//! seen twice, reconnected with exponential backoff and jitter.
//!
//! The TUI's watcher asks `Source::revision` in a loop; for a server source that call
//! waits here for the next tip instead of polling, so a change reaches the screen as
//! soon as the server announces it. Until the stream has delivered a first revision (or
//! while it is down) the caller falls back to `GET …/revision`.

use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use reqwest::Client;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How long one `revision` call waits for a tip before returning the current value; the
/// TUI's silence backstop is longer (20 s), the server's heartbeat shorter (15 s).
pub const LONG_POLL: Duration = Duration::from_secs(10);

const BACKOFF_START: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// One followed project: the newest revision the stream announced (`None` until the
/// first, and again while disconnected) and the task that follows it.
pub struct Feed {
    pub latest: watch::Receiver<Option<i64>>,
    task: JoinHandle<()>,
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Feed {
    /// Starts following `url` (the project's events route) with `token`.
    pub fn start(client: Client, url: String, token: String) -> Feed {
        let (tx, latest) = watch::channel(None);
        let task = tokio::spawn(follow(client, url, token, tx));
        Feed { latest, task }
    }
}

async fn follow(client: Client, url: String, token: String, tx: watch::Sender<Option<i64>>) {
    let mut last_id: Option<i64> = None;
    let mut backoff = BACKOFF_START;
    loop {
        let mut req = client
            .get(&url)
            .bearer_auth(&token)
            .timeout(Duration::from_secs(3600));
        if let Some(id) = last_id {
            // Resume after the last revision seen: the server replays what came since.
            req = req.header("Last-Event-ID", id.to_string());
        }
        let resp = req.send().await;
        if let Ok(r) = &resp
            && r.status() == reqwest::StatusCode::UNPROCESSABLE_ENTITY
            && last_id.take().is_some()
        {
            // The server never sent that revision (it restarted on another store, or the
            // store was restored): start again from its "now"; meanwhile the caller polls
            // `GET …/revision`, sees it move, and refetches.
            if tx.send(None).is_err() {
                return;
            }
            continue;
        }
        if let Ok(resp) = resp
            && resp.status().is_success()
        {
            backoff = BACKOFF_START;
            let mut events = resp.bytes_stream().eventsource();
            while let Some(Ok(event)) = events.next().await {
                if let Ok(id) = event.id.parse::<i64>() {
                    last_id = Some(id);
                    if tx.send(Some(id)).is_err() {
                        return; // nobody follows any more
                    }
                }
            }
        }
        // Dropped, refused or failed: callers fall back to polling until it is back.
        if tx.send(None).is_err() {
            return;
        }
        tokio::time::sleep(jitter(backoff)).await;
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
}

/// Between half and all of `d`, so clients that lost the server together do not all
/// come back at the same instant.
fn jitter(d: Duration) -> Duration {
    let mut b = [0u8; 2];
    let r = getrandom::fill(&mut b).map_or(u16::MAX / 2, |()| u16::from_le_bytes(b));
    d / 2 + d.mul_f64(f64::from(r) / f64::from(u16::MAX) / 2.0)
}

/// Waits for the feed to show a revision other than `seen`, for at most [`LONG_POLL`].
/// `None` when the stream is not live (the caller polls instead).
pub async fn next_revision(
    latest: &mut watch::Receiver<Option<i64>>,
    seen: Option<i64>,
) -> Option<i64> {
    let current = *latest.borrow_and_update();
    let current = current?;
    if Some(current) != seen {
        return Some(current);
    }
    match tokio::time::timeout(LONG_POLL, latest.changed()).await {
        Ok(Ok(())) => *latest.borrow_and_update(),
        // No change within the window: the same revision, the stream still live.
        Err(_) => Some(current),
        Ok(Err(_)) => None,
    }
}
