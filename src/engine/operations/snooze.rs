//! Snoozing a question and waking it (issue 17 part 4): the author's "not now", one
//! event each, decided in the write transaction like an answer (`domain::snooze`). The
//! clock is the caller's (`now`, Unix ms): the doors give the wall clock, tests their
//! own, and the server's clock decides for every remote client.

use crate::domain::snooze::{SnoozeInput, decide_snooze, decide_unsnooze};
use crate::domain::{Actor, Event, OqError, Question};
use crate::engine::store::Store;

use super::{Engine, new_event, question_in};

impl<S: Store> Engine<S> {
    /// Hides the question from its answerer's queue until the time `input` names;
    /// the question with its snooze. Refused for anyone but the session's author, a
    /// settled question, a time not ahead of `now` or more than 90 days away.
    pub fn snooze(
        &self,
        actor: &Actor,
        project_id: Option<&str>,
        question_id: &str,
        input: &SnoozeInput,
        now: i64,
    ) -> Result<Question, OqError> {
        let input = input.clone();
        self.record_on(actor, project_id, question_id, move |q, actor| {
            decide_snooze(q, actor, &input, now)
        })
    }

    /// Ends the question's snooze now: back in the queue. `not_snoozed` when no snooze
    /// holds it at `now` (nothing is written).
    pub fn unsnooze(
        &self,
        actor: &Actor,
        project_id: Option<&str>,
        question_id: &str,
        now: i64,
    ) -> Result<Question, OqError> {
        self.record_on(actor, project_id, question_id, move |q, actor| {
            decide_unsnooze(q, actor, now)
        })
    }

    /// The one event `decide` makes of the question as the write transaction reads it,
    /// appended; then the question as it is after it.
    fn record_on(
        &self,
        actor: &Actor,
        project_id: Option<&str>,
        question_id: &str,
        decide: impl FnOnce(&Question, &Actor) -> Result<Event, OqError> + Send + 'static,
    ) -> Result<Question, OqError> {
        let owned = (
            project_id.map(str::to_string),
            actor.clone(),
            question_id.to_string(),
        );
        self.store.transact(move |view| {
            let (project, actor, id) = &owned;
            let q = question_in(view, project.as_deref(), id)?;
            let event = decide(&q, actor)?;
            Ok((vec![new_event(&q.project_id, actor, event)], ()))
        })?;
        self.question(project_id, question_id)
    }
}
