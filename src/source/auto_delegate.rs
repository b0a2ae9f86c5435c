//! The bodies of `oq serve`'s auto-delegate routes (`src/server/routes/delegate.rs`), read
//! into the client's shape [`AutoDelegate`]: every upstream's requests merged by id, the
//! deadline moved onto this machine's clock. Parsing only; the calls are in `http.rs`.
//!
//! Clock: the server's `deadline` and `nowMs` come from one clock (the bridge's machine),
//! so `deadline - nowMs` is the time left whatever the two machines' skew; adding it to
//! the local clock when the reply arrived gives a deadline the TUI can count down to.
//! `deadlineUnixMs` (the server's wall clock) is the fallback when `nowMs` is absent.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::wire::{AutoCommand, AutoDelegate, AutoRequest, AutoState};

#[derive(Debug, Deserialize)]
pub(super) struct SnapshotBody {
    #[serde(default)]
    upstreams: Vec<UpstreamBody>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpstreamBody {
    #[serde(default)]
    now_ms: Option<i64>,
    #[serde(default)]
    enabled: bool,
    #[serde(default)]
    requests: Vec<RequestBody>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RequestBody {
    #[serde(rename = "requestID")]
    request_id: String,
    state: AutoState,
    #[serde(default)]
    deadline: Option<i64>,
    #[serde(default)]
    deadline_unix_ms: Option<i64>,
    #[serde(default)]
    pause_reason: Option<String>,
}

/// `POST …/pause` and `…/delegate`: `{upstream, requestID, recovering, request}`.
#[derive(Debug, Deserialize)]
pub(super) struct CommandBody {
    #[serde(default)]
    recovering: bool,
    #[serde(default)]
    request: Option<CommandRequest>,
}

#[derive(Debug, Deserialize)]
struct CommandRequest {
    state: AutoState,
}

impl SnapshotBody {
    /// `local_now`: this machine's Unix ms when the reply arrived.
    pub(super) fn into_view(self, local_now: i64) -> AutoDelegate {
        let mut view = AutoDelegate::default();
        let mut requests = BTreeMap::new();
        for up in self.upstreams {
            view.enabled |= up.enabled;
            for r in up.requests {
                let deadline_unix_ms = match (r.deadline, up.now_ms) {
                    (Some(d), Some(now)) => Some(local_now + (d - now)),
                    _ => r.deadline_unix_ms,
                };
                requests.insert(
                    r.request_id,
                    AutoRequest {
                        state: r.state,
                        deadline_unix_ms: deadline_unix_ms
                            .filter(|_| r.state == AutoState::Counting),
                        pause_reason: r.pause_reason,
                        enabled: up.enabled,
                    },
                );
            }
        }
        view.requests = requests;
        view
    }
}

impl From<CommandBody> for AutoCommand {
    fn from(b: CommandBody) -> Self {
        AutoCommand {
            recovering: b.recovering,
            state: b.request.map(|r| r.state),
        }
    }
}
