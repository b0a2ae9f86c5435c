//! The bridge: `oq serve`'s OpenCode upstreams (SPEC §5, seed 002).
//!
//! A bridged upstream's pending question requests are imported into the engine and kept
//! in sync; answers from any oq client are routed back upstream. What lives here:
//!
//! - [`delegate`]: the pure auto-delegate state machine (timers, the single-flight claim,
//!   the one classification of upstream outcomes, settings, reconcile, restore). No IO,
//!   no clock, no async.
//! - [`upstream`]: one [`Upstream`] per `[[opencode]]` table: the machine behind a lock,
//!   the effect runner (timers, POSTs, session lookups, lists, inspections, tips), the
//!   import into the engine, what the log records of it, and the commands the HTTP
//!   routes ask for.
//! - [`connection`]: the task that follows one upstream: connect, rehydrate, follow the
//!   event stream, and the ONE cleanup every non-clean end goes through.
//! - [`post`]: a reply/reject POST and its raw result.
//! - [`settings`]: the persisted toggle, one small JSON file per upstream.
//! - [`config`]: an upstream as configured.
//!
//! Architecture Invariant: the bridge sits below the server. It depends on the engine,
//! OpenCode's client and a change notifier ([`Notifier`]), never on `crate::server` or
//! axum; it answers with domain values and [`crate::domain::OqError`], never HTTP
//! statuses (`tests/tidy.rs` holds it).
//!
//! [`Bridges`] is the registry the server keeps: the upstreams and the channel that
//! carries auto-delegate tips to the projects' event streams.

pub mod config;
pub mod connection;
pub mod delegate;
pub mod post;
pub mod settings;
pub mod upstream;

use std::sync::{Arc, RwLock};

use serde::Serialize;
use tokio::sync::{broadcast, watch};

pub use config::{OpencodeUpstream, UpstreamTiming};
pub use upstream::{Stats, Upstream};

/// A tip on a project's event stream: the auto-delegate snapshot of an upstream of that
/// project changed (a request's state, the connection); refetch
/// `GET /api/question-auto-delegate`. It carries the connection itself, so a client
/// learns the bridge lost OpenCode without asking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DelegateTip {
    #[serde(skip)]
    pub project: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub upstream: String,
    pub epoch: u64,
    pub revision: u64,
    pub connected: bool,
    /// Since when (Unix ms) the connection is in this state; 0: never connected.
    pub since_unix_ms: i64,
}

/// The tip's `type`.
pub const TIP_TYPE: &str = "question-auto-delegate-changed";

/// Wakes whoever follows the store (the server's event streams) after the bridge wrote.
#[derive(Clone)]
pub struct Notifier(watch::Sender<u64>);

impl Notifier {
    pub fn new(changes: watch::Sender<u64>) -> Self {
        Notifier(changes)
    }

    /// Follows what the notifier says (the store's changes, from this server or, on
    /// PostgreSQL, any other).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.0.subscribe()
    }

    /// Something was written: look again.
    pub fn changed(&self) {
        self.0.send_modify(|g| *g = g.wrapping_add(1));
    }
}

/// The server's upstreams, shared by the routes and the connection tasks.
#[derive(Clone)]
pub struct Bridges {
    upstreams: Arc<RwLock<Vec<Arc<Upstream>>>>,
    tips: broadcast::Sender<DelegateTip>,
}

impl Default for Bridges {
    fn default() -> Self {
        Bridges {
            upstreams: Arc::default(),
            tips: broadcast::channel(256).0,
        }
    }
}

impl Bridges {
    pub fn add(&self, upstream: Arc<Upstream>) {
        if let Ok(mut all) = self.upstreams.write() {
            all.push(upstream);
        }
    }

    pub fn all(&self) -> Vec<Arc<Upstream>> {
        self.upstreams.read().map(|u| u.clone()).unwrap_or_default()
    }

    pub fn get(&self, name: &str) -> Option<Arc<Upstream>> {
        self.all().into_iter().find(|u| u.name() == name)
    }

    /// The upstreams feeding `project`.
    pub fn of_project(&self, project: &str) -> Vec<Arc<Upstream>> {
        self.all()
            .into_iter()
            .filter(|u| u.project() == project)
            .collect()
    }

    /// Each upstream of `project`'s connection, for the question list.
    pub fn health(&self, project: &str) -> Vec<crate::wire::BridgeHealth> {
        self.of_project(project)
            .iter()
            .map(|u| u.health())
            .collect()
    }

    pub fn tips(&self) -> broadcast::Receiver<DelegateTip> {
        self.tips.subscribe()
    }

    pub fn tip_sender(&self) -> broadcast::Sender<DelegateTip> {
        self.tips.clone()
    }
}
