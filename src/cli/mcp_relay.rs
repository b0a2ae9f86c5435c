//! `oq mcp --source http://…`: the agent's stdio MCP relayed to a team server's `/mcp`
//! (Streamable HTTP) with the agent's token, so an agent that only starts stdio servers
//! reaches `oq serve`. Each JSON-RPC line read is POSTed on its own (a long
//! `wait_for_answer` never holds back a cancellation); what comes back — one JSON reply
//! or an event stream of progress and the reply — is written as lines on stdout.
//!
//! Invariant: the server decides everything (door, tools, refusals); the relay keeps only
//! the MCP session id and protocol version the server gave, and turns a refusal of the
//! HTTP layer into a JSON-RPC error for the request it refused.

use std::sync::{Arc, Mutex};

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::context::Remote;
use crate::domain::OqError;

const SESSION: &str = "mcp-session-id";
const VERSION: &str = "mcp-protocol-version";

#[derive(Default)]
struct Negotiated {
    session: Option<String>,
    version: Option<String>,
}

struct Relay {
    client: reqwest::Client,
    url: String,
    token: String,
    negotiated: Mutex<Negotiated>,
    out: mpsc::UnboundedSender<String>,
}

/// Relays until the agent closes stdin; then ends the server's MCP session.
pub async fn run(remote: Remote, session: &str) -> Result<(), OqError> {
    let client = crate::source::http::client_builder(remote.ca.as_deref())?
        .build()
        .map_err(|e| OqError::Internal(format!("http client: {e}")))?;
    let mut url = format!("{}/mcp?session={session}", remote.base);
    if let Some(p) = &remote.project {
        url.push_str(&format!("&project={p}"));
    }
    let (out, mut lines) = mpsc::unbounded_channel::<String>();
    let relay = Arc::new(Relay {
        client,
        url,
        token: remote.token,
        negotiated: Mutex::default(),
        out,
    });
    // One writer, so lines from concurrent replies never interleave.
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = lines.recv().await {
            let ok = stdout.write_all(line.as_bytes()).await.is_ok()
                && stdout.write_all(b"\n").await.is_ok()
                && stdout.flush().await.is_ok();
            if !ok {
                break;
            }
        }
    });
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    let mut calls = tokio::task::JoinSet::new();
    while let Ok(Some(line)) = stdin.next_line().await {
        if line.trim().is_empty() {
            continue;
        }
        let relay = Arc::clone(&relay);
        calls.spawn(async move { relay.post(line).await });
    }
    calls.abort_all();
    relay.close().await;
    drop(relay);
    let _ = writer.await;
    Ok(())
}

impl Relay {
    fn request(&self, method: reqwest::Method) -> reqwest::RequestBuilder {
        let mut req = self
            .client
            .request(method, &self.url)
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream");
        let n = self.negotiated.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = &n.session {
            req = req.header(SESSION, s);
        }
        if let Some(v) = &n.version {
            req = req.header(VERSION, v);
        }
        req
    }

    async fn post(&self, line: String) {
        let id = serde_json::from_str::<Value>(&line)
            .ok()
            .and_then(|m| m.get("id").cloned());
        let sent = self
            .request(reqwest::Method::POST)
            .header("content-type", "application/json")
            .body(line)
            .send()
            .await;
        let response = match sent {
            Ok(r) => r,
            Err(e) => return self.refuse(id, &format!("unreachable: {e}")),
        };
        if let Some(s) = response
            .headers()
            .get(SESSION)
            .and_then(|v| v.to_str().ok())
        {
            let mut n = self.negotiated.lock().unwrap_or_else(|p| p.into_inner());
            n.session = Some(s.to_string());
        }
        let status = response.status();
        let is_stream = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        if !status.is_success() {
            let body: Value = response.json().await.unwrap_or(Value::Null);
            let said = match (body["code"].as_str(), body["message"].as_str()) {
                (Some(c), Some(m)) => format!("{c}: {m}"),
                _ => format!("HTTP {status}"),
            };
            return self.refuse(id, &said);
        }
        if is_stream {
            let mut events = response.bytes_stream().eventsource();
            while let Some(Ok(event)) = events.next().await {
                if !event.data.trim().is_empty() {
                    self.emit(event.data);
                }
            }
        } else if let Ok(text) = response.text().await
            && !text.trim().is_empty()
        {
            self.emit(text);
        }
    }

    /// A message for the agent; the protocol version an initialize result names is kept.
    fn emit(&self, message: String) {
        if let Ok(v) = serde_json::from_str::<Value>(&message)
            && let Some(version) = v["result"]["protocolVersion"].as_str()
        {
            let mut n = self.negotiated.lock().unwrap_or_else(|p| p.into_inner());
            n.version = Some(version.to_string());
        }
        let _ = self.out.send(message.trim().to_string());
    }

    /// The server refused or could not be reached: the request gets a JSON-RPC error (a
    /// notification has nobody to tell; it goes to the log).
    fn refuse(&self, id: Option<Value>, message: &str) {
        match id {
            Some(id) => {
                let error = json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32000, "message": message}});
                let _ = self.out.send(error.to_string());
            }
            None => tracing::warn!(message, "oq mcp relay: a notification was refused"),
        }
    }

    /// Ends the server's MCP session (best effort: the agent is gone).
    async fn close(&self) {
        if self
            .negotiated
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .session
            .is_some()
        {
            let _ = self.request(reqwest::Method::DELETE).send().await;
        }
    }
}
