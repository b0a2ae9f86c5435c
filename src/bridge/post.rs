//! One reply or reject POST to OpenCode, and its raw result (seed 002's
//! `UpstreamResult`); what the result means is the machine's one classification
//! ([`super::delegate::PostOutcome`]), for every claimant alike.
//!
//! - a response came back: its status;
//! - the connection could not be made, or the request could not be built: `NotSent`
//!   (nothing left the process);
//! - anything after dispatch — a timeout, a reset, a body that never ends: `Uncertain`.

use std::time::Duration;

use reqwest::Method;
use serde::Serialize;

use super::delegate::{Post, UpstreamResult};
use crate::opencode::Client;

#[derive(Serialize)]
struct ReplyBody<'a> {
    answers: &'a [Vec<String>],
}

/// POSTs `/question/:id/reply` with the answers, or `/reject`.
pub async fn send(
    client: &Client,
    request_id: &str,
    directory: Option<&str>,
    post: &Post,
    timeout: Duration,
) -> UpstreamResult {
    let id = crate::opencode::client::seg(request_id);
    let req = match post {
        Post::Reply { answers } => client
            .request(Method::POST, &format!("/question/{id}/reply"), directory)
            .json(&ReplyBody { answers }),
        Post::Reject => client.request(Method::POST, &format!("/question/{id}/reject"), directory),
    };
    match req.timeout(timeout).send().await {
        Ok(resp) => {
            let status = resp.status().as_u16();
            // The body is read so the connection is reusable; its content is not needed.
            let _ = tokio::time::timeout(timeout, resp.bytes()).await;
            UpstreamResult::Status(status)
        }
        Err(e) if e.is_connect() || e.is_builder() => UpstreamResult::NotSent,
        Err(_) => UpstreamResult::Uncertain,
    }
}
