//! Open questions (ADR 0214 §1–§2): their limits, what they affect, who declares them,
//! and the recorded answer; how an answer is decided is `answering`.
//!
//! Pure: the engine loads the question and its session, these functions decide.

use serde::{Deserialize, Serialize};

use super::actor::{Actor, Role};
use super::choices::{Closure, Prompt, Upstream};
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
    /// Claude Code's hook stopped waiting and handed the question to Claude Code's own
    /// dialog (`open_question.handed_off`): still open, answered there, not here.
    pub handed_off: bool,
    /// Its newest snooze, when the log holds one not ended by an unsnooze; in effect
    /// while its `until` is ahead (`domain::snooze`). Never set on a settled question.
    pub snooze: Option<super::snooze::Snooze>,
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
        if self.handed_off {
            return (false, Some(super::claude_code::HANDED_OFF.into()));
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
