//! The source chosen at run time (`--source`, a profile, or the default `local`), as one
//! concrete type the doors and the TUI hold.

use super::{HttpSource, Identity, LocalSource, OpencodeSource, ResilientSource, Source};
use crate::domain::readiness::ReadinessGate;
use crate::domain::{AnswerInput, DeclareInput, OqError, Role, SessionKind};
use crate::engine::{DecisionQuery, ListQuery, OpenCounts, VerdictInput};
use crate::wire::{
    AutoCommand, AutoDelegate, DevContext, QuestionItem, QuestionList, Readiness, SessionItem,
    VerdictReply, WaitingItem,
};

#[derive(Clone)]
pub enum AnySource {
    Local(LocalSource),
    Http(HttpSource),
    Opencode(OpencodeSource),
    /// A remote `oq serve` behind the offline mirror and the outbox (`--source http://…`).
    Resilient(ResilientSource<HttpSource>),
}

/// Forwards one call to whichever source this is.
macro_rules! each {
    ($self:ident, $s:ident => $call:expr) => {
        match $self {
            AnySource::Local($s) => $call,
            AnySource::Http($s) => $call,
            AnySource::Opencode($s) => $call,
            AnySource::Resilient($s) => $call,
        }
    };
}

impl Source for AnySource {
    fn describe(&self) -> String {
        each!(self, s => s.describe())
    }
    async fn identity(&self) -> Result<Identity, OqError> {
        each!(self, s => s.identity().await)
    }
    async fn list(
        &self,
        project: Option<&str>,
        query: &ListQuery,
    ) -> Result<QuestionList, OqError> {
        each!(self, s => s.list(project, query).await)
    }
    async fn question(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> Result<QuestionItem, OqError> {
        each!(self, s => s.question(project, question_id).await)
    }
    async fn decisions(
        &self,
        project: Option<&str>,
        query: &DecisionQuery,
    ) -> Result<QuestionList, OqError> {
        each!(self, s => s.decisions(project, query).await)
    }
    async fn declare(
        &self,
        project: &str,
        agent: Option<Role>,
        input: &DeclareInput,
    ) -> Result<QuestionItem, OqError> {
        each!(self, s => s.declare(project, agent, input).await)
    }
    async fn answer(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
    ) -> Result<QuestionItem, OqError> {
        each!(self, s => s.answer(project, question_id, input).await)
    }
    async fn answer_once(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
        key: &str,
    ) -> Result<QuestionItem, OqError> {
        each!(self, s => s.answer_once(project, question_id, input, key).await)
    }
    async fn dismiss(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> Result<QuestionItem, OqError> {
        each!(self, s => s.dismiss(project, question_id).await)
    }
    async fn snooze(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &crate::domain::snooze::SnoozeInput,
    ) -> Result<QuestionItem, OqError> {
        each!(self, s => s.snooze(project, question_id, input).await)
    }
    async fn unsnooze(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> Result<QuestionItem, OqError> {
        each!(self, s => s.unsnooze(project, question_id).await)
    }
    async fn readiness(
        &self,
        project: &str,
        record: Option<ReadinessGate>,
    ) -> Result<Readiness, OqError> {
        each!(self, s => s.readiness(project, record).await)
    }
    async fn verdict(
        &self,
        project: &str,
        agent: Option<Role>,
        task_id: &str,
        input: &VerdictInput,
    ) -> Result<VerdictReply, OqError> {
        each!(self, s => s.verdict(project, agent, task_id, input).await)
    }
    async fn waiting(&self, project: Option<&str>) -> Result<Vec<WaitingItem>, OqError> {
        each!(self, s => s.waiting(project).await)
    }
    async fn dev_context(&self, project: &str, task_id: &str) -> Result<DevContext, OqError> {
        each!(self, s => s.dev_context(project, task_id).await)
    }
    async fn start_session(
        &self,
        project: &str,
        kind: SessionKind,
        session_id: Option<&str>,
    ) -> Result<SessionItem, OqError> {
        each!(self, s => s.start_session(project, kind, session_id).await)
    }
    async fn default_session(&self, project: &str) -> Result<Option<String>, OqError> {
        each!(self, s => s.default_session(project).await)
    }
    async fn open_counts(&self, project: Option<&str>) -> Result<OpenCounts, OqError> {
        each!(self, s => s.open_counts(project).await)
    }
    async fn revision(&self, project: Option<&str>) -> Result<i64, OqError> {
        each!(self, s => s.revision(project).await)
    }
    async fn auto_delegate(&self) -> Result<Option<AutoDelegate>, OqError> {
        each!(self, s => s.auto_delegate().await)
    }
    async fn pause_auto(
        &self,
        question_id: &str,
        reason: crate::domain::delegation::PauseReason,
    ) -> Result<AutoCommand, OqError> {
        each!(self, s => s.pause_auto(question_id, reason).await)
    }
    async fn resume_auto(&self, question_id: &str) -> Result<AutoCommand, OqError> {
        each!(self, s => s.resume_auto(question_id).await)
    }
    async fn delegate_now(&self, question_id: &str) -> Result<AutoCommand, OqError> {
        each!(self, s => s.delegate_now(question_id).await)
    }
}
