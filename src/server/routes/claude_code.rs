//! Claude Code's own questions on the server (`oq hook claude-code --source http://…`):
//! the hook's agent declares an `AskUserQuestion` call as one question with its parts,
//! source `claude-code`, the call as its upstream and idempotency key; and reports what
//! Claude's own dialog did with it (`upstream`), so nothing stays open in oq that was
//! settled in Claude Code; and, when the hook stops waiting, that the question is now in
//! Claude Code's own dialog (`handoff`), so oq refuses an answer that would reach nobody.
//!
//! Who: an agent of the project (a person answers with the question routes); the
//! settlement only by the agent that declared it, only for a Claude Code question.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;

use super::super::AppState;
use super::super::auth::{Access, InProject};
use super::super::error::{ApiError, ApiResult};
use super::super::extract::{ApiJson, ApiPath};
use crate::domain::claude_code::{ClaudeDeclare, ClaudeSettlement};
use crate::domain::{ErrorCode, OqError};
use crate::wire::QuestionItem;

/// These routes are the hook's: a person's token is refused by name.
fn agents_only(who: &InProject) -> Result<(), ApiError> {
    match who.access {
        Access::Agent => Ok(()),
        Access::Member => Err(OqError::forbidden(
            ErrorCode::RoleNotAllowed,
            "the Claude Code routes are for the hook's agent token; a person answers with oq",
        )
        .into()),
    }
}

pub async fn declare(
    State(st): State<AppState>,
    who: InProject,
    ApiJson(body): ApiJson<ClaudeDeclare>,
) -> ApiResult<(StatusCode, Json<QuestionItem>)> {
    agents_only(&who)?;
    let (actor, project) = (who.actor.clone(), who.project.clone());
    let q = st
        .write(move |e| e.declare_claude_code(&actor, &project, &body))
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(QuestionItem::from_question(&q, &who.actor)),
    ))
}

pub async fn settle(
    State(st): State<AppState>,
    who: InProject,
    ApiPath((_, question_id)): ApiPath<(String, String)>,
    ApiJson(body): ApiJson<ClaudeSettlement>,
) -> ApiResult<Json<QuestionItem>> {
    agents_only(&who)?;
    let (actor, project) = (who.actor.clone(), who.project.clone());
    let q = st
        .write(move |e| e.settle_claude_code(&actor, &project, &question_id, body))
        .await?;
    Ok(Json(QuestionItem::from_question(&q, &who.actor)))
}

pub async fn hand_off(
    State(st): State<AppState>,
    who: InProject,
    ApiPath((_, question_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<QuestionItem>> {
    agents_only(&who)?;
    let (actor, project) = (who.actor.clone(), who.project.clone());
    let q = st
        .write(move |e| e.hand_off_claude_code(&actor, &project, &question_id))
        .await?;
    Ok(Json(QuestionItem::from_question(&q, &who.actor)))
}
