//! Open questions and their answers (ADR 0214 §1–§3): limits, validation, who answers.
//!
//! Pure: the engine loads the question and its session, these functions decide.

use serde::{Deserialize, Serialize};

use super::actor::{Actor, Role};
use super::choices::{Closure, Prompt, Upstream, validate_choices};
use super::error::{ErrorCode, OqError};
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
/// Read only from an object (see [`AfetaFields`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Afeta {
    pub regras: Vec<String>,
    pub historias: Vec<String>,
    pub tarefas: Vec<String>,
}

/// `afeta`'s fields as serde derives them; [`Afeta`] reads them only from a map, because
/// the derive would also take a JSON array by position (`[["RN-1"], [], []]`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AfetaFields {
    #[serde(default)]
    regras: Vec<String>,
    #[serde(default)]
    historias: Vec<String>,
    #[serde(default)]
    tarefas: Vec<String>,
}

impl<'de> Deserialize<'de> for Afeta {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ObjectOnly;
        impl<'de> serde::de::Visitor<'de> for ObjectOnly {
            type Value = Afeta;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object {regras, historias, tarefas}")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Afeta, A::Error> {
                let f =
                    AfetaFields::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(Afeta {
                    regras: f.regras,
                    historias: f.historias,
                    tarefas: f.tarefas,
                })
            }
        }
        d.deserialize_map(ObjectOnly)
    }
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
                    ErrorCode::TooManyIds,
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
    /// The parts of a question with options (OpenCode's); empty for ADR questions.
    pub prompts: Vec<Prompt>,
    /// Where an imported question lives upstream.
    pub upstream: Option<Upstream>,
    /// Dismissed, or settled upstream, without an answer here.
    pub closure: Option<Closure>,
    /// Upstream's session was aborted while the question was pending: it stays listed
    /// there until someone dismisses it.
    pub orphaned: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub resposta: String,
    pub aceitou_sugestao: bool,
    pub decision_event_id: String,
    pub respondida_por: String,
    pub answered_at: i64,
    /// For a question with options: the chosen labels or typed text, one array per part.
    pub choices: Vec<Vec<String>>,
    /// The key the answering client sent, if any (see `Engine::answer_once`).
    pub idempotency_key: Option<String>,
    /// Who or what decided: the person, their acceptance of the suggestion, a timer…
    pub decision_source: super::DecisionSource,
}

impl Answer {
    /// The answer an `open_question.answered` event records; `None` for any other event.
    pub fn from_event(event: super::Event, answered_at: i64) -> Option<Answer> {
        match event {
            super::Event::QuestionAnswered {
                resposta,
                aceitou_sugestao,
                decision_event_id,
                respondida_por,
                answers,
                idempotency_key,
                decision_source,
                ..
            } => Some(Answer {
                decision_source: decision_source
                    .unwrap_or(super::DecisionSource::for_answer(aceitou_sugestao)),
                resposta,
                aceitou_sugestao,
                decision_event_id,
                respondida_por,
                answered_at,
                choices: answers,
                idempotency_key,
            }),
            _ => None,
        }
    }
}

impl Question {
    pub fn is_open(&self) -> bool {
        self.answer.is_none() && self.closure.is_none()
    }

    /// `open`, `answered` or `closed`.
    pub fn status(&self) -> &'static str {
        match (&self.answer, &self.closure) {
            (Some(_), _) => "answered",
            (None, Some(_)) => "closed",
            (None, None) => "open",
        }
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
        if let Some(c) = &self.closure {
            return (
                false,
                Some(format!("closed ({}) by {}", c.reason.as_str(), c.by)),
            );
        }
        match actor {
            Actor::Agent { .. } | Actor::Service { .. } => (
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
    /// The caller's `Idempotency-Key` (a header, never the body): a retry with the same
    /// key from the same agent is the first declaration, not a second question.
    #[serde(skip)]
    pub idempotency_key: Option<String>,
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
            idempotency_key: match &self.idempotency_key {
                Some(key) => {
                    check_id("Idempotency-Key", key)?;
                    Some(key.clone())
                }
                None => None,
            },
        })
    }

    /// Whether `question`, found under this input's key, is this declaration again (a
    /// retry after a lost reply or a killed process): refused as
    /// `idempotency_key_reused` when the key was used for another question.
    pub fn check_replay_of(&self, question: &Question, autor: &str) -> Result<(), OqError> {
        let same = question.pergunta == self.pergunta
            && question.sugestao == self.sugestao
            && question.afeta == self.afeta
            && question.session_id == self.session_id
            && question.autor == autor;
        if same {
            return Ok(());
        }
        Err(OqError::invalid(
            ErrorCode::IdempotencyKeyReused,
            format!(
                "this Idempotency-Key was used for another question ({}); a retry sends the same body, a new question a new key",
                question.question_id
            ),
        ))
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
    /// For a question with options: one array of chosen labels or typed text per part.
    #[serde(default)]
    pub answers: Option<Vec<Vec<String>>>,
}

impl AnswerInput {
    pub fn text(t: impl Into<String>) -> Self {
        AnswerInput {
            resposta: Some(t.into()),
            ..AnswerInput::default()
        }
    }
    pub fn accept() -> Self {
        AnswerInput {
            aceitar_sugestao: Some(true),
            ..AnswerInput::default()
        }
    }
}

/// What an accepted answer records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecidedAnswer {
    pub resposta: String,
    pub aceitou_sugestao: bool,
    /// For a question with options: the checked choices.
    pub choices: Vec<Vec<String>>,
}

/// Decides an answer. Order of refusals: the body's shape (422), then who answers (403),
/// then whether it is still open (409) — a non-author learns nothing about the state.
pub fn decide_answer(
    question: &Question,
    actor: &Actor,
    input: &AnswerInput,
) -> Result<DecidedAnswer, OqError> {
    let decided = decide_shape(question, input)?;
    check_author_and_open(question, actor)?;
    Ok(decided)
}

/// Whether an answer carrying `key` is a retry of the answer the question already holds
/// (an outbox delivering again after a lost reply): `Ok(true)` when the same person sent
/// the same answer under the same key — its first result stands, nothing new is recorded;
/// `Ok(false)` when the key is not the answer's (decide it as a new answer). The answer's
/// key with another body, or from another person, is refused (`idempotency_key_reused`):
/// it is not a retry, and answering it with the first answer would hide the difference.
/// A body that is not an answer at all gets its own refusal first.
pub fn is_replay(
    question: &Question,
    actor: &Actor,
    input: &AnswerInput,
    key: Option<&str>,
) -> Result<bool, OqError> {
    let Some(answer) = question.answer.as_ref() else {
        return Ok(false);
    };
    if key.is_none() || answer.idempotency_key.as_deref() != key {
        return Ok(false);
    }
    if answer.respondida_por != actor.id() {
        return Err(OqError::invalid(
            ErrorCode::IdempotencyKeyReused,
            "this Idempotency-Key belongs to another person's answer; send a key of your own",
        ));
    }
    let again = decide_shape(question, input)?;
    let same = again.resposta == answer.resposta
        && again.aceitou_sugestao == answer.aceitou_sugestao
        && again.choices == answer.choices;
    if !same {
        return Err(OqError::invalid(
            ErrorCode::IdempotencyKeyReused,
            format!(
                "this Idempotency-Key was used for another answer to {}; a retry sends the same body, a new answer a new key",
                question.question_id
            ),
        ));
    }
    Ok(true)
}

/// Only the session's author acts on a question, and only while it is open.
pub fn check_author_and_open(question: &Question, actor: &Actor) -> Result<(), OqError> {
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
    if let Some(c) = &question.closure {
        return Err(OqError::conflict(
            ErrorCode::QuestionClosed,
            format!(
                "question {} was closed ({}) by {}",
                question.question_id,
                c.reason.as_str(),
                c.by
            ),
        ));
    }
    Ok(())
}

/// Exactly one of `resposta`, `aceitarSugestao: true` or `answers` (the latter for a
/// question with options; a lone free-text part also takes `resposta`).
fn decide_shape(question: &Question, input: &AnswerInput) -> Result<DecidedAnswer, OqError> {
    let given = [
        input.resposta.is_some(),
        input.aceitar_sugestao.is_some(),
        input.answers.is_some(),
    ];
    match given.iter().filter(|g| **g).count() {
        0 => {
            return Err(OqError::invalid(
                ErrorCode::InvalidBody,
                "send resposta (the answer) or aceitarSugestao: true",
            ));
        }
        1 => {}
        _ => {
            return Err(OqError::invalid(
                ErrorCode::InvalidBody,
                "send one of resposta, aceitarSugestao or answers, not several",
            ));
        }
    }
    if let Some(answers) = &input.answers {
        if question.prompts.is_empty() {
            return Err(OqError::invalid(
                ErrorCode::InvalidAnswers,
                format!(
                    "question {} has no options; send resposta",
                    question.question_id
                ),
            ));
        }
        let choices = validate_choices(&question.prompts, answers)?;
        return Ok(DecidedAnswer {
            resposta: super::choices::render_choices(&question.prompts, &choices),
            aceitou_sugestao: false,
            choices,
        });
    }
    if let Some(text) = &input.resposta {
        let resposta = check_text("resposta", text, RESPOSTA_MAX_CHARS)?;
        return match question.prompts.as_slice() {
            [] => Ok(DecidedAnswer {
                resposta,
                aceitou_sugestao: false,
                choices: Vec::new(),
            }),
            [only] if only.custom => {
                let choices = vec![vec![resposta]];
                Ok(DecidedAnswer {
                    resposta: super::choices::render_choices(&question.prompts, &choices),
                    aceitou_sugestao: false,
                    choices,
                })
            }
            parts => Err(OqError::invalid(
                ErrorCode::InvalidAnswers,
                format!(
                    "question {} has {} part(s) with options; send answers",
                    question.question_id,
                    parts.len()
                ),
            )),
        };
    }
    if input.aceitar_sugestao != Some(true) {
        return Err(OqError::invalid(
            ErrorCode::InvalidBody,
            "send resposta (the answer) or aceitarSugestao: true",
        ));
    }
    match &question.sugestao {
        Some(s) => Ok(DecidedAnswer {
            resposta: s.clone(),
            aceitou_sugestao: true,
            choices: Vec::new(),
        }),
        None => Err(OqError::invalid(
            ErrorCode::SugestaoInexistente,
            format!(
                "question {} has no suggestion to accept",
                question.question_id
            ),
        )),
    }
}
