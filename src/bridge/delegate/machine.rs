//! [`Delegate`]: the state, the one entry point [`Delegate::handle`], and the helpers every
//! transition shares (arming, timers, directory binding, lineage, takeovers).
//!
//! Each `handle` call either refuses (nothing changed, no effect) or applies the input;
//! when anything the snapshot shows changed, `revision` goes up by one and the last effect
//! is `NotifyTip{epoch, revision}`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::messages::{Effect, Input, ListToken, Refusal};
use super::state::{
    Awaiting, Coverage, PauseReason, PendingRequest, RequestState, Requests, SettingsState,
};
use super::{CONTINUATION_TEXT, DEFAULT_WINDOW_MS};

/// How long a settled request stays in the snapshot by default.
pub const DEFAULT_SETTLED_RETENTION_MS: u64 = 5 * 60_000;

/// How long a subagent chain may be before the walk to the root stops (a cycle guard).
const MAX_LINEAGE_DEPTH: usize = 64;

/// Fixed per instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelegateConfig {
    /// The auto-delegate window, from arming to the automatic reply.
    pub window_ms: u64,
    /// Names this instance in tip events; a client seeing a new epoch refetches.
    pub epoch: u64,
    /// A settled request leaves the snapshot this long after it settled.
    pub settled_retention_ms: u64,
}

impl Default for DelegateConfig {
    fn default() -> Self {
        Self {
            window_ms: DEFAULT_WINDOW_MS,
            epoch: 0,
            settled_retention_ms: DEFAULT_SETTLED_RETENTION_MS,
        }
    }
}

/// The auto-delegate of one bridge: every request it knows, the settings and coverage.
#[derive(Clone, Debug)]
pub struct Delegate {
    pub(super) config: DelegateConfig,
    pub(super) revision: u64,
    pub(super) settings: SettingsState,
    /// Bumped by every toggle applied; a settings read from an older generation loses.
    pub(super) generation: u64,
    pub(super) requests: Requests,
    pub(super) coverage: Coverage,
    /// Subagent session → parent session.
    pub(super) parents: BTreeMap<String, String>,
    /// Session → its authoritative directory (the session cache).
    pub(super) session_dirs: BTreeMap<String, String>,
    /// Source of timer and claim ids.
    pub(super) next_id: u64,
    /// Counts first observations of requests; [`ListToken`]s are taken from it.
    pub(super) observations: u64,
    /// Set by any change the snapshot shows during the current `handle`.
    pub(super) changed: bool,
    /// The upstream is connected and rehydrated: only then does a window count.
    pub(super) connected: bool,
    /// Requests settled and dropped from the table after the retention: never revived.
    pub(super) forgotten: BTreeSet<String>,
    pub(super) forgotten_order: VecDeque<String>,
}

impl Delegate {
    /// A machine whose settings read is in flight at generation 0: the driver starts the
    /// read and feeds `SettingsLoaded{generation: 0, …}`.
    pub fn new(config: DelegateConfig) -> Self {
        Self {
            config,
            revision: 0,
            settings: SettingsState::Loading { generation: 0 },
            generation: 0,
            requests: Requests::new(),
            coverage: Coverage::default(),
            parents: BTreeMap::new(),
            session_dirs: BTreeMap::new(),
            next_id: 1,
            observations: 0,
            changed: false,
            connected: false,
            forgotten: BTreeSet::new(),
            forgotten_order: VecDeque::new(),
        }
    }

    /// Apply one input at `now_ms` (any monotonic millisecond clock the driver keeps).
    pub fn handle(&mut self, now_ms: u64, input: Input) -> Result<Vec<Effect>, Refusal> {
        self.changed = false;
        let mut fx = Vec::new();
        match input {
            Input::Asked { request, directory } => {
                self.observe(now_ms, &request, directory.as_deref(), &mut fx)
            }
            Input::Restore {
                request,
                directory,
                restored,
            } => self.restore(now_ms, &request, &directory, restored, &mut fx),
            Input::Replied {
                request_id,
                answers,
            } => self.replied_upstream(now_ms, &request_id, answers, &mut fx),
            Input::Rejected { request_id } => self.rejected_upstream(now_ms, &request_id, &mut fx),
            Input::SessionDirectoryResolved {
                session_id,
                directory,
            } => self.session_resolved(now_ms, &session_id, &directory, &mut fx),
            Input::SessionParent {
                session_id,
                parent_id,
            } => {
                if session_id != parent_id {
                    self.parents.insert(session_id, parent_id);
                }
            }
            Input::TimerFired {
                request_id,
                timer_id,
            } => self.timer_fired(now_ms, &request_id, timer_id, &mut fx),
            Input::ManualReply {
                request_id,
                answers,
                hints,
            } => self.manual(&request_id, super::Post::Reply { answers }, &hints, &mut fx)?,
            Input::ManualReject { request_id, hints } => {
                self.manual(&request_id, super::Post::Reject, &hints, &mut fx)?
            }
            Input::Delegate { request_id, hints } => self.delegate(&request_id, &hints, &mut fx)?,
            Input::Pause {
                request_id,
                reason,
                by,
                hints,
            } => self.pause(&request_id, reason, by, &hints, &mut fx)?,
            Input::Resume { request_id, hints } => {
                self.resume(now_ms, &request_id, &hints, &mut fx)?
            }
            Input::Connected => self.connected(now_ms, &mut fx),
            Input::Disconnected => self.disconnected(&mut fx),
            Input::Tick => {}
            Input::Inspected { request_id, found } => self.inspected(&request_id, found, &mut fx),
            Input::GoalPaused { root_session } => self.goal_paused(&root_session, &mut fx),
            Input::UpstreamResult {
                request_id,
                claim,
                result,
            } => self.upstream_result(now_ms, &request_id, claim, result, &mut fx),
            Input::SettingsLoaded { generation, value } => {
                self.settings_loaded(now_ms, generation, value, &mut fx)
            }
            Input::RequestEnabled(value) => fx.push(Effect::PersistSetting(
                value.as_bool().ok_or(Refusal::NotBoolean)?,
            )),
            Input::ApplyEnabled(value) => self.apply_enabled(now_ms, &value, &mut fx),
            Input::ListResult {
                directory,
                token,
                result,
            } => self.list_result(now_ms, directory, token, result, &mut fx),
        }
        self.forget_settled(now_ms);
        if self.changed {
            self.revision += 1;
            fx.push(Effect::NotifyTip {
                epoch: self.config.epoch,
                revision: self.revision,
            });
        }
        Ok(fx)
    }

    /// Whether a question keeps this session's tree from continuing: any request of a
    /// session with the same root that is waiting, counting, paused, disabled,
    /// submitting or uncertain. Ask it right before prompting the session.
    pub fn is_blocking_session(&self, session_id: &str) -> bool {
        let root = self.root_of(session_id);
        self.requests.values().any(|r| {
            r.state.is_blocking()
                && r.session_id
                    .as_deref()
                    .is_some_and(|s| self.root_of(s) == root)
        })
    }

    /// The root owner of a session, walking `SessionParent` links.
    pub fn root_of(&self, session_id: &str) -> String {
        let mut current = session_id;
        for _ in 0..MAX_LINEAGE_DEPTH {
            match self.parents.get(current) {
                Some(parent) => current = parent,
                None => break,
            }
        }
        current.to_string()
    }

    /// Take right before sending a `GET /question`; hand back in `ListResult`.
    pub fn list_token(&self) -> ListToken {
        ListToken(self.observations)
    }

    /// The generation a settings read must carry to be applied while loading.
    pub fn settings_generation(&self) -> u64 {
        self.generation
    }

    pub fn settings(&self) -> SettingsState {
        self.settings
    }

    pub fn revision(&self) -> u64 {
        self.revision
    }

    pub fn epoch(&self) -> u64 {
        self.config.epoch
    }

    pub fn window_ms(&self) -> u64 {
        self.config.window_ms
    }

    pub fn request(&self, request_id: &str) -> Option<&PendingRequest> {
        self.requests.get(request_id)
    }

    pub fn requests(&self) -> impl Iterator<Item = &PendingRequest> {
        self.requests.values()
    }

    /// Whether the upstream is connected (as last told).
    pub fn is_connected(&self) -> bool {
        self.connected
    }

    pub(super) fn fresh_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Replace a request's state; marks the change.
    pub(super) fn set_state(&mut self, request_id: &str, state: RequestState) {
        if let Some(req) = self.requests.get_mut(request_id)
            && req.state != state
        {
            if !matches!(state, RequestState::Paused { .. }) {
                req.paused_by = None;
            }
            req.state = state;
            self.changed = true;
        }
    }

    /// Put an unclaimed, unpaused request where the rules say: waiting for settings,
    /// disabled, counting a fresh window (settings ready, feature on, directory
    /// authoritative, upstream connected; a deadline kept across a restart while it is
    /// still ahead), paused while the upstream is unreachable, or waiting for its
    /// directory (and ask for the session).
    pub(super) fn arm_or_wait(&mut self, now_ms: u64, request_id: &str, fx: &mut Vec<Effect>) {
        let Some(req) = self.requests.get(request_id) else {
            return;
        };
        cancel_timer(req, fx);
        let has_directory = req.authoritative_directory().is_some();
        let session = req.session_id.clone();
        if !has_directory && let Some(session_id) = session {
            push_once(fx, Effect::ResolveSession { session_id });
        }
        let state = match self.settings {
            SettingsState::Loading { .. } => RequestState::Waiting {
                awaiting: Awaiting::Settings,
            },
            SettingsState::Unavailable | SettingsState::Ready { enabled: false } => {
                RequestState::Disabled
            }
            SettingsState::Ready { enabled: true } if has_directory && !self.connected => {
                RequestState::Paused {
                    reason: PauseReason::Unreachable,
                }
            }
            SettingsState::Ready { enabled: true } if has_directory => {
                let timer_id = self.fresh_id();
                let kept = self
                    .requests
                    .get_mut(request_id)
                    .and_then(|r| r.kept_deadline.take())
                    .filter(|d| *d > now_ms);
                let at_ms = kept.unwrap_or_else(|| now_ms.saturating_add(self.config.window_ms));
                fx.push(Effect::ArmTimer {
                    request_id: request_id.to_string(),
                    timer_id,
                    at_ms,
                });
                RequestState::Counting {
                    deadline_ms: at_ms,
                    timer_id,
                }
            }
            SettingsState::Ready { enabled: true } => RequestState::Waiting {
                awaiting: Awaiting::Directory,
            },
        };
        self.set_state(request_id, state);
    }

    /// Bind an authoritative directory to a request that has none, and arm it if it was
    /// only waiting for that. A request already bound keeps its directory.
    pub(super) fn bind_directory(
        &mut self,
        now_ms: u64,
        request_id: &str,
        directory: &str,
        fx: &mut Vec<Effect>,
    ) {
        let Some(req) = self.requests.get_mut(request_id) else {
            return;
        };
        if req.directory_authoritative {
            return;
        }
        req.directory = Some(directory.to_string());
        req.directory_authoritative = true;
        self.changed = true;
        if let Some(session) = &req.session_id {
            self.session_dirs
                .entry(session.clone())
                .or_insert_with(|| directory.to_string());
        }
        if let RequestState::Waiting {
            awaiting: Awaiting::Directory,
        } = req.state
        {
            self.arm_or_wait(now_ms, request_id, fx);
        }
    }

    /// Report a person taking over this session's tree (once per root per input).
    pub(super) fn takeover(&self, session_id: Option<&str>, fx: &mut Vec<Effect>) {
        let Some(session) = session_id else {
            return;
        };
        let root_session = self.root_of(session);
        let directory = self.session_dirs.get(&root_session).cloned();
        push_once(
            fx,
            Effect::UserTakeover {
                root_session,
                directory,
            },
        );
    }

    fn timer_fired(&mut self, now_ms: u64, request_id: &str, timer_id: u64, fx: &mut Vec<Effect>) {
        let Some(req) = self.requests.get(request_id) else {
            return;
        };
        let RequestState::Counting {
            deadline_ms,
            timer_id: current,
        } = req.state
        else {
            return;
        };
        if current != timer_id {
            return;
        }
        if now_ms < deadline_ms {
            // Early wake-up: the window is not over; sleep again on the same timer.
            fx.push(Effect::ArmTimer {
                request_id: request_id.to_string(),
                timer_id,
                at_ms: deadline_ms,
            });
            return;
        }
        let (Some(directory), Some(count)) = (req.authoritative_directory(), req.question_count)
        else {
            self.arm_or_wait(now_ms, request_id, fx);
            return;
        };
        if !self.settings.auto_enabled() {
            self.arm_or_wait(now_ms, request_id, fx);
            return;
        }
        let directory = directory.to_string();
        self.post_continuation(request_id, directory, count, super::Claimant::Auto, fx);
    }

    /// Claim for `by` (auto or delegate) and post the fixed text, one answer per question.
    pub(super) fn post_continuation(
        &mut self,
        request_id: &str,
        directory: String,
        question_count: usize,
        by: super::Claimant,
        fx: &mut Vec<Effect>,
    ) {
        let claim = super::Claim {
            id: self.fresh_id(),
            by,
            post: super::PostKind::Reply,
        };
        let answers = vec![vec![CONTINUATION_TEXT.to_string()]; question_count];
        self.set_state(request_id, RequestState::Submitting { claim });
        if let Some(req) = self.requests.get_mut(request_id) {
            req.last_claim = Some((claim, answers.clone()));
        }
        fx.push(Effect::PostReply {
            request_id: request_id.to_string(),
            directory: Some(directory),
            answers,
            claim,
        });
    }
}

/// `CancelTimer` for the request's running timer, if it has one.
pub(super) fn cancel_timer(req: &PendingRequest, fx: &mut Vec<Effect>) {
    if let Some(timer_id) = req.state.timer_id() {
        fx.push(Effect::CancelTimer {
            request_id: req.request_id.clone(),
            timer_id,
        });
    }
}

/// Push an effect unless an equal one is already queued in this step.
pub(super) fn push_once(fx: &mut Vec<Effect>, effect: Effect) {
    if !fx.contains(&effect) {
        fx.push(effect);
    }
}
