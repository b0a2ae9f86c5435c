//! A remote source that keeps working when it cannot be reached (`--source http://…`).
//!
//! - Reads (`list`, `question`) fall back to the [`Mirror`] of the last successful list,
//!   and the mirror remembers since when the source has been offline.
//! - Every answer is written ahead to the durable [`Outbox`] with a fresh idempotency key
//!   before it is sent. Delivered → settled; refused at once → the entry is discarded
//!   and the refusal returned (the person sees it now); unreachable → the entry stays
//!   pending and the answer returns [`OqError::Queued`] (exit 12): a distinct outcome the
//!   doors and the TUI show as "queued", never a false success. A server that answered
//!   about its upstream is reachable: `upstream_uncertain` keeps the entry `uncertain`
//!   (the text is kept; its fate is asked again on delivery) and returns the error, the
//!   other `upstream_*` refusals are shown like any refusal. A kill at any point leaves
//!   the answer delivered or pending, and a pending one is sent again under its own key,
//!   so it lands exactly once.
//! - What every delivery of this process settled is kept ([`ResilientSource::deliveries`]),
//!   so `oq outbox --deliver` reports the entries an attach settled before it asked.
//! - Reconnecting: after a failure, calls fail fast (and read the mirror) until an
//!   exponential backoff with jitter has passed, so a TUI polling every second does not
//!   hammer a dead host. The first success after being offline (or the first in this
//!   process) is an attach: the outbox is flushed for this source, oldest first.
//!
//! The local source never goes offline and is never wrapped.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::time::Instant;

use super::mirror::Mirror;
use super::outbox::{self, Delivery, Outbox};
use super::{Identity, Source};
use crate::domain::readiness::ReadinessGate;
use crate::domain::{AnswerInput, DeclareInput, ErrorCode, OqError, Role, SessionKind};
use crate::engine::sqlite::now_ms;
use crate::engine::{DecisionQuery, ListQuery, Sort, VerdictInput};
use crate::wire::{
    AutoCommand, AutoDelegate, DevContext, QuestionItem, QuestionList, Readiness, SessionItem,
    VerdictReply, WaitingItem,
};

#[derive(Debug, Default)]
struct Link {
    /// Failures in a row; 0 while attached.
    failures: u32,
    /// No call goes out before this (the backoff); `None` when attached.
    retry_at: Option<Instant>,
    /// A success has been seen since the last failure (and the outbox flushed then).
    attached: bool,
    /// What the last failed call said, repeated by the calls the backoff holds back: a
    /// gateway's 502 stays named as such between two retries (the TUI shows it).
    cause: Option<String>,
}

#[derive(Clone)]
pub struct ResilientSource<S> {
    inner: S,
    name: String,
    outbox: Outbox,
    mirror: Mirror,
    link: Arc<Mutex<Link>>,
    flushing: Arc<tokio::sync::Mutex<()>>,
    /// Keys this process is sending right now; a flush leaves them to their sender.
    sending: Arc<Mutex<HashSet<String>>>,
    /// What every flush of this process did, entry by entry.
    settled: Arc<Mutex<Delivery>>,
}

/// The source did not answer at all (as opposed to refusing): only then do we go offline.
pub fn is_unreachable(e: &OqError) -> bool {
    matches!(e, OqError::Source { code, .. } if *code != "unauthorized")
}

impl<S: Source> ResilientSource<S> {
    /// Wraps `inner`, with the outbox and the mirror in `data_dir`.
    pub fn new(inner: S, data_dir: &Path) -> Result<Self, OqError> {
        let name = inner.describe();
        Ok(ResilientSource {
            outbox: Outbox::open(data_dir)?,
            mirror: Mirror::new(data_dir),
            inner,
            name,
            link: Default::default(),
            flushing: Default::default(),
            sending: Default::default(),
            settled: Default::default(),
        })
    }

    pub fn outbox(&self) -> &Outbox {
        &self.outbox
    }

    /// Since when (Unix ms) the source has been unreachable, across processes; `None`
    /// when the last call reached it.
    pub fn offline_since(&self) -> Option<i64> {
        self.mirror.offline_since(&self.name)
    }

    fn link(&self) -> std::sync::MutexGuard<'_, Link> {
        self.link.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn offline_error(&self) -> OqError {
        let message = match &self.link().cause {
            Some(cause) => format!("{cause} (retrying with backoff)"),
            None => format!("cannot reach {} (retrying with backoff)", self.name),
        };
        OqError::Source {
            code: ErrorCode::Unreachable,
            message,
        }
    }

    /// Runs one call unless we are inside the backoff; records the link's fate.
    async fn guarded<T>(
        &self,
        call: impl std::future::Future<Output = Result<T, OqError>>,
    ) -> Result<T, OqError> {
        let waiting = self.link().retry_at.is_some_and(|t| Instant::now() < t);
        if waiting {
            return Err(self.offline_error());
        }
        let result = call.await;
        match &result {
            Err(e) if is_unreachable(e) => self.went_offline(Some(e.to_string())),
            _ => self.reached().await,
        }
        result
    }

    fn went_offline(&self, cause: Option<String>) {
        {
            let mut link = self.link();
            link.cause = cause;
            link.failures = link.failures.saturating_add(1);
            link.retry_at = Some(Instant::now() + super::backoff::backoff(link.failures));
            link.attached = false;
        }
        self.mirror.mark_offline(&self.name, now_ms());
    }

    /// A reply came: on (re)attach, clear the offline mark and flush the outbox.
    async fn reached(&self) {
        let fresh = {
            let mut link = self.link();
            let fresh = !link.attached;
            *link = Link {
                attached: true,
                ..Link::default()
            };
            fresh
        };
        if fresh {
            self.mirror.mark_online(&self.name);
            let _ = self.flush().await;
        }
    }

    fn sending(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.sending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Delivers this source's pending answers now, oldest first (one flush at a time per
    /// process). Having reached the source this way counts as attached.
    pub async fn flush(&self) -> Result<Delivery, OqError> {
        let _one = self.flushing.lock().await;
        let report = self
            .outbox
            .deliver_all_except(&self.inner, &self.name, |k| self.sending().contains(k))
            .await?;
        let contacted = report.contacted();
        self.settled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .absorb(report.clone());
        if report.stopped.is_some() {
            self.went_offline(report.stopped.clone());
        } else if contacted {
            *self.link() = Link {
                attached: true,
                ..Link::default()
            };
            self.mirror.mark_online(&self.name);
        }
        Ok(report)
    }
}

impl<S: Source> ResilientSource<S> {
    /// Everything the deliveries of this process did so far (attaches included).
    pub fn deliveries(&self) -> Delivery {
        self.settled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    async fn send_ahead(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
        key: &str,
    ) -> Result<QuestionItem, OqError> {
        self.outbox
            .enqueue(key, &self.name, project, question_id, input)?;
        match self
            .guarded(self.inner.answer_once(project, question_id, input, key))
            .await
        {
            Ok(item) => {
                self.outbox.mark_delivered(key)?;
                Ok(item)
            }
            Err(e) if outbox::retry_later(&e) => Err(OqError::Queued {
                question_id: question_id.into(),
                source_name: self.name.clone(),
                key: key.into(),
            }),
            Err(
                e @ OqError::Upstream {
                    code: ErrorCode::UpstreamUncertain,
                    ..
                },
            ) => {
                self.outbox.mark_uncertain(key, &e.to_string())?;
                Err(e)
            }
            Err(e) => {
                self.outbox.discard(key)?;
                Err(e)
            }
        }
    }
}

impl<S: Source> Source for ResilientSource<S> {
    fn describe(&self) -> String {
        self.name.clone()
    }

    async fn identity(&self) -> Result<Identity, OqError> {
        self.guarded(self.inner.identity()).await
    }

    async fn list(
        &self,
        project: Option<&str>,
        query: &ListQuery,
    ) -> Result<QuestionList, OqError> {
        let (status, limit) = (query.status, query.limit);
        // The mirror keeps the plain first page; a search or another order is answered
        // over it while offline (the server answers them over everything when it is back).
        let plain = query.search.is_none() && query.sort == Sort::Oldest;
        match self.guarded(self.inner.list(project, query)).await {
            Ok(list) => {
                if query.cursor.is_none() && plain {
                    let _ = self
                        .mirror
                        .save(&self.name, project, status, limit, &list, now_ms());
                }
                Ok(list)
            }
            Err(e) if is_unreachable(&e) && query.cursor.is_none() => {
                match self.mirror.load(&self.name, project, status, limit) {
                    Some(saved) if plain => Ok(saved.list),
                    Some(saved) => super::filter::apply(saved.list.items, query),
                    None => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }

    async fn question(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> Result<QuestionItem, OqError> {
        match self
            .guarded(self.inner.question(project, question_id))
            .await
        {
            Err(e) if is_unreachable(&e) => self
                .mirror
                .question(&self.name, project, question_id)
                .ok_or(e),
            other => other,
        }
    }

    async fn declare(
        &self,
        project: &str,
        agent: Option<Role>,
        input: &DeclareInput,
    ) -> Result<QuestionItem, OqError> {
        self.guarded(self.inner.declare(project, agent, input))
            .await
    }

    async fn answer(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
    ) -> Result<QuestionItem, OqError> {
        let key = outbox::new_key()?;
        self.answer_once(project, question_id, input, &key).await
    }

    /// Write ahead, then send: see the module doc for every outcome.
    async fn answer_once(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
        key: &str,
    ) -> Result<QuestionItem, OqError> {
        // Older answers first: before the first contact, flush what earlier runs left.
        let fresh = {
            let link = self.link();
            !link.attached && link.retry_at.is_none()
        };
        if fresh {
            let _ = self.flush().await;
        }
        self.sending().insert(key.to_string());
        let result = self.send_ahead(project, question_id, input, key).await;
        self.sending().remove(key);
        result
    }

    async fn dismiss(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> Result<QuestionItem, OqError> {
        self.guarded(self.inner.dismiss(project, question_id)).await
    }

    async fn snooze(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &crate::domain::snooze::SnoozeInput,
    ) -> Result<QuestionItem, OqError> {
        self.guarded(self.inner.snooze(project, question_id, input))
            .await
    }

    async fn unsnooze(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> Result<QuestionItem, OqError> {
        self.guarded(self.inner.unsnooze(project, question_id))
            .await
    }

    async fn readiness(
        &self,
        project: &str,
        record: Option<ReadinessGate>,
    ) -> Result<Readiness, OqError> {
        self.guarded(self.inner.readiness(project, record)).await
    }

    async fn verdict(
        &self,
        project: &str,
        agent: Option<Role>,
        task_id: &str,
        input: &VerdictInput,
    ) -> Result<VerdictReply, OqError> {
        self.guarded(self.inner.verdict(project, agent, task_id, input))
            .await
    }

    /// Not mirrored: the history is the server's to search, so offline it is refused.
    async fn decisions(
        &self,
        project: Option<&str>,
        query: &DecisionQuery,
    ) -> Result<QuestionList, OqError> {
        self.guarded(self.inner.decisions(project, query)).await
    }

    async fn waiting(&self, project: Option<&str>) -> Result<Vec<WaitingItem>, OqError> {
        self.guarded(self.inner.waiting(project)).await
    }

    async fn dev_context(&self, project: &str, task_id: &str) -> Result<DevContext, OqError> {
        self.guarded(self.inner.dev_context(project, task_id)).await
    }

    async fn start_session(
        &self,
        project: &str,
        kind: SessionKind,
        session_id: Option<&str>,
    ) -> Result<SessionItem, OqError> {
        self.guarded(self.inner.start_session(project, kind, session_id))
            .await
    }

    async fn default_session(&self, project: &str) -> Result<Option<String>, OqError> {
        self.guarded(self.inner.default_session(project)).await
    }

    async fn revision(&self, project: Option<&str>) -> Result<i64, OqError> {
        self.guarded(self.inner.revision(project)).await
    }

    /// Offline (unreachable now, or inside the backoff) there is no countdown to show:
    /// `None`, like a source without a bridge. Nothing of it is mirrored: a stale
    /// countdown would be a lie.
    async fn auto_delegate(&self) -> Result<Option<AutoDelegate>, OqError> {
        match self.guarded(self.inner.auto_delegate()).await {
            Err(e) if is_unreachable(&e) => Ok(None),
            other => other,
        }
    }

    /// Commands are never queued: a pause or a delegate is worth something only now.
    async fn pause_auto(
        &self,
        question_id: &str,
        reason: crate::domain::delegation::PauseReason,
    ) -> Result<AutoCommand, OqError> {
        self.guarded(self.inner.pause_auto(question_id, reason))
            .await
    }

    async fn resume_auto(&self, question_id: &str) -> Result<AutoCommand, OqError> {
        self.guarded(self.inner.resume_auto(question_id)).await
    }

    async fn delegate_now(&self, question_id: &str) -> Result<AutoCommand, OqError> {
        self.guarded(self.inner.delegate_now(question_id)).await
    }
}
