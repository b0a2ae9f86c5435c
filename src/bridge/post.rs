//! One reply or reject POST to OpenCode and what its outcome means for the claim
//! (seed 002's `UpstreamResult`):
//!
//! - a response came back: its status (2xx ok, 404 settled elsewhere, other 4xx a
//!   definitive refusal, 5xx uncertain — the machine classifies);
//! - the connection could not be made, or the request could not be built: `not_sent`
//!   (nothing left the process: the claim is released and the request paused);
//! - anything after dispatch — a timeout, a reset, a body that never ends: `uncertain`
//!   (a tombstone: never retried, still blocking).

use std::time::Duration;

use reqwest::Method;
use serde::Serialize;

use super::delegate::UpstreamResult;
use crate::opencode::Client;

#[derive(Serialize)]
struct ReplyBody<'a> {
    answers: &'a [Vec<String>],
}

/// POSTs `/question/:id/reply` (`answers: Some`) or `/reject` (`None`) and classifies.
pub async fn send(
    client: &Client,
    request_id: &str,
    directory: Option<&str>,
    answers: Option<&[Vec<String>]>,
    timeout: Duration,
) -> UpstreamResult {
    let id = crate::opencode::client::seg(request_id);
    let req = match answers {
        Some(answers) => client
            .request(Method::POST, &format!("/question/{id}/reply"), directory)
            .json(&ReplyBody { answers }),
        None => client.request(Method::POST, &format!("/question/{id}/reject"), directory),
    };
    match req.timeout(timeout).send().await {
        Ok(resp) => {
            let status = resp.status().as_u16();
            // The body is read so the connection is reusable; its content is not needed.
            let _ = tokio::time::timeout(timeout, resp.bytes()).await;
            UpstreamResult::status(status)
        }
        Err(e) if e.is_connect() || e.is_builder() => UpstreamResult::not_sent(),
        Err(_) => UpstreamResult::uncertain(),
    }
}
