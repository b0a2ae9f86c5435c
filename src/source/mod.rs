//! Where the doors and the TUI work: one interface, several sources.
//!
//! - [`local::LocalSource`]: the embedded engine in this process (the default).
//! - [`http::HttpSource`]: an `oq serve` server, spoken to with a bearer token.
//! - [`opencode::OpencodeSource`]: a real OpenCode server's pending questions
//!   (`opencode+http://HOST:PORT` with `--directory`).
//! - [`AnySource`]: whichever of them `--source` or a profile chose.
//!
//! Every operation returns the wire shapes of [`crate::wire`], so a door prints the same
//! thing whatever the source, and a refusal is the same [`OqError`] (a remote one is
//! rebuilt from its `{code, message}`), so exit codes match too.

mod any;
mod backoff;
pub mod filter;
pub mod http;
mod http_call;
mod http_claude;
mod http_feed;
mod http_query;
pub mod local;
pub mod mirror;
pub mod opencode;
pub mod outbox;
pub mod profile;
pub mod resilient;

use std::future::Future;
use std::time::Duration;

use crate::domain::readiness::ReadinessGate;
use crate::domain::{AnswerInput, DeclareInput, ErrorCode, OqError, Role, SessionKind};
use crate::engine::{DecisionQuery, ListQuery, OpenCounts, StatusFilter, VerdictInput};
use crate::wire::{
    AutoCommand, AutoDelegate, DevContext, QuestionItem, QuestionList, Readiness, SessionItem,
    VerdictReply, WaitingItem,
};

pub use any::AnySource;
pub use http::HttpSource;
pub use http_call::gateway_status;
pub use local::LocalSource;
pub use opencode::OpencodeSource;
pub use resilient::ResilientSource;

/// Who the source acts as, and what it can see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The person (or agent id) operations are performed as.
    pub user: String,
    /// The projects this identity can see.
    pub projects: Vec<String>,
}

/// The refusal of a source with no auto-delegate.
fn not_supported(source: String) -> OqError {
    OqError::invalid(
        ErrorCode::NotSupported,
        format!(
            "{source} has no auto-delegate: only an `oq serve` with an OpenCode bridge answers by itself"
        ),
    )
}

/// Futures are `Send` so the TUI's driver can run them on tokio's pool.
///
/// The operations of ADR 0214 as the doors and the TUI need them. `project: None` means
/// every visible project where a source can do that (the local engine), and is refused
/// by name where it cannot.
#[allow(async_fn_in_trait)]
pub trait Source: Send + Sync {
    /// "local", "http://127.0.0.1:7878"…: for the status line and messages.
    fn describe(&self) -> String;
    fn identity(&self) -> impl Future<Output = Result<Identity, OqError>> + Send;
    /// A page of what `query` asks for (status, search, sort, cursor, limit), answered
    /// over the whole filter: `total` counts every matching question, not the page.
    fn list(
        &self,
        project: Option<&str>,
        query: &ListQuery,
    ) -> impl Future<Output = Result<QuestionList, OqError>> + Send;
    /// `oq status`'s numbers: the open questions in view (snoozed ones hidden, as the
    /// default list) and how many the caller may answer. The default counts the list's
    /// pages; the local engine counts its open set's index instead.
    fn open_counts(
        &self,
        project: Option<&str>,
    ) -> impl Future<Output = Result<OpenCounts, OqError>> + Send {
        async move {
            let (mut counts, mut cursor) = (OpenCounts::default(), None::<String>);
            loop {
                let query = ListQuery::new(StatusFilter::Open).after(cursor.as_deref());
                let page = self.list(project, &query).await?;
                counts.open = counts.open.max(page.total);
                counts.mine += page.items.iter().filter(|q| q.can_answer).count() as u64;
                match page.cursor {
                    Some(c) if !page.items.is_empty() => cursor = Some(c),
                    _ => return Ok(counts),
                }
            }
        }
    }
    fn question(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> impl Future<Output = Result<QuestionItem, OqError>> + Send;
    /// The decision history (`oq decisions`): a page of the answered and closed
    /// questions `query` asks for, newest decision first, answered over the whole
    /// history. A source that keeps no history (OpenCode direct) refuses it by name.
    fn decisions(
        &self,
        project: Option<&str>,
        query: &DecisionQuery,
    ) -> impl Future<Output = Result<QuestionList, OqError>> + Send {
        let _ = (project, query);
        async {
            Err(OqError::invalid(
                ErrorCode::NotSupported,
                format!(
                    "{} keeps no decision history: use the local engine or an `oq serve`",
                    self.describe()
                ),
            ))
        }
    }
    /// declare_open_question. `agent` is the declaring role where the source lets the
    /// caller choose (locally); a server takes it from the token.
    fn declare(
        &self,
        project: &str,
        agent: Option<Role>,
        input: &DeclareInput,
    ) -> impl Future<Output = Result<QuestionItem, OqError>> + Send;
    fn answer(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
    ) -> impl Future<Output = Result<QuestionItem, OqError>> + Send;
    /// [`Source::answer`] under the caller's idempotency key: a retry with the same key
    /// (the outbox delivering again after a lost reply) gets the first answer back instead
    /// of `pergunta_ja_respondida`. The default ignores the key, for a source with no such
    /// notion (OpenCode's single-flight claim plays that part there).
    fn answer_once(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
        key: &str,
    ) -> impl Future<Output = Result<QuestionItem, OqError>> + Send {
        let _ = key;
        self.answer(project, question_id, input)
    }
    /// Closes a question without answering it (its author only); a question that lives
    /// upstream is rejected there.
    fn dismiss(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> impl Future<Output = Result<QuestionItem, OqError>> + Send;
    /// "Not now" (issue 17 part 4): hides an open question from its author's queue
    /// until the time `input` names, judged by the deciding clock (the server's for a
    /// remote source). The author only. A source with no log of its own refuses it.
    fn snooze(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &crate::domain::snooze::SnoozeInput,
    ) -> impl Future<Output = Result<QuestionItem, OqError>> + Send {
        let _ = (project, input);
        std::future::ready(Err(snooze_not_supported(question_id)))
    }
    /// Ends the question's snooze now (`not_snoozed` when none holds it).
    fn unsnooze(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> impl Future<Output = Result<QuestionItem, OqError>> + Send {
        let _ = project;
        std::future::ready(Err(snooze_not_supported(question_id)))
    }
    fn readiness(
        &self,
        project: &str,
        record: Option<ReadinessGate>,
    ) -> impl Future<Output = Result<Readiness, OqError>> + Send;
    fn verdict(
        &self,
        project: &str,
        agent: Option<Role>,
        task_id: &str,
        input: &VerdictInput,
    ) -> impl Future<Output = Result<VerdictReply, OqError>> + Send;
    /// "Waiting for you": tasks parked on a question the caller must answer.
    fn waiting(
        &self,
        project: Option<&str>,
    ) -> impl Future<Output = Result<Vec<WaitingItem>, OqError>> + Send;
    fn dev_context(
        &self,
        project: &str,
        task_id: &str,
    ) -> impl Future<Output = Result<DevContext, OqError>> + Send;
    fn start_session(
        &self,
        project: &str,
        kind: SessionKind,
        session_id: Option<&str>,
    ) -> impl Future<Output = Result<SessionItem, OqError>> + Send;
    /// The session a question goes to when the caller names none (locally: the person's
    /// own conversation session); `None` where the source has no such notion.
    fn default_session(
        &self,
        project: &str,
    ) -> impl Future<Output = Result<Option<String>, OqError>> + Send;
    /// A number that grows with every change the caller can see; watchers poll or stream it.
    fn revision(&self, project: Option<&str>) -> impl Future<Output = Result<i64, OqError>> + Send;

    /// The auto-delegate of the OpenCode bridges behind this source (seed 002), for the
    /// caller's upstreams; `None` where there is no bridge (the local engine, OpenCode
    /// direct, a server without one for this caller, or a source offline now).
    fn auto_delegate(&self) -> impl Future<Output = Result<Option<AutoDelegate>, OqError>> + Send {
        async { Ok(None) }
    }
    /// Pauses the auto-answer of a bridged question: `User` (the author takes it over)
    /// or `Interaction` (the author has its form open; [`Source::resume_auto`] when the
    /// form closes without an answer).
    fn pause_auto(
        &self,
        question_id: &str,
        reason: crate::domain::delegation::PauseReason,
    ) -> impl Future<Output = Result<AutoCommand, OqError>> + Send {
        let _ = (question_id, reason);
        async { Err(not_supported(self.describe())) }
    }
    /// Resumes a paused bridged question: a fresh window.
    fn resume_auto(
        &self,
        question_id: &str,
    ) -> impl Future<Output = Result<AutoCommand, OqError>> + Send {
        let _ = question_id;
        async { Err(not_supported(self.describe())) }
    }
    /// Sends a bridged question's auto-answer now (allowed with the feature off).
    fn delegate_now(
        &self,
        question_id: &str,
    ) -> impl Future<Output = Result<AutoCommand, OqError>> + Send {
        let _ = question_id;
        async { Err(not_supported(self.describe())) }
    }

    /// Blocks until the question is answered, polling every `poll`, or until `timeout`.
    async fn wait_for_answer(
        &self,
        project: Option<&str>,
        question_id: &str,
        timeout: Option<Duration>,
        poll: Duration,
    ) -> Result<QuestionItem, OqError> {
        let started = tokio::time::Instant::now();
        loop {
            let q = self.question(project, question_id).await?;
            if q.answer.is_some() {
                return Ok(q);
            }
            if let Some(t) = timeout
                && started.elapsed() >= t
            {
                return Err(OqError::Timeout {
                    question_id: question_id.into(),
                    seconds: t.as_secs(),
                });
            }
            tokio::time::sleep(poll).await;
        }
    }
}

/// A source that keeps no log of its own (OpenCode) has nowhere to record a snooze.
fn snooze_not_supported(question_id: &str) -> OqError {
    OqError::invalid(
        crate::domain::ErrorCode::NotSupported,
        format!("question {question_id}: this source cannot snooze (it keeps no log of its own)"),
    )
}
