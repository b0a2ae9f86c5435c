//! Questions agents declare through MCP or Claude Code's hook: declared once per
//! idempotency key, with options, recorded with their origin; withdrawn by their agent.

use super::questions::NewQuestion;
use super::{Engine, new_event, question_in};
use crate::domain::choices::{ClosedReason, Prompt, Upstream, validate_choices};
use crate::domain::claude_code::{ClaudeDeclare, ClaudeSettlement, UPSTREAM_KIND};
use crate::domain::declared::{
    Origin, WITHDRAW_REASON_MAX_CHARS, check_prompts, check_retry_parts, check_withdrawer,
};
use crate::domain::question::check_declarer;
use crate::domain::text::check_text;
use crate::domain::{Actor, DecisionSource, DeclareInput, ErrorCode, Event, OqError, Question};
use crate::engine::store::Store;
use crate::engine::{ImportedSettlement, ids};

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

    /// Claude Code's `AskUserQuestion` call `d`, declared by `actor` (the hook's agent)
    /// in `d.session_id`: its parts, source `claude-code`, the call as its upstream, and
    /// the call as its idempotency key (a hook run again declares nothing new).
    pub fn declare_claude_code(
        &self,
        actor: &Actor,
        project_id: &str,
        d: &ClaudeDeclare,
    ) -> Result<Question, OqError> {
        if d.prompts.is_empty() {
            return Err(OqError::invalid(
                ErrorCode::InvalidOptions,
                "AskUserQuestion asks at least one question: prompts is empty",
            ));
        }
        let input = DeclareInput {
            pergunta: d.pergunta.clone(),
            sugestao: None,
            afeta: Default::default(),
            session_id: d.session_id.clone(),
            idempotency_key: Some(d.call.key()),
        };
        self.declare_from(
            actor,
            project_id,
            Origin::ClaudeCode,
            &input,
            &d.prompts,
            Some(d.call.upstream()),
        )
    }

    /// What Claude's own dialog did with a Claude Code question, told by the agent that
    /// declared it: recorded as `upstream` by the service `claude-code` (an answer
    /// checked against the parts; no answer, a closure). A question already settled is
    /// left as it is (the person may have answered in oq first).
    pub fn settle_claude_code(
        &self,
        actor: &Actor,
        project_id: &str,
        question_id: &str,
        how: ClaudeSettlement,
    ) -> Result<Question, OqError> {
        let q = self.question(Some(project_id), question_id)?;
        check_claude_declarer(&q, actor)?;
        if !q.is_open() {
            return Ok(q);
        }
        let how = match how {
            ClaudeSettlement::Answered { answers } => ImportedSettlement::Answered {
                source: DecisionSource::Upstream,
                by: UPSTREAM_KIND.into(),
                answers: validate_choices(&q.prompts, &answers)?,
            },
            ClaudeSettlement::Unreported {} | ClaudeSettlement::Declined {} => {
                ImportedSettlement::Closed {
                    source: DecisionSource::Upstream,
                }
            }
        };
        let service = Actor::Service {
            id: UPSTREAM_KIND.into(),
        };
        self.settle_imported(&service, project_id, question_id, how)
    }

    /// Claude Code's hook stopped waiting for `question_id` and let Claude Code show its
    /// own dialog: recorded once (`open_question.handed_off`, by the declaring agent), in
    /// the transaction that reads the question, so an answer committed just before wins
    /// (the question comes back answered, and the hook hands that answer over instead)
    /// and one after it is refused (`handed_to_claude_code`). A settled question is
    /// returned as it is.
    pub fn hand_off_claude_code(
        &self,
        actor: &Actor,
        project_id: &str,
        question_id: &str,
    ) -> Result<Question, OqError> {
        let owned = (
            actor.clone(),
            project_id.to_string(),
            question_id.to_string(),
        );
        self.store.transact(move |view| {
            let (actor, project, question_id) = (&owned.0, owned.1.as_str(), owned.2.as_str());
            let q = question_in(view, Some(project), question_id)?;
            check_claude_declarer(&q, actor)?;
            if !q.is_open() || q.handed_off {
                return Ok((Vec::new(), ()));
            }
            let event = Event::QuestionHandedOff {
                question_id: question_id.into(),
                to: UPSTREAM_KIND.into(),
                by: actor.id().to_string(),
            };
            Ok((vec![new_event(project, actor, event)], ()))
        })?;
        self.question(Some(project_id), question_id)
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

/// Only a question Claude Code's hook declared, and only its declaring agent, is told
/// what Claude Code did with it.
fn check_claude_declarer(q: &Question, actor: &Actor) -> Result<(), OqError> {
    if q.upstream.as_ref().map(|u| u.kind.as_str()) != Some(UPSTREAM_KIND) {
        return Err(OqError::conflict(
            ErrorCode::NotClaudeCode,
            format!(
                "question {} was not declared by Claude Code's hook",
                q.question_id
            ),
        ));
    }
    let declarer = matches!(actor, Actor::Agent { role, .. } if role.as_str() == q.autor);
    if !declarer {
        return Err(OqError::forbidden(
            ErrorCode::NotDeclarer,
            format!(
                "only the agent that declared {} ({}) reports what Claude Code's dialog did",
                q.question_id, q.autor
            ),
        ));
    }
    Ok(())
}
