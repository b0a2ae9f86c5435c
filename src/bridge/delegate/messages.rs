//! The machine's vocabulary: what goes in ([`Input`]), what comes out ([`Effect`]), how a
//! command is refused ([`Refusal`]), and the OpenCode shapes it reads.
//!
//! OpenCode shapes follow `GET /question` and `question.asked`:
//! `{id, sessionID, questions: [{question, header, options: [{label, description}], multiple}]}`;
//! a reply body is `{answers: string[][]}`, one array per question.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::state::{Claim, PauseReason};
use crate::domain::ErrorCode;

/// One option of an OpenCode question.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionOption {
    pub label: String,
    #[serde(default)]
    pub description: String,
}

/// One question of an OpenCode request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionInfo {
    pub question: String,
    #[serde(default)]
    pub header: String,
    #[serde(default)]
    pub options: Vec<QuestionOption>,
    #[serde(default)]
    pub multiple: bool,
}

/// A pending OpenCode question request (`question.asked` properties, `GET /question` items).
/// Unknown fields (`tool`…) are ignored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionRequest {
    pub id: String,
    #[serde(rename = "sessionID")]
    pub session_id: String,
    #[serde(default)]
    pub questions: Vec<QuestionInfo>,
}

/// What a client said about a request's identity (`sessionID`, `directory` in a route's
/// body). Hints never override a bound identity; an empty string counts as absent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hints {
    pub session_id: Option<String>,
    pub directory: Option<String>,
}

impl Hints {
    pub fn none() -> Self {
        Self::default()
    }

    pub(super) fn session(&self) -> Option<&str> {
        self.session_id.as_deref().filter(|s| !s.is_empty())
    }

    pub(super) fn directory(&self) -> Option<&str> {
        self.directory.as_deref().filter(|s| !s.is_empty())
    }
}

/// The outcome of one upstream POST, as the adapter saw it (seed's `UpstreamResult`).
///
/// Classification, in this order: `not_sent` (the request never left the process) →
/// release and pause; `ok` → settled; `uncertain` → tombstone; then by `status`: 404 →
/// settled elsewhere when the directory was authoritative, else like a definitive
/// refusal; 400/409/422 and every other 4xx → release and pause; 5xx, a bare 0 and
/// anything else → tombstone. The response body is the adapter's business.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpstreamResult {
    pub ok: bool,
    #[serde(default)]
    pub uncertain: bool,
    #[serde(default)]
    pub not_sent: bool,
    pub status: u16,
}

impl UpstreamResult {
    /// A response with this status came back (`ok` for 2xx).
    pub fn status(status: u16) -> Self {
        Self {
            ok: (200..300).contains(&status),
            status,
            ..Self::default()
        }
    }

    /// Dispatched, then no usable answer (timeout, connection reset after writing).
    pub fn uncertain() -> Self {
        Self {
            uncertain: true,
            ..Self::default()
        }
    }

    /// Failed before a byte left the process (connect refused, request build error).
    pub fn not_sent() -> Self {
        Self {
            not_sent: true,
            ..Self::default()
        }
    }
}

/// A list that failed (network, non-2xx, bad body). The reason is for logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListError(pub String);

/// Taken with [`super::Delegate::list_token`] right before a `GET /question` is sent and
/// handed back with its result: requests first observed after it are not judged by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ListToken(pub u64);

/// Everything the machine reacts to.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// `question.asked`; `directory` is the event's (`/event?directory=`, or the
    /// `/global/event` wrapper), authoritative when present.
    Asked {
        request: QuestionRequest,
        directory: Option<String>,
    },
    /// `question.replied` from upstream.
    Replied { request_id: String },
    /// `question.rejected` from upstream.
    Rejected { request_id: String },
    /// The `getSession` write-back: the session's real directory.
    SessionDirectoryResolved {
        session_id: String,
        directory: String,
    },
    /// Lineage: `session_id` is a subagent session of `parent_id`.
    SessionParent {
        session_id: String,
        parent_id: String,
    },
    /// A timer armed by [`Effect::ArmTimer`] went off.
    TimerFired { request_id: String, timer_id: u64 },
    /// `POST /api/question/:id/reply`: `answers` forwarded as given, `[]` included.
    ManualReply {
        request_id: String,
        answers: Vec<Vec<String>>,
        hints: Hints,
    },
    /// `POST /api/question/:id/reject`.
    ManualReject { request_id: String, hints: Hints },
    /// `POST …/requests/:id/delegate`: one explicit continuation, even with the feature off.
    Delegate { request_id: String, hints: Hints },
    /// `POST …/requests/:id/pause`.
    Pause {
        request_id: String,
        reason: PauseReason,
        hints: Hints,
    },
    /// The goal of this session tree was paused or aborted.
    GoalPaused { root_session: String },
    /// The outcome of a [`Effect::PostReply`] / [`Effect::PostReject`].
    UpstreamResult {
        request_id: String,
        claim: Claim,
        result: UpstreamResult,
    },
    /// The settings read issued at `generation`; `None` = the read failed.
    SettingsLoaded {
        generation: u64,
        value: Option<bool>,
    },
    /// A client asks to change the toggle: a real boolean yields [`Effect::PersistSetting`].
    RequestEnabled(serde_json::Value),
    /// The toggle was persisted: apply it. Only a real JSON boolean changes anything.
    ApplyEnabled(serde_json::Value),
    /// `GET /question` for `directory` (`None` = unscoped), issued at `token`.
    ListResult {
        directory: Option<String>,
        token: ListToken,
        result: Result<Vec<QuestionRequest>, ListError>,
    },
}

/// What the driver must do, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Fire `Input::TimerFired{request_id, timer_id}` at `at_ms`.
    ArmTimer {
        request_id: String,
        timer_id: u64,
        at_ms: u64,
    },
    /// That timer no longer counts (firing it anyway is harmless: it is stale).
    CancelTimer { request_id: String, timer_id: u64 },
    /// `POST /question/:request_id/reply?directory=` with `{answers}`, then feed back
    /// `Input::UpstreamResult` with `claim`. `directory: None` = no `?directory=`.
    PostReply {
        request_id: String,
        directory: Option<String>,
        answers: Vec<Vec<String>>,
        claim: Claim,
    },
    /// `POST /question/:request_id/reject?directory=`, then feed back the result.
    PostReject {
        request_id: String,
        directory: Option<String>,
        claim: Claim,
    },
    /// `getSession(session_id)`, then feed back `SessionDirectoryResolved` (and
    /// `SessionParent` when it has a parent).
    ResolveSession { session_id: String },
    /// A pause or delegate named a request the machine cannot act on yet: list this scope
    /// (`None` = unscoped), feed the `ListResult`, and let the client retry.
    RecoverViaList {
        request_id: String,
        directory: Option<String>,
    },
    /// A person took over: pause the goal of this root session (in its directory).
    UserTakeover {
        root_session: String,
        directory: Option<String>,
    },
    /// Write `questionAutoDelegateEnabled`; on success feed `ApplyEnabled`.
    PersistSetting(bool),
    /// The snapshot changed: send the tip event `{epoch, revision}`.
    NotifyTip { epoch: u64, revision: u64 },
}

/// Why a command was refused. Nothing changed and no effect was produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum Refusal {
    /// Another claimant holds the request (or an uncertain tombstone does).
    #[error("another submission already holds this question")]
    Claimed,
    /// The client's `sessionID` or `directory` contradicts the bound identity.
    #[error("the session or directory given does not match this question")]
    IdentityConflict,
    /// The request is settled.
    #[error("this question is already settled")]
    Settled,
    /// The toggle value is not a JSON boolean.
    #[error("questionAutoDelegateEnabled must be a boolean")]
    NotBoolean,
}

impl Refusal {
    /// The wire code of the HTTP layer.
    pub fn code(&self) -> crate::domain::ErrorCode {
        match self {
            Refusal::Claimed => ErrorCode::QuestionSubmissionClaimed,
            Refusal::IdentityConflict => ErrorCode::QuestionIdentityConflict,
            Refusal::Settled => ErrorCode::QuestionAlreadySettled,
            Refusal::NotBoolean => ErrorCode::InvalidSetting,
        }
    }

    /// The HTTP status the HTTP layer answers with.
    pub fn http_status(&self) -> u16 {
        match self {
            Refusal::NotBoolean => 400,
            Refusal::Claimed | Refusal::IdentityConflict | Refusal::Settled => 409,
        }
    }
}
