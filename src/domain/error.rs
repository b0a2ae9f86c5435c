//! The refusals of the domain, each with its wire code, HTTP status and exit code.
//!
//! One enum serves the engine, the server and the script doors so that a refusal reads
//! the same everywhere: the ADR's codes (`so_o_autor_da_sessao`, `pergunta_ja_respondida`)
//! exactly, English snake_case for the rest.

use thiserror::Error;

pub use super::error_code::ErrorCode;

/// Everything that can refuse an operation. `code()` is stable: scripts and clients match on it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OqError {
    /// ADR 0214 §3: only the author of the session where the question was born answers.
    #[error("only the person who started this session, {author}, can answer")]
    NotSessionAuthor { author: String },
    /// ADR 0214 §1: a question closes once; a second answer (or a lost race) is refused.
    #[error("question {question_id} was already answered")]
    AlreadyAnswered { question_id: String },
    /// `message` names what was looked for ("question q-… not found"); built by
    /// [`OqError::not_found`], or carried as is from a server's refusal.
    #[error("{message}")]
    NotFound { message: String },
    /// Bad input: the `code` names the rule, the message the value.
    #[error("{message}")]
    Invalid { code: ErrorCode, message: String },
    /// The caller's role may not do this (for example a `qa-agent` declaring directly).
    #[error("{message}")]
    Forbidden { code: ErrorCode, message: String },
    /// The request is well formed but the current state refuses it (a parked gate, a story
    /// correction ADR 0212 refuses…).
    #[error("{message}")]
    Conflict { code: ErrorCode, message: String },
    /// The store cannot be used: not an oq store, newer than this binary, not writable.
    #[error("{message}")]
    Store { code: ErrorCode, message: String },
    /// A remote source could not be reached or refused our identity.
    #[error("{message}")]
    Source { code: ErrorCode, message: String },
    /// `oq ask --wait --timeout` ran out before an answer came.
    #[error("no answer to {question_id} within {seconds} s")]
    Timeout { question_id: String, seconds: u64 },
    /// An upstream of the server (a bridged OpenCode) did not take an answer or a
    /// command: unreachable (nothing sent), refused, or uncertain (it may have it). The
    /// server itself answered, so this is no outage of the server and nothing is queued.
    #[error("{message}")]
    Upstream { code: ErrorCode, message: String },
    #[error("internal error: {0}")]
    Internal(String),
    /// Not a refusal: the source could not be reached, so the answer was written to the
    /// durable outbox (on disk, synced) and will be delivered exactly once when it is back.
    /// An error variant (not a second `Ok` type) so every door and the TUI must handle it
    /// by name, and scripts see exit code 12 instead of a false success.
    #[error(
        "answer to {question_id} queued in the outbox: {source_name} cannot be reached; `oq outbox --deliver` sends it when it is back"
    )]
    Queued {
        question_id: String,
        source_name: String,
        key: String,
    },
}

/// Exit codes of the script doors, documented in the README. Stable.
pub mod exit {
    pub const OK: i32 = 0;
    pub const INTERNAL: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const NOT_SESSION_AUTHOR: i32 = 3;
    pub const ALREADY_ANSWERED: i32 = 4;
    pub const NOT_FOUND: i32 = 5;
    pub const INVALID: i32 = 6;
    pub const FORBIDDEN: i32 = 7;
    pub const CONFLICT: i32 = 8;
    pub const STORE: i32 = 9;
    pub const SOURCE: i32 = 10;
    pub const TIMEOUT: i32 = 11;
    /// The answer is in the outbox, not yet at the source (it was unreachable).
    pub const QUEUED: i32 = 12;
    /// The server answered, but its upstream (a bridged OpenCode) did not take it.
    pub const UPSTREAM: i32 = 13;
    /// `oq store check` or `verify` found damage or tampering.
    pub const DAMAGED: i32 = 14;
    /// `oq answer --accept ID…` with several ids: some were not answered (each reported).
    pub const PARTIAL: i32 = 15;
}

impl OqError {
    pub fn invalid(code: ErrorCode, message: impl Into<String>) -> Self {
        OqError::Invalid {
            code,
            message: message.into(),
        }
    }
    pub fn forbidden(code: ErrorCode, message: impl Into<String>) -> Self {
        OqError::Forbidden {
            code,
            message: message.into(),
        }
    }
    pub fn conflict(code: ErrorCode, message: impl Into<String>) -> Self {
        OqError::Conflict {
            code,
            message: message.into(),
        }
    }
    pub fn store(code: ErrorCode, message: impl Into<String>) -> Self {
        OqError::Store {
            code,
            message: message.into(),
        }
    }
    pub fn upstream(code: ErrorCode, message: impl Into<String>) -> Self {
        OqError::Upstream {
            code,
            message: message.into(),
        }
    }
    pub fn not_found(what: &'static str, id: impl Into<String>) -> Self {
        OqError::NotFound {
            message: format!("{what} {} not found", id.into()),
        }
    }

    /// The machine-readable code, as on the wire.
    pub fn code(&self) -> ErrorCode {
        match self {
            OqError::NotSessionAuthor { .. } => ErrorCode::SoOAutorDaSessao,
            OqError::AlreadyAnswered { .. } => ErrorCode::PerguntaJaRespondida,
            OqError::NotFound { .. } => ErrorCode::NotFound,
            OqError::Invalid { code, .. }
            | OqError::Forbidden { code, .. }
            | OqError::Conflict { code, .. }
            | OqError::Store { code, .. }
            | OqError::Source { code, .. }
            | OqError::Upstream { code, .. } => *code,
            OqError::Timeout { .. } => ErrorCode::Timeout,
            OqError::Queued { .. } => ErrorCode::Queued,
            OqError::Internal(_) => ErrorCode::Internal,
        }
    }

    pub fn http_status(&self) -> u16 {
        match self {
            OqError::NotSessionAuthor { .. } | OqError::Forbidden { .. } => 403,
            OqError::AlreadyAnswered { .. } | OqError::Conflict { .. } => 409,
            OqError::NotFound { .. } => 404,
            OqError::Invalid { .. } => 422,
            OqError::Timeout { .. } => 504,
            OqError::Queued { .. } => 503,
            OqError::Source { .. } | OqError::Upstream { .. } => 502,
            // A full disk is the server's storage (RFC 4918's 507); a store that is busy,
            // failed or damaged is the service unavailable, not a bug.
            OqError::Store { code, .. } => match code {
                ErrorCode::DiskFull => 507,
                ErrorCode::StoreBusy
                | ErrorCode::StoreFailed
                | ErrorCode::StoreDamaged
                | ErrorCode::StoreUnavailable => 503,
                _ => 500,
            },
            OqError::Internal(_) => 500,
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            OqError::NotSessionAuthor { .. } => exit::NOT_SESSION_AUTHOR,
            OqError::AlreadyAnswered { .. } => exit::ALREADY_ANSWERED,
            OqError::NotFound { .. } => exit::NOT_FOUND,
            OqError::Invalid { .. } => exit::INVALID,
            OqError::Forbidden { .. } => exit::FORBIDDEN,
            OqError::Conflict { .. } => exit::CONFLICT,
            OqError::Store { .. } => exit::STORE,
            OqError::Source { .. } => exit::SOURCE,
            OqError::Timeout { .. } => exit::TIMEOUT,
            OqError::Queued { .. } => exit::QUEUED,
            OqError::Upstream { .. } => exit::UPSTREAM,
            OqError::Internal(_) => exit::INTERNAL,
        }
    }

    /// Rebuilds an error from its wire form (`{code, message}`), so a remote refusal keeps
    /// its code and exit code in the script doors: the same output whatever the source.
    pub fn from_wire(status: u16, code: ErrorCode, message: &str) -> Self {
        let message = message.to_string();
        match code {
            ErrorCode::SoOAutorDaSessao => OqError::NotSessionAuthor {
                author: message
                    .strip_prefix("only the person who started this session, ")
                    .and_then(|rest| rest.strip_suffix(", can answer"))
                    .unwrap_or("the session author")
                    .to_string(),
            },
            ErrorCode::PerguntaJaRespondida => OqError::AlreadyAnswered {
                question_id: message
                    .strip_prefix("question ")
                    .and_then(|r| r.strip_suffix(" was already answered"))
                    .unwrap_or("")
                    .to_string(),
            },
            ErrorCode::NotFound => OqError::NotFound { message },
            ErrorCode::Internal => OqError::Internal(
                message
                    .strip_prefix("internal error: ")
                    .unwrap_or(&message)
                    .to_string(),
            ),
            ErrorCode::UpstreamUnreachable
            | ErrorCode::UpstreamRefused
            | ErrorCode::UpstreamUncertain => OqError::Upstream { code, message },
            // Any other upstream's failure a server answered with (`upstream_error`,
            // `upstream_driven_elsewhere`): the server is up, so not an outage to queue for.
            _ if code.is_upstream() && status >= 500 => OqError::Upstream { code, message },
            _ => match status {
                404 => OqError::NotFound { message },
                400 | 413 | 415 | 422 => OqError::Invalid { code, message },
                403 => OqError::Forbidden { code, message },
                409 => OqError::Conflict { code, message },
                _ => OqError::Source { code, message },
            },
        }
    }
}
