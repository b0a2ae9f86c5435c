//! Questions that live upstream too (OpenCode requests a bridge imports): dismissing one,
//! settling one that was answered elsewhere, and marking an orphan.

use super::{Engine, new_event, question_in};
use crate::domain::choices::ClosedReason;
use crate::domain::question::check_author_and_open;
use crate::domain::{Actor, DecisionSource, ErrorCode, Event, OqError, Question};
use crate::engine::store::Store;

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
}
