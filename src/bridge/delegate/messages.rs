//! The machine's vocabulary: what goes in ([`Input`]), what comes out ([`Effect`]), how a
//! command is refused ([`Refusal`]), and what an upstream POST came to ([`PostOutcome`]).
//!
//! OpenCode's request shape is [`crate::opencode::Request`] (`GET /question`,
//! `question.asked`), the one definition the bridge, the direct source and this machine
//! share; a reply body is `{answers: string[][]}`, one array per question.

use thiserror::Error;

use super::state::{Claim, Claimant, PauseReason, PostKind};
use crate::opencode::Request;

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

/// What one upstream POST came to, as the driver saw it (the seed's `UpstreamResult`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpstreamResult {
    /// Nothing left the process (connection refused, the request could not be built).
    NotSent,
    /// A response came back with this status.
    Status(u16),
    /// Dispatched, then no usable answer (a timeout, a reset after writing).
    Uncertain,
}

/// What a claim's POST means, decided once by the machine for every claimant (timer,
/// delegate, a person's answer) and handed to whoever waits on the claim.
///
/// Classification: `NotSent` → `NotSent`; 2xx → `Applied`; 404 → `SettledElsewhere` when
/// the directory was authoritative (else `Refused`: a hinted directory may just be the
/// wrong one); every other 4xx → `Refused` (the server refused before applying anything;
/// 400/409/422 are the seed's definitive rejects); `Uncertain`, 5xx, 0 and anything
/// else → `Uncertain` (it may have been applied).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PostOutcome {
    /// Upstream took it.
    Applied,
    /// Upstream no longer holds the request: settled by someone else, or lost.
    SettledElsewhere,
    /// Upstream refused it with this status: the claim is released and the request
    /// paused for a person.
    Refused { status: u16 },
    /// It never left: the claim is released and the request paused for a person.
    NotSent,
    /// It may or may not have been applied: a tombstone, never retried.
    Uncertain,
}

impl PostOutcome {
    pub fn classify(result: UpstreamResult, directory_authoritative: bool) -> PostOutcome {
        match result {
            UpstreamResult::NotSent => PostOutcome::NotSent,
            UpstreamResult::Uncertain => PostOutcome::Uncertain,
            UpstreamResult::Status(s) if (200..300).contains(&s) => PostOutcome::Applied,
            UpstreamResult::Status(404) if directory_authoritative => PostOutcome::SettledElsewhere,
            UpstreamResult::Status(s @ 400..=499) => PostOutcome::Refused { status: s },
            UpstreamResult::Status(_) => PostOutcome::Uncertain,
        }
    }
}

/// A request restored from the log after the driver restarted: the upstream's request
/// as imported, where it lives, and what the log says of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Restored {
    /// The last deadline armed (machine clock), kept while it is still ahead.
    pub deadline_ms: Option<u64>,
    /// A pause that still holds, and who made it (`None`: the machine's own).
    pub pause: Option<(PauseReason, Option<String>)>,
    /// A POST that was recorded as sent with no outcome after it: an `Uncertain`
    /// tombstone, resolved only by upstream's word.
    pub submitted: Option<(Claimant, PostKind, Vec<Vec<String>>)>,
}

/// What a request's tool part upstream says, once the request is gone from the list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inspection {
    /// The tool completed: answered (with the answers when upstream reports them).
    Answered { answers: Option<Vec<Vec<String>>> },
    /// The tool ended with "the user dismissed this question".
    Dismissed,
    /// Still running, aborted, or no such part or session: upstream lost the request.
    Lost,
    /// The lookup failed: asked again after the next successful list.
    Unknown,
}

/// How a settled request is to be recorded in the log (`Effect::Settle`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Settlement {
    /// Our POST under `claim` took effect: recorded as the claimant's (the person's
    /// answer or dismissal, the timer's or the delegating person's continuation).
    Ours { claim: Claim },
    /// Answered in OpenCode itself.
    Replied { answers: Option<Vec<Vec<String>>> },
    /// Dismissed in OpenCode itself.
    Rejected,
    /// Upstream lost it: not an answer.
    Vanished,
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
        request: Request,
        directory: Option<String>,
    },
    /// A request the log holds open, after the driver restarted (before any connection).
    Restore {
        request: Request,
        directory: String,
        restored: Restored,
    },
    /// `question.replied` from upstream, with the answers when it reports them.
    Replied {
        request_id: String,
        answers: Option<Vec<Vec<String>>>,
    },
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
    /// `POST …/requests/:id/pause`; `by` is the person (`None`: a driver's own pause).
    Pause {
        request_id: String,
        reason: PauseReason,
        by: Option<String>,
        hints: Hints,
    },
    /// `POST …/requests/:id/resume`: a pause lifted, a fresh window.
    Resume { request_id: String, hints: Hints },
    /// The connection to upstream is up and rehydrated: what the outage paused counts
    /// again, each from a fresh window.
    Connected,
    /// The connection ended: nothing counts until `Connected`.
    Disconnected,
    /// Time passed: settled requests past their retention leave the table.
    Tick,
    /// What a gone request's tool part says (after `Effect::Inspect`).
    Inspected {
        request_id: String,
        found: Inspection,
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
        result: Result<Vec<Request>, ListError>,
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
    /// The outcome of `claim`'s POST, for whoever waits on it. Comes once per claim.
    Resolved {
        request_id: String,
        claim: Claim,
        outcome: PostOutcome,
    },
    /// Record the settlement in the log (the request is `Settled` now).
    Settle {
        request_id: String,
        settlement: Settlement,
    },
    /// The request left upstream without a word: read its session's messages, find the
    /// tool part of `tool`, and feed `Inspected`.
    Inspect {
        request_id: String,
        session_id: Option<String>,
        directory: Option<String>,
        tool: Option<crate::opencode::ToolRef>,
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
    /// The upstream cannot be reached now: nothing was claimed or sent.
    #[error("OpenCode cannot be reached now; nothing was sent")]
    Unreachable,
}
