//! Question auto-delegate (seed 002) as a pure state machine.
//!
//! OpenCode asks a person through its `question` tool; when the feature is on and nobody
//! answers within a window (30 s by default), oq answers for them with
//! [`CONTINUATION_TEXT`] so the agent can go on. This module decides *what* should happen
//! and *when*; it never does it. [`Delegate::handle`] takes the time (`now_ms`, a plain
//! number) and one [`Input`], changes the state and returns [`Effect`]s as data: arm or
//! cancel a timer, POST a reply or a reject upstream, resolve a session's directory,
//! list a directory to recover a request, report a user takeover, persist the setting,
//! announce a new snapshot revision. The driver (the bridge adapter in `oq serve`) runs
//! the effects and feeds their outcomes back as inputs. Timers and claims carry ids, so a
//! stale timer or a late result for an older claim is ignored.
//!
//! - `state`: what is kept per request, per setting and for coverage.
//! - `messages`: inputs, effects, upstream results and their one classification
//!   ([`PostOutcome`]), settlements, refusals.
//! - `machine`: [`Delegate`], arming, lineage, `is_blocking_session`.
//! - `commands`: manual reply/reject, delegate, pause and resume (the claim and identity
//!   rules).
//! - `reconcile`: asked/replied/rejected events, lists, inspections of gone requests,
//!   session write-backs, upstream results.
//! - `lifecycle`: disconnect and reconnect, restore after a restart, forgetting settled
//!   requests.
//! - `settings`: the persisted toggle, its generation guard, `unavailable`.
//! - `snapshot`: the wire's view behind `GET /api/question-auto-delegate`.
//!
//! Every settlement comes out as one [`Effect::Settle`] saying what it was — ours (the
//! claim says whose), replied or rejected in OpenCode itself, or vanished — so the
//! driver records each the way it happened, once.
//!
//! Decisions the seed left open are written where they are made (look for "Decision:").

mod commands;
mod lifecycle;
mod machine;
mod messages;
mod reconcile;
mod settings;
mod snapshot;
mod state;

#[cfg(test)]
mod tests;

pub use machine::{DEFAULT_SETTLED_RETENTION_MS, Delegate, DelegateConfig};
pub use messages::{
    Effect, Hints, Input, Inspection, ListError, ListToken, PostOutcome, Refusal, Restored,
    Settlement, UpstreamResult,
};
pub use state::{
    Awaiting, Claim, Claimant, PauseReason, PendingRequest, Post, PostKind, RequestState,
    SettingsState, SettledHow,
};

/// The default auto-delegate window: a pending question is answered for the user after this.
pub const DEFAULT_WINDOW_MS: u64 = 30_000;

/// The fixed answer of the auto timer and of an explicit delegate, one per question of the
/// request. A manual reply never carries it: it forwards the person's `answers` as given.
pub const CONTINUATION_TEXT: &str =
    "The user is away; continue with your best judgement and note the assumption.";
