//! Questions: declare, answer, list, wait, and readiness (ADR 0214 §1–§5).

use std::time::{Duration, Instant};

use crate::domain::answering::{decide_answer, is_replay};
use crate::domain::choices::{Prompt, Upstream};
use crate::domain::question::check_declarer;
use crate::domain::readiness::{ReadinessGate, readiness_notice};
use crate::domain::text::check_id;
use crate::domain::{
    Actor, Answer, AnswerInput, DecisionSource, DeclareInput, ErrorCode, Event, OqError, Question,
    StoredEvent,
};
use crate::engine::OpenCounts;
use crate::engine::ids;
use crate::engine::list::{Cursor, ListQuery, Sort};
use crate::engine::store::{NewEvent, QuestionQuery, Store, StoreView};

use super::{Engine, ListPage, Readiness, new_event, question_in, session_in};

impl<S: Store> Engine<S> {
    // ---- questions ------------------------------------------------------------------

    /// declare_open_question: records the question in its session's log.
    pub fn declare(
        &self,
        actor: &Actor,
        project_id: &str,
        input: &DeclareInput,
    ) -> Result<Question, OqError> {
        let role = check_declarer(actor)?;
        let input = input.validated()?;
        // Under a key, the id is the key's: a retry finds its first declaration.
        let keyed = input
            .idempotency_key
            .as_deref()
            .map(|key| ids::keyed_question_id(project_id, actor.id(), key));
        self.record_question(
            actor,
            project_id,
            NewQuestion {
                input: &input,
                autor: role.as_str(),
                question_id: keyed.as_deref(),
                ..NewQuestion::declared(&input)
            },
        )
    }

    /// Records a question whose rules were checked by the caller (a declare, or a bridge
    /// importing an upstream request under the upstream's own id).
    pub fn record_question(
        &self,
        actor: &Actor,
        project_id: &str,
        q: NewQuestion<'_>,
    ) -> Result<Question, OqError> {
        let question_id = q
            .question_id
            .map(str::to_string)
            .unwrap_or_else(ids::question_id);
        let (input, autor, source) = (q.input.clone(), q.autor.to_string(), q.source.to_string());
        let (prompts, upstream) = (q.prompts, q.upstream);
        let owned = (project_id.to_string(), actor.clone(), question_id.clone());
        self.store.transact(move |view| {
            let (project_id, actor, question_id) = (owned.0.as_str(), &owned.1, &owned.2);
            if let Some(first) = view.question(question_id)? {
                // A retry is answered with its first declaration, whatever happened since.
                if input.idempotency_key.is_some() {
                    input.check_replay_of(&first, &autor)?;
                    return Ok((Vec::new(), ()));
                }
                return Err(OqError::conflict(
                    ErrorCode::QuestionExists,
                    format!("question {question_id} already exists"),
                ));
            }
            session_in(view, project_id, &input.session_id)?;
            check_references(view, project_id, &input.afeta)?;
            let event = Event::OpenQuestion {
                question_id: question_id.clone(),
                pergunta: input.pergunta.clone(),
                sugestao: input.sugestao.clone(),
                afeta: input.afeta.clone(),
                autor,
                session_id: input.session_id.clone(),
                source,
                prompts,
                upstream,
            };
            Ok((vec![new_event(project_id, actor, event)], ()))
        })?;
        self.question(Some(project_id), &question_id)
    }

    /// Answers a question: the answer, its decision record, and the resumption of every
    /// gate parked on it, in one transaction. `project_id` scopes the lookup (a question of
    /// another project is "not found").
    pub fn answer(
        &self,
        actor: &Actor,
        project_id: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
    ) -> Result<Question, OqError> {
        self.answer_once(actor, project_id, question_id, input, None)
    }

    /// [`Engine::answer`] with the client's idempotency key: when the question already
    /// holds an answer by the same person under the same key, that first answer is the
    /// result (a retried delivery is not a second answer, and not a refusal either).
    pub fn answer_once(
        &self,
        actor: &Actor,
        project_id: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
        idempotency_key: Option<&str>,
    ) -> Result<Question, OqError> {
        let decide = answer_decision(actor, project_id, question_id, input, idempotency_key);
        self.store.transact(decide).map(as_recorded)
    }

    /// [`Engine::answer_once`] for async callers (the server's answer route): the same
    /// decision, and no thread of the caller's waits while the store decides and flushes.
    pub async fn answer_once_async(
        &self,
        actor: &Actor,
        project_id: Option<&str>,
        question_id: &str,
        input: &AnswerInput,
        idempotency_key: Option<&str>,
    ) -> Result<Question, OqError> {
        let decide = answer_decision(actor, project_id, question_id, input, idempotency_key);
        let stored = self.store.transact_async_on(question_id, decide).await;
        stored.map(as_recorded)
    }

    pub fn question(
        &self,
        project_id: Option<&str>,
        question_id: &str,
    ) -> Result<Question, OqError> {
        self.store.read(|v| question_in(v, project_id, question_id))
    }

    /// A page of the questions `query` asks for, in its order, with the total of the
    /// whole filter. `query.cursor` is what the previous page returned.
    pub fn list(&self, project_id: Option<&str>, query: &ListQuery) -> Result<ListPage, OqError> {
        self.list_at(project_id, query, crate::engine::sqlite::now_ms())
    }

    /// [`Engine::list`] with snoozes judged at `now` (Unix ms): the clock is the
    /// caller's to give, so a test moves it instead of waiting.
    pub fn list_at(
        &self,
        project_id: Option<&str>,
        query: &ListQuery,
        now: i64,
    ) -> Result<ListPage, OqError> {
        let limit = query.checked_limit()?;
        let after = query.checked_cursor()?;
        let page = self.store.read(|v| {
            v.questions(&QuestionQuery {
                project_id,
                status: query.status,
                search: query.search.as_ref(),
                sort: query.sort,
                after: after.as_ref(),
                limit: limit + 1,
                snoozed: query.snoozed,
                now,
            })
        })?;
        let mut items = page.items;
        let cursor = if items.len() > limit {
            items.truncate(limit);
            items.last().map(|q| position(query.sort, q).encode())
        } else {
            None
        };
        Ok(ListPage {
            items,
            total: page.total,
            total_is_lower_bound: page.total_is_lower_bound,
            cursor,
            snoozed: page.snoozed,
        })
    }

    /// `oq status`'s numbers for `viewer`, snoozes judged now (see [`OpenCounts`]).
    pub fn open_counts(
        &self,
        project_id: Option<&str>,
        viewer: &Actor,
    ) -> Result<OpenCounts, OqError> {
        let now = crate::engine::sqlite::now_ms();
        self.store.read(|v| v.open_counts(project_id, viewer, now))
    }

    /// Blocks until the question is answered (polling the shared store, which another
    /// process may write), or until `timeout`.
    pub fn wait_for_answer(
        &self,
        question_id: &str,
        timeout: Option<Duration>,
        poll: Duration,
    ) -> Result<Question, OqError> {
        let started = Instant::now();
        loop {
            let q = self.question(None, question_id)?;
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
            std::thread::sleep(poll);
        }
    }

    // ---- readiness ------------------------------------------------------------------

    pub fn readiness(&self, project_id: &str) -> Result<Readiness, OqError> {
        let open = self.store.read(|v| v.open_count(project_id))?;
        Ok(Readiness {
            open_questions: open,
            notice: readiness_notice(open),
        })
    }

    /// Records "I'm ready" / "Confirm architecture ready" and warns; never refuses for open
    /// questions.
    pub fn record_readiness(
        &self,
        actor: &Actor,
        project_id: &str,
        gate: ReadinessGate,
    ) -> Result<Readiness, OqError> {
        check_id("projectId", project_id)?;
        let owned = (project_id.to_string(), actor.clone());
        let (_, open) = self.store.transact(move |v| {
            let (project_id, actor) = (owned.0.as_str(), &owned.1);
            let open = v.open_count(project_id)?;
            let event = Event::ReadinessRecorded {
                gate,
                by: actor.id().into(),
                open_questions: open,
            };
            Ok((vec![new_event(project_id, actor, event)], open))
        })?;
        Ok(Readiness {
            open_questions: open,
            notice: readiness_notice(open),
        })
    }
}

/// An answer's decision, owning its inputs so the store can run it on its writer: the
/// answer, its decision record, and the resumption of every gate parked on the question.
fn answer_decision(
    actor: &Actor,
    project_id: Option<&str>,
    question_id: &str,
    input: &AnswerInput,
    idempotency_key: Option<&str>,
) -> impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, Question), OqError> + Send + 'static {
    let owned = (
        actor.clone(),
        project_id.map(str::to_string),
        question_id.to_string(),
        input.clone(),
        idempotency_key.map(str::to_string),
    );
    move |view: &dyn StoreView| {
        let (actor, project_id, question_id, input) =
            (&owned.0, owned.1.as_deref(), owned.2.as_str(), &owned.3);
        let idempotency_key = owned.4.as_deref();
        if let Some(key) = idempotency_key {
            check_id("Idempotency-Key", key)?;
        }
        let question = question_in(view, project_id, question_id)?;
        if is_replay(&question, actor, input, idempotency_key)? {
            return Ok((Vec::new(), question));
        }
        let decided = decide_answer(&question, actor, input)?;
        let decision_event_id = ids::decision_id();
        let project = question.project_id.clone();
        let mut events = vec![
            new_event(
                &project,
                actor,
                Event::QuestionAnswered {
                    question_id: question_id.into(),
                    resposta: decided.resposta.clone(),
                    aceitou_sugestao: decided.aceitou_sugestao,
                    decision_event_id: decision_event_id.clone(),
                    respondida_por: actor.id().into(),
                    answers: decided.choices.clone(),
                    idempotency_key: idempotency_key.map(str::to_string),
                    decision_source: Some(DecisionSource::for_answer(decided.aceitou_sugestao)),
                },
            ),
            new_event(
                &project,
                actor,
                Event::DecisionRecord {
                    decision_event_id: decision_event_id.clone(),
                    actor: actor.id().into(),
                    context: question.pergunta.clone(),
                    choice: decided.resposta.clone(),
                    consequences: question.afeta.clone(),
                    question_id: question_id.into(),
                },
            ),
        ];
        for task_id in view.parked_on(question_id)? {
            events.push(new_event(
                &project,
                actor,
                Event::GateResumed {
                    task_id,
                    question_id: question_id.into(),
                    decision_event_id: decision_event_id.clone(),
                },
            ));
        }
        Ok((events, question))
    }
}

/// The question with its answer as recorded, without reading it back: the question was
/// read in the same transaction and the answer is the event just appended.
fn as_recorded((stored, mut question): (Vec<StoredEvent>, Question)) -> Question {
    if let Some(answer) = stored
        .into_iter()
        .next()
        .and_then(|first| Answer::from_event(first.event, first.at))
    {
        question.answer = Some(answer);
    }
    question
}

/// A question to record: what was declared, by whom, from where; for an imported
/// request, its parts with options and where it lives upstream.
pub struct NewQuestion<'a> {
    pub input: &'a DeclareInput,
    pub autor: &'a str,
    /// `oq` or `opencode`.
    pub source: &'a str,
    /// The id to record it under (an upstream's request id); generated when absent.
    pub question_id: Option<&'a str>,
    pub prompts: Vec<Prompt>,
    pub upstream: Option<Upstream>,
}

impl<'a> NewQuestion<'a> {
    /// A question declared through oq's own door.
    pub fn declared(input: &'a DeclareInput) -> Self {
        NewQuestion {
            input,
            autor: "",
            source: "oq",
            question_id: None,
            prompts: Vec::new(),
            upstream: None,
        }
    }
}

/// Every story and task `afeta` names must be of the question's project: a question of
/// one project never reaches another's dev-context, and a dangling id is a typo caught
/// now rather than a decision that reaches nothing. A story or task of another project
/// is refused exactly like one that does not exist. Rules (`regras`) are free ids.
fn check_references(
    view: &dyn StoreView,
    project_id: &str,
    afeta: &crate::domain::Afeta,
) -> Result<(), OqError> {
    let unknown = |field: &str, noun: &str, id: &str| {
        OqError::invalid(
            ErrorCode::UnknownReference,
            format!("afeta.{field} names {id}, which is not a {noun} of project {project_id}"),
        )
    };
    for id in &afeta.historias {
        if view.story(id)?.is_none_or(|s| s.project_id != project_id) {
            return Err(unknown("historias", "story", id));
        }
    }
    for id in &afeta.tarefas {
        if view.task(id)?.is_none_or(|t| t.project_id != project_id) {
            return Err(unknown("tarefas", "task", id));
        }
    }
    Ok(())
}

/// Where `q` stands in `sort`'s order: the next page starts after it.
fn position(sort: Sort, q: &Question) -> Cursor {
    let key = match sort {
        Sort::Oldest | Sort::Newest => None,
        Sort::Project => Some(q.project_id.clone()),
        Sort::Asker => Some(q.autor.clone()),
    };
    Cursor { seq: q.seq, key }
}
