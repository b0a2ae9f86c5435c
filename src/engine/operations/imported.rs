//! Questions that live upstream too (OpenCode requests a bridge imports): dismissing one,
//! settling one that was answered elsewhere, marking an orphan, and the bridge's notes
//! about one (its countdown, a person's pause or resume, a submission upstream) or about
//! an upstream (its toggle).

use super::{Engine, new_event, question_in};
use crate::domain::answering::check_author_and_open;
use crate::domain::choices::{ClosedReason, render_choices};
use crate::domain::delegation::outstanding_submission;
use crate::domain::{Actor, DecisionSource, ErrorCode, Event, OqError, Question};
use crate::engine::ids;
use crate::engine::store::Store;

/// A settlement a bridge records that is no answer of the session's author: what a
/// timer, a delegating person or upstream decided, or that upstream lost the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportedSettlement {
    /// An answer whose decision is `by`'s — the timer (`bridge:<name>`,
    /// `auto_delegate`), the person who delegated (`delegate`), OpenCode's own UI
    /// (`opencode`, `upstream`) — with the answers sent or reported (none when upstream
    /// did not report them).
    Answered {
        source: DecisionSource,
        by: String,
        answers: Vec<Vec<String>>,
    },
    /// Closed without an answer: dismissed in OpenCode itself (`upstream`) or lost there
    /// (`vanished`).
    Closed { source: DecisionSource },
}

impl<S: Store> Engine<S> {
    /// Closes a question without an answer. `Rejected` is its author dismissing it (the
    /// same rule as answering: only the session's author, only while open); `External` is
    /// a service recording that upstream settled it, and is a no-op when it is already
    /// answered or closed (upstream's word arrives late and more than once).
    pub fn close_question(
        &self,
        actor: &Actor,
        project_id: Option<&str>,
        question_id: &str,
        reason: ClosedReason,
    ) -> Result<Question, OqError> {
        let owned = (
            actor.clone(),
            project_id.map(str::to_string),
            question_id.to_string(),
        );
        let project = self
            .store
            .transact(move |view| {
                let (actor, project_id, question_id) = (&owned.0, owned.1.as_deref(), &owned.2);
                let question = question_in(view, project_id, question_id)?;
                let project = question.project_id.clone();
                match reason {
                    ClosedReason::Rejected => check_author_and_open(&question, actor)?,
                    ClosedReason::Withdrawn => {
                        return Err(OqError::Internal(
                            "a withdrawal is recorded by Engine::withdraw, with its reason".into(),
                        ));
                    }
                    ClosedReason::External => {
                        if !matches!(actor, Actor::Service { .. }) {
                            return Err(OqError::forbidden(
                                ErrorCode::RoleNotAllowed,
                                "only a bridge records that upstream settled a question",
                            ));
                        }
                        if !question.is_open() {
                            return Ok((Vec::new(), project));
                        }
                    }
                }
                let event = Event::QuestionClosed {
                    question_id: question_id.into(),
                    reason,
                    by: actor.id().into(),
                    decision_source: Some(DecisionSource::for_closure(reason)),
                };
                Ok((vec![new_event(&project, actor, event)], project))
            })?
            .1;
        self.question(Some(&project), question_id)
    }

    /// Records that upstream's session was aborted with the question pending. Once.
    pub fn mark_orphaned(
        &self,
        actor: &Actor,
        project_id: Option<&str>,
        question_id: &str,
    ) -> Result<Question, OqError> {
        let owned = (
            actor.clone(),
            project_id.map(str::to_string),
            question_id.to_string(),
        );
        let project = self
            .store
            .transact(move |view| {
                let (actor, project_id, question_id) = (&owned.0, owned.1.as_deref(), &owned.2);
                let question = question_in(view, project_id, question_id)?;
                let project = question.project_id.clone();
                if question.orphaned || !question.is_open() {
                    return Ok((Vec::new(), project));
                }
                let event = Event::QuestionOrphaned {
                    question_id: question_id.into(),
                };
                Ok((vec![new_event(&project, actor, event)], project))
            })?
            .1;
        self.question(Some(&project), question_id)
    }

    /// Records a bridge's note. Question notes need the question in `project_id` and
    /// are written only while it is open (`Ok(false)`: settled meanwhile, nothing
    /// written); an upstream's toggle is a project event. Any other event is refused.
    /// A submission while another is outstanding is `question_submission_claimed`
    /// (`outstanding_submission`): the single-flight claim, decided in the store.
    pub fn note(&self, actor: &Actor, project_id: &str, event: Event) -> Result<bool, OqError> {
        let question = match &event {
            Event::QuestionCountdown { question_id, .. }
            | Event::QuestionPaused { question_id, .. }
            | Event::QuestionResumed { question_id, .. }
            | Event::QuestionSubmitted { question_id, .. } => Some(question_id.clone()),
            Event::BridgeSettingsChanged { .. } => None,
            other => {
                return Err(OqError::Internal(format!(
                    "{} is not a bridge's note",
                    other.type_name()
                )));
            }
        };
        let owned = (actor.clone(), project_id.to_string());
        let (_, written) = self.store.transact(move |view| {
            let (actor, project) = (&owned.0, owned.1.as_str());
            if let Some(id) = question
                && !question_in(view, Some(project), &id)?.is_open()
            {
                return Ok((Vec::new(), false));
            }
            if let Event::QuestionSubmitted { question_id, .. } = &event
                && outstanding_submission(&view.question_events(question_id)?)
            {
                return Err(OqError::conflict(
                    ErrorCode::QuestionSubmissionClaimed,
                    format!(
                        "question {question_id} is already claimed: a submission noted before \
                         (by this server or another on the store) has no outcome yet"
                    ),
                ));
            }
            Ok((vec![new_event(project, actor, event)], true))
        })?;
        Ok(written)
    }

    /// Every event about one question, oldest first.
    pub fn question_events(&self, question_id: &str) -> Result<Vec<Event>, OqError> {
        self.store.read(|v| v.question_events(question_id))
    }

    /// Records `how` for an imported question, as the bridge `actor` (a service). A
    /// no-op when it is already answered or closed: upstream's word arrives late and
    /// more than once, and the first settlement stands.
    pub fn settle_imported(
        &self,
        actor: &Actor,
        project_id: &str,
        question_id: &str,
        how: ImportedSettlement,
    ) -> Result<Question, OqError> {
        if !matches!(actor, Actor::Service { .. }) {
            return Err(OqError::forbidden(
                ErrorCode::RoleNotAllowed,
                "only a bridge records how upstream settled a question",
            ));
        }
        let owned = (
            actor.clone(),
            project_id.to_string(),
            question_id.to_string(),
        );
        self.store.transact(move |view| {
            let (actor, project, question_id) = (&owned.0, owned.1.as_str(), owned.2.as_str());
            let question = question_in(view, Some(project), question_id)?;
            if !question.is_open() {
                return Ok((Vec::new(), ()));
            }
            let events = match how {
                ImportedSettlement::Closed { source } => vec![new_event(
                    project,
                    actor,
                    Event::QuestionClosed {
                        question_id: question_id.into(),
                        reason: ClosedReason::External,
                        by: actor.id().into(),
                        decision_source: Some(source),
                    },
                )],
                ImportedSettlement::Answered {
                    source,
                    by,
                    answers,
                } => {
                    let resposta = if answers.is_empty() {
                        "(answered in OpenCode; it did not say with what)".to_string()
                    } else {
                        render_choices(&question.prompts, &answers)
                    };
                    let decision_event_id = ids::decision_id();
                    let mut events = vec![
                        new_event(
                            project,
                            actor,
                            Event::QuestionAnswered {
                                question_id: question_id.into(),
                                resposta: resposta.clone(),
                                aceitou_sugestao: false,
                                decision_event_id: decision_event_id.clone(),
                                respondida_por: by.clone(),
                                answers,
                                idempotency_key: None,
                                decision_source: Some(source),
                            },
                        ),
                        new_event(
                            project,
                            actor,
                            Event::DecisionRecord {
                                decision_event_id: decision_event_id.clone(),
                                actor: by,
                                context: question.pergunta.clone(),
                                choice: resposta,
                                consequences: question.afeta.clone(),
                                question_id: question_id.into(),
                            },
                        ),
                    ];
                    for task_id in view.parked_on(question_id)? {
                        events.push(new_event(
                            project,
                            actor,
                            Event::GateResumed {
                                task_id,
                                question_id: question_id.into(),
                                decision_event_id: decision_event_id.clone(),
                            },
                        ));
                    }
                    events
                }
            };
            Ok((events, ()))
        })?;
        self.question(Some(project_id), question_id)
    }
}
