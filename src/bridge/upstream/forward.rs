//! Commands that reach a server which does not drive the upstream (PostgreSQL, several
//! `oq serve` behind one address): a person's pause, resume, delegate, answer, dismissal
//! or setting is not acted on from this server's memory — it holds no machine for an
//! upstream another server drives — but left as a row for the lease holder
//! (`engine::postgres::commands`), which runs it exactly as if it had been asked there
//! (the same checks, the same notes in the log, the same refusals) and writes the
//! outcome back; the asker answers with that outcome.
//!
//! The holder follows its upstream's rows while it drives ([`Upstream::follow_commands`]),
//! woken by the notification the row's insert sends, with a slow poll as the backstop.
//! A row nobody takes within the wait (no server drives the upstream: all are starting,
//! or the holder died and its lease has not run out) is withdrawn before anyone took it
//! and the asker is told nothing was done; a failover within the wait is waited out.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use super::Upstream;
use super::manual::Answered;
use crate::bridge::delegate::PauseReason;
use crate::domain::{Actor, AnswerInput, ErrorCode, OqError, Question};
use crate::engine::postgres::commands::CommandState;
use crate::wire::auto_delegate::RequestSnapshot;

/// How often the asker looks at its row.
const ASKER_POLL: Duration = Duration::from_millis(20);
/// The holder's backstop when a notification was missed.
const HOLDER_POLL: Duration = Duration::from_secs(1);
/// Beyond the takeover bound (`lease + lease/4`), what the holder gets to run it.
const GRACE: Duration = Duration::from_secs(2);

/// A command as the row carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Command {
    Pause {
        question_id: String,
        reason: PauseReason,
    },
    Resume {
        question_id: String,
    },
    Delegate {
        question_id: String,
    },
    Answer {
        question_id: String,
        input: AnswerInput,
        key: Option<String>,
    },
    Dismiss {
        question_id: String,
    },
    SetEnabled {
        enabled: serde_json::Value,
    },
}

impl Command {
    fn question_id(&self) -> Option<&str> {
        match self {
            Command::Pause { question_id, .. }
            | Command::Resume { question_id }
            | Command::Delegate { question_id }
            | Command::Answer { question_id, .. }
            | Command::Dismiss { question_id } => Some(question_id),
            Command::SetEnabled { .. } => None,
        }
    }
}

/// What the holder writes back: the request as its machine shows it after the command,
/// or the refusal in its wire form.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Outcome {
    #[serde(default)]
    request: Option<RequestSnapshot>,
    #[serde(default)]
    refusal: Option<Refusal>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Refusal {
    status: u16,
    code: ErrorCode,
    message: String,
}

impl Upstream {
    /// Whether commands go to another server: a lease exists and another holds it.
    pub(crate) fn forwards(&self) -> bool {
        self.lease.leases.is_some() && self.lock().elsewhere
    }

    /// How long an asker waits for the holder: a takeover, then the holder's work.
    fn forward_wait(&self) -> Duration {
        let term = Duration::from_millis(self.cfg.lease_ms.max(4));
        term + term / 2 + GRACE
    }

    /// Leaves `command` by `actor` for the server that drives this upstream and returns
    /// its outcome there.
    pub(crate) async fn forward(
        &self,
        actor: &Actor,
        command: Command,
    ) -> Result<Option<RequestSnapshot>, OqError> {
        let (Some(leases), Actor::Person { id }) = (self.lease.leases.clone(), actor) else {
            return self.check_driving().map(|()| None);
        };
        let text = serde_json::to_string(&command)
            .map_err(|e| OqError::Internal(format!("command: {e}")))?;
        let (name, person) = (self.cfg.name.clone(), id.clone());
        let l = leases.clone();
        let id = blocking(move || l.request_command(&name, &person, &text)).await?;
        tracing::info!(upstream = %self.cfg.name, command = id, "left the command for the server that drives the upstream");
        let deadline = Instant::now() + self.forward_wait();
        let state = loop {
            let l = leases.clone();
            let state = blocking(move || l.command_state(id)).await?;
            match state {
                CommandState::Done(_) | CommandState::Gone => break state,
                CommandState::Pending if Instant::now() >= deadline => {
                    let l = leases.clone();
                    if blocking(move || l.withdraw_command(id)).await? {
                        return Err(OqError::upstream(
                            ErrorCode::UpstreamDrivenElsewhere,
                            format!(
                                "no oq serve took this command for OpenCode upstream {} within {} s \
                                 (none drives it right now); nothing was done — try again",
                                self.cfg.name,
                                self.forward_wait().as_secs()
                            ),
                        ));
                    }
                }
                CommandState::Taken if Instant::now() >= deadline + self.forward_wait() => {
                    break state;
                }
                CommandState::Pending | CommandState::Taken => {}
            }
            tokio::time::sleep(ASKER_POLL).await;
        };
        let l = leases.clone();
        let _ = blocking(move || l.remove_command(id)).await;
        let CommandState::Done(text) = state else {
            return Err(OqError::upstream(
                ErrorCode::UpstreamUncertain,
                format!(
                    "the oq serve that drives OpenCode upstream {} took this command but gave no \
                     outcome; look at the question before trying again",
                    self.cfg.name
                ),
            ));
        };
        let outcome: Outcome = serde_json::from_str(&text)
            .map_err(|e| OqError::Internal(format!("a command's outcome: {e}")))?;
        match outcome.refusal {
            Some(r) => Err(OqError::from_wire(r.status, r.code, &r.message)),
            None => Ok(outcome.request),
        }
    }

    /// While this server drives the upstream: runs the commands the other servers left,
    /// oldest first, until `end`.
    pub(crate) async fn follow_commands(self: Arc<Self>, mut end: watch::Receiver<bool>) {
        let Some(leases) = self.lease.leases.clone() else {
            return;
        };
        let mut changes = self.notify.subscribe();
        loop {
            if *end.borrow() {
                return;
            }
            loop {
                let (l, name, holder) = (
                    leases.clone(),
                    self.cfg.name.clone(),
                    self.lease.holder.clone(),
                );
                let taken = match blocking(move || l.take_command(&name, &holder)).await {
                    Ok(Some(t)) => t,
                    Ok(None) => break,
                    Err(e) => {
                        tracing::warn!(upstream = %self.cfg.name, error = %e, "cannot read the commands left for this upstream");
                        break;
                    }
                };
                let outcome = match serde_json::from_str::<Command>(&taken.command) {
                    Ok(command) => self.honour(Actor::person(&taken.actor), command).await,
                    Err(e) => Err(OqError::Internal(format!("an unreadable command: {e}"))),
                };
                let outcome = match outcome {
                    Ok(request) => Outcome {
                        request,
                        refusal: None,
                    },
                    Err(e) => Outcome {
                        request: None,
                        refusal: Some(Refusal {
                            status: e.http_status(),
                            code: e.code(),
                            message: e.to_string(),
                        }),
                    },
                };
                let text = serde_json::to_string(&outcome).unwrap_or_default();
                let (l, holder) = (leases.clone(), self.lease.holder.clone());
                if let Err(e) = blocking(move || l.finish_command(taken.id, &holder, &text)).await {
                    tracing::warn!(upstream = %self.cfg.name, command = taken.id, error = %e, "cannot write a command's outcome");
                }
            }
            tokio::select! {
                _ = changes.changed() => {}
                _ = tokio::time::sleep(HOLDER_POLL) => {}
                _ = end.changed() => {}
            }
        }
    }

    /// Runs a command left by another server as if it had been asked here.
    async fn honour(
        self: &Arc<Self>,
        actor: Actor,
        command: Command,
    ) -> Result<Option<RequestSnapshot>, OqError> {
        let question = match command.question_id() {
            Some(id) => {
                let (p, id) = (self.cfg.project.clone(), id.to_string());
                Some(
                    self.on_engine(false, move |e| e.question(Some(&p), &id))
                        .await?,
                )
            }
            None => None,
        };
        let q = |q: Option<Question>| q.ok_or_else(|| OqError::Internal("no question".into()));
        tracing::info!(upstream = %self.cfg.name, by = %actor.id(), ?command, "running a command another server took");
        match command {
            Command::Pause { reason, .. } => self.pause_here(&actor, &q(question)?, reason).await,
            Command::Resume { .. } => self.resume_here(&actor, &q(question)?).await,
            Command::Delegate { .. } => self.delegate_here(&actor, &q(question)?).await,
            Command::Answer { input, key, .. } => self
                .manual_here(actor, q(question)?, Answered::Reply(input), key)
                .await
                .map(|_| None),
            Command::Dismiss { .. } => self
                .manual_here(actor, q(question)?, Answered::Dismiss, None)
                .await
                .map(|_| None),
            Command::SetEnabled { enabled } => {
                self.set_enabled_here(&actor, enabled).await.map(|()| None)
            }
        }
    }
}

/// Database work off the runtime's workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, OqError> + Send + 'static,
) -> Result<T, OqError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| OqError::Internal(format!("store task: {e}")))?
}
