//! OpenCode's event stream as typed events.
//!
//! `GET /event?directory=D` streams one directory's events as `data: {json}` lines;
//! `GET /global/event` streams every directory's, each wrapped as
//! `{directory, project, payload}`. There are no `event:` or `id:` lines, and a
//! `server.heartbeat` comes every 10 s. SSE framing is parsed by `eventsource-stream`.
//!
//! Reconnecting is the caller's business: the stream ends (or yields an error) when the
//! connection drops, and the caller must re-list (`GET /question`) after reconnecting —
//! events missed in between are not replayed.

use futures_util::{Stream, StreamExt};
use reqwest::Method;
use serde::Deserialize;

use super::client::Client;
use super::types::{Request, SessionStatus};
use crate::domain::{ErrorCode, OqError};

/// Which stream to follow.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// `GET /event?directory=`: that directory only.
    Directory(&'a str),
    /// `GET /global/event`: every directory, each event with its directory.
    Global,
}

/// An event oq cares about; the rest are [`Event::Other`] with their type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Connected,
    Heartbeat,
    QuestionAsked(Request),
    QuestionReplied {
        session_id: String,
        request_id: String,
        answers: Vec<Vec<String>>,
    },
    QuestionRejected {
        session_id: String,
        request_id: String,
    },
    /// `session.error`; `name` is the error's (`MessageAbortedError` when aborted).
    SessionError {
        session_id: Option<String>,
        name: Option<String>,
    },
    SessionIdle {
        session_id: String,
    },
    SessionStatus {
        session_id: String,
        status: SessionStatus,
    },
    Other {
        kind: String,
    },
}

impl Event {
    /// A session error that leaves its pending questions orphaned (the agent was aborted
    /// and will never read an answer).
    pub fn aborted_session(&self) -> Option<&str> {
        match self {
            Event::SessionError {
                session_id: Some(s),
                name: Some(n),
            } if n == "MessageAbortedError" => Some(s),
            _ => None,
        }
    }
}

/// One event and the directory it belongs to (known on the global stream; on a
/// directory stream, the directory subscribed to).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    pub directory: Option<String>,
    pub event: Event,
}

#[derive(Deserialize)]
struct Raw {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    properties: serde_json::Value,
}

#[derive(Deserialize)]
struct Wrapped {
    #[serde(default)]
    directory: Option<String>,
    payload: Raw,
}

#[derive(Deserialize)]
struct Replied {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(rename = "requestID")]
    request_id: String,
    #[serde(default)]
    answers: Vec<Vec<String>>,
}

#[derive(Deserialize)]
struct Rejected {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(rename = "requestID")]
    request_id: String,
}

#[derive(Deserialize)]
struct SessionErr {
    #[serde(default, rename = "sessionID")]
    session_id: Option<String>,
    #[serde(default)]
    error: Option<ErrName>,
}

#[derive(Deserialize)]
struct ErrName {
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
struct SessionRef {
    #[serde(rename = "sessionID")]
    session_id: String,
}

#[derive(Deserialize)]
struct StatusProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    status: SessionStatus,
}

/// Parses one `data:` payload of either stream. `directory` is the directory of a
/// directory stream (the global stream names its own).
pub fn parse(data: &str, directory: Option<&str>) -> Result<Envelope, serde_json::Error> {
    let value: serde_json::Value = serde_json::from_str(data)?;
    let (dir, raw) = if value.get("payload").is_some() {
        let w: Wrapped = serde_json::from_value(value)?;
        (w.directory.or(directory.map(str::to_string)), w.payload)
    } else {
        (
            directory.map(str::to_string),
            serde_json::from_value(value)?,
        )
    };
    let props = raw.properties;
    let event = match raw.kind.as_str() {
        "server.connected" => Event::Connected,
        "server.heartbeat" => Event::Heartbeat,
        "question.asked" => Event::QuestionAsked(serde_json::from_value(props)?),
        "question.replied" => {
            let r: Replied = serde_json::from_value(props)?;
            Event::QuestionReplied {
                session_id: r.session_id,
                request_id: r.request_id,
                answers: r.answers,
            }
        }
        "question.rejected" => {
            let r: Rejected = serde_json::from_value(props)?;
            Event::QuestionRejected {
                session_id: r.session_id,
                request_id: r.request_id,
            }
        }
        "session.error" => {
            let e: SessionErr = serde_json::from_value(props)?;
            Event::SessionError {
                session_id: e.session_id,
                name: e.error.and_then(|n| n.name),
            }
        }
        "session.idle" => {
            let s: SessionRef = serde_json::from_value(props)?;
            Event::SessionIdle {
                session_id: s.session_id,
            }
        }
        "session.status" => {
            let s: StatusProps = serde_json::from_value(props)?;
            Event::SessionStatus {
                session_id: s.session_id,
                status: s.status,
            }
        }
        other => Event::Other { kind: other.into() },
    };
    Ok(Envelope {
        directory: dir,
        event,
    })
}

/// Opens the stream and yields its events until the connection ends. A payload that does
/// not parse is skipped (a newer OpenCode's event oq does not know the shape of); a
/// transport error is yielded once, then the stream ends.
pub async fn subscribe(
    client: &Client,
    scope: Scope<'_>,
) -> Result<impl Stream<Item = Result<Envelope, OqError>> + Send + 'static, OqError> {
    use eventsource_stream::Eventsource;

    let (path, directory) = match scope {
        Scope::Directory(d) => ("/event", Some(d.to_string())),
        Scope::Global => ("/global/event", None),
    };
    let resp = client
        .request(Method::GET, path, directory.as_deref())
        .header("accept", "text/event-stream")
        .send()
        .await
        .map_err(|e| client.unreachable(&e))?;
    if resp.status() == reqwest::StatusCode::UNAUTHORIZED {
        return Err(client.unauthorized());
    }
    if !resp.status().is_success() {
        return Err(OqError::Source {
            code: ErrorCode::UpstreamError,
            message: format!(
                "OpenCode at {} refused its event stream: {}",
                client.base(),
                resp.status()
            ),
        });
    }
    let base = client.base().to_string();
    let mut failed = false;
    let stream = resp.bytes_stream().eventsource().filter_map(move |item| {
        let out = if failed {
            None
        } else {
            match item {
                Ok(ev) => parse(&ev.data, directory.as_deref()).ok().map(Ok),
                Err(e) => {
                    failed = true;
                    Some(Err(OqError::Source {
                        code: ErrorCode::Unreachable,
                        message: format!("OpenCode at {base}: event stream broke: {e}"),
                    }))
                }
            }
        };
        std::future::ready(out)
    });
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transcripts_lines_parse() {
        let asked = r#"{"id":"evt_1","type":"question.asked","properties":{"id":"que_1","sessionID":"ses_1","questions":[{"question":"Q?","header":"H","options":[{"label":"A","description":"a"}],"multiple":false}],"tool":{"messageID":"msg_1","callID":"call_1"}}}"#;
        let e = parse(asked, Some("/w")).expect("parses");
        assert_eq!(e.directory.as_deref(), Some("/w"));
        assert!(matches!(e.event, Event::QuestionAsked(ref r) if r.id == "que_1"));

        let wrapped = r#"{"directory":"/srv/peer/work","project":"global","payload":{"id":"evt_2","type":"question.replied","properties":{"sessionID":"ses_1","requestID":"que_1","answers":[["SQLite"]]}}}"#;
        let e = parse(wrapped, None).expect("parses");
        assert_eq!(e.directory.as_deref(), Some("/srv/peer/work"));
        assert_eq!(
            e.event,
            Event::QuestionReplied {
                session_id: "ses_1".into(),
                request_id: "que_1".into(),
                answers: vec![vec!["SQLite".into()]],
            }
        );

        let aborted = r#"{"id":"evt_3","type":"session.error","properties":{"sessionID":"ses_9","error":{"name":"MessageAbortedError","data":{"message":"Aborted"}}}}"#;
        let e = parse(aborted, None).expect("parses");
        assert_eq!(e.event.aborted_session(), Some("ses_9"));

        let hb = r#"{"payload":{"id":"evt_4","type":"server.heartbeat","properties":{}}}"#;
        assert_eq!(parse(hb, None).expect("parses").event, Event::Heartbeat);

        let other = r#"{"id":"evt_5","type":"message.part.updated","properties":{"x":1}}"#;
        assert!(matches!(
            parse(other, None).expect("parses").event,
            Event::Other { .. }
        ));
    }
}
