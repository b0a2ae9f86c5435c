//! Answering a question (ADR 0214 §3): the answer's shape against the question (text,
//! the suggestion, or choices among its options), who may answer (the session's author,
//! while it is open), and whether a keyed answer is a retry of the one recorded.
//!
//! Pure: the engine loads the question, these functions decide; refusals come in a fixed
//! order so that a non-author learns nothing about the question's state.

use serde::{Deserialize, Serialize};

use super::actor::Actor;
use super::choices::{render_choices, validate_choices};
use super::error::{ErrorCode, OqError};
use super::question::{Question, RESPOSTA_MAX_CHARS};
use super::text::check_text;

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
/// then whether it is still open and not handed to Claude Code's dialog (409) — a
/// non-author learns nothing about the state.
pub fn decide_answer(
    question: &Question,
    actor: &Actor,
    input: &AnswerInput,
) -> Result<DecidedAnswer, OqError> {
    let decided = decide_shape(question, input)?;
    check_author_and_open(question, actor)?;
    check_not_handed_off(question)?;
    Ok(decided)
}

/// A question Claude Code's hook handed to Claude's own dialog is answered there: the
/// agent waits on that dialog, so an answer recorded here would reach nobody. Refused
/// rather than recorded (the author may still dismiss it; the dialog settles it).
pub fn check_not_handed_off(question: &Question) -> Result<(), OqError> {
    if !question.handed_off {
        return Ok(());
    }
    Err(OqError::conflict(
        ErrorCode::HandedToClaudeCode,
        format!(
            "question {} is {}: Claude Code's hook stopped waiting for oq, and an answer here would reach nobody",
            question.question_id,
            super::claude_code::HANDED_OFF
        ),
    ))
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
            resposta: render_choices(&question.prompts, &choices),
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
                    resposta: render_choices(&question.prompts, &choices),
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
