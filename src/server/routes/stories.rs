//! Stories, for the `po` agent: create, move, and ADR 0212's correction as revised by
//! ADR 0214 §8 (a ready story only with an answered question).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use super::super::AppState;
use super::super::auth::InProject;
use super::super::error::ApiResult;
use super::super::extract::{ApiJson, ApiPath};
use crate::domain::WorkState;
use crate::wire::StoryItem;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateBody {
    title: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateBody {
    state: WorkState,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CorrectionBody {
    #[serde(default)]
    question_id: Option<String>,
}

pub async fn create(
    State(st): State<AppState>,
    who: InProject,
    ApiJson(body): ApiJson<CreateBody>,
) -> ApiResult<(StatusCode, Json<StoryItem>)> {
    let (actor, project) = (who.actor, who.project);
    let story = st
        .write(move |e| e.create_story(&actor, &project, &body.title))
        .await?;
    Ok((StatusCode::CREATED, Json(StoryItem::from(&story))))
}

pub async fn move_state(
    State(st): State<AppState>,
    who: InProject,
    ApiPath((_, story_id)): ApiPath<(String, String)>,
    ApiJson(body): ApiJson<StateBody>,
) -> ApiResult<Json<StoryItem>> {
    let (actor, project) = (who.actor, who.project);
    let story = st
        .write(move |e| e.move_story(&actor, &project, &story_id, body.state))
        .await?;
    Ok(Json(StoryItem::from(&story)))
}

/// 200 `{accepted: true, story}`, or 409 with the refusal's code.
pub async fn correct(
    State(st): State<AppState>,
    who: InProject,
    ApiPath((_, story_id)): ApiPath<(String, String)>,
    ApiJson(body): ApiJson<CorrectionBody>,
) -> ApiResult<Json<Value>> {
    let (actor, project) = (who.actor, who.project);
    let cited = body.question_id.clone();
    let story = st
        .write(move |e| e.correct_story(&actor, &project, &story_id, body.question_id.as_deref()))
        .await?;
    Ok(Json(json!({
        "accepted": true,
        "story": StoryItem::from(&story),
        "questionId": cited,
    })))
}
