//! Open questions: list (with `canAnswer`/`reason` for the caller), declare, answer.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde::{Deserialize, Serialize};

use super::super::AppState;
use super::super::auth::InProject;
use super::super::error::ApiResult;
use super::super::extract::{ApiJson, ApiPath, ApiQuery};
use crate::domain::choices::ClosedReason;
use crate::domain::{AnswerInput, DeclareInput, ErrorCode, OqError, Question};
use crate::engine::{ListQuery, Sort, StatusFilter};
use crate::wire::{ListReply, QuestionItem, QuestionList};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    status: Option<String>,
    // Strings, so a bad number is refused with our own words.
    limit: Option<String>,
    cursor: Option<String>,
    /// Search words (`domain::search`); validated by the engine's rules.
    q: Option<String>,
    sort: Option<String>,
    /// `show` (the default: every open question), `hide` or `only` (`engine::snoozed`).
    snoozed: Option<String>,
}

impl ListParams {
    /// The query, every part checked: a bad one is a 422 naming it.
    fn query(self) -> Result<ListQuery, OqError> {
        let status: StatusFilter = self.status.as_deref().unwrap_or("open").parse()?;
        let limit = crate::engine::list::parse_limit(self.limit.as_deref())?;
        let sort: Sort = self.sort.as_deref().unwrap_or("oldest").parse()?;
        let query = ListQuery::new(status)
            .search(self.q.as_deref().unwrap_or(""))?
            .sorted(sort)
            .after(self.cursor.as_deref())
            .limit(limit)
            .snoozed(self.snoozed.as_deref().unwrap_or("show").parse()?);
        query.checked_limit()?;
        query.checked_cursor()?;
        Ok(query)
    }
}

pub async fn list(
    State(st): State<AppState>,
    who: InProject,
    ApiQuery(params): ApiQuery<ListParams>,
) -> ApiResult<Json<ListReply>> {
    let query = params.query()?;
    let project = who.project.clone();
    let page = st.read(move |e| e.list(Some(&project), &query)).await?;
    Ok(Json(ListReply {
        list: QuestionList::of(page, &who.actor),
        bridges: st.bridges().health(&who.project),
    }))
}

/// declare_open_question; the engine refuses roles other than criativo, po, arquiteto and
/// dev-lead, and a session of another project.
pub async fn declare(
    State(st): State<AppState>,
    who: InProject,
    headers: HeaderMap,
    ApiJson(mut body): ApiJson<DeclareInput>,
) -> ApiResult<(StatusCode, Json<QuestionItem>)> {
    let (actor, project) = (who.actor.clone(), who.project.clone());
    // A retry with the same key (an agent that lost the reply) gets the first question.
    body.idempotency_key = idempotency_key(&headers)?;
    let q = st
        .write(move |e| e.declare(&actor, &project, &body))
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(QuestionItem::from_question(&q, &who.actor)),
    ))
}

/// The `Idempotency-Key` header, when sent.
fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, OqError> {
    headers
        .get("idempotency-key")
        .map(|v| {
            v.to_str()
                .map(str::to_string)
                .map_err(|_| OqError::invalid(ErrorCode::InvalidId, "Idempotency-Key is not text"))
        })
        .transpose()
}

/// The author-only answer. The body is checked first (422), then the author (403), then
/// whether it is still open (409); a question of another project is 404.
pub async fn answer(
    State(st): State<AppState>,
    who: InProject,
    headers: HeaderMap,
    ApiPath((_, question_id)): ApiPath<(String, String)>,
    ApiJson(body): ApiJson<AnswerInput>,
) -> ApiResult<Json<Answered>> {
    let (actor, project) = (who.actor.clone(), who.project.clone());
    // A retry with the same key (an outbox delivering again) gets the first result.
    let key = idempotency_key(&headers)?;
    let q = match bridged(&st, &project, &question_id).await? {
        // An imported OpenCode question: claimed, posted upstream, then recorded.
        Some((up, q)) => {
            up.manual(
                actor,
                q,
                crate::bridge::upstream::Answered::Reply(body),
                key,
            )
            .await?
        }
        // The hot path: straight to the store's writer, no blocking thread held.
        None => {
            let q = st
                .engine()
                .answer_once_async(&actor, Some(&project), &question_id, &body, key.as_deref())
                .await?;
            st.changed();
            q
        }
    };
    let item = QuestionItem::from_question(&q, &who.actor);
    Ok(Json(Answered {
        decision_event_id: item.answer.as_ref().map(|a| a.decision_event_id.clone()),
        item,
    }))
}

/// The answered question, and its decision record's id at the top level (the ADR's
/// response); serialised straight into the body.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Answered {
    #[serde(flatten)]
    item: QuestionItem,
    #[serde(skip_serializing_if = "Option::is_none")]
    decision_event_id: Option<String>,
}

/// One question, as the list shows it (`GET …/open-questions/{questionId}`).
pub async fn show(
    State(st): State<AppState>,
    who: InProject,
    ApiPath((_, question_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<QuestionItem>> {
    let project = who.project.clone();
    let (q, similar) = st
        .read(move |e| {
            let q = e.question(Some(&project), &question_id)?;
            let similar = e.similar_answer(&q)?;
            Ok((q, similar))
        })
        .await?;
    Ok(Json(
        QuestionItem::from_question(&q, &who.actor).with_similar(similar),
    ))
}

/// Dismisses a question without an answer: the same author-only rule as answering. A
/// question that lives upstream is rejected there by the bridge that owns it.
pub async fn dismiss(
    State(st): State<AppState>,
    who: InProject,
    ApiPath((_, question_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<QuestionItem>> {
    let (actor, project) = (who.actor.clone(), who.project.clone());
    let q = match bridged(&st, &project, &question_id).await? {
        Some((up, q)) => {
            up.manual(actor, q, crate::bridge::upstream::Answered::Dismiss, None)
                .await?
        }
        None => {
            st.write(move |e| {
                e.close_question(&actor, Some(&project), &question_id, ClosedReason::Rejected)
            })
            .await?
        }
    };
    Ok(Json(QuestionItem::from_question(&q, &who.actor)))
}

/// "Not now" (issue 17 part 4): the same author-only rule as dismissing, judged by the
/// server's clock (a `forSeconds` counts from it), recorded in this server's log even
/// for a question an upstream owns: the snooze hides it here and changes nothing there.
pub async fn snooze(
    State(st): State<AppState>,
    who: InProject,
    ApiPath((_, question_id)): ApiPath<(String, String)>,
    ApiJson(body): ApiJson<crate::domain::snooze::SnoozeInput>,
) -> ApiResult<Json<QuestionItem>> {
    let (actor, project) = (who.actor.clone(), who.project.clone());
    let q = st
        .write(move |e| {
            let now = crate::engine::sqlite::now_ms();
            e.snooze(&actor, Some(&project), &question_id, &body, now)
        })
        .await?;
    Ok(Json(QuestionItem::from_question(&q, &who.actor)))
}

/// Ends a snooze now: the author's, `not_snoozed` (409) when none holds the question.
pub async fn unsnooze(
    State(st): State<AppState>,
    who: InProject,
    ApiPath((_, question_id)): ApiPath<(String, String)>,
) -> ApiResult<Json<QuestionItem>> {
    let (actor, project) = (who.actor.clone(), who.project.clone());
    let q = st
        .write(move |e| {
            let now = crate::engine::sqlite::now_ms();
            e.unsnooze(&actor, Some(&project), &question_id, now)
        })
        .await?;
    Ok(Json(QuestionItem::from_question(&q, &who.actor)))
}

/// The bridge that owns this question, when it is an imported OpenCode request of one
/// of this server's upstreams (with the question as stored).
async fn bridged(
    st: &AppState,
    project: &str,
    question_id: &str,
) -> ApiResult<Option<(std::sync::Arc<crate::bridge::Upstream>, Question)>> {
    let ups = st.bridges().of_project(project);
    if ups.is_empty() {
        return Ok(None);
    }
    let (project, id) = (project.to_string(), question_id.to_string());
    let q = st.read(move |e| e.question(Some(&project), &id)).await?;
    let Some(up) = q.upstream.as_ref().filter(|u| u.kind == "opencode") else {
        return Ok(None);
    };
    Ok(ups
        .into_iter()
        .find(|u| u.name() == up.name)
        .map(|u| (u, q)))
}
