//! What the routes ask of an upstream: its setting, commands, and a person's answer or dismissal.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::oneshot;

use super::*;
use crate::bridge::delegate::{Effect, Hints, Input, UpstreamResult};
use crate::domain::ErrorCode;

impl Upstream {
    // ---- settings -------------------------------------------------------------------

    /// Loads the persisted toggle at the machine's current generation.
    pub async fn load_settings(self: &Arc<Self>) {
        let generation = self.lock().delegate.settings_generation();
        let (path, default) = (self.settings_path.clone(), self.cfg.auto_delegate);
        let value = tokio::task::spawn_blocking(move || settings::read(&path, default))
            .await
            .ok()
            .flatten();
        let _ = self.feed(Input::SettingsLoaded { generation, value });
        self.flush_closes().await;
    }

    pub(super) async fn persist_and_apply(self: &Arc<Self>, enabled: bool) -> Result<(), ApiError> {
        let path = self.settings_path.clone();
        let written = tokio::task::spawn_blocking(move || settings::write(&path, enabled)).await;
        match written {
            Ok(Ok(())) => {
                let _ = self.feed(Input::ApplyEnabled(Value::Bool(enabled)));
                self.flush_closes().await;
                Ok(())
            }
            Ok(Err(e)) => Err(OqError::Internal(format!("cannot save the setting: {e}")).into()),
            Err(e) => Err(OqError::Internal(format!("settings task: {e}")).into()),
        }
    }

    /// `PUT …/settings {enabled}`: a real boolean is persisted, then applied; anything
    /// else changes nothing (400 `invalid_setting`). A failed save applies nothing.
    pub async fn set_enabled(self: &Arc<Self>, value: Value) -> Result<(), ApiError> {
        let fx = {
            let mut inner = self.lock();
            let now = self.now_ms();
            inner
                .delegate
                .handle(now, Input::RequestEnabled(value))
                .map_err(refusal_error)?
        };
        for effect in fx {
            if let Effect::PersistSetting(enabled) = effect {
                self.persist_and_apply(enabled).await?;
            }
        }
        Ok(())
    }

    // ---- commands from routes ---------------------------------------------------------

    /// Pause or delegate (`input` built by the route).
    pub async fn command(self: &Arc<Self>, input: Input) -> Result<Vec<Effect>, ApiError> {
        let fx = self.feed(input).map_err(refusal_error)?;
        self.flush_closes().await;
        Ok(fx)
    }

    /// The snapshot as `GET /api/question-auto-delegate` shows it, with the clock a client
    /// needs: `nowMs` on the machine's clock, and per counting request `deadlineUnixMs`.
    pub fn snapshot_json(&self) -> Value {
        let inner = self.lock();
        let snap = inner.delegate.snapshot();
        let mut v = serde_json::to_value(&snap).unwrap_or(Value::Null);
        let connected = inner.conn.is_some();
        let coverage: Vec<String> = inner
            .conn
            .as_ref()
            .map(|c| c.coverage.iter().cloned().collect())
            .unwrap_or_default();
        drop(inner);
        if let Some(obj) = v.as_object_mut() {
            obj.insert("name".into(), Value::String(self.cfg.name.clone()));
            obj.insert("project".into(), Value::String(self.cfg.project.clone()));
            obj.insert("connected".into(), Value::Bool(connected));
            obj.insert("listedDirectories".into(), serde_json::json!(coverage));
            obj.insert("nowMs".into(), serde_json::json!(self.now_ms()));
            if let Some(reqs) = obj.get_mut("requests").and_then(|r| r.as_array_mut()) {
                for r in reqs {
                    if let Some(d) = r.get("deadline").and_then(|d| d.as_u64()) {
                        r["deadlineUnixMs"] = serde_json::json!(self.clock_unix_ms + d as i64);
                    }
                }
            }
        }
        v
    }

    /// A person answers (`reply = Some(input)`) or dismisses (`None`) an imported question:
    /// checked like any answer, claimed (a loser gets 409 `question_submission_claimed`),
    /// POSTed upstream, and recorded in the engine only when upstream took it.
    pub async fn manual(
        self: &Arc<Self>,
        actor: Actor,
        question: Question,
        reply: Option<AnswerInput>,
        key: Option<String>,
    ) -> Result<Question, ApiError> {
        let project = self.cfg.project.clone();
        let id = question.question_id.clone();
        if let Some(input) = &reply {
            // A retry with the same key gets the first result, without a second POST;
            // the key with another body or person is refused (see `is_replay`).
            if crate::domain::question::is_replay(&question, &actor, input, key.as_deref())? {
                let (actor, input) = (actor.clone(), input.clone());
                return self
                    .app
                    .write(move |e| {
                        e.answer_once(&actor, Some(&project), &id, &input, key.as_deref())
                    })
                    .await;
            }
        }
        // The engine's rules first: shape and options (422), author (403), open (409).
        let answers = match &reply {
            Some(input) => {
                let decided = decide_answer(&question, &actor, input)?;
                Some(if decided.choices.is_empty() {
                    vec![vec![decided.resposta]]
                } else {
                    decided.choices
                })
            }
            None => {
                crate::domain::question::check_author_and_open(&question, &actor)?;
                None
            }
        };
        let what = if reply.is_some() {
            "answer"
        } else {
            "dismissal"
        };
        let up = question.upstream.clone();
        let hints = Hints {
            session_id: up.as_ref().map(|u| u.session_id.clone()),
            directory: up.as_ref().map(|u| u.directory.clone()),
        };
        let request_id = up
            .as_ref()
            .map(|u| u.request_id.clone())
            .unwrap_or_else(|| id.clone());
        let rx = {
            let mut inner = self.lock();
            let now = self.now_ms();
            let input = match answers {
                Some(answers) => Input::ManualReply {
                    request_id: request_id.clone(),
                    answers,
                    hints,
                },
                None => Input::ManualReject {
                    request_id: request_id.clone(),
                    hints,
                },
            };
            let fx = inner.delegate.handle(now, input).map_err(refusal_error)?;
            let claim = fx.iter().find_map(|e| match e {
                Effect::PostReply { claim, .. } | Effect::PostReject { claim, .. } => Some(*claim),
                _ => None,
            });
            let (tx, rx) = oneshot::channel();
            if let Some(claim) = claim {
                inner.waiters.insert(claim.id, tx);
            }
            inner.manual.insert(request_id.clone());
            self.run_effects(&mut inner, fx);
            rx
        };
        let result = rx.await.unwrap_or_else(|_| UpstreamResult::uncertain());
        {
            // One step under one lock: between the two, an upstream event settling this
            // request would find it neither in flight nor recorded, and close it
            // `External` before the person's answer is (seen as a 409 on the answer).
            let mut inner = self.lock();
            inner.manual.remove(&request_id);
            if result.ok {
                inner.known.remove(&request_id);
            }
        }
        let out = if result.ok {
            let (actor, id) = (actor.clone(), id.clone());
            match reply {
                Some(input) => {
                    self.app
                        .write(move |e| {
                            e.answer_once(&actor, Some(&project), &id, &input, key.as_deref())
                        })
                        .await
                }
                None => {
                    self.app
                        .write(move |e| {
                            e.close_question(&actor, Some(&project), &id, ClosedReason::Rejected)
                        })
                        .await
                }
            }
        } else if result.not_sent {
            Err(upstream_error(
                502,
                ErrorCode::UpstreamUnreachable,
                format!(
                    "OpenCode at {} could not be reached; nothing was sent, nothing recorded; \
                     the question is paused for you to retry",
                    self.cfg.url
                ),
            ))
        } else if result.status == 404 {
            Err(upstream_error(
                409,
                ErrorCode::QuestionClosed,
                format!("question {id} was already settled upstream (OpenCode answered 404)"),
            ))
        } else if !result.uncertain && (400..500).contains(&result.status) {
            Err(upstream_error(
                502,
                ErrorCode::UpstreamRefused,
                format!(
                    "OpenCode refused the {} with status {}; nothing recorded; the question is \
                     paused for you to retry",
                    what, result.status
                ),
            ))
        } else {
            Err(upstream_error(
                502,
                ErrorCode::UpstreamUncertain,
                format!(
                    "OpenCode did not say whether it took it (status {}); it is not retried and \
                     the question stays blocked until OpenCode settles it",
                    result.status
                ),
            ))
        };
        // Whatever upstream said may have settled it (a 404): sync the engine.
        {
            let mut inner = self.lock();
            self.settle_in_engine(&mut inner);
        }
        self.flush_closes().await;
        out
    }
}
