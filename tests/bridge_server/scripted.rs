//! A scripted OpenCode for the bridge tests: a tiny axum server imitating OpenCode's
//! question routes (list, reply, reject, session, its messages, the event stream). It
//! answers POSTs as each test chooses — 200, 404, 422, 500, a hang (a timeout after
//! dispatch) — while the test drives its event stream; a POST it takes updates the
//! request's tool part as the real one does (completed with the answers, or an error
//! saying the user dismissed it). Every POST it receives is counted.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::response::sse::{Event as SseEvent, Sse};
use axum::routing::{get, post};
use futures_util::Stream;
use serde_json::{Value, json};
use tokio::sync::mpsc;

pub const DIR: &str = "/srv/scripted/work";

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    Status(u16),
    /// Accept and never answer: the bridge's POST times out after dispatch.
    Hang,
}

#[derive(Default)]
pub struct Script {
    pub pending: Vec<Value>,
    pub mode: Option<Mode>,
    /// Every POST received: (request id, "reply"|"reject", body).
    pub posts: Vec<(String, String, Value)>,
    pub streams: Vec<mpsc::UnboundedSender<Value>>,
    /// Send nothing on new streams, not even `server.connected` (a stall).
    pub silent: bool,
    /// The `question` tool parts by call id: their `state` (absent: no such part).
    pub parts: HashMap<String, Value>,
    /// Answer the event stream with this status instead (a 5xx upstream).
    pub refuse_events: Option<u16>,
}

pub type Shared = Arc<Mutex<Script>>;

#[derive(serde::Deserialize)]
struct Dir {
    #[allow(dead_code)]
    directory: Option<String>,
}

async fn list(State(s): State<Shared>, Query(_): Query<Dir>) -> axum::Json<Value> {
    axum::Json(Value::Array(s.lock().unwrap().pending.clone()))
}

async fn settle(s: &Shared, id: &str, kind: &str, body: Value) -> (axum::http::StatusCode, String) {
    let mode = {
        let mut g = s.lock().unwrap();
        g.posts
            .push((id.to_string(), kind.to_string(), body.clone()));
        g.mode.unwrap_or(Mode::Status(200))
    };
    match mode {
        Mode::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            (axum::http::StatusCode::OK, "true".into())
        }
        Mode::Status(code) => {
            if code == 200 {
                let mut g = s.lock().unwrap();
                g.pending.retain(|r| r["id"] != id);
                let part = if kind == "reply" {
                    json!({"status": "completed", "metadata": {"answers": body["answers"].clone()}})
                } else {
                    json!({"status": "error", "error": "The user dismissed this question"})
                };
                g.parts.insert(format!("call_{id}"), part);
                let ev = json!({"type": if kind == "reply" {"question.replied"} else {"question.rejected"},
                    "properties": {"sessionID": "ses_1", "requestID": id, "answers": body["answers"].clone()}});
                g.streams.retain(|t| t.send(ev.clone()).is_ok());
            }
            (
                axum::http::StatusCode::from_u16(code).unwrap(),
                if code == 200 {
                    "true".into()
                } else {
                    json!({"message": "scripted"}).to_string()
                },
            )
        }
    }
}

async fn reply(
    State(s): State<Shared>,
    Path(id): Path<String>,
    axum::Json(body): axum::Json<Value>,
) -> (axum::http::StatusCode, String) {
    settle(&s, &id, "reply", body).await
}

async fn reject(
    State(s): State<Shared>,
    Path(id): Path<String>,
) -> (axum::http::StatusCode, String) {
    settle(&s, &id, "reject", Value::Null).await
}

async fn session(Path(id): Path<String>) -> axum::Json<Value> {
    axum::Json(json!({"id": id, "directory": DIR, "title": "t"}))
}

async fn messages(State(s): State<Shared>, Path(_id): Path<String>) -> axum::Json<Value> {
    let g = s.lock().unwrap();
    let parts: Vec<Value> = g
        .parts
        .iter()
        .map(|(call, state)| json!({"type": "tool", "tool": "question", "callID": call, "state": state}))
        .collect();
    axum::Json(json!([{"info": {"role": "assistant"}, "parts": parts}]))
}

async fn events(
    State(s): State<Shared>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, axum::http::StatusCode> {
    if let Some(code) = s.lock().unwrap().refuse_events {
        return Err(axum::http::StatusCode::from_u16(code).unwrap());
    }
    let (tx, rx) = mpsc::unbounded_channel::<Value>();
    {
        let mut g = s.lock().unwrap();
        if !g.silent {
            let _ = tx.send(json!({"type": "server.connected", "properties": {}}));
        }
        g.streams.push(tx);
    }
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        let v = rx.recv().await?;
        Some((Ok(SseEvent::default().data(v.to_string())), rx))
    });
    Ok(Sse::new(stream))
}

pub struct Upstream {
    pub script: Shared,
    pub port: u16,
    pub task: tokio::task::JoinHandle<()>,
}

/// Starts the scripted upstream on `port` (0: any) on `rt`.
pub fn start_upstream(rt: &tokio::runtime::Runtime, script: Shared, port: u16) -> Upstream {
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let app = Router::new()
            .route("/question", get(list))
            .route("/question/{id}/reply", post(reply))
            .route("/question/{id}/reject", post(reject))
            .route("/session/{id}", get(session))
            .route("/session/{id}/message", get(messages))
            .route("/event", get(events))
            .with_state(script.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Upstream { script, port, task }
    })
}

/// A pending request of session `ses_1`, asked by tool call `call_<id>`.
pub fn request(id: &str) -> Value {
    json!({"id": id, "sessionID": "ses_1", "questions": [{"question": format!("Question {id}?"), "header": "H",
        "options": [{"label": "A", "description": "a"}, {"label": "B", "description": "b"}], "multiple": false}],
        "tool": {"messageID": "msg_1", "callID": format!("call_{id}")}})
}

impl Upstream {
    /// Emits `ev` on every open event stream.
    pub fn emit(&self, ev: Value) {
        emit(&self.script, ev)
    }

    /// How many POSTs it received.
    pub fn posts(&self) -> usize {
        posts(&self.script)
    }

    pub fn set_mode(&self, mode: Mode) {
        self.script.lock().unwrap().mode = Some(mode);
    }
}

pub fn emit(script: &Shared, ev: Value) {
    script
        .lock()
        .unwrap()
        .streams
        .retain(|t| t.send(ev.clone()).is_ok());
}

pub fn posts(script: &Shared) -> usize {
    script.lock().unwrap().posts.len()
}
