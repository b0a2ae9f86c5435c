//! The JSON shapes that leave oq: the HTTP API's bodies and the script doors' `--json`
//! output are the same types, so a script reads one format whatever the source.
//!
//! The ADR's field names exactly (`pergunta`, `sugestao`, `afeta`, `resposta`,
//! `aceitouSugestao`, `decisionEventId`, `respondidaPor`…), camelCase English for the rest.
//! Times are Unix milliseconds. These shapes are stable: add fields, never rename.

use serde::{Deserialize, Serialize};

use crate::domain::{
    Actor, Afeta, DecisionSource, ErrorCode, OqError, Question, Session, Story, Task, Verdict,
};
use crate::engine::ParkedTask;

pub mod auto_delegate;

pub use auto_delegate::{
    AutoCommand, AutoDelegate, AutoRequest, AutoState, BridgeHealth, DelegateSnapshot,
};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionItem {
    pub question_id: String,
    pub project_id: String,
    pub session_id: String,
    /// The one person who may answer.
    pub session_author: String,
    pub pergunta: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sugestao: Option<String>,
    pub afeta: Afeta,
    pub autor: String,
    pub source: String,
    /// `open`, `answered` or `closed`, derived from the log.
    pub status: String,
    pub created_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerItem>,
    /// The parts of a question that carries options (an OpenCode request: one or more
    /// questions, each with options, `multiple`, and free text); empty for ADR questions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<PromptItem>,
    /// Where an imported question lives upstream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<Upstream>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed: Option<ClosedItem>,
    /// Upstream's session was aborted while this was pending; dismiss it to clear it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub orphaned: bool,
    /// Claude Code's hook handed it to Claude Code's own dialog: answered there (an
    /// answer here is refused, `handed_to_claude_code`); `reason` says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub handed_off: bool,
    /// The open question's newest snooze (`domain::snooze`): hidden from its answerer's
    /// queue while `until` is ahead, open for everything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snooze: Option<crate::domain::snooze::Snooze>,
    /// Whether the caller may answer now; `reason` says why not.
    pub can_answer: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The memory of answers (`domain::similar`): an earlier answer of the project to a
    /// question this open one resembles. Only on a single question's read (`oq show`,
    /// `GET …/open-questions/{id}`, MCP `get_question`), never in a list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub similar_answer: Option<SimilarAnswer>,
}

pub use crate::domain::similar::SimilarAnswer;

/// One part of a question with options, and one of its options: the domain's own shapes.
pub use crate::domain::choices::{Prompt as PromptItem, PromptOption as OptionItem, Upstream};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerItem {
    pub resposta: String,
    pub aceitou_sugestao: bool,
    pub decision_event_id: String,
    pub respondida_por: String,
    pub answered_at: i64,
    /// For a question with options: the choices, one array per part.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<Vec<String>>,
    /// Who or what decided (`person`, `suggestion`, `auto_delegate`, `delegate`,
    /// `upstream`). Absent from an older server: read as its `aceitouSugestao` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_source: Option<DecisionSource>,
}

/// How a question left the queue without an answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClosedItem {
    /// `rejected` (dismissed by its author) or `external` (settled upstream).
    pub reason: String,
    pub by: String,
    pub closed_at: i64,
    /// How it was settled (`dismissed`, `upstream`, `vanished`, `withdrawn`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_source: Option<DecisionSource>,
}

impl QuestionItem {
    /// How it was settled, and whether by an answer; `None` while open (what
    /// [`crate::engine::StatusFilter::admits`] reads). An older server's item without
    /// `decisionSource` reads as its answer or closure says.
    pub fn settlement(&self) -> Option<(DecisionSource, bool)> {
        if let Some(a) = &self.answer {
            let source = a
                .decision_source
                .unwrap_or(DecisionSource::for_answer(a.aceitou_sugestao));
            return Some((source, true));
        }
        self.closed.as_ref().map(|c| {
            let source = c.decision_source.unwrap_or_else(|| {
                let reason = serde_json::Value::String(c.reason.clone());
                serde_json::from_value(reason)
                    .map(DecisionSource::for_closure)
                    .unwrap_or(DecisionSource::Upstream)
            });
            (source, false)
        })
    }

    pub fn from_question(q: &Question, viewer: &Actor) -> Self {
        let (can_answer, reason) = q.answerability(viewer);
        QuestionItem {
            question_id: q.question_id.clone(),
            project_id: q.project_id.clone(),
            session_id: q.session_id.clone(),
            session_author: q.session_author.clone(),
            pergunta: q.pergunta.clone(),
            sugestao: q.sugestao.clone(),
            afeta: q.afeta.clone(),
            autor: q.autor.clone(),
            source: q.source.clone(),
            status: q.status().into(),
            created_at: q.created_at,
            answer: q.answer.as_ref().map(|a| AnswerItem {
                resposta: a.resposta.clone(),
                aceitou_sugestao: a.aceitou_sugestao,
                decision_event_id: a.decision_event_id.clone(),
                respondida_por: a.respondida_por.clone(),
                answered_at: a.answered_at,
                answers: a.choices.clone(),
                decision_source: Some(a.decision_source),
            }),
            prompts: q.prompts.clone(),
            upstream: q.upstream.clone(),
            closed: q.closure.as_ref().map(|c| ClosedItem {
                reason: c.reason.as_str().into(),
                by: c.by.clone(),
                closed_at: c.at,
                decision_source: Some(c.decision_source),
            }),
            orphaned: q.orphaned,
            handed_off: q.handed_off,
            snooze: q.snooze.clone().filter(|_| q.status() == "open"),
            can_answer,
            reason,
            similar_answer: None,
        }
    }

    /// With the earlier answer this question resembles, when there is one.
    pub fn with_similar(mut self, similar: Option<SimilarAnswer>) -> Self {
        self.similar_answer = similar;
        self
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionList {
    pub items: Vec<QuestionItem>,
    pub total: u64,
    /// `total` is where a search's count stopped (`engine::list::SEARCH_TOTAL_CAP`):
    /// at least that many match. Absent (false) when the total is exact.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub total_is_lower_bound: bool,
    /// How many of the filter's open questions a snooze hides now, whichever the
    /// list's `snoozed` parameter kept (the TUI's "3 open · 2 snoozed"). Absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub snoozed: u64,
    /// When the first of them comes back (Unix ms): the TUI's wake-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snoozed_next_return: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl QuestionList {
    /// The total as a person reads it: `1000+` when the count stopped at the cap (at
    /// least `shown` when more than the total is already in hand).
    pub fn total_text(&self, shown: u64) -> String {
        total_text(self.total, self.total_is_lower_bound, shown)
    }

    /// An engine's page as `viewer` sees it (`canAnswer`, `reason` for each).
    pub fn of(page: crate::engine::ListPage, viewer: &Actor) -> QuestionList {
        QuestionList {
            items: page
                .items
                .iter()
                .map(|q| QuestionItem::from_question(q, viewer))
                .collect(),
            total: page.total,
            total_is_lower_bound: page.total_is_lower_bound,
            snoozed: page.snoozed.count,
            snoozed_next_return: page.snoozed.next_wake,
            cursor: page.cursor,
        }
    }
}

/// A list's total as a person reads it (the CLI's "50 of 1000+", the TUI's title): a
/// lower bound carries a `+`, and is never below the `shown` already in hand.
pub fn total_text(total: u64, lower_bound: bool, shown: u64) -> String {
    if lower_bound {
        format!("{}+", total.max(shown))
    } else {
        total.to_string()
    }
}

/// `GET …/open-questions` on `oq serve`: the page, and the connection of each OpenCode
/// upstream bridged into the project (absent without one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListReply {
    #[serde(flatten)]
    pub list: QuestionList,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bridges: Vec<BridgeHealth>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GateItem {
    pub state: String,
    pub corrections: u32,
    pub ceiling: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parked_on: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskItem {
    pub task_id: String,
    pub project_id: String,
    pub story_id: String,
    pub session_id: String,
    pub title: String,
    pub state: String,
    pub gate: GateItem,
}

impl From<&Task> for TaskItem {
    fn from(t: &Task) -> Self {
        TaskItem {
            task_id: t.task_id.clone(),
            project_id: t.project_id.clone(),
            story_id: t.story_id.clone(),
            session_id: t.session_id.clone(),
            title: t.title.clone(),
            state: t.state.as_str().into(),
            gate: GateItem {
                state: t.gate.state.as_str().into(),
                corrections: t.gate.corrections,
                ceiling: t.gate.ceiling,
                parked_on: t.gate.parked_on.clone(),
            },
        }
    }
}

/// A row of "Waiting for you".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitingItem {
    pub task: TaskItem,
    pub question_id: String,
    pub parked_at: i64,
}

impl From<&ParkedTask> for WaitingItem {
    fn from(p: &ParkedTask) -> Self {
        WaitingItem {
            task: TaskItem::from(&p.task),
            question_id: p.question_id.clone(),
            parked_at: p.parked_at,
        }
    }
}

/// `GET …/tasks?waiting=me` and `oq task waiting`: "Waiting for you", with its own count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitingList {
    pub items: Vec<WaitingItem>,
    pub total: usize,
}

impl From<Vec<WaitingItem>> for WaitingList {
    fn from(items: Vec<WaitingItem>) -> Self {
        WaitingList {
            total: items.len(),
            items,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoryItem {
    pub story_id: String,
    pub project_id: String,
    pub title: String,
    pub state: String,
}

impl From<&Story> for StoryItem {
    fn from(s: &Story) -> Self {
        StoryItem {
            story_id: s.story_id.clone(),
            project_id: s.project_id.clone(),
            title: s.title.clone(),
            state: s.state.as_str().into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionItem {
    pub session_id: String,
    pub project_id: String,
    pub kind: String,
    pub author: String,
}

impl From<&Session> for SessionItem {
    fn from(s: &Session) -> Self {
        SessionItem {
            session_id: s.session_id.clone(),
            project_id: s.project_id.clone(),
            kind: s.kind.as_str().into(),
            author: s.author.clone(),
        }
    }
}

/// Every error body: `{"code", "message"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub code: ErrorCode,
    pub message: String,
}

impl From<&OqError> for ErrorBody {
    fn from(e: &OqError) -> Self {
        ErrorBody {
            code: e.code(),
            message: e.to_string(),
        }
    }
}

/// `POST …/qa-verdicts` and `oq verdict`: the consolidated verdict, the task after it, and
/// the question the gate parked on (for `needs_user_decision`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerdictReply {
    pub verdict: Verdict,
    pub task: TaskItem,
    pub open_question_id: Option<String>,
}

/// `GET …/dev-context` and `GET …/readiness` bodies are the engine's own shapes.
pub use crate::engine::{DevContext, Readiness};
