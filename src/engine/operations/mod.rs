//! ADR 0214's operations, store-agnostic: read, decide with the domain, append.
//!
//! One `impl Engine` block per area: `questions.rs` (declare, answer, list, readiness),
//! `work.rs` (stories and tasks), `gate.rs` (QA verdicts, waiting, dev-context),
//! `imported.rs` (questions that also live upstream: dismiss, settle as what happened,
//! orphan, and the bridge's notes), `agents.rs` (what MCP and hook doors declare and
//! withdraw), `decisions.rs` (the decision history), `similar.rs` (the memory of answers).

mod agents;
mod decisions;
mod gate;
mod imported;
mod questions;
mod similar;
mod snooze;

pub use imported::ImportedSettlement;
pub use questions::NewQuestion;
mod work;

use serde::{Deserialize, Serialize};

use super::ids;
use super::store::{LogHead, NewEvent, Store, StoreView};
use crate::domain::dev_context::Decisao;
use crate::domain::gate::DEFAULT_CORRECTION_CEILING;
use crate::domain::text::check_id;
use crate::domain::{
    Actor, ErrorCode, Event, OqError, Question, Session, SessionKind, StoredEvent, Story, Task,
    Verdict,
};

const TITLE_MAX_CHARS: usize = 200;

#[derive(Debug, Clone, Copy)]
pub struct EngineConfig {
    /// RN-762's ceiling for new tasks.
    pub correction_ceiling: u32,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            correction_ceiling: DEFAULT_CORRECTION_CEILING,
        }
    }
}

pub struct Engine<S> {
    store: S,
    config: EngineConfig,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListPage {
    pub items: Vec<Question>,
    pub total: u64,
    /// A search's total counted to [`crate::engine::list::SEARCH_TOTAL_CAP`] and
    /// stopped there: at least `total` match.
    pub total_is_lower_bound: bool,
    /// Pass back to get the next page; `None` on the last.
    pub cursor: Option<String>,
    /// How many of the filter's questions a snooze hides now, and the soonest return.
    pub snoozed: crate::engine::SnoozedCount,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Readiness {
    pub open_questions: u64,
    /// "N questions are still open — answer", or null when none are.
    pub notice: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DevContext {
    pub header: String,
    pub decisoes: Vec<Decisao>,
}

/// emit_qa_verdict's body.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct VerdictInput {
    pub verdict: Option<Verdict>,
    #[serde(default)]
    pub pergunta: Option<String>,
    #[serde(default)]
    pub sugestao: Option<String>,
    #[serde(default)]
    pub open_question_id: Option<String>,
    #[serde(default)]
    pub subspecialty: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerdictOutcome {
    pub task: Task,
    /// The question the gate parked on, for `needs_user_decision`.
    pub question_id: Option<String>,
}

impl<S: Store> Engine<S> {
    pub fn new(store: S, config: EngineConfig) -> Self {
        Engine { store, config }
    }

    pub fn store(&self) -> &S {
        &self.store
    }

    pub fn read<T>(
        &self,
        f: impl FnOnce(&dyn StoreView) -> Result<T, OqError>,
    ) -> Result<T, OqError> {
        self.store.read(f)
    }

    // ---- sessions -------------------------------------------------------------------

    /// Starts a session authored by `actor` (for an execution session: the person who
    /// activates execution). `session_id` lets a door choose a readable id.
    pub fn start_session(
        &self,
        actor: &Actor,
        project_id: &str,
        kind: SessionKind,
        session_id: Option<&str>,
    ) -> Result<Session, OqError> {
        check_id("projectId", project_id)?;
        let Actor::Person { id: author } = actor else {
            return Err(OqError::forbidden(
                ErrorCode::RoleNotAllowed,
                "sessions are started by people, not agents",
            ));
        };
        let session_id = match session_id {
            Some(id) => {
                check_id("sessionId", id)?;
                id.to_string()
            }
            None => ids::session_id(),
        };
        let owned = (project_id.to_string(), author.clone(), actor.clone());
        let (_, session) = self.store.transact(move |view| {
            let (project_id, author, actor) = (owned.0.as_str(), &owned.1, &owned.2);
            if view.session(&session_id)?.is_some() {
                return Err(OqError::conflict(
                    ErrorCode::SessionExists,
                    format!("session {session_id} already exists"),
                ));
            }
            let session = Session {
                session_id: session_id.clone(),
                project_id: project_id.into(),
                kind,
                author: author.clone(),
            };
            let event = Event::SessionStarted {
                session_id: session_id.clone(),
                kind,
                author: author.clone(),
            };
            Ok((vec![new_event(project_id, actor, event)], session))
        })?;
        Ok(session)
    }

    /// The person's own conversation session in a project, started on first use: where a
    /// local agent's questions go when it names no session.
    pub fn personal_session(&self, project_id: &str, person: &str) -> Result<Session, OqError> {
        self.session_of(project_id, person, &format!("{project_id}.{person}"))
    }

    /// The session `session_id`, started by `person` on first use (Claude Code's session
    /// for the hook, the person's own for `oq ask`); one that exists keeps its author.
    pub fn session_of(
        &self,
        project_id: &str,
        person: &str,
        session_id: &str,
    ) -> Result<Session, OqError> {
        let session_id = session_id.to_string();
        if let Some(s) = self.store.read(|v| v.session(&session_id))? {
            return Ok(s);
        }
        match self.start_session(
            &Actor::person(person),
            project_id,
            SessionKind::Conversation,
            Some(&session_id),
        ) {
            // Another process started it between our read and our write: use theirs.
            Err(OqError::Conflict {
                code: ErrorCode::SessionExists,
                ..
            }) => self
                .store
                .read(|v| v.session(&session_id))?
                .ok_or_else(|| OqError::not_found("session", &session_id)),
            other => other,
        }
    }

    // ---- the log --------------------------------------------------------------------

    pub fn revision(&self) -> Result<i64, OqError> {
        self.store.read(|v| v.revision())
    }

    /// The newest event of one project in its own numbering (`project_seq`); `None` scope
    /// means the whole store (the log position).
    pub fn project_revision(&self, project_id: Option<&str>) -> Result<i64, OqError> {
        self.store.read(|v| match project_id {
            Some(p) => v.project_revision(p),
            None => v.revision(),
        })
    }

    /// See [`StoreView::events_after`]: `after` is a `project_seq` for one project, a
    /// `seq` for the whole log.
    pub fn events_after(
        &self,
        project_id: Option<&str>,
        after: i64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, OqError> {
        self.store
            .read(|v| v.events_after(project_id, after, limit))
    }

    /// See [`StoreView::heads_after`]: the whole log after `seq`, without payloads.
    pub fn heads_after(&self, after: i64, limit: usize) -> Result<Vec<LogHead>, OqError> {
        self.store.read(|v| v.heads_after(after, limit))
    }
}

fn new_event(project_id: &str, actor: &Actor, event: Event) -> NewEvent {
    NewEvent {
        project_id: project_id.into(),
        actor: actor.id().into(),
        event,
    }
}

fn session_in(v: &dyn StoreView, project_id: &str, session_id: &str) -> Result<Session, OqError> {
    v.session(session_id)?
        .filter(|s| s.project_id == project_id)
        .ok_or_else(|| OqError::not_found("session", session_id))
}

fn question_in(
    v: &dyn StoreView,
    project_id: Option<&str>,
    question_id: &str,
) -> Result<Question, OqError> {
    v.question(question_id)?
        .filter(|q| project_id.is_none_or(|p| q.project_id == p))
        .ok_or_else(|| OqError::not_found("question", question_id))
}

fn story_in(v: &dyn StoreView, project_id: &str, story_id: &str) -> Result<Story, OqError> {
    v.story(story_id)?
        .filter(|s| s.project_id == project_id)
        .ok_or_else(|| OqError::not_found("story", story_id))
}

fn task_in(v: &dyn StoreView, project_id: &str, task_id: &str) -> Result<Task, OqError> {
    v.task(task_id)?
        .filter(|t| t.project_id == project_id)
        .ok_or_else(|| OqError::not_found("task", task_id))
}
