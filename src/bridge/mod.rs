//! The bridge: `oq serve`'s OpenCode upstreams (SPEC §5, seed 002).
//!
//! A bridged upstream's pending question requests are imported into the engine and kept
//! in sync; answers from any oq client are routed back upstream. What lives here:
//!
//! - [`delegate`]: the pure auto-delegate state machine (timers, the single-flight claim,
//!   upstream outcomes, settings, reconcile). No IO, no clock, no async.
//! - [`upstream`]: one [`Upstream`] per `[[opencode]]` table: the machine behind a lock,
//!   the effect runner (timers, POSTs, session lookups, lists, tips), the import into the
//!   engine and the answer routing used by the HTTP routes.
//! - [`connection`]: the task that follows one upstream: connect, rehydrate, follow the
//!   event stream, and the ONE cleanup every non-clean end goes through.
//! - [`post`]: a reply/reject POST and the classification of its outcome.
//! - [`settings`]: the persisted toggle, one small JSON file per upstream.
//!
//! [`Bridges`] is the registry the server keeps: the upstreams and the channel that
//! carries auto-delegate tips to the projects' event streams.

pub mod connection;
pub mod delegate;
pub mod post;
pub mod settings;
pub mod upstream;

use std::sync::{Arc, RwLock};

use serde::Serialize;
use tokio::sync::broadcast;

pub use upstream::{Stats, Upstream};

/// A tip on a project's event stream: the auto-delegate snapshot of an upstream of that
/// project changed; refetch `GET /api/question-auto-delegate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DelegateTip {
    #[serde(skip)]
    pub project: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub upstream: String,
    pub epoch: u64,
    pub revision: u64,
}

/// The tip's `type`.
pub const TIP_TYPE: &str = "question-auto-delegate-changed";

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

    pub fn tips(&self) -> broadcast::Receiver<DelegateTip> {
        self.tips.subscribe()
    }

    pub(crate) fn tip_sender(&self) -> broadcast::Sender<DelegateTip> {
        self.tips.clone()
    }
}
