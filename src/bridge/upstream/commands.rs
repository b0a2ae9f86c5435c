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

use super::forward::Command;
use super::*;
use crate::bridge::delegate::{Effect, Hints, Input, PauseReason, Refusal};
use crate::domain::ErrorCode;
use crate::domain::answering::check_author_and_open;
use crate::domain::{Event, Question};
use crate::opencode::Request;
use crate::wire::auto_delegate::{RequestSnapshot, UpstreamSnapshot};

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

    /// Loads the persisted toggle at the machine's current generation: on SQLite from
    /// the settings file, on PostgreSQL from the log (the newest `bridge.settings_changed`,
    /// whichever server wrote it — a server's own file would disagree after a failover).
    /// An unreadable setting is said in the log: the feature stays off (`unavailable`)
    /// until fixed.
    pub async fn load_settings(self: &Arc<Self>) {
        let generation = self.lock().delegate.settings_generation();
        let value = if self.lease.leases.is_some() {
            let (project, name) = (self.cfg.project.clone(), self.cfg.name.clone());
            let logged = self
                .on_engine(false, move |e| match e.store() {
                    crate::engine::AnyStore::Postgres(pg) => pg.bridge_setting(&project, &name),
                    crate::engine::AnyStore::Sqlite(_) => Ok(None),
                })
                .await;
            match logged {
                Ok(v) => Some(v.unwrap_or(self.cfg.auto_delegate)),
                Err(e) => {
                    tracing::warn!(upstream = %self.cfg.name, error = %e, "cannot read the auto-delegate setting from the log");
                    None
                }
            }
        } else {
            let (path, default) = (self.settings_path.clone(), self.cfg.auto_delegate);
            tokio::task::spawn_blocking(move || settings::read(&path, default))
                .await
                .ok()
                .flatten()
        };
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
        self.check_admin(actor)?;
        if self.forwards() {
            let command = Command::SetEnabled { enabled: value };
            return self.forward(actor, command).await.map(|_| ());
        }
        self.set_enabled_here(actor, value).await
    }

    fn check_admin(&self, actor: &Actor) -> Result<(), OqError> {
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
        Ok(())
    }

    /// [`Self::set_enabled`] on the server that drives the upstream.
    pub(crate) async fn set_enabled_here(
        self: &Arc<Self>,
        actor: &Actor,
        value: Value,
    ) -> Result<(), OqError> {
        self.check_driving()?;
        self.check_admin(actor)?;
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

    /// Saves the toggle, then applies it. On SQLite the settings file holds it (the note
    /// says who); on PostgreSQL the note itself is the setting every server reads.
    async fn persist(self: &Arc<Self>, actor: &Actor, enabled: bool) -> Result<(), OqError> {
        let path = self.settings_path.clone();
        let before = self.lock().delegate.settings();
        let in_file = self.lease.leases.is_none();
        if in_file {
            let written = tokio::task::spawn_blocking(move || settings::write(&path, enabled))
                .await
                .map_err(|e| OqError::Internal(format!("settings task: {e}")))?;
            written.map_err(|e| OqError::Internal(format!("cannot save the setting: {e}")))?;
        }
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
            if let (true, crate::bridge::delegate::SettingsState::Ready { enabled: old }) =
                (in_file, before)
            {
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
    pub(super) fn ensure_known(self: &Arc<Self>, inner: &mut Inner, question: &Question) {
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

    pub(super) fn hints(question: &Question) -> Hints {
        let up = question.upstream.as_ref();
        Hints {
            session_id: up.map(|u| u.session_id.clone()),
            directory: up.map(|u| u.directory.clone()),
        }
    }

    /// `POST …/pause` by `actor` (the author): the timer stops and the pause is noted.
    /// Returns the request as the machine that drives it shows it after.
    pub async fn pause(
        self: &Arc<Self>,
        actor: &Actor,
        question: &Question,
        reason: PauseReason,
    ) -> Result<Option<RequestSnapshot>, OqError> {
        check_author_and_open(question, actor)?;
        if self.forwards() {
            let question_id = question.question_id.clone();
            return self
                .forward(
                    actor,
                    Command::Pause {
                        question_id,
                        reason,
                    },
                )
                .await;
        }
        self.pause_here(actor, question, reason).await
    }

    pub(crate) async fn pause_here(
        self: &Arc<Self>,
        actor: &Actor,
        question: &Question,
        reason: PauseReason,
    ) -> Result<Option<RequestSnapshot>, OqError> {
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
        Ok(self.request_snapshot(&question.question_id))
    }

    /// `POST …/resume` by `actor` (the author): a fresh window, noted.
    pub async fn resume(
        self: &Arc<Self>,
        actor: &Actor,
        question: &Question,
    ) -> Result<Option<RequestSnapshot>, OqError> {
        check_author_and_open(question, actor)?;
        if self.forwards() {
            let question_id = question.question_id.clone();
            return self.forward(actor, Command::Resume { question_id }).await;
        }
        self.resume_here(actor, question).await
    }

    pub(crate) async fn resume_here(
        self: &Arc<Self>,
        actor: &Actor,
        question: &Question,
    ) -> Result<Option<RequestSnapshot>, OqError> {
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
        Ok(self.request_snapshot(&question.question_id))
    }

    /// `POST …/delegate` by `actor` (the author): one explicit continuation, posted in
    /// their name (the submission note says who). Returns once the claim is made.
    pub async fn delegate(
        self: &Arc<Self>,
        actor: &Actor,
        question: &Question,
    ) -> Result<Option<RequestSnapshot>, OqError> {
        check_author_and_open(question, actor)?;
        if self.forwards() {
            let question_id = question.question_id.clone();
            return self.forward(actor, Command::Delegate { question_id }).await;
        }
        self.delegate_here(actor, question).await
    }

    pub(crate) async fn delegate_here(
        self: &Arc<Self>,
        actor: &Actor,
        question: &Question,
    ) -> Result<Option<RequestSnapshot>, OqError> {
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
        Ok(self.request_snapshot(&question.question_id))
    }
}
