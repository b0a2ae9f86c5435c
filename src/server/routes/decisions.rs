//! The decision history: `GET /projects/{projectId}/decisions`, every answered or closed
//! question of the project, newest decision first, under the list route's auth and
//! project scoping; each filter checked by the engine's rules (a 422 naming it).

use axum::Json;
use axum::extract::State;
use serde::Deserialize;

use super::super::AppState;
use super::super::auth::InProject;
use super::super::error::ApiResult;
use super::super::extract::ApiQuery;
use crate::domain::OqError;
use crate::engine::DecisionQuery;
use crate::wire::QuestionList;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionParams {
    /// Search words (`domain::search`).
    q: Option<String>,
    /// `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SSZ`, UTC.
    since: Option<String>,
    /// `task:ID`, `story:ID` or `rule:ID`.
    affects: Option<String>,
    /// A `decisionSource`.
    source: Option<String>,
    /// Who asked: the declaration's `autor`.
    agent: Option<String>,
    // A string, so a bad number is refused with our own words.
    limit: Option<String>,
    cursor: Option<String>,
}

impl DecisionParams {
    fn query(self) -> Result<DecisionQuery, OqError> {
        let limit = crate::engine::list::parse_limit(self.limit.as_deref())?;
        let query = DecisionQuery::parse(
            self.q.as_deref(),
            self.since.as_deref(),
            self.affects.as_deref(),
            self.source.as_deref(),
        )?
        .by_agent(self.agent.as_deref())?
        .after(self.cursor.as_deref())
        .limit(limit);
        query.checked_limit()?;
        query.checked_cursor()?;
        Ok(query)
    }
}

pub async fn list(
    State(st): State<AppState>,
    who: InProject,
    ApiQuery(params): ApiQuery<DecisionParams>,
) -> ApiResult<Json<QuestionList>> {
    let query = params.query()?;
    let project = who.project.clone();
    let page = st
        .read(move |e| e.decisions(Some(&project), &query))
        .await?;
    Ok(Json(QuestionList::of(page, &who.actor)))
}
