//! `wait_for_answer`: reads the question until the log settles it, the bound passes, or
//! the client cancels. Progress goes to a client that gave a progress token: once at the
//! start and every [`PROGRESS_EVERY`] after, so a client's own timeout sees life.
//!
//! Invariant: a bound that passes is `still_open` (never an answer nobody gave), and a
//! cancelled wait ends at once having written nothing: the question stays open.

use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::calls::{Calls, WaitArgs, outcome};
use super::tools::{WAIT_DEFAULT_SECONDS, WAIT_MAX_SECONDS};
use super::{Door, Wake};
use crate::domain::{ErrorCode, OqError};
use crate::engine::Store;

pub const PROGRESS_EVERY: Duration = Duration::from_secs(5);
/// With the server's change signal, a backstop poll all the same (a missed signal).
const BACKSTOP: Duration = Duration::from_secs(1);

/// How the wait ended, for the handler: a result, or the client's cancellation.
pub enum Waited {
    Done(Value),
    Cancelled,
}

pub struct Progress {
    pub peer: Peer<RoleServer>,
    pub token: Option<ProgressToken>,
}

pub async fn wait<S: Store + 'static>(
    calls: &Calls<S>,
    door: &Door,
    args: WaitArgs,
    mut wake: Wake,
    progress: Progress,
    cancelled: CancellationToken,
) -> Result<Waited, OqError> {
    let seconds = args.timeout_seconds.unwrap_or(WAIT_DEFAULT_SECONDS);
    if seconds > WAIT_MAX_SECONDS {
        return Err(OqError::invalid(
            ErrorCode::InvalidBody,
            format!("timeoutSeconds {seconds}: at most {WAIT_MAX_SECONDS}"),
        ));
    }
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let mut next_progress = started;
    loop {
        let (q, reason) = calls.mine(door, &args.question_id).await?;
        if let Some(done) = outcome(&q, reason) {
            return Ok(Waited::Done(done));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(Waited::Done(json!({
                "outcome": "still_open",
                "questionId": q.question_id,
                "answeredBy": q.session_author,
                "waitedSeconds": seconds,
                "message": "not answered yet; call wait_for_answer again to keep waiting",
            })));
        }
        if now >= next_progress {
            if let Some(token) = &progress.token {
                let waited = now.duration_since(started).as_secs_f64();
                let note = ProgressNotificationParam::new(token.clone(), waited)
                    .with_total(seconds as f64)
                    .with_message(format!(
                        "waiting for {} to answer {}",
                        q.session_author, q.question_id
                    ));
                // A client gone is seen by the cancellation below, not here.
                let _ = progress.peer.notify_progress(note).await;
            }
            next_progress = now + PROGRESS_EVERY;
        }
        let until = deadline.min(next_progress);
        tokio::select! {
            () = cancelled.cancelled() => return Ok(Waited::Cancelled),
            () = tokio::time::sleep_until(until) => {}
            () = changed(&mut wake) => {}
        }
    }
}

/// Returns when it is time to read the question again.
async fn changed(wake: &mut Wake) {
    match wake {
        Wake::Poll(every) => tokio::time::sleep(*every).await,
        Wake::Changes(rx) => {
            let _ = tokio::time::timeout(BACKSTOP, rx.changed()).await;
        }
    }
}
