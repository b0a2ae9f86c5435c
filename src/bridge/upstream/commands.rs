//! What the routes ask of an upstream: its snapshot and setting, the commands on one of
//! its questions (pause, resume, delegate), and a person's answer or dismissal.
//!
//! Who may: the question's session author (the upstream's answerer) alone acts on it,
//! like answering (`so_o_autor_da_sessao` otherwise); the upstream's admins alone change
//! its setting (`not_an_admin`). Every such act is a note in the log with its actor:
//! `open_question.paused` / `.resumed`, `open_question.submitted` for a delegate (and
//! for the answer itself), `bridge.settings_changed`.
//!
//! Everything answers with domain values and [`OqError`]; the server maps those to HTTP.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::oneshot;

use super::*;
use crate::bridge::delegate::{Effect, Hints, Input, PauseReason, Refusal};
use crate::domain::ErrorCode;
use crate::domain::answering::{check_author_and_open, decide_answer};
use crate::domain::{AnswerInput, Event, Question};
use crate::opencode::Request;
use crate::wire::auto_delegate::{RequestSnapshot, UpstreamSnapshot};

/// A person's answer or dismissal, as the route passes it.
pub enum Answered {
    Reply(AnswerInput),
    Dismiss,
}

/// A refusal of the machine in the domain's words.
pub fn refusal(r: Refusal) -> OqError {
    match r {
        Refusal::Claimed => OqError::conflict(ErrorCode::QuestionSubmissionClaimed, r.to_string()),
        Refusal::IdentityConflict => {
            OqError::conflict(ErrorCode::QuestionIdentityConflict, r.to_string())
        }
        Refusal::Settled => OqError::conflict(ErrorCode::QuestionAlreadySettled, r.to_string()),
        Refusal::NotBoolean => OqError::invalid(ErrorCode::InvalidSetting, r.to_string()),
        Refusal::Unreachable => OqError::upstream(ErrorCode::UpstreamUnreachable, r.to_string()),
    }
}

impl Upstream {
    // ---- the snapshot and the setting ----------------------------------------------

    /// The snapshot as `GET /api/question-auto-delegate` shows it, with the clock a client
    /// needs: `nowMs` on the machine's clock, and per counting request `deadlineUnixMs`.
    pub fn snapshot(&self) -> UpstreamSnapshot {
        let inner = self.lock();
        let mut snap = inner.delegate.snapshot();
        snap.name = self.cfg.name.clone();
        snap.project = self.cfg.project.clone();
        snap.connected = inner.health.connected;
        snap.since_unix_ms = inner.health.since_unix_ms;
        snap.driven_elsewhere = inner.elsewhere;
        snap.listed_directories = inner
            .conn
            .as_ref()
            .map(|c| c.coverage.iter().cloned().collect())
            .unwrap_or_default();
        drop(inner);
        snap.now_ms = Some(self.now_ms());
        for r in &mut snap.requests {
            r.deadline_unix_ms = r.deadline.map(|d| self.unix_of(d));
        }
        snap
    }

    /// One request of the snapshot.
    pub fn request_snapshot(&self, request_id: &str) -> Option<RequestSnapshot> {
        self.snapshot()
            .requests
            .into_iter()
            .find(|r| r.request_id == request_id)
    }

    /// Loads the persisted toggle at the machine's current generation. An unreadable
    /// file is said in the log: the feature stays off (`unavailable`) until fixed.
    pub async fn load_settings(self: &Arc<Self>) {
        let generation = self.lock().delegate.settings_generation();
        let (path, default) = (self.settings_path.clone(), self.cfg.auto_delegate);
        let value = tokio::task::spawn_blocking(move || settings::read(&path, default))
            .await
            .ok()
            .flatten();
        if value.is_none() {
            tracing::warn!(
                upstream = %self.cfg.name,
                file = %self.settings_path.display(),
                "the auto-delegate settings file cannot be read or holds no boolean; \
                 auto-delegate is off (unavailable) until it is fixed or the setting is saved again"
            );
        }
        let _ = self.feed(Input::SettingsLoaded { generation, value }).await;
    }

    /// `PUT …/settings {enabled}` by `actor`, one of the upstream's admins: a real boolean
    /// is persisted, noted with its actor, then applied; anything else changes nothing.
    pub async fn set_enabled(self: &Arc<Self>, actor: &Actor, value: Value) -> Result<(), OqError> {
        self.check_driving()?;
        if !matches!(actor, Actor::Person { id } if self.is_admin(id)) {
            return Err(OqError::forbidden(
                ErrorCode::NotAnAdmin,
                format!(
                    "only the admins of OpenCode upstream {} change its settings ({})",
                    self.cfg.name,
                    self.cfg.admins.join(", ")
                ),
            ));
        }
        let fx = {
            let mut inner = self.lock();
            let now = self.now_ms();
            inner
                .delegate
                .handle(now, Input::RequestEnabled(value))
                .map_err(refusal)?
        };
        for effect in fx {
            if let Effect::PersistSetting(enabled) = effect {
                self.persist(actor, enabled).await?;
            }
        }
        Ok(())
    }

    async fn persist(self: &Arc<Self>, actor: &Actor, enabled: bool) -> Result<(), OqError> {
        let path = self.settings_path.clone();
        let before = self.lock().delegate.settings();
        let written = tokio::task::spawn_blocking(move || settings::write(&path, enabled))
            .await
            .map_err(|e| OqError::Internal(format!("settings task: {e}")))?;
        written.map_err(|e| OqError::Internal(format!("cannot save the setting: {e}")))?;
        let noted = self
            .note(
                actor.clone(),
                Event::BridgeSettingsChanged {
                    upstream: self.cfg.name.clone(),
                    enabled,
                    by: actor.id().to_string(),
                },
            )
            .await;
        if let Err(e) = noted {
            // Unrecorded, so undone: the file goes back to what it said.
            if let crate::bridge::delegate::SettingsState::Ready { enabled: old } = before {
                let path = self.settings_path.clone();
                let _ = tokio::task::spawn_blocking(move || settings::write(&path, old)).await;
            }
            return Err(e);
        }
        tracing::info!(upstream = %self.cfg.name, enabled, by = %actor.id(), "auto-delegate setting changed");
        let _ = self.feed(Input::ApplyEnabled(Value::Bool(enabled))).await;
        Ok(())
    }

    // ---- commands on a question ---------------------------------------------------------

    /// Makes sure the machine knows the request behind `question` (a question the engine
    /// holds open but the machine never saw goes in as restored).
    fn ensure_known(self: &Arc<Self>, inner: &mut Inner, question: &Question) {
        let Some(request) = Request::of_question(question) else {
            return;
        };
        if inner.delegate.request(&request.id).is_some() {
            return;
        }
        let directory = question
            .upstream
            .as_ref()
            .map(|u| u.directory.clone())
            .unwrap_or_default();
        let _ = self.feed_locked(
            inner,
            Input::Restore {
                request,
                directory,
                restored: Default::default(),
            },
        );
    }

    fn hints(question: &Question) -> Hints {
        let up = question.upstream.as_ref();
        Hints {
            session_id: up.map(|u| u.session_id.clone()),
            directory: up.map(|u| u.directory.clone()),
        }
    }

    /// `POST …/pause` by `actor` (the author): the timer stops and the pause is noted.
    pub async fn pause(
        self: &Arc<Self>,
        actor: &Actor,
        question: &Question,
        reason: PauseReason,
    ) -> Result<(), OqError> {
        check_author_and_open(question, actor)?;
        self.check_driving()?;
        {
            let mut inner = self.lock();
            self.ensure_known(&mut inner, question);
            self.feed_locked(
                &mut inner,
                Input::Pause {
                    request_id: question.question_id.clone(),
                    reason,
                    by: Some(actor.id().to_string()),
                    hints: Self::hints(question),
                },
            )
            .map_err(refusal)?;
        }
        self.flush_writes().await;
        self.note(
            actor.clone(),
            Event::QuestionPaused {
                question_id: question.question_id.clone(),
                reason,
                by: actor.id().to_string(),
            },
        )
        .await?;
        tracing::info!(upstream = %self.cfg.name, request = %question.question_id, by = %actor.id(), reason = reason.as_str(), "paused");
        Ok(())
    }

    /// `POST …/resume` by `actor` (the author): a fresh window, noted.
    pub async fn resume(
        self: &Arc<Self>,
        actor: &Actor,
        question: &Question,
    ) -> Result<(), OqError> {
        check_author_and_open(question, actor)?;
        self.check_driving()?;
        {
            let mut inner = self.lock();
            self.ensure_known(&mut inner, question);
            self.feed_locked(
                &mut inner,
                Input::Resume {
                    request_id: question.question_id.clone(),
                    hints: Self::hints(question),
                },
            )
            .map_err(refusal)?;
        }
        self.flush_writes().await;
        self.note(
            actor.clone(),
            Event::QuestionResumed {
                question_id: question.question_id.clone(),
                by: actor.id().to_string(),
            },
        )
        .await?;
        tracing::info!(upstream = %self.cfg.name, request = %question.question_id, by = %actor.id(), "resumed");
        Ok(())
    }

    /// `POST …/delegate` by `actor` (the author): one explicit continuation, posted in
    /// their name (the submission note says who). Returns once the claim is made.
    pub async fn delegate(
        self: &Arc<Self>,
        actor: &Actor,
        question: &Question,
    ) -> Result<(), OqError> {
        check_author_and_open(question, actor)?;
        self.check_driving()?;
        {
            let mut inner = self.lock();
            self.ensure_known(&mut inner, question);
            let now = self.now_ms();
            let fx = inner
                .delegate
                .handle(
                    now,
                    Input::Delegate {
                        request_id: question.question_id.clone(),
                        hints: Self::hints(question),
                    },
                )
                .map_err(refusal)?;
            for e in &fx {
                if let Effect::PostReply { claim, answers, .. } = e {
                    inner.submissions.insert(
                        claim.id,
                        Submission {
                            actor: actor.clone(),
                            post: Post::Reply {
                                answers: answers.clone(),
                            },
                            key: None,
                        },
                    );
                }
            }
            if !fx.iter().any(|e| matches!(e, Effect::PostReply { .. })) {
                self.run_effects(&mut inner, fx);
                return Err(OqError::conflict(
                    ErrorCode::QuestionNotReady,
                    format!(
                        "question {} cannot be delegated yet: its directory or parts are still being \
                         looked up upstream; try again in a moment",
                        question.question_id
                    ),
                ));
            }
            self.run_effects(&mut inner, fx);
        }
        self.flush_writes().await;
        tracing::info!(upstream = %self.cfg.name, request = %question.question_id, by = %actor.id(), "delegated");
        Ok(())
    }

    /// A person answers (`Reply`) or dismisses an imported question: checked like any
    /// answer, claimed (a loser gets `question_submission_claimed`), noted, POSTed
    /// upstream, and recorded as theirs once upstream took it — by the POST's own 2xx,
    /// or later by upstream's word when the POST's outcome was unclear.
    pub async fn manual(
        self: &Arc<Self>,
        actor: Actor,
        question: Question,
        act: Answered,
        key: Option<String>,
    ) -> Result<Question, OqError> {
        let project = self.cfg.project.clone();
        let id = question.question_id.clone();
        if let Answered::Reply(input) = &act {
            // A retry with the same key gets the first result, without a second POST;
            // the key with another body or person is refused (see `is_replay`).
            if crate::domain::answering::is_replay(&question, &actor, input, key.as_deref())? {
                let (actor, input, project, id) = (actor.clone(), input.clone(), project, id);
                return self
                    .on_engine(true, move |e| {
                        e.answer_once(&actor, Some(&project), &id, &input, key.as_deref())
                    })
                    .await;
            }
        }
        // The engine's rules first: shape and options (422), author (403), open (409).
        let post = match &act {
            Answered::Reply(input) => {
                let decided = decide_answer(&question, &actor, input)?;
                Post::Reply {
                    answers: if decided.choices.is_empty() {
                        vec![vec![decided.resposta]]
                    } else {
                        decided.choices
                    },
                }
            }
            Answered::Dismiss => {
                check_author_and_open(&question, &actor)?;
                Post::Reject
            }
        };
        self.check_driving()?;
        let rx = {
            let mut inner = self.lock();
            self.ensure_known(&mut inner, &question);
            let input = match &post {
                Post::Reply { answers } => Input::ManualReply {
                    request_id: id.clone(),
                    answers: answers.clone(),
                    hints: Self::hints(&question),
                },
                Post::Reject => Input::ManualReject {
                    request_id: id.clone(),
                    hints: Self::hints(&question),
                },
            };
            let now = self.now_ms();
            let fx = inner.delegate.handle(now, input).map_err(refusal)?;
            let (tx, rx) = oneshot::channel();
            for e in &fx {
                if let Effect::PostReply { claim, .. } | Effect::PostReject { claim, .. } = e {
                    inner.waiters.insert(claim.id, tx);
                    inner.submissions.insert(
                        claim.id,
                        Submission {
                            actor: actor.clone(),
                            post: post.clone(),
                            key: key.clone(),
                        },
                    );
                    break;
                }
            }
            self.run_effects(&mut inner, fx);
            rx
        };
        self.flush_writes().await;
        let outcome = rx.await.unwrap_or(PostOutcome::Uncertain);
        let what = match post {
            Post::Reply { .. } => "answer",
            Post::Reject => "dismissal",
        };
        match outcome {
            PostOutcome::Applied => {
                let (p, i) = (project.clone(), id.clone());
                let q = self
                    .on_engine(false, move |e| e.question(Some(&p), &i))
                    .await?;
                let mine = q
                    .answer
                    .as_ref()
                    .map(|a| a.respondida_por == actor.id())
                    .or_else(|| q.closure.as_ref().map(|c| c.by == actor.id()))
                    .unwrap_or(false);
                if mine {
                    Ok(q)
                } else {
                    Err(OqError::Internal(format!(
                        "OpenCode took your {what} to {id}, but oq could not record it; see the server log"
                    )))
                }
            }
            PostOutcome::SettledElsewhere => Err(OqError::conflict(
                ErrorCode::QuestionClosed,
                format!(
                    "question {id} was already settled upstream (OpenCode answered 404); nothing was recorded"
                ),
            )),
            PostOutcome::Refused { status } => Err(OqError::upstream(
                ErrorCode::UpstreamRefused,
                format!(
                    "OpenCode refused the {what} with status {status}; nothing recorded; the question \
                     is paused for you to retry"
                ),
            )),
            PostOutcome::NotSent => Err(OqError::upstream(
                ErrorCode::UpstreamUnreachable,
                format!(
                    "OpenCode at {} could not be reached; nothing was sent, nothing recorded; the \
                     question is paused for you to retry",
                    self.cfg.url
                ),
            )),
            PostOutcome::Uncertain => Err(OqError::upstream(
                ErrorCode::UpstreamUncertain,
                format!(
                    "OpenCode did not say whether it took your {what}; it is not sent again. When \
                     OpenCode shows it took it, it is recorded as yours"
                ),
            )),
        }
    }
}
