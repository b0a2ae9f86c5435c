//! A person's answer or dismissal of an imported question: checked like any answer,
//! claimed, noted, POSTed upstream by the server that drives it (forwarded there when
//! that is another server), and recorded as theirs once upstream took it.

use std::sync::Arc;

use tokio::sync::oneshot;

use super::forward::Command;
use super::*;
use crate::bridge::delegate::{Effect, Input};
use crate::domain::ErrorCode;
use crate::domain::Question;
use crate::domain::answering::{check_author_and_open, decide_answer};

/// A person's answer or dismissal, as the route passes it.
pub enum Answered {
    Reply(crate::domain::AnswerInput),
    Dismiss,
}

impl Upstream {
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
        if !self.forwards() {
            return self.manual_here(actor, question, act, key).await;
        }
        // Another server drives the upstream: the engine's rules here (a refusal needs no
        // upstream), the claim and the POST there.
        if let Some(q) = self
            .replayed(&actor, &question, &act, key.as_deref())
            .await?
        {
            return Ok(q);
        }
        Self::decided(&question, &actor, &act)?;
        let question_id = question.question_id.clone();
        let command = match act {
            Answered::Reply(input) => Command::Answer {
                question_id: question_id.clone(),
                input,
                key,
            },
            Answered::Dismiss => Command::Dismiss {
                question_id: question_id.clone(),
            },
        };
        self.forward(&actor, command).await?;
        let project = self.cfg.project.clone();
        self.on_engine(false, move |e| e.question(Some(&project), &question_id))
            .await
    }

    /// A retry with the same key gets the first result, without a second POST; the key
    /// with another body or person is refused (see `is_replay`).
    async fn replayed(
        &self,
        actor: &Actor,
        question: &Question,
        act: &Answered,
        key: Option<&str>,
    ) -> Result<Option<Question>, OqError> {
        let Answered::Reply(input) = act else {
            return Ok(None);
        };
        if !crate::domain::answering::is_replay(question, actor, input, key)? {
            return Ok(None);
        }
        let (actor, input, project) = (actor.clone(), input.clone(), self.cfg.project.clone());
        let (id, key) = (question.question_id.clone(), key.map(str::to_string));
        self.on_engine(true, move |e| {
            e.answer_once(&actor, Some(&project), &id, &input, key.as_deref())
        })
        .await
        .map(Some)
    }

    /// The engine's rules first: shape and options (422), author (403), open (409); what
    /// is to be POSTed.
    fn decided(question: &Question, actor: &Actor, act: &Answered) -> Result<Post, OqError> {
        Ok(match act {
            Answered::Reply(input) => {
                let decided = decide_answer(question, actor, input)?;
                Post::Reply {
                    answers: if decided.choices.is_empty() {
                        vec![vec![decided.resposta]]
                    } else {
                        decided.choices
                    },
                }
            }
            Answered::Dismiss => {
                check_author_and_open(question, actor)?;
                Post::Reject
            }
        })
    }

    /// [`Self::manual`] on the server that drives the upstream.
    pub(crate) async fn manual_here(
        self: &Arc<Self>,
        actor: Actor,
        question: Question,
        act: Answered,
        key: Option<String>,
    ) -> Result<Question, OqError> {
        let project = self.cfg.project.clone();
        let id = question.question_id.clone();
        if let Some(q) = self
            .replayed(&actor, &question, &act, key.as_deref())
            .await?
        {
            return Ok(q);
        }
        let post = Self::decided(&question, &actor, &act)?;
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
