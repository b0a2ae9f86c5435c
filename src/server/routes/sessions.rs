//! Sessions: a member starts one and is its author (for an execution session, the person
//! who activates execution), so ADR 0214 §3 knows who answers its questions.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;

use super::super::AppState;
use super::super::auth::InProject;
use super::super::error::ApiResult;
use super::super::extract::ApiJson;
use crate::domain::SessionKind;
use crate::wire::SessionItem;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StartBody {
    kind: SessionKind,
    /// A readable id chosen by the client; generated when absent.
    #[serde(default)]
    session_id: Option<String>,
}

pub async fn start(
    State(st): State<AppState>,
    who: InProject,
    ApiJson(body): ApiJson<StartBody>,
) -> ApiResult<(StatusCode, Json<SessionItem>)> {
    who.require_member("starting a session")?;
    let (actor, project) = (who.actor, who.project);
    let session = st
        .write(move |e| e.start_session(&actor, &project, body.kind, body.session_id.as_deref()))
        .await?;
    Ok((StatusCode::CREATED, Json(SessionItem::from(&session))))
}
