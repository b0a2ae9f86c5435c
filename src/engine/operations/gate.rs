//! The QA gate: verdicts, "Waiting for you", and the dev-context (ADR 0214 §6–§7).

use crate::domain::dev_context::{DEV_CONTEXT_HEADER, select_decisions};
use crate::domain::gate::GateChange;
use crate::domain::question::{PERGUNTA_MAX_CHARS, SUGESTAO_MAX_CHARS};
use crate::domain::text::{check_id, check_text};
use crate::domain::{Actor, Afeta, ErrorCode, Event, OqError, Role, Verdict};
use crate::engine::ids;
use crate::engine::store::{ParkedTask, Store};

use super::{DevContext, Engine, VerdictInput, VerdictOutcome, new_event, question_in, task_in};

impl<S: Store> Engine<S> {
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
            .ok_or_else(|| OqError::invalid(ErrorCode::InvalidBody, "verdict is required"))?;
        let question = validate_verdict_input(verdict, input)?;
        if let Some(s) = &input.subspecialty {
            check_id("subspecialty", s)?;
        }
        let owned = (
            project_id.to_string(),
            actor.clone(),
            task_id.to_string(),
            input.clone(),
        );
        let (_, outcome) = self.store.transact(move |v| {
            let (project_id, actor) = (owned.0.as_str(), &owned.1);
            let (task_id, input) = (owned.2.as_str(), &owned.3);
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
                                prompts: Vec::new(),
                                upstream: None,
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
            let linked = v.decisions_linked(&task.project_id, &task.task_id, &task.story_id)?;
            Ok(DevContext {
                header: DEV_CONTEXT_HEADER.into(),
                decisoes: select_decisions(linked),
            })
        })
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
                ErrorCode::InvalidBody,
                "send pergunta or openQuestionId, not both",
            )),
            (None, None) => Err(OqError::invalid(
                ErrorCode::InvalidBody,
                "needs_user_decision needs pergunta (with an optional sugestao) or openQuestionId",
            )),
            (None, Some(id)) => {
                if input.sugestao.is_some() {
                    return Err(OqError::invalid(
                        ErrorCode::InvalidBody,
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
            ErrorCode::InvalidBody,
            format!(
                "{verdict} carries no question; pergunta, sugestao and openQuestionId go with needs_user_decision"
            ),
        )),
        _ => Ok(VerdictQuestion::None),
    }
}
