//! ADR 0214's operations, store-agnostic: read, decide with the domain, append.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::ids;
use super::store::{NewEvent, ParkedTask, QuestionQuery, StatusFilter, Store, StoreView};
use crate::domain::dev_context::{DEV_CONTEXT_HEADER, Decisao, select_decisions};
use crate::domain::gate::{DEFAULT_CORRECTION_CEILING, GateChange};
use crate::domain::question::{
    PERGUNTA_MAX_CHARS, SUGESTAO_MAX_CHARS, check_declarer, decide_answer,
};
use crate::domain::readiness::{ReadinessGate, readiness_notice};
use crate::domain::text::{check_id, check_text};
use crate::domain::work::{CitedQuestion, check_story_correction};
use crate::domain::{
    Actor, Afeta, Answer, AnswerInput, DeclareInput, Event, OqError, Question, Role, Session,
    SessionKind, StoredEvent, Story, Task, Verdict, WorkState,
};

/// At most this many questions a page (RN-180).
pub const PAGE_LIMIT: usize = 50;
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
    /// Pass back to get the next page; `None` on the last.
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Readiness {
    pub open_questions: u64,
    /// "N questions are still open — answer", or null when none are.
    pub notice: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DevContext {
    pub header: &'static str,
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
                "role_not_allowed",
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
        let (_, session) = self.store.transact(|view| {
            if view.session(&session_id)?.is_some() {
                return Err(OqError::conflict(
                    "session_exists",
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
        let session_id = format!("{project_id}.{person}");
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
                code: "session_exists",
                ..
            }) => self
                .store
                .read(|v| v.session(&session_id))?
                .ok_or_else(|| OqError::not_found("session", &session_id)),
            other => other,
        }
    }

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
        self.record_question(actor, project_id, &input, role.as_str(), "oq", None)
    }

    /// Records a question whose rules were checked by the caller (a declare, a verdict, or
    /// a bridge importing an upstream question under the upstream's own id).
    pub fn record_question(
        &self,
        actor: &Actor,
        project_id: &str,
        input: &DeclareInput,
        autor: &str,
        source: &str,
        question_id: Option<&str>,
    ) -> Result<Question, OqError> {
        let question_id = question_id
            .map(str::to_string)
            .unwrap_or_else(ids::question_id);
        let (stored, session) = self.store.transact(|view| {
            let session = session_in(view, project_id, &input.session_id)?;
            if view.question(&question_id)?.is_some() {
                return Err(OqError::conflict(
                    "question_exists",
                    format!("question {question_id} already exists"),
                ));
            }
            let event = Event::OpenQuestion {
                question_id: question_id.clone(),
                pergunta: input.pergunta.clone(),
                sugestao: input.sugestao.clone(),
                afeta: input.afeta.clone(),
                autor: autor.to_string(),
                session_id: input.session_id.clone(),
                source: source.to_string(),
            };
            Ok((vec![new_event(project_id, actor, event)], session))
        })?;
        let at = stored.first().map(|e| (e.seq, e.at)).unwrap_or_default();
        Ok(Question {
            question_id,
            project_id: project_id.into(),
            session_id: input.session_id.clone(),
            session_author: session.author,
            pergunta: input.pergunta.clone(),
            sugestao: input.sugestao.clone(),
            afeta: input.afeta.clone(),
            autor: autor.into(),
            source: source.into(),
            created_at: at.1,
            seq: at.0,
            answer: None,
        })
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
        let (stored, mut question) = self.store.transact(|view| {
            let question = question_in(view, project_id, question_id)?;
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
        })?;
        if let Some(StoredEvent {
            at,
            event:
                Event::QuestionAnswered {
                    resposta,
                    aceitou_sugestao,
                    decision_event_id,
                    respondida_por,
                    ..
                },
            ..
        }) = stored.into_iter().next()
        {
            question.answer = Some(Answer {
                resposta,
                aceitou_sugestao,
                decision_event_id,
                respondida_por,
                answered_at: at,
            });
        }
        Ok(question)
    }

    pub fn question(
        &self,
        project_id: Option<&str>,
        question_id: &str,
    ) -> Result<Question, OqError> {
        self.store.read(|v| question_in(v, project_id, question_id))
    }

    /// A page of questions, oldest first. `cursor` is what the previous page returned.
    pub fn list(
        &self,
        project_id: Option<&str>,
        status: StatusFilter,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<ListPage, OqError> {
        if limit == 0 || limit > PAGE_LIMIT {
            return Err(OqError::invalid(
                "invalid_limit",
                format!("limit {limit}: expected 1 to {PAGE_LIMIT}"),
            ));
        }
        let after_seq = parse_cursor(cursor)?;
        let page = self.store.read(|v| {
            v.questions(&QuestionQuery {
                project_id,
                status,
                after_seq,
                limit: limit + 1,
            })
        })?;
        let mut items = page.items;
        let cursor = if items.len() > limit {
            items.truncate(limit);
            items.last().map(|q| q.seq.to_string())
        } else {
            None
        };
        Ok(ListPage {
            items,
            total: page.total,
            cursor,
        })
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
        let (_, open) = self.store.transact(|v| {
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

    // ---- stories --------------------------------------------------------------------

    pub fn create_story(
        &self,
        actor: &Actor,
        project_id: &str,
        title: &str,
    ) -> Result<Story, OqError> {
        actor.require_role(&[Role::Po], "creating a story")?;
        check_id("projectId", project_id)?;
        let title = check_text("title", title, TITLE_MAX_CHARS)?;
        let story_id = ids::story_id();
        let story = Story {
            story_id: story_id.clone(),
            project_id: project_id.into(),
            title: title.clone(),
            state: WorkState::Draft,
        };
        self.store.transact(|_| {
            Ok((
                vec![new_event(
                    project_id,
                    actor,
                    Event::StoryCreated { story_id, title },
                )],
                (),
            ))
        })?;
        Ok(story)
    }

    pub fn move_story(
        &self,
        actor: &Actor,
        project_id: &str,
        story_id: &str,
        to: WorkState,
    ) -> Result<Story, OqError> {
        actor.require_role(&[Role::Po], "moving a story")?;
        let (_, story) = self.store.transact(|v| {
            let mut story = story_in(v, project_id, story_id)?;
            story.check_move(to)?;
            let event = Event::StoryStateChanged {
                story_id: story_id.into(),
                from: story.state,
                to,
            };
            story.state = to;
            Ok((vec![new_event(project_id, actor, event)], story))
        })?;
        Ok(story)
    }

    /// ADR 0212 as revised by ADR 0214 §8.
    pub fn correct_story(
        &self,
        actor: &Actor,
        project_id: &str,
        story_id: &str,
        question_id: Option<&str>,
    ) -> Result<Story, OqError> {
        actor.require_role(&[Role::Po], "correcting a story")?;
        let (_, story) = self.store.transact(|v| {
            let story = story_in(v, project_id, story_id)?;
            let cited = match question_id {
                None => CitedQuestion::None,
                Some(q) => match question_in(v, Some(project_id), q)?.answer {
                    Some(_) => CitedQuestion::Answered,
                    None => CitedQuestion::Open,
                },
            };
            let task_states: Vec<WorkState> = v
                .tasks_of_story(story_id)?
                .iter()
                .map(|t| t.state)
                .collect();
            check_story_correction(&story, &task_states, cited)?;
            let event = Event::StoryCorrected {
                story_id: story_id.into(),
                question_id: question_id.map(Into::into),
            };
            Ok((vec![new_event(project_id, actor, event)], story))
        })?;
        Ok(story)
    }

    pub fn stories(&self, project_id: Option<&str>) -> Result<Vec<Story>, OqError> {
        self.store.read(|v| v.stories(project_id))
    }

    // ---- tasks and the QA gate ------------------------------------------------------

    pub fn create_task(
        &self,
        actor: &Actor,
        project_id: &str,
        story_id: &str,
        session_id: &str,
        title: &str,
    ) -> Result<Task, OqError> {
        actor.require_role(&[Role::Po, Role::DevLead], "creating a task")?;
        let title = check_text("title", title, TITLE_MAX_CHARS)?;
        let ceiling = self.config.correction_ceiling;
        let (_, task) = self.store.transact(|v| {
            story_in(v, project_id, story_id)?;
            let session = session_in(v, project_id, session_id)?;
            if session.kind != SessionKind::Execution {
                return Err(OqError::invalid(
                    "not_an_execution_session",
                    format!("session {session_id} is a conversation; a task belongs to an execution session"),
                ));
            }
            let task_id = ids::task_id();
            let task = Task {
                task_id: task_id.clone(),
                project_id: project_id.into(),
                story_id: story_id.into(),
                session_id: session_id.into(),
                title: title.clone(),
                state: WorkState::Draft,
                gate: crate::domain::Gate::new(ceiling),
            };
            let event = Event::TaskCreated { task_id, story_id: story_id.into(), session_id: session_id.into(), title, correction_ceiling: ceiling };
            Ok((vec![new_event(project_id, actor, event)], task))
        })?;
        Ok(task)
    }

    pub fn move_task(
        &self,
        actor: &Actor,
        project_id: &str,
        task_id: &str,
        to: WorkState,
    ) -> Result<Task, OqError> {
        actor.require_role(&[Role::Po, Role::DevLead], "moving a task")?;
        let (_, task) = self.store.transact(|v| {
            let mut task = task_in(v, project_id, task_id)?;
            let event = Event::TaskStateChanged {
                task_id: task_id.into(),
                from: task.state,
                to,
            };
            task.state = to;
            Ok((vec![new_event(project_id, actor, event)], task))
        })?;
        Ok(task)
    }

    pub fn task(&self, project_id: &str, task_id: &str) -> Result<Task, OqError> {
        self.store.read(|v| task_in(v, project_id, task_id))
    }

    /// emit_qa_verdict. `needs_user_decision` spends no correction, records (or reuses) the
    /// question in the task's execution session, and parks the gate — all or nothing.
    pub fn verdict(
        &self,
        actor: &Actor,
        project_id: &str,
        task_id: &str,
        input: &VerdictInput,
    ) -> Result<VerdictOutcome, OqError> {
        actor.require_role(&[Role::QaAgent], "a QA verdict")?;
        let verdict = input
            .verdict
            .ok_or_else(|| OqError::invalid("invalid_body", "verdict is required"))?;
        let question = validate_verdict_input(verdict, input)?;
        if let Some(s) = &input.subspecialty {
            check_id("subspecialty", s)?;
        }
        let (_, outcome) = self.store.transact(|v| {
            let mut task = task_in(v, project_id, task_id)?;
            let change = task.gate.decide(verdict)?;
            let mut events = Vec::new();
            let mut parked_on = None;
            let mut verdict_event = Event::QaVerdict {
                task_id: task_id.into(),
                verdict,
                subspecialty: input.subspecialty.clone(),
                open_question_id: None,
            };
            let mut follow = Vec::new();
            match change {
                GateChange::Approve => follow.push(Event::GateApproved {
                    task_id: task_id.into(),
                }),
                GateChange::CountCorrection {
                    corrections,
                    exhausted,
                } => {
                    follow.push(Event::GateCorrectionCounted {
                        task_id: task_id.into(),
                        corrections,
                        ceiling: task.gate.ceiling,
                    });
                    if exhausted {
                        follow.push(Event::GateExhausted {
                            task_id: task_id.into(),
                            corrections,
                        });
                    }
                }
                GateChange::Park => {
                    let question_id = match &question {
                        VerdictQuestion::Existing(id) => {
                            let q = question_in(v, Some(project_id), id)?;
                            if q.answer.is_some() {
                                return Err(OqError::AlreadyAnswered {
                                    question_id: id.clone(),
                                });
                            }
                            id.clone()
                        }
                        VerdictQuestion::New { pergunta, sugestao } => {
                            let id = ids::question_id();
                            follow.push(Event::OpenQuestion {
                                question_id: id.clone(),
                                pergunta: pergunta.clone(),
                                sugestao: sugestao.clone(),
                                afeta: Afeta {
                                    tarefas: vec![task_id.into()],
                                    ..Afeta::default()
                                },
                                autor: Role::QaAgent.as_str().into(),
                                session_id: task.session_id.clone(),
                                source: "oq".into(),
                            });
                            id
                        }
                        VerdictQuestion::None => {
                            unreachable!("validated: needs_user_decision carries a question")
                        }
                    };
                    if let Event::QaVerdict {
                        open_question_id, ..
                    } = &mut verdict_event
                    {
                        *open_question_id = Some(question_id.clone());
                    }
                    follow.push(Event::GateRescueParked {
                        task_id: task_id.into(),
                        question_id: question_id.clone(),
                    });
                    parked_on = Some(question_id);
                }
            }
            events.push(new_event(project_id, actor, verdict_event));
            for e in follow {
                task.apply(&e);
                events.push(new_event(project_id, actor, e));
            }
            Ok((
                events,
                VerdictOutcome {
                    task,
                    question_id: parked_on,
                },
            ))
        })?;
        Ok(outcome)
    }

    /// "Waiting for you": tasks parked on a question `person` must answer.
    pub fn waiting_for(
        &self,
        project_id: Option<&str>,
        person: &str,
    ) -> Result<Vec<ParkedTask>, OqError> {
        self.store.read(|v| v.waiting_for(project_id, person))
    }

    /// ADR 0214 §7: the decisions the task's dev and QA see.
    pub fn dev_context(&self, project_id: &str, task_id: &str) -> Result<DevContext, OqError> {
        self.store.read(|v| {
            let task = task_in(v, project_id, task_id)?;
            let linked = v.decisions_linked(&task.task_id, &task.story_id)?;
            Ok(DevContext {
                header: DEV_CONTEXT_HEADER,
                decisoes: select_decisions(linked),
            })
        })
    }

    // ---- the log --------------------------------------------------------------------

    pub fn revision(&self) -> Result<i64, OqError> {
        self.store.read(|v| v.revision())
    }

    pub fn events_after(
        &self,
        project_id: Option<&str>,
        seq: i64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, OqError> {
        self.store.read(|v| v.events_after(project_id, seq, limit))
    }
}

enum VerdictQuestion {
    None,
    Existing(String),
    New {
        pergunta: String,
        sugestao: Option<String>,
    },
}

/// `needs_user_decision` carries `{pergunta, sugestao?}` or `{openQuestionId}`, exactly one;
/// the other verdicts carry neither.
fn validate_verdict_input(
    verdict: Verdict,
    input: &VerdictInput,
) -> Result<VerdictQuestion, OqError> {
    let carries =
        input.pergunta.is_some() || input.sugestao.is_some() || input.open_question_id.is_some();
    match verdict {
        Verdict::NeedsUserDecision => match (&input.pergunta, &input.open_question_id) {
            (Some(_), Some(_)) => Err(OqError::invalid(
                "invalid_body",
                "send pergunta or openQuestionId, not both",
            )),
            (None, None) => Err(OqError::invalid(
                "invalid_body",
                "needs_user_decision needs pergunta (with an optional sugestao) or openQuestionId",
            )),
            (None, Some(id)) => {
                if input.sugestao.is_some() {
                    return Err(OqError::invalid(
                        "invalid_body",
                        "sugestao goes with pergunta, not with openQuestionId",
                    ));
                }
                check_id("openQuestionId", id)?;
                Ok(VerdictQuestion::Existing(id.clone()))
            }
            (Some(p), None) => Ok(VerdictQuestion::New {
                pergunta: check_text("pergunta", p, PERGUNTA_MAX_CHARS)?,
                sugestao: input
                    .sugestao
                    .as_deref()
                    .map(|s| check_text("sugestao", s, SUGESTAO_MAX_CHARS))
                    .transpose()?,
            }),
        },
        _ if carries => Err(OqError::invalid(
            "invalid_body",
            format!(
                "{verdict} carries no question; pergunta, sugestao and openQuestionId go with needs_user_decision"
            ),
        )),
        _ => Ok(VerdictQuestion::None),
    }
}

fn new_event(project_id: &str, actor: &Actor, event: Event) -> NewEvent {
    NewEvent {
        project_id: project_id.into(),
        actor: actor.id().into(),
        event,
    }
}

fn parse_cursor(cursor: Option<&str>) -> Result<i64, OqError> {
    match cursor {
        None | Some("") => Ok(0),
        Some(c) => c.parse::<i64>().ok().filter(|n| *n >= 0).ok_or_else(|| {
            OqError::invalid(
                "invalid_cursor",
                format!("cursor {c:?} is not one this server gave"),
            )
        }),
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
