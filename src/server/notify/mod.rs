//! `[[notify]]`: each new question of a project told to a webhook (a JSON POST signed
//! with HMAC-SHA256 in `X-Oq-Signature`) or an ntfy-style topic (the text as the body).
//!
//! One task per target follows its project's log from the server's start, woken by the
//! change signal every write sends after its commit (and the store poll): the write path
//! never waits on a receiver, and the log is the queue — a task holds at most one batch
//! of [`BATCH`] events in memory and reads the next only when those are delivered, so a
//! dead receiver loses nothing and grows nothing. Each notification is tried up to the
//! target's `max_attempts`, the delay doubling from `retry_base_ms` (at most a minute);
//! past that budget it is given up, logged by question id.
//!
//! Invariant: the HMAC key and the question's text never reach a log line; with
//! `include_text = false` the text never leaves the server either.

pub mod hmac;

use std::time::Duration;

use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::AppState;
use super::config::{NotifyKind, NotifyTarget};
use crate::domain::{Event, StoredEvent};

/// Events read from the log at a time.
pub const BATCH: usize = 64;
/// The longest wait between two attempts.
const MAX_DELAY: Duration = Duration::from_secs(60);
/// Each attempt's own bound.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

/// Starts one follower per target; each ends when the server stops.
pub fn spawn(state: &AppState, targets: &[NotifyTarget]) -> Vec<JoinHandle<()>> {
    let client = match crate::source::http::client_builder(None).and_then(|b| {
        b.timeout(ATTEMPT_TIMEOUT)
            .build()
            .map_err(|e| crate::domain::OqError::Internal(e.to_string()))
    }) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "notify: no HTTP client; no notifications");
            return Vec::new();
        }
    };
    targets
        .iter()
        .enumerate()
        .map(|(i, t)| tokio::spawn(follow(state.clone(), client.clone(), i, t.clone())))
        .collect()
}

/// What a target is sent for one event: `None` for events it is not told of.
struct Message {
    question_id: String,
    delivery_id: String,
    json: Vec<u8>,
    text: String,
}

fn message(target: &NotifyTarget, e: &StoredEvent) -> Option<Message> {
    let Event::OpenQuestion {
        question_id,
        pergunta,
        sugestao,
        autor,
        session_id,
        ..
    } = &e.event
    else {
        return None;
    };
    let mut body = json!({
        "event": "question.declared",
        "deliveryId": e.event_id,
        "projectId": e.project_id,
        "questionId": question_id,
        "sessionId": session_id,
        "autor": autor,
        "createdAt": e.at,
    });
    let text = if target.include_text {
        body["pergunta"] = json!(pergunta);
        if let Some(s) = sugestao {
            body["sugestao"] = json!(s);
        }
        pergunta.clone()
    } else {
        format!("A new question in {} ({question_id})", e.project_id)
    };
    Some(Message {
        question_id: question_id.clone(),
        delivery_id: e.event_id.clone(),
        json: serde_json::to_vec(&body).unwrap_or_default(),
        text,
    })
}

async fn follow(state: AppState, client: reqwest::Client, index: usize, target: NotifyTarget) {
    let mut stopping = state.stopping();
    let mut changes = state.changes();
    let project = target.project.clone();
    let p = project.clone();
    // From now: a restart does not send the history again.
    let mut after = state
        .read(move |e| e.project_revision(Some(&p)))
        .await
        .unwrap_or(0);
    tracing::info!(target = index, %project, "notify: following");
    loop {
        let p = project.clone();
        match state
            .read(move |e| e.events_after(Some(&p), after, BATCH))
            .await
        {
            Ok(events) if !events.is_empty() => {
                for e in &events {
                    if let Some(m) = message(&target, e)
                        && !deliver(&client, index, &target, &m, &mut stopping).await
                    {
                        return;
                    }
                    after = e.project_seq;
                }
                continue;
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(target = index, code = %e.code, "notify: cannot read the log"),
        }
        tokio::select! {
            _ = changes.changed() => {}
            _ = tokio::time::sleep(state.options().poll) => {}
            _ = stopping.changed() => {}
        }
        if *stopping.borrow() {
            return;
        }
    }
}

/// Tries `m` within the target's budget; `false` when the server stopped meanwhile.
async fn deliver(
    client: &reqwest::Client,
    index: usize,
    target: &NotifyTarget,
    m: &Message,
    stopping: &mut watch::Receiver<bool>,
) -> bool {
    let mut delay = target.retry_base;
    for attempt in 1..=target.max_attempts {
        let outcome = send(client, target, m).await;
        match outcome {
            Ok(()) => {
                tracing::info!(target = index, question = %m.question_id, attempt, "notify: delivered");
                return true;
            }
            Err(why) => {
                tracing::warn!(target = index, question = %m.question_id, attempt, %why, "notify: attempt failed");
            }
        }
        if attempt == target.max_attempts {
            break;
        }
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = stopping.changed() => {}
        }
        if *stopping.borrow() {
            return false;
        }
        delay = (delay * 2).min(MAX_DELAY);
    }
    tracing::warn!(target = index, question = %m.question_id, attempts = target.max_attempts, "notify: given up");
    true
}

/// One attempt: a 2xx is delivered; anything else says why (status or error kind only:
/// a URL may carry a topic's secret, so it is not logged either).
async fn send(client: &reqwest::Client, target: &NotifyTarget, m: &Message) -> Result<(), String> {
    let request = match &target.kind {
        NotifyKind::Webhook(secret) => client
            .post(&target.url)
            .header("content-type", "application/json")
            .header("x-oq-event", "question.declared")
            .header("x-oq-delivery", &m.delivery_id)
            .header("x-oq-signature", hmac::signature(secret.bytes(), &m.json))
            .body(m.json.clone()),
        NotifyKind::Ntfy => client
            .post(&target.url)
            .header("title", format!("oq: {}", target.project))
            .header("x-oq-delivery", &m.delivery_id)
            .body(m.text.clone()),
    };
    match request.send().await {
        Ok(r) if r.status().is_success() => Ok(()),
        Ok(r) => Err(format!("status {}", r.status().as_u16())),
        Err(e) if e.is_timeout() => Err("timeout".into()),
        Err(e) if e.is_connect() => Err("connection refused or unreachable".into()),
        Err(_) => Err("request failed".into()),
    }
}
