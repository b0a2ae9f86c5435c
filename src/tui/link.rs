//! Why the link to the source is down, as the screen names it (issue 11, "the screen
//! tells the truth"): only a source that cannot be reached at all is "offline"; a
//! gateway's bare 5xx in front of the server is named by its status; a refused token is
//! "unauthorized"; a server that answered with another refusal is named by its code.
//! Classified once from the typed error, where the poll fails (`watch.rs`), so the
//! status line, the field and the notice say the same thing.

use crate::domain::{ErrorCode, OqError};

/// The cause of a failed poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Nothing answered (connection refused, timed out): offline, answers queue.
    Unreachable,
    /// A gateway in front of the server answered this 5xx without oq's body: the server
    /// behind it cannot be reached, so answers queue, but the gateway is named.
    Gateway(u16),
    /// The server refused the token: nothing queues (it would be refused again).
    Unauthorized,
    /// The server answered with this refusal: it is up, nothing queues.
    Refused(ErrorCode),
}

/// A failed poll: its cause and the source's own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkError {
    pub fault: Fault,
    pub message: String,
}

impl LinkError {
    pub fn unreachable(message: impl Into<String>) -> LinkError {
        LinkError {
            fault: Fault::Unreachable,
            message: message.into(),
        }
    }

    pub fn of(e: &OqError) -> LinkError {
        let fault = match e {
            OqError::Source {
                code: ErrorCode::Unauthorized,
                ..
            } => Fault::Unauthorized,
            OqError::Source { .. } => match crate::source::gateway_status(e) {
                Some(status) => Fault::Gateway(status),
                None => Fault::Unreachable,
            },
            other => Fault::Refused(other.code()),
        };
        LinkError {
            fault,
            message: e.to_string(),
        }
    }
}

impl Fault {
    /// Answers go to the outbox meanwhile (the server could not be reached).
    pub fn queues(self) -> bool {
        matches!(self, Fault::Unreachable | Fault::Gateway(_))
    }

    /// The link in words, for the status line and the field: "offline",
    /// "bad gateway (502)", "unauthorized", "refused: store_unavailable".
    pub fn words(self) -> String {
        match self {
            Fault::Unreachable => "offline".into(),
            Fault::Gateway(502) => "bad gateway (502)".into(),
            Fault::Gateway(503) => "service unavailable (503)".into(),
            Fault::Gateway(504) => "gateway timeout (504)".into(),
            Fault::Gateway(s) => format!("gateway error ({s})"),
            Fault::Unauthorized => "unauthorized".into(),
            Fault::Refused(code) => format!("refused: {code}"),
        }
    }
}
