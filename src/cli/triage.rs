//! `oq answer --accept ID…`: triage for scripts. Each question is accepted on its own —
//! its own answer and decision record (`decisionSource: suggestion`), through the same
//! `Source::answer` a single accept uses — so one refusal never undoes or stops the
//! others. Every id gets a line saying what became of it; a question without a
//! suggestion, in someone else's session or already settled is `skipped` with the
//! refusal's code and reason. Exit 0 when every one was accepted, else 15.

use serde::Serialize;

use super::context::Context;
use crate::domain::error::exit;
use crate::domain::{AnswerInput, ErrorCode, OqError};
use crate::source::Source;

/// What became of one id.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    pub question_id: String,
    /// `accepted`, `queued` (in the outbox: the source was unreachable) or `skipped`.
    pub outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_event_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<ErrorCode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

pub async fn accept_all(ctx: &Context, ids: &[String]) -> Result<i32, OqError> {
    let mut seen = std::collections::HashSet::new();
    let mut outcomes = Vec::new();
    for id in ids.iter().filter(|id| seen.insert(id.as_str())) {
        let result = ctx
            .source
            .answer(ctx.project_filter(), id, &AnswerInput::accept())
            .await;
        outcomes.push(match result {
            Ok(item) => Outcome {
                question_id: id.clone(),
                outcome: "accepted",
                decision_event_id: item.answer.map(|a| a.decision_event_id),
                code: None,
                reason: None,
            },
            Err(e) => Outcome {
                question_id: id.clone(),
                outcome: if matches!(e, OqError::Queued { .. }) {
                    "queued"
                } else {
                    "skipped"
                },
                decision_event_id: None,
                code: Some(e.code()),
                reason: Some(e.to_string()),
            },
        });
    }
    ctx.emit(&outcomes, || {
        outcomes
            .iter()
            .map(|o| match (&o.code, &o.reason) {
                (Some(code), Some(reason)) => {
                    format!(
                        "{} {}: {}: {reason}\n",
                        o.outcome,
                        o.question_id,
                        code.as_str()
                    )
                }
                _ => format!(
                    "accepted {} (decision {})\n",
                    o.question_id,
                    o.decision_event_id.as_deref().unwrap_or("")
                ),
            })
            .collect()
    });
    let all = outcomes.iter().all(|o| o.outcome == "accepted");
    Ok(if all { exit::OK } else { exit::PARTIAL })
}
