//! Each tool call: its arguments read strictly (an unknown field, a wrong type or a
//! missing one is `invalid_body`, naming it), run on the engine as the door's agent,
//! inside the door's project and session; results are JSON values.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::Door;
use crate::domain::choices::{Prompt, PromptOption};
use crate::domain::declared::Origin;
use crate::domain::{Afeta, DecisionSource, DeclareInput, ErrorCode, OqError, Question};
use crate::engine::{Engine, ListQuery, PAGE_LIMIT, StatusFilter, Store};
use crate::wire::QuestionItem;

/// The header of the one part an MCP question with `options` has.
const CHOICE_HEADER: &str = "Choice";

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DeclareArgs {
    pergunta: String,
    #[serde(default)]
    sugestao: Option<String>,
    #[serde(default)]
    afeta: Afeta,
    #[serde(default)]
    options: Option<Vec<OptionArg>>,
    #[serde(default)]
    multiple: bool,
    #[serde(default)]
    idempotency_key: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OptionArg {
    label: String,
    #[serde(default)]
    description: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WaitArgs {
    pub question_id: String,
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct IdArgs {
    question_id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    #[serde(default)]
    status: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WithdrawArgs {
    question_id: String,
    reason: String,
}

/// A tool's arguments as its type, or `invalid_body` naming the tool and the problem.
pub fn parse<T: DeserializeOwned>(tool: &str, args: Option<JsonObject>) -> Result<T, OqError> {
    let value = Value::Object(args.unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|e| {
        let at = e.path().to_string();
        let at = if at == "." {
            String::new()
        } else {
            format!("{at}: ")
        };
        OqError::invalid(ErrorCode::InvalidBody, format!("{tool}: {at}{}", e.inner()))
    })
}

/// Told after each write (the server's change signal wakes its event streams at once).
pub type Notify = Arc<dyn Fn() + Send + Sync>;

/// The engine calls of one door; each runs on tokio's blocking pool (SQLite may wait on
/// another process's lock, PostgreSQL on the network).
pub struct Calls<S> {
    pub engine: Arc<Engine<S>>,
    pub notify: Option<Notify>,
}

impl<S> Clone for Calls<S> {
    fn clone(&self) -> Self {
        Calls {
            engine: Arc::clone(&self.engine),
            notify: self.notify.clone(),
        }
    }
}

impl<S: Store + 'static> Calls<S> {
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Engine<S>) -> Result<T, OqError> + Send + 'static,
    ) -> Result<T, OqError> {
        let engine = Arc::clone(&self.engine);
        tokio::task::spawn_blocking(move || f(&engine))
            .await
            .map_err(|e| OqError::Internal(format!("engine task failed: {e}")))?
    }

    /// [`Calls::blocking`] for a write: the change is told once it landed.
    async fn writing<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Engine<S>) -> Result<T, OqError> + Send + 'static,
    ) -> Result<T, OqError> {
        let out = self.blocking(f).await?;
        if let Some(notify) = &self.notify {
            notify();
        }
        Ok(out)
    }

    pub async fn declare(&self, door: &Door, args: DeclareArgs) -> Result<Value, OqError> {
        let prompts = match (args.options, args.multiple) {
            (None, false) => Vec::new(),
            (None, true) => {
                return Err(OqError::invalid(
                    ErrorCode::InvalidOptions,
                    "multiple needs options to choose from",
                ));
            }
            // An empty list is refused by the parts' check, never read as "no options".
            (Some(options), multiple) => vec![Prompt {
                header: CHOICE_HEADER.into(),
                question: args.pergunta.clone(),
                options: options
                    .into_iter()
                    .map(|o| PromptOption {
                        label: o.label,
                        description: o.description,
                    })
                    .collect(),
                multiple,
                custom: true,
            }],
        };
        let input = DeclareInput {
            pergunta: args.pergunta,
            sugestao: args.sugestao,
            afeta: args.afeta,
            session_id: door.session.clone(),
            idempotency_key: args.idempotency_key,
        };
        let door = door.clone();
        let q = self
            .writing(move |e| {
                e.declare_from(
                    &door.actor,
                    &door.project,
                    Origin::Mcp,
                    &input,
                    &prompts,
                    None,
                )
            })
            .await?;
        Ok(json!({
            "questionId": q.question_id,
            "answeredBy": q.session_author,
            "sessionId": q.session_id,
            "projectId": q.project_id,
            "status": q.status(),
            "source": q.source,
        }))
    }

    /// The door's question `id`, with why it was withdrawn when it was.
    pub async fn mine(&self, door: &Door, id: &str) -> Result<(Question, Option<String>), OqError> {
        let (door, id) = (door.clone(), id.to_string());
        self.blocking(move |e| {
            let q = in_session(&door, e.question(Some(&door.project), &id)?)?;
            let reason = match q.closure.as_ref().map(|c| c.decision_source) {
                Some(DecisionSource::Withdrawn) => e.withdraw_reason(&id)?,
                _ => None,
            };
            Ok((q, reason))
        })
        .await
    }

    pub async fn get(&self, door: &Door, args: IdArgs) -> Result<Value, OqError> {
        let (q, _) = self.mine(door, &args.question_id).await?;
        let asked = q.clone();
        let similar = self.blocking(move |e| e.similar_answer(&asked)).await?;
        to_value(&QuestionItem::from_question(&q, &door.actor).with_similar(similar))
    }

    pub async fn list(&self, door: &Door, args: ListArgs) -> Result<Value, OqError> {
        let status: StatusFilter = args.status.as_deref().unwrap_or("open").parse()?;
        let door = door.clone();
        let items = self
            .blocking(move |e| {
                // The engine pages a project; the session's questions are picked from it.
                let (mut mine, mut cursor) = (Vec::new(), None::<String>);
                loop {
                    let page = e.list(
                        Some(&door.project),
                        &ListQuery::new(status).after(cursor.as_deref()),
                    )?;
                    mine.extend(
                        page.items
                            .iter()
                            .filter(|q| q.session_id == door.session)
                            .map(|q| QuestionItem::from_question(q, &door.actor)),
                    );
                    match page.cursor {
                        Some(c) if mine.len() < PAGE_LIMIT => cursor = Some(c),
                        _ => break,
                    }
                }
                Ok(mine)
            })
            .await?;
        Ok(json!({"total": items.len(), "items": items}))
    }

    pub async fn withdraw(&self, door: &Door, args: WithdrawArgs) -> Result<Value, OqError> {
        self.mine(door, &args.question_id).await?;
        let door = door.clone();
        let q = self
            .writing(move |e| {
                e.withdraw(&door.actor, &door.project, &args.question_id, &args.reason)
            })
            .await?;
        Ok(outcome(&q, None).unwrap_or(Value::Null))
    }
}

fn in_session(door: &Door, q: Question) -> Result<Question, OqError> {
    if q.session_id == door.session {
        return Ok(q);
    }
    Err(OqError::forbidden(
        ErrorCode::OtherSession,
        format!(
            "question {} is of another session than this door's ({})",
            q.question_id, door.session
        ),
    ))
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, OqError> {
    serde_json::to_value(v).map_err(|e| OqError::Internal(e.to_string()))
}

/// What became of a question, as `wait_for_answer` reports it; `None` while it is open.
pub fn outcome(q: &Question, withdraw_reason: Option<String>) -> Option<Value> {
    if let Some(a) = &q.answer {
        let mut v = json!({
            "outcome": "answered",
            "questionId": q.question_id,
            "resposta": a.resposta,
            "aceitouSugestao": a.aceitou_sugestao,
            "respondidaPor": a.respondida_por,
            "decisionSource": a.decision_source,
            "decisionEventId": a.decision_event_id,
        });
        if !a.choices.is_empty() {
            v["answers"] = json!(a.choices);
        }
        return Some(v);
    }
    let c = q.closure.as_ref()?;
    let withdrawn = c.decision_source == DecisionSource::Withdrawn;
    let mut v = json!({
        "outcome": if withdrawn { "withdrawn" } else { "dismissed" },
        "questionId": q.question_id,
        "by": c.by,
        "decisionSource": c.decision_source,
    });
    if let Some(reason) = withdraw_reason.filter(|_| withdrawn) {
        v["reason"] = json!(reason);
    }
    Some(v)
}
