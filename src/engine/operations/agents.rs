//! Questions agents declare through MCP or Claude Code's hook: declared once per
//! idempotency key, with options, recorded with their origin; withdrawn by their agent.

use super::questions::NewQuestion;
use super::{Engine, new_event, question_in};
use crate::domain::choices::{ClosedReason, Prompt, Upstream};
use crate::domain::declared::{
    Origin, WITHDRAW_REASON_MAX_CHARS, check_prompts, check_retry_parts, check_withdrawer,
};
use crate::domain::question::check_declarer;
use crate::domain::text::check_text;
use crate::domain::{Actor, DecisionSource, DeclareInput, Event, OqError, Question};
use crate::engine::ids;
use crate::engine::store::Store;

impl<S: Store> Engine<S> {
    /// declare_open_question from an agent's door: the ADR's rules, the parts checked,
    /// `source` the door's origin. Under `input.idempotency_key` the id is the key's
    /// ([`Engine::declare`]'s rule): a retry returns the first question, and the key for
    /// other text or other options is refused. `upstream` is where the agent keeps the
    /// question too (Claude Code's session, tool call and working directory).
    pub fn declare_from(
        &self,
        actor: &Actor,
        project_id: &str,
        origin: Origin,
        input: &DeclareInput,
        prompts: &[Prompt],
        upstream: Option<Upstream>,
    ) -> Result<Question, OqError> {
        let role = check_declarer(actor)?;
        let input = input.validated()?;
        let prompts = check_prompts(prompts)?;
        let keyed = input
            .idempotency_key
            .as_deref()
            .map(|key| ids::keyed_question_id(project_id, actor.id(), key));
        let q = self.record_question(
            actor,
            project_id,
            NewQuestion {
                input: &input,
                autor: role.as_str(),
                source: origin.as_str(),
                question_id: keyed.as_deref(),
                prompts: prompts.clone(),
                upstream,
            },
        )?;
        check_retry_parts(&q, &prompts)?;
        Ok(q)
    }

    /// withdraw_question: the declaring agent (or the session's author) retracts an open
    /// question; the reason and the closure (`withdrawn`) go in one transaction.
    pub fn withdraw(
        &self,
        actor: &Actor,
        project_id: &str,
        question_id: &str,
        reason: &str,
    ) -> Result<Question, OqError> {
        let reason = check_text("reason", reason, WITHDRAW_REASON_MAX_CHARS)?;
        let owned = (
            actor.clone(),
            project_id.to_string(),
            question_id.to_string(),
        );
        self.store.transact(move |view| {
            let (actor, project, question_id) = (&owned.0, owned.1.as_str(), owned.2.as_str());
            let question = question_in(view, Some(project), question_id)?;
            check_withdrawer(&question, actor)?;
            let by = actor.id().to_string();
            let events = vec![
                new_event(
                    project,
                    actor,
                    Event::QuestionWithdrawn {
                        question_id: question_id.into(),
                        by: by.clone(),
                        reason,
                    },
                ),
                new_event(
                    project,
                    actor,
                    Event::QuestionClosed {
                        question_id: question_id.into(),
                        reason: ClosedReason::Withdrawn,
                        by,
                        decision_source: Some(DecisionSource::Withdrawn),
                    },
                ),
            ];
            Ok((events, ()))
        })?;
        self.question(Some(project_id), question_id)
    }

    /// Why a withdrawn question was withdrawn (its `open_question.withdrawn` note).
    pub fn withdraw_reason(&self, question_id: &str) -> Result<Option<String>, OqError> {
        Ok(self
            .question_events(question_id)?
            .into_iter()
            .find_map(|e| match e {
                Event::QuestionWithdrawn { reason, .. } => Some(reason),
                _ => None,
            }))
    }
}
