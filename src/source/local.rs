//! The embedded engine as a source: operations run on a blocking thread (SQLite is
//! synchronous) against the store in the data dir, as the person given by `--as`.

use std::sync::Arc;

use super::{Identity, Source};
use crate::domain::choices::ClosedReason;
use crate::domain::readiness::ReadinessGate;
use crate::domain::{Actor, AnswerInput, DeclareInput, ErrorCode, OqError, Role, SessionKind};
use crate::engine::{DecisionQuery, ListQuery, LocalEngine, OpenCounts, VerdictInput};
use crate::wire::{
    DevContext, QuestionItem, QuestionList, Readiness, SessionItem, TaskItem, VerdictReply,
    WaitingItem,
};

#[derive(Clone)]
pub struct LocalSource {
    engine: Arc<LocalEngine>,
    user: String,
}

impl LocalSource {
    pub fn new(engine: Arc<LocalEngine>, user: impl Into<String>) -> Self {
        LocalSource {
            engine,
            user: user.into(),
        }
    }

    pub fn engine(&self) -> &Arc<LocalEngine> {
        &self.engine
    }

    fn person(&self) -> Actor {
        Actor::person(&self.user)
    }

    /// An answer through the engine, with the client's idempotency key when it has one.
    async fn answer_with(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
        key: Option<&str>,
    ) -> Result<QuestionItem, OqError> {
        let (project, id, input, key) = (
            project.map(str::to_string),
            question_id.to_string(),
            input.clone(),
            key.map(str::to_string),
        );
        self.blocking(move |e, me| {
            let q = e.answer_once(&me, project.as_deref(), &id, &input, key.as_deref())?;
            Ok(QuestionItem::from_question(&q, &me))
        })
        .await
    }

    /// Runs `f` on tokio's blocking pool: SQLite may wait on another process's lock.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&LocalEngine, Actor) -> Result<T, OqError> + Send + 'static,
    ) -> Result<T, OqError> {
        let engine = Arc::clone(&self.engine);
        let person = self.person();
        tokio::task::spawn_blocking(move || f(&engine, person))
            .await
            .map_err(|e| OqError::Internal(format!("engine task failed: {e}")))?
    }
}

fn agent_or(agent: Option<Role>, default: Role) -> Actor {
    Actor::agent(agent.unwrap_or(default))
}

impl Source for LocalSource {
    fn describe(&self) -> String {
        "local".into()
    }

    async fn identity(&self) -> Result<Identity, OqError> {
        let user = self.user.clone();
        let projects = self.blocking(|e, _| e.read(|v| v.projects())).await?;
        Ok(Identity { user, projects })
    }

    async fn list(
        &self,
        project: Option<&str>,
        query: &ListQuery,
    ) -> Result<QuestionList, OqError> {
        let (project, query) = (project.map(str::to_string), query.clone());
        self.blocking(move |e, me| Ok(QuestionList::of(e.list(project.as_deref(), &query)?, &me)))
            .await
    }

    async fn open_counts(&self, project: Option<&str>) -> Result<OpenCounts, OqError> {
        let project = project.map(str::to_string);
        self.blocking(move |e, me| e.open_counts(project.as_deref(), &me))
            .await
    }

    async fn decisions(
        &self,
        project: Option<&str>,
        query: &DecisionQuery,
    ) -> Result<QuestionList, OqError> {
        let (project, query) = (project.map(str::to_string), query.clone());
        self.blocking(move |e, me| {
            Ok(QuestionList::of(
                e.decisions(project.as_deref(), &query)?,
                &me,
            ))
        })
        .await
    }

    async fn question(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> Result<QuestionItem, OqError> {
        let (project, id) = (project.map(str::to_string), question_id.to_string());
        self.blocking(move |e, me| {
            let q = e.question(project.as_deref(), &id)?;
            let similar = e.similar_answer(&q)?;
            Ok(QuestionItem::from_question(&q, &me).with_similar(similar))
        })
        .await
    }

    async fn declare(
        &self,
        project: &str,
        agent: Option<Role>,
        input: &DeclareInput,
    ) -> Result<QuestionItem, OqError> {
        let (project, input) = (project.to_string(), input.clone());
        let actor = match agent {
            Some(role) => Actor::agent(role),
            None => {
                return Err(OqError::invalid(
                    ErrorCode::AgentRequired,
                    "declaring locally needs the agent's role (criativo, po, arquiteto or dev-lead)",
                ));
            }
        };
        self.blocking(move |e, me| {
            Ok(QuestionItem::from_question(
                &e.declare(&actor, &project, &input)?,
                &me,
            ))
        })
        .await
    }

    async fn answer(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
    ) -> Result<QuestionItem, OqError> {
        self.answer_with(project, question_id, input, None).await
    }

    async fn answer_once(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
        key: &str,
    ) -> Result<QuestionItem, OqError> {
        self.answer_with(project, question_id, input, Some(key))
            .await
    }

    async fn dismiss(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> Result<QuestionItem, OqError> {
        let (project, id) = (project.map(str::to_string), question_id.to_string());
        self.blocking(move |e, me| {
            let q = e.close_question(&me, project.as_deref(), &id, ClosedReason::Rejected)?;
            Ok(QuestionItem::from_question(&q, &me))
        })
        .await
    }

    async fn snooze(
        &self,
        project: Option<&str>,
        question_id: &str,
        input: &crate::domain::snooze::SnoozeInput,
    ) -> Result<QuestionItem, OqError> {
        let (project, id, input) = (
            project.map(str::to_string),
            question_id.to_string(),
            input.clone(),
        );
        self.blocking(move |e, me| {
            let now = crate::engine::sqlite::now_ms();
            let q = e.snooze(&me, project.as_deref(), &id, &input, now)?;
            Ok(QuestionItem::from_question(&q, &me))
        })
        .await
    }

    async fn unsnooze(
        &self,
        project: Option<&str>,
        question_id: &str,
    ) -> Result<QuestionItem, OqError> {
        let (project, id) = (project.map(str::to_string), question_id.to_string());
        self.blocking(move |e, me| {
            let now = crate::engine::sqlite::now_ms();
            let q = e.unsnooze(&me, project.as_deref(), &id, now)?;
            Ok(QuestionItem::from_question(&q, &me))
        })
        .await
    }

    async fn readiness(
        &self,
        project: &str,
        record: Option<ReadinessGate>,
    ) -> Result<Readiness, OqError> {
        let project = project.to_string();
        self.blocking(move |e, me| match record {
            Some(gate) => e.record_readiness(&me, &project, gate),
            None => e.readiness(&project),
        })
        .await
    }

    async fn verdict(
        &self,
        project: &str,
        agent: Option<Role>,
        task_id: &str,
        input: &VerdictInput,
    ) -> Result<VerdictReply, OqError> {
        let (project, task_id, input) = (project.to_string(), task_id.to_string(), input.clone());
        let actor = agent_or(agent, Role::QaAgent);
        self.blocking(move |e, _| {
            let outcome = e.verdict(&actor, &project, &task_id, &input)?;
            Ok(VerdictReply {
                verdict: input.verdict.unwrap_or(crate::domain::Verdict::Approved),
                task: TaskItem::from(&outcome.task),
                open_question_id: outcome.question_id,
            })
        })
        .await
    }

    async fn waiting(&self, project: Option<&str>) -> Result<Vec<WaitingItem>, OqError> {
        let project = project.map(str::to_string);
        self.blocking(move |e, me| {
            Ok(e.waiting_for(project.as_deref(), me.id())?
                .iter()
                .map(WaitingItem::from)
                .collect())
        })
        .await
    }

    async fn dev_context(&self, project: &str, task_id: &str) -> Result<DevContext, OqError> {
        let (project, task_id) = (project.to_string(), task_id.to_string());
        self.blocking(move |e, _| e.dev_context(&project, &task_id))
            .await
    }

    async fn start_session(
        &self,
        project: &str,
        kind: SessionKind,
        session_id: Option<&str>,
    ) -> Result<SessionItem, OqError> {
        let (project, session_id) = (project.to_string(), session_id.map(str::to_string));
        self.blocking(move |e, me| {
            Ok(SessionItem::from(&e.start_session(
                &me,
                &project,
                kind,
                session_id.as_deref(),
            )?))
        })
        .await
    }

    async fn default_session(&self, project: &str) -> Result<Option<String>, OqError> {
        let project = project.to_string();
        self.blocking(move |e, me| Ok(Some(e.personal_session(&project, me.id())?.session_id)))
            .await
    }

    async fn revision(&self, project: Option<&str>) -> Result<i64, OqError> {
        let project = project.map(str::to_string);
        self.blocking(move |e, _| e.project_revision(project.as_deref()))
            .await
    }
}
