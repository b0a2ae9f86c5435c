//! Open questions and their answers (ADR 0214 §1–§3): limits, validation, who answers.
//!
//! Pure: the engine loads the question and its session, these functions decide.

use serde::{Deserialize, Serialize};

use super::actor::{Actor, Role};
use super::error::OqError;
use super::text::{check_id, check_text};

/// ADR 0214 §1: `pergunta (≤ 500)`, counted in characters (Unicode scalar values), not bytes.
pub const PERGUNTA_MAX_CHARS: usize = 500;
/// ADR 0214 §1: `sugestao (≤ 300, optional)`.
pub const SUGESTAO_MAX_CHARS: usize = 300;
/// The ADR calls the answer field "short" without a number; 2,000 characters keeps a
/// paragraph with an example and still fits the dev-context budget after truncation.
pub const RESPOSTA_MAX_CHARS: usize = 2_000;
/// A question affects at most this many ids of each kind; more is a runaway agent.
pub const AFETA_MAX_PER_KIND: usize = 50;

/// What a question affects: rules, stories, tasks (`afeta {regras, historias, tarefas}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Afeta {
    #[serde(default)]
    pub regras: Vec<String>,
    #[serde(default)]
    pub historias: Vec<String>,
    #[serde(default)]
    pub tarefas: Vec<String>,
}

impl Afeta {
    pub fn is_empty(&self) -> bool {
        self.regras.is_empty() && self.historias.is_empty() && self.tarefas.is_empty()
    }

    pub fn validate(&self) -> Result<(), OqError> {
        for (kind, ids) in [
            ("regras", &self.regras),
            ("historias", &self.historias),
            ("tarefas", &self.tarefas),
        ] {
            if ids.len() > AFETA_MAX_PER_KIND {
                return Err(OqError::invalid(
                    "too_many_ids",
                    format!(
                        "afeta.{kind} lists {} ids; at most {AFETA_MAX_PER_KIND}",
                        ids.len()
                    ),
                ));
            }
            for id in ids {
                check_id(&format!("afeta.{kind}"), id)?;
            }
        }
        Ok(())
    }

    /// One human line: "rule RN-1 · story S-3 · task T-7".
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        parts.extend(self.regras.iter().map(|r| format!("rule {r}")));
        parts.extend(self.historias.iter().map(|s| format!("story {s}")));
        parts.extend(self.tarefas.iter().map(|t| format!("task {t}")));
        if parts.is_empty() {
            "—".to_string()
        } else {
            parts.join(" · ")
        }
    }
}

/// A declared question with its answer once answered. `status` is never stored: it is
/// `answer.is_some()`, read from the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub question_id: String,
    pub project_id: String,
    pub session_id: String,
    /// The author of the session: the one person who may answer.
    pub session_author: String,
    pub pergunta: String,
    pub sugestao: Option<String>,
    pub afeta: Afeta,
    /// The declaring agent's role (`qa-agent` for a verdict's question).
    pub autor: String,
    /// Where it came from: `oq` (declared here) or `opencode` (imported by a bridge).
    pub source: String,
    pub created_at: i64,
    /// Log position of the declaration: orders the queue and serves as the page cursor.
    pub seq: i64,
    pub answer: Option<Answer>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub resposta: String,
    pub aceitou_sugestao: bool,
    pub decision_event_id: String,
    pub respondida_por: String,
    pub answered_at: i64,
}

impl Question {
    pub fn is_open(&self) -> bool {
        self.answer.is_none()
    }

    /// Whether `actor` may answer now, and if not, why in words (ADR 0064: inert control
    /// with the reason in text).
    pub fn answerability(&self, actor: &Actor) -> (bool, Option<String>) {
        if let Some(a) = &self.answer {
            return (
                false,
                Some(format!("already answered by {}", a.respondida_por)),
            );
        }
        match actor {
            Actor::Agent { .. } => (
                false,
                Some("agents do not answer; the session's author does".into()),
            ),
            Actor::Person { id } if *id == self.session_author => (true, None),
            Actor::Person { .. } => (
                false,
                Some(format!(
                    "only the person who started this session, {}, can answer",
                    self.session_author
                )),
            ),
        }
    }
}

/// `declare_open_question {pergunta, sugestao?, afeta, sessionId}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclareInput {
    pub pergunta: String,
    #[serde(default)]
    pub sugestao: Option<String>,
    #[serde(default)]
    pub afeta: Afeta,
    #[serde(rename = "sessionId")]
    pub session_id: String,
}

impl DeclareInput {
    /// Checks the ADR limits and returns the input as it will be recorded (trimmed).
    pub fn validated(&self) -> Result<DeclareInput, OqError> {
        let pergunta = check_text("pergunta", &self.pergunta, PERGUNTA_MAX_CHARS)?;
        let sugestao = match &self.sugestao {
            None => None,
            Some(s) => Some(check_text("sugestao", s, SUGESTAO_MAX_CHARS)?),
        };
        self.afeta.validate()?;
        check_id("sessionId", &self.session_id)?;
        Ok(DeclareInput {
            pergunta,
            sugestao,
            afeta: self.afeta.clone(),
            session_id: self.session_id.clone(),
        })
    }
}

/// Who may declare directly: ADR 0214 §2.
pub fn check_declarer(actor: &Actor) -> Result<Role, OqError> {
    actor.require_role(
        &[Role::Criativo, Role::Po, Role::Arquiteto, Role::DevLead],
        "declare_open_question",
    )
}

/// The answer body: `{resposta}` or `{aceitarSugestao: true}`, exactly one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerInput {
    #[serde(default)]
    pub resposta: Option<String>,
    #[serde(default, rename = "aceitarSugestao")]
    pub aceitar_sugestao: Option<bool>,
}

impl AnswerInput {
    pub fn text(t: impl Into<String>) -> Self {
        AnswerInput {
            resposta: Some(t.into()),
            aceitar_sugestao: None,
        }
    }
    pub fn accept() -> Self {
        AnswerInput {
            resposta: None,
            aceitar_sugestao: Some(true),
        }
    }
}

/// What an accepted answer records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecidedAnswer {
    pub resposta: String,
    pub aceitou_sugestao: bool,
}

/// Decides an answer. Order of refusals: the body's shape (422), then who answers (403),
/// then whether it is still open (409) — a non-author learns nothing about the state.
pub fn decide_answer(
    question: &Question,
    actor: &Actor,
    input: &AnswerInput,
) -> Result<DecidedAnswer, OqError> {
    let decided = match (&input.resposta, input.aceitar_sugestao) {
        (Some(_), Some(_)) => {
            return Err(OqError::invalid(
                "invalid_body",
                "send either resposta or aceitarSugestao, not both",
            ));
        }
        (None, None) | (None, Some(false)) => {
            return Err(OqError::invalid(
                "invalid_body",
                "send resposta (the answer) or aceitarSugestao: true",
            ));
        }
        (Some(text), None) => DecidedAnswer {
            resposta: check_text("resposta", text, RESPOSTA_MAX_CHARS)?,
            aceitou_sugestao: false,
        },
        (None, Some(true)) => match &question.sugestao {
            Some(s) => DecidedAnswer {
                resposta: s.clone(),
                aceitou_sugestao: true,
            },
            None => {
                return Err(OqError::invalid(
                    "sugestao_inexistente",
                    format!(
                        "question {} has no suggestion to accept",
                        question.question_id
                    ),
                ));
            }
        },
    };
    match actor {
        Actor::Person { id } if *id == question.session_author => {}
        _ => {
            return Err(OqError::NotSessionAuthor {
                author: question.session_author.clone(),
            });
        }
    }
    if question.answer.is_some() {
        return Err(OqError::AlreadyAnswered {
            question_id: question.question_id.clone(),
        });
    }
    Ok(decided)
}
