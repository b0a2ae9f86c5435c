//! Tasks and their QA gate: create and move (po, dev-lead), show, QA verdicts (qa-agent),
//! dev-context (ADR 0214 §7), and "waiting for you".

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::AppState;
use super::super::auth::InProject;
use super::super::error::ApiResult;
use super::super::extract::{ApiJson, ApiPath, ApiQuery};
use crate::domain::{ErrorCode, OqError, WorkState};
use crate::engine::{DevContext, VerdictInput};
use crate::wire::{TaskItem, VerdictReply, WaitingItem, WaitingList};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateBody {
    story_id: String,
    /// The execution session: its author answers QA's questions about the task.
    session_id: String,
    title: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateBody {
    state: WorkState,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitingParams {
    waiting: Option<String>,
}

pub async fn create(
    State(st): State<AppState>,
    who: InProject,
    ApiJson(body): ApiJson<CreateBody>,
) -> ApiResult<(StatusCode, Json<TaskItem>)> {
    let (actor, project) = (who.actor, who.project);
    let task = st
        .write(move |e| {
            e.create_task(
                &actor,
                &project,
                &body.story_id,
                &body.session_id,
                &body.title,
            )
        })
        .await?;
    Ok((StatusCode::CREATED, Json(TaskItem::from(&task))))
}

pub async fn move_state(
    State(st): State<AppState>,
    who: InProject,
    ApiPath((_, task_id)): ApiPath<(String, String)>,
    ApiJson(body): ApiJson<StateBody>,
) -> ApiResult<Json<TaskItem>> {
    let (actor, project) = (who.actor, who.project);
    let task = st
        .write(move |e| e.move_task(&actor, &project, &task_id, body.state))
        .await?;
    Ok(Json(TaskItem::from(&task)))
}

pub async fn show(
    State(st): State<AppState>,
    who: InProject,
    ApiPath((_, task_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<TaskItem>> {
    let project = who.project;
    let task = st.read(move |e| e.task(&project, &task_id)).await?;
    Ok(Json(TaskItem::from(&task)))
}

/// `needs_user_decision` parks the gate without spending a correction and records the
/// question in the task's execution session.
pub async fn verdict(
    State(st): State<AppState>,
    who: InProject,
    ApiPath((_, task_id)): ApiPath<(String, String)>,
    ApiJson(body): ApiJson<VerdictInput>,
) -> ApiResult<Json<VerdictReply>> {
    let (actor, project) = (who.actor, who.project);
    let verdict = body.verdict;
    let outcome = st
        .write(move |e| e.verdict(&actor, &project, &task_id, &body))
        .await?;
    let verdict =
        verdict.ok_or_else(|| OqError::Internal("verdict accepted without one".into()))?;
    Ok(Json(VerdictReply {
        verdict,
        task: TaskItem::from(&outcome.task),
        open_question_id: outcome.question_id,
    }))
}

pub async fn dev_context(
    State(st): State<AppState>,
    who: InProject,
    ApiPath((_, task_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<DevContext>> {
    let project = who.project;
    Ok(Json(
        st.read(move |e| e.dev_context(&project, &task_id)).await?,
    ))
}

/// `GET …/tasks?waiting=me`: the tasks parked on a question the caller must answer.
pub async fn waiting(
    State(st): State<AppState>,
    who: InProject,
    ApiQuery(params): ApiQuery<WaitingParams>,
) -> ApiResult<Json<Value>> {
    who.require_member("\"waiting for you\"")?;
    if params.waiting.as_deref() != Some("me") {
        return Err(OqError::invalid(
            ErrorCode::InvalidQuery,
            "this route lists what waits for you: pass waiting=me",
        )
        .into());
    }
    let person = who.actor.id().to_string();
    let project = who.project;
    let parked = st
        .read(move |e| e.waiting_for(Some(&project), &person))
        .await?;
    let items: Vec<WaitingItem> = parked.iter().map(WaitingItem::from).collect();
    Ok(Json(json!(WaitingList::from(items))))
}
