//! Transition tests of the auto-delegate on a virtual clock, with a scripted upstream.
//!
//! No IO, no sleeping: time is the number the harness passes as `now_ms`, timers are a
//! table the harness keeps from `ArmTimer`/`CancelTimer` effects, and the upstream is a
//! script that turns a `PostReply`/`PostReject` into the `UpstreamResult` input of the
//! chosen kind. Every test asserts the new state and the effects.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod claims;
mod lifecycle;
mod lineage;
mod reconcile;
mod settings;
mod timer;
mod upstream;

use std::collections::BTreeMap;

use super::{
    Delegate, DelegateConfig, Effect, Hints, Input, ListToken, Refusal, RequestState,
    UpstreamResult,
};
pub(super) use crate::opencode::Request as QuestionRequest;
use crate::opencode::types::QuestionInfo;
pub(super) use crate::wire::auto_delegate::SettledWord;

pub(super) const EPOCH: u64 = 7;
pub(super) const DIR: &str = "/srv/peer/work";
pub(super) const OTHER_DIR: &str = "/srv/peer/other";

/// What the scripted upstream answers to a POST.
#[derive(Clone, Copy, Debug)]
pub(super) enum Upstream {
    Ok200,
    NotFound404,
    BadRequest400,
    Conflict409,
    Unprocessable422,
    ServerError500,
    /// Dispatched, then the client timed out.
    TimeoutAfterDispatch,
    /// The adapter knows nothing left the process.
    FailBeforeSend,
    /// A response with status 0 (whatever that would mean): unclear.
    BareStatusZero,
    /// No result is ever fed back.
    NeverAnswer,
}

impl Upstream {
    fn result(self) -> Option<UpstreamResult> {
        Some(match self {
            Upstream::Ok200 => UpstreamResult::Status(200),
            Upstream::NotFound404 => UpstreamResult::Status(404),
            Upstream::BadRequest400 => UpstreamResult::Status(400),
            Upstream::Conflict409 => UpstreamResult::Status(409),
            Upstream::Unprocessable422 => UpstreamResult::Status(422),
            Upstream::ServerError500 => UpstreamResult::Status(500),
            Upstream::TimeoutAfterDispatch => UpstreamResult::Uncertain,
            Upstream::FailBeforeSend => UpstreamResult::NotSent,
            Upstream::BareStatusZero => UpstreamResult::Status(0),
            Upstream::NeverAnswer => return None,
        })
    }
}

/// The machine, a virtual clock, the armed timers and every POST ever asked for.
pub(super) struct Harness {
    pub d: Delegate,
    pub now: u64,
    /// timer id → (request id, due at).
    pub timers: BTreeMap<u64, (String, u64)>,
    pub posts: Vec<Effect>,
}

impl Harness {
    /// Settings still loading (generation 0), default 30 s window, connected.
    pub fn loading() -> Self {
        Self::with_window(super::DEFAULT_WINDOW_MS)
    }

    pub fn with_window(window_ms: u64) -> Self {
        let mut h = Self::disconnected(window_ms);
        h.step(Input::Connected);
        h
    }

    /// Settings loading and the upstream not connected yet (a driver at start).
    pub fn disconnected(window_ms: u64) -> Self {
        Self {
            d: Delegate::new(DelegateConfig {
                window_ms,
                epoch: EPOCH,
                settled_retention_ms: super::DEFAULT_SETTLED_RETENTION_MS,
            }),
            now: 0,
            timers: BTreeMap::new(),
            posts: Vec::new(),
        }
    }

    /// Settings read back as `enabled`.
    pub fn ready(enabled: bool) -> Self {
        let mut h = Self::loading();
        h.step(Input::SettingsLoaded {
            generation: 0,
            value: Some(enabled),
        });
        h
    }

    pub fn try_step(&mut self, input: Input) -> Result<Vec<Effect>, Refusal> {
        let fx = self.d.handle(self.now, input)?;
        for effect in &fx {
            match effect {
                Effect::ArmTimer {
                    request_id,
                    timer_id,
                    at_ms,
                } => {
                    self.timers.insert(*timer_id, (request_id.clone(), *at_ms));
                }
                Effect::CancelTimer { timer_id, .. } => {
                    self.timers.remove(timer_id);
                }
                Effect::PostReply { .. } | Effect::PostReject { .. } => {
                    self.posts.push(effect.clone())
                }
                _ => {}
            }
        }
        Ok(fx)
    }

    pub fn step(&mut self, input: Input) -> Vec<Effect> {
        self.try_step(input).expect("input accepted")
    }

    /// Move the clock to `t`, firing every timer due by then, in order.
    pub fn advance_to(&mut self, t: u64) -> Vec<Effect> {
        let mut all = Vec::new();
        loop {
            let due = self
                .timers
                .iter()
                .filter(|(_, (_, at))| *at <= t)
                .min_by_key(|(id, (_, at))| (*at, **id))
                .map(|(id, (req, at))| (*id, req.clone(), *at));
            let Some((timer_id, request_id, at)) = due else {
                break;
            };
            self.timers.remove(&timer_id);
            self.now = self.now.max(at);
            all.extend(self.step(Input::TimerFired {
                request_id,
                timer_id,
            }));
        }
        self.now = t;
        all
    }

    pub fn ask(
        &mut self,
        id: &str,
        session: &str,
        dir: Option<&str>,
        questions: usize,
    ) -> Vec<Effect> {
        self.step(Input::Asked {
            request: request(id, session, questions),
            directory: dir.map(str::to_string),
        })
    }

    /// Feed the scripted upstream's answer to every POST in `fx`.
    pub fn answer(&mut self, fx: &[Effect], script: Upstream) -> Vec<Effect> {
        let mut out = Vec::new();
        for effect in fx {
            let (Effect::PostReply {
                request_id, claim, ..
            }
            | Effect::PostReject {
                request_id, claim, ..
            }) = effect
            else {
                continue;
            };
            if let Some(result) = script.result() {
                out.extend(self.step(Input::UpstreamResult {
                    request_id: request_id.clone(),
                    claim: *claim,
                    result,
                }));
            }
        }
        out
    }

    pub fn state(&self, id: &str) -> RequestState {
        self.d.request(id).expect("known request").state
    }

    /// How a settled request settled, in the wire's word (panics if not settled).
    pub fn word(&self, id: &str) -> SettledWord {
        match self.state(id) {
            RequestState::Settled { how, .. } => how.word(),
            other => panic!("{id} is not settled: {other:?}"),
        }
    }

    /// The `Settle` effects in `fx`: (request id, settlement).
    pub fn settles(fx: &[Effect]) -> Vec<(String, super::Settlement)> {
        fx.iter()
            .filter_map(|e| match e {
                Effect::Settle {
                    request_id,
                    settlement,
                } => Some((request_id.clone(), settlement.clone())),
                _ => None,
            })
            .collect()
    }

    pub fn list_token(&self) -> ListToken {
        self.d.list_token()
    }
}

pub(super) fn request(id: &str, session: &str, questions: usize) -> QuestionRequest {
    QuestionRequest {
        id: id.to_string(),
        session_id: session.to_string(),
        questions: (0..questions)
            .map(|i| QuestionInfo {
                question: format!("Question {i}?"),
                header: format!("Q{i}"),
                options: Vec::new(),
                multiple: false,
                custom: None,
            })
            .collect(),
        tool: Some(crate::opencode::ToolRef {
            message_id: format!("msg_{id}"),
            call_id: format!("call_{id}"),
        }),
    }
}

pub(super) fn hints(session: Option<&str>, dir: Option<&str>) -> Hints {
    Hints {
        session_id: session.map(str::to_string),
        directory: dir.map(str::to_string),
    }
}

/// The POSTs among `fx`.
pub(super) fn posts(fx: &[Effect]) -> Vec<&Effect> {
    fx.iter()
        .filter(|e| matches!(e, Effect::PostReply { .. } | Effect::PostReject { .. }))
        .collect()
}

pub(super) fn armed(fx: &[Effect]) -> Vec<(u64, u64)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::ArmTimer {
                timer_id, at_ms, ..
            } => Some((*timer_id, *at_ms)),
            _ => None,
        })
        .collect()
}

pub(super) fn cancelled(fx: &[Effect]) -> Vec<u64> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::CancelTimer { timer_id, .. } => Some(*timer_id),
            _ => None,
        })
        .collect()
}

pub(super) fn takeovers(fx: &[Effect]) -> Vec<&str> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::UserTakeover { root_session, .. } => Some(root_session.as_str()),
            _ => None,
        })
        .collect()
}

/// The answers of the single PostReply in `fx`.
pub(super) fn reply_answers(fx: &[Effect]) -> Vec<Vec<String>> {
    let replies: Vec<_> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::PostReply { answers, .. } => Some(answers.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(replies.len(), 1, "exactly one PostReply in {fx:?}");
    replies.into_iter().next().expect("one reply")
}

pub(super) fn continuation(questions: usize) -> Vec<Vec<String>> {
    vec![vec![super::CONTINUATION_TEXT.to_string()]; questions]
}

/// The request's running timer id (panics if it is not counting).
pub(super) fn timer_of(state: RequestState) -> (u64, u64) {
    match state {
        RequestState::Counting {
            deadline_ms,
            timer_id,
        } => (timer_id, deadline_ms),
        other => panic!("not counting: {other:?}"),
    }
}
