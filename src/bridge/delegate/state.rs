//! What the auto-delegate keeps: each request's state and bound identity, the settings
//! state, and which directories listed successfully (coverage).
//!
//! Plain data with small predicates; the transitions live in `machine`, `commands`,
//! `reconcile` and `settings`.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

pub use crate::domain::delegation::{Claimant, PauseReason, PostKind};
pub use crate::wire::auto_delegate::Awaiting;

/// A claim handed out by the machine and echoed back in `Input::UpstreamResult`: at most
/// one upstream POST per request is in flight, and a result is applied only if it carries
/// the current claim (`id` is unique per `Delegate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Claim {
    pub id: u64,
    pub by: Claimant,
    pub post: PostKind,
}

/// How a request left the pending world.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettledHow {
    /// A POST of ours under this claim took effect: its own 2xx, or upstream's word (an
    /// event, or the tool part found completed) matching what it sent.
    Ours { claim: Claim },
    /// Replied in OpenCode itself (`question.replied` not matching a POST of ours).
    Replied,
    /// Rejected in OpenCode itself.
    Rejected,
    /// Gone without a word: a successful scoped list no longer holds it, or a POST to its
    /// authoritative directory got 404. Being inspected (`Effect::Inspect`) to tell an
    /// answer given upstream from a request upstream lost.
    Gone,
    /// Upstream lost it (restarted, aborted): not an answer.
    Vanished,
}

impl SettledHow {
    /// The wire's word for it.
    pub fn word(&self) -> crate::wire::auto_delegate::SettledWord {
        use crate::wire::auto_delegate::SettledWord;
        match self {
            SettledHow::Ours { claim } => match claim.post {
                PostKind::Reply => SettledWord::Replied,
                PostKind::Reject => SettledWord::Rejected,
            },
            SettledHow::Replied => SettledWord::Replied,
            SettledHow::Rejected => SettledWord::Rejected,
            SettledHow::Gone => SettledWord::Gone,
            SettledHow::Vanished => SettledWord::Vanished,
        }
    }
}

/// What a claim posts: a reply with its answers, or a reject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Post {
    Reply { answers: Vec<Vec<String>> },
    Reject,
}

impl Post {
    pub fn kind(&self) -> PostKind {
        match self {
            Post::Reply { .. } => PostKind::Reply,
            Post::Reject => PostKind::Reject,
        }
    }

    /// A reply's answers; nothing for a reject.
    pub fn answers(&self) -> &[Vec<String>] {
        match self {
            Post::Reply { answers } => answers,
            Post::Reject => &[],
        }
    }
}

/// The auto-delegate state of one request.
///
/// Decision: the seed names counting / paused / disabled / submitting / uncertain /
/// settled; a request the machine may not arm yet (settings loading, directory unknown)
/// needs a name too, so it is `Waiting`. It blocks its session like the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestState {
    /// Not armed yet: see [`Awaiting`].
    Waiting { awaiting: Awaiting },
    /// The window is running; `timer_id` names the one timer whose firing counts.
    Counting { deadline_ms: u64, timer_id: u64 },
    /// Stopped for a person (or the goal); no timer.
    Paused { reason: PauseReason },
    /// The feature is off (or its setting unreadable); no timer.
    Disabled,
    /// A POST is in flight under `claim`; every other claimant is refused.
    Submitting { claim: Claim },
    /// A POST was dispatched and its outcome is unknown. A tombstone: never retried, still
    /// blocks, still refuses claims; only upstream (an event or a scoped list) settles it.
    Uncertain { claim: Claim },
    /// Done at `at_ms`. Never downgraded by a late result; forgotten after the
    /// configured retention.
    Settled { how: SettledHow, at_ms: u64 },
}

impl RequestState {
    /// The snapshot's `state` string.
    pub fn name(&self) -> &'static str {
        match self {
            RequestState::Waiting { .. } => "waiting",
            RequestState::Counting { .. } => "counting",
            RequestState::Paused { .. } => "paused",
            RequestState::Disabled => "disabled",
            RequestState::Submitting { .. } => "submitting",
            RequestState::Uncertain { .. } => "uncertain",
            RequestState::Settled { .. } => "settled",
        }
    }

    /// Still keeps its session from continuing: everything but settled.
    pub fn is_blocking(&self) -> bool {
        !matches!(self, RequestState::Settled { .. })
    }

    /// Pending and unclaimed: a claimant may take it (timer, manual, delegate).
    pub fn is_claimable(&self) -> bool {
        matches!(
            self,
            RequestState::Waiting { .. }
                | RequestState::Counting { .. }
                | RequestState::Paused { .. }
                | RequestState::Disabled
        )
    }

    /// The running timer, if any.
    pub fn timer_id(&self) -> Option<u64> {
        match self {
            RequestState::Counting { timer_id, .. } => Some(*timer_id),
            _ => None,
        }
    }
}

/// One request as the machine knows it, with its bound identity.
///
/// `session_id` is bound by the first upstream source (event or list) and never replaced.
/// `directory` is authoritative when it came from the event, the session cache, a
/// successful scoped list or a `getSession` write-back; a client hint may fill it (for
/// routing a manual POST) but never makes it authoritative, and only an authoritative
/// directory arms the timer or is settled by a scoped list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingRequest {
    pub request_id: String,
    pub session_id: Option<String>,
    pub directory: Option<String>,
    pub directory_authoritative: bool,
    /// Questions in the request; `None` when only a client has named the request (a
    /// manual reply to a request upstream never showed us). Auto and delegate need it.
    pub question_count: Option<usize>,
    pub state: RequestState,
    /// The list token when this request was first observed upstream: a list issued before
    /// that cannot say it is gone.
    pub seen_at: u64,
    /// The tool call that asked (to inspect its part when the request is gone).
    pub tool: Option<crate::opencode::ToolRef>,
    /// Who paused it, while a person's pause holds.
    pub paused_by: Option<String>,
    /// The last claim and what its POST carried (a reply's answers): what upstream's
    /// word is compared with when it arrives after the POST's own outcome was unclear.
    pub last_claim: Option<(Claim, Vec<Vec<String>>)>,
    /// A deadline kept across a restart of the driver: the next arming uses it while it
    /// is still ahead (a fresh window otherwise).
    pub kept_deadline: Option<u64>,
}

impl PendingRequest {
    /// The directory, when it may be trusted for auto-submit.
    pub fn authoritative_directory(&self) -> Option<&str> {
        if self.directory_authoritative {
            self.directory.as_deref()
        } else {
            None
        }
    }
}

/// The persisted toggle `questionAutoDelegateEnabled`, as the machine sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettingsState {
    /// The read issued at `generation` has not come back.
    Loading { generation: u64 },
    /// Known: the read came back, or a toggle was applied.
    Ready { enabled: bool },
    /// The read failed: treated as off, coverage partial, never auto-answers.
    Unavailable,
}

impl SettingsState {
    pub fn name(&self) -> &'static str {
        match self {
            SettingsState::Loading { .. } => "loading",
            SettingsState::Ready { .. } => "ready",
            SettingsState::Unavailable => "unavailable",
        }
    }

    /// Auto-submit may run: settings ready and the feature on.
    pub fn auto_enabled(&self) -> bool {
        matches!(self, SettingsState::Ready { enabled: true })
    }
}

/// Which list scopes answered last time. `None` is the unscoped list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Directories whose latest scoped list succeeded: only these settle missing requests.
    pub successful: BTreeSet<String>,
    /// Scopes whose latest list failed.
    pub failed: BTreeSet<Option<String>>,
}

/// The request table, ordered by request id so snapshots are stable.
pub type Requests = BTreeMap<String, PendingRequest>;
