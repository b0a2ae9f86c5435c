//! Rows of the log turned into the domain's values, whatever store they came from: a
//! question with its settlement and orphan mark, a session, a story or a task folded from
//! its events, a decision. Pure mapping: no queries, no SQL dialect.

use crate::domain::choices::Closure;
use crate::domain::dev_context::Decisao;
use crate::domain::gate::Gate;
use crate::domain::work::{Session, Story, Task, WorkState};
use crate::domain::{Answer, DecisionSource, Event, OqError, Question};

pub fn parse_event(payload: &str) -> Result<Event, OqError> {
    serde_json::from_str(payload)
        .map_err(|e| OqError::Internal(format!("unreadable event in the log: {e}")))
}

/// What a store reads for one question: its declaration, its session's author, its
/// settlement (the event's type, payload and time), whether it was orphaned, and whether
/// Claude Code's hook handed it to Claude's own dialog.
pub struct QuestionRow {
    pub seq: i64,
    pub project_id: String,
    pub created_at: i64,
    pub payload: String,
    pub session_author: Option<String>,
    pub settlement: Option<(String, String, i64)>,
    pub orphaned: bool,
    pub handed_off: bool,
}

impl QuestionRow {
    pub fn into_question(self) -> Result<Question, OqError> {
        let QuestionRow {
            seq,
            project_id,
            created_at,
            payload,
            session_author,
            settlement,
            orphaned,
            handed_off,
        } = self;
        let Event::OpenQuestion {
            question_id,
            pergunta,
            sugestao,
            afeta,
            autor,
            session_id,
            source,
            prompts,
            upstream,
        } = parse_event(&payload)?
        else {
            return Err(OqError::Internal(format!("event {seq} is not a question")));
        };
        let (mut answer, mut closure) = (None, None);
        match settlement {
            None => {}
            Some((kind, p, at)) if kind == "open_question.answered" => {
                answer = Some(Answer::from_event(parse_event(&p)?, at).ok_or_else(|| {
                    OqError::Internal(format!("answer of {question_id} is not an answer"))
                })?);
            }
            Some((_, p, at)) => match parse_event(&p)? {
                Event::QuestionClosed {
                    reason,
                    by,
                    decision_source,
                    ..
                } => {
                    closure = Some(Closure {
                        reason,
                        by,
                        at,
                        decision_source: decision_source
                            .unwrap_or(DecisionSource::for_closure(reason)),
                    })
                }
                _ => {
                    return Err(OqError::Internal(format!(
                        "closure of {question_id} is not a closure"
                    )));
                }
            },
        }
        Ok(Question {
            question_id,
            project_id,
            session_id,
            session_author: session_author.unwrap_or_default(),
            pergunta,
            sugestao,
            afeta,
            autor,
            source,
            created_at,
            seq,
            answer,
            prompts,
            upstream,
            closure,
            orphaned,
            handed_off,
            // Read apart, for open questions only (the stores' `snoozes` reads).
            snooze: None,
        })
    }
}

pub fn session(project_id: String, event: Event) -> Result<Session, OqError> {
    match event {
        Event::SessionStarted {
            session_id,
            kind,
            author,
        } => Ok(Session {
            session_id,
            project_id,
            kind,
            author,
        }),
        other => Err(OqError::Internal(format!(
            "expected a session event, found {}",
            other.type_name()
        ))),
    }
}

/// A story from its events (project, event), oldest first.
pub fn story(events: impl IntoIterator<Item = (String, Event)>) -> Option<Story> {
    let mut story: Option<Story> = None;
    for (project_id, event) in events {
        match event {
            Event::StoryCreated { story_id, title } => {
                story = Some(Story {
                    story_id,
                    project_id,
                    title,
                    state: WorkState::Draft,
                })
            }
            // Only the creating project's events move it: an event of another project
            // naming this id (refused by the engine; only tampering or an old store holds
            // one) moves nothing.
            Event::StoryStateChanged { to, .. } => {
                if let Some(s) = story.as_mut()
                    && s.project_id == project_id
                {
                    s.state = to;
                }
            }
            _ => {}
        }
    }
    story
}

/// A task with its gate from its events (project, event), oldest first.
pub fn task(events: impl IntoIterator<Item = (String, Event)>) -> Option<Task> {
    let mut task: Option<Task> = None;
    for (project_id, event) in events {
        if let Event::TaskCreated {
            task_id,
            story_id,
            session_id,
            title,
            correction_ceiling,
        } = event
        {
            task = Some(Task {
                task_id,
                project_id,
                story_id,
                session_id,
                title,
                state: WorkState::Draft,
                gate: Gate::new(correction_ceiling),
            });
            continue;
        }
        if let Some(t) = task.as_mut()
            && t.project_id == project_id
        {
            t.apply(&event);
        }
    }
    task
}

/// A decision for the dev-context: a declaration and its answer.
pub fn decisao(declared: Event, answered: Event, at: i64, seq: i64) -> Option<Decisao> {
    match (declared, answered) {
        (
            Event::OpenQuestion {
                question_id,
                pergunta,
                ..
            },
            Event::QuestionAnswered {
                resposta,
                aceitou_sugestao,
                decision_event_id,
                respondida_por,
                ..
            },
        ) => Some(Decisao {
            question_id,
            pergunta,
            resposta,
            aceitou_sugestao,
            respondida_por,
            decision_event_id,
            decided_at: at,
            seq,
        }),
        _ => None,
    }
}

/// How many columns a select list names: its commas outside parentheses, plus one. For
/// the dialects' tests that keep a column index after `QUESTION_COLUMNS` true.
#[cfg(test)]
pub(crate) fn select_columns(list: &str) -> usize {
    let mut depth = 0i32;
    let mut columns = 1;
    for c in list.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => columns += 1,
            _ => {}
        }
    }
    columns
}
