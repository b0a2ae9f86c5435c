//! Readiness (ADR 0214 §5): how many questions are open; recording "I'm ready" or
//! "Confirm architecture ready" warns and never blocks. Also the project's revision.

use axum::Json;
use axum::extract::State;

use super::super::AppState;
use super::super::auth::InProject;
use super::super::error::ApiResult;
use super::super::extract::ApiPath;
use crate::domain::readiness::ReadinessGate;
use crate::engine::Readiness;

pub async fn show(State(st): State<AppState>, who: InProject) -> ApiResult<Json<Readiness>> {
    who.require_member("readiness")?;
    let project = who.project;
    Ok(Json(st.read(move |e| e.readiness(&project)).await?))
}

pub async fn record(
    State(st): State<AppState>,
    who: InProject,
    ApiPath((_, gate)): ApiPath<(String, String)>,
) -> ApiResult<Json<Readiness>> {
    who.require_member("readiness")?;
    let gate: ReadinessGate = gate.parse()?;
    let (actor, project) = (who.actor, who.project);
    Ok(Json(
        st.write(move |e| e.record_readiness(&actor, &project, gate))
            .await?,
    ))
}

/// `{revision}`: the newest change of this project, for clients that poll rather than
/// hold an event stream open. Members and agents alike.
pub async fn revision(
    State(st): State<AppState>,
    who: InProject,
) -> ApiResult<Json<serde_json::Value>> {
    let project = who.project;
    let revision = st.read(move |e| e.project_revision(Some(&project))).await?;
    Ok(Json(serde_json::json!({ "revision": revision })))
}
