//! Sessions: a member starts one and is its author (for an execution session, the person
//! who activates execution), so ADR 0214 §3 knows who answers its questions.
//!
//! Session ids are the server's to make (`s-` and 80 random bits: unique across the
//! server, unguessable). A client may name a session only inside its own project's
//! namespace, `<projectId>.<name>` (a bare name is put there; the project is everything
//! before the last dot, so no two projects' namespaces overlap), and never in the
//! bridge's (`oc-…`, the OpenCode sessions it imports). So a name can only ever collide
//! with a session of the caller's own project, and `session_exists` says nothing about
//! another project.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;

use super::super::AppState;
use super::super::auth::InProject;
use super::super::error::ApiResult;
use super::super::extract::ApiJson;
use crate::domain::{ErrorCode, OqError, SessionKind};
use crate::wire::SessionItem;

/// The bridge's sessions (`oc-<upstream>-<sessionID>`): nobody else may take one.
const BRIDGE_PREFIX: &str = "oc-";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StartBody {
    kind: SessionKind,
    /// A readable name chosen by the client, inside the project's namespace; the server
    /// makes one when absent.
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
    let named = match body.session_id.as_deref() {
        Some(name) => Some(namespaced(&project, name)?),
        None => None,
    };
    let session = st
        .write(move |e| e.start_session(&actor, &project, body.kind, named.as_deref()))
        .await?;
    Ok((StatusCode::CREATED, Json(SessionItem::from(&session))))
}

/// The id a client's `name` takes in `project`: `<project>.<name>` for a bare name, the
/// name itself when it already is one; refused when it points elsewhere.
fn namespaced(project: &str, name: &str) -> Result<String, OqError> {
    crate::domain::text::check_id("sessionId", name)?;
    let id = match name.rsplit_once('.') {
        None => format!("{project}.{name}"),
        Some((space, _)) if space == project => name.to_string(),
        Some(_) => {
            return Err(OqError::invalid(
                ErrorCode::SessionIdOutsideProject,
                format!(
                    "sessionId {name:?} is outside this project: name it {project}.<name> (no dot in <name>), or send none and the server makes one"
                ),
            ));
        }
    };
    if name.starts_with(BRIDGE_PREFIX) || id.starts_with(BRIDGE_PREFIX) {
        return Err(OqError::invalid(
            ErrorCode::SessionIdReserved,
            format!(
                "sessionId {name:?}: ids starting with {BRIDGE_PREFIX:?} are the OpenCode bridge's"
            ),
        ));
    }
    crate::domain::text::check_id("sessionId", &id)?;
    Ok(id)
}
