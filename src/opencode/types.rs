//! OpenCode's shapes (1.18.x) as serde types, and the mapping of a pending request to
//! oq's [`QuestionItem`].
//!
//! Unknown fields are ignored everywhere: a newer OpenCode adds fields, never breaks us.

use serde::{Deserialize, Serialize};

use crate::domain::choices::{Prompt, PromptOption, Upstream};
use crate::domain::question::PERGUNTA_MAX_CHARS;
use crate::domain::{Actor, Afeta, Question};
use crate::wire::QuestionItem;

/// A pending question request (`GET /question`, `question.asked`): one or more questions
/// the agent waits on, answered together by one `{answers: string[][]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// `que_…`.
    pub id: String,
    #[serde(rename = "sessionID")]
    pub session_id: String,
    pub questions: Vec<QuestionInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolRef>,
}

/// One question of a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionInfo {
    pub question: String,
    #[serde(default)]
    pub header: String,
    #[serde(default)]
    pub options: Vec<OptionInfo>,
    #[serde(default)]
    pub multiple: bool,
    /// Whether typed text is accepted besides the options; OpenCode's default is yes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OptionInfo {
    pub label: String,
    #[serde(default)]
    pub description: String,
}

/// The tool call that asked (the assistant message and its call id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRef {
    #[serde(rename = "messageID")]
    pub message_id: String,
    #[serde(rename = "callID")]
    pub call_id: String,
}

/// A message of `GET /session/:id/message`, with its parts (the fields oq reads).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Message {
    #[serde(default)]
    pub parts: Vec<ToolPart>,
}

/// A part of a message; oq reads `tool` parts (the `question` tool's call and its state).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ToolPart {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(rename = "callID", default)]
    pub call_id: Option<String>,
    #[serde(default)]
    pub state: Option<ToolState>,
}

/// A tool call's state: `pending`, `running` (the agent waits: a request that is no
/// longer listed while its part still runs was lost upstream), `completed` (with the
/// answers in `metadata`) or `error` (dismissed, aborted).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ToolState {
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub metadata: Option<ToolMetadata>,
    #[serde(default)]
    pub time: Option<ToolTime>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ToolMetadata {
    #[serde(default)]
    pub answers: Option<Vec<Vec<String>>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct ToolTime {
    /// When the tool began: when the agent asked (Unix ms).
    #[serde(default)]
    pub start: i64,
}

/// OpenCode's words for a dismissed question's tool error.
pub const DISMISSED_ERROR: &str = "dismissed";

/// `GET /session/:id` (the fields oq reads).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Session {
    pub id: String,
    #[serde(default)]
    pub directory: String,
    #[serde(default)]
    pub title: String,
    #[serde(default, rename = "parentID")]
    pub parent_id: Option<String>,
    #[serde(default)]
    pub time: SessionTime,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct SessionTime {
    #[serde(default)]
    pub created: i64,
    #[serde(default)]
    pub updated: i64,
}

/// A session's state in `GET /session/status` and `session.status` events.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SessionStatus {
    /// `busy`, `idle` or `retry`.
    #[serde(rename = "type")]
    pub kind: String,
}

impl SessionStatus {
    /// Still working (a pending question keeps its session busy).
    pub fn is_busy(&self) -> bool {
        self.kind == "busy" || self.kind == "retry"
    }
}

impl QuestionInfo {
    /// The part of an imported question, as OpenCode asked it.
    pub fn from_prompt(p: &Prompt) -> Self {
        QuestionInfo {
            question: p.question.clone(),
            header: p.header.clone(),
            options: p
                .options
                .iter()
                .map(|o| OptionInfo {
                    label: o.label.clone(),
                    description: o.description.clone(),
                })
                .collect(),
            multiple: p.multiple,
            custom: Some(p.custom),
        }
    }

    pub fn to_prompt(&self) -> Prompt {
        Prompt {
            header: self.header.clone(),
            question: self.question.clone(),
            options: self
                .options
                .iter()
                .map(|o| PromptOption {
                    label: o.label.clone(),
                    description: o.description.clone(),
                })
                .collect(),
            multiple: self.multiple,
            custom: self.custom.unwrap_or(true),
        }
    }
}

/// Where a request lives and who answers it, for the mapping to oq's shapes.
#[derive(Debug, Clone)]
pub struct Placement<'a> {
    /// The upstream's name: the server's base URL for the direct source, the configured
    /// name for a bridge. Never credentials.
    pub upstream_name: &'a str,
    pub directory: &'a str,
    /// The person who answers this upstream's questions.
    pub person: &'a str,
    /// When oq first saw the request (OpenCode's list carries no time).
    pub seen_at: i64,
}

/// The author recorded for a question an OpenCode agent asked.
pub const OPENCODE_AUTHOR: &str = "opencode";

impl Request {
    /// The request an imported question stands for (its parts and where it lives);
    /// `None` for a question that is not OpenCode's.
    pub fn of_question(q: &Question) -> Option<Request> {
        let up = q.upstream.as_ref().filter(|u| u.kind == "opencode")?;
        Some(Request {
            id: up.request_id.clone(),
            session_id: up.session_id.clone(),
            questions: q.prompts.iter().map(QuestionInfo::from_prompt).collect(),
            tool: up.call_id.as_ref().map(|c| ToolRef {
                message_id: String::new(),
                call_id: c.clone(),
            }),
        })
    }

    /// The request as an open domain question: `pergunta` is the first question's text
    /// (cut to 500 characters), `prompts` one per question, `upstream` filled, project =
    /// the directory, session author = the configured person.
    pub fn to_question(&self, at: &Placement<'_>) -> Question {
        let first = self
            .questions
            .first()
            .map(|q| q.question.trim())
            .filter(|q| !q.is_empty())
            .unwrap_or("(OpenCode asked a question without text)");
        Question {
            question_id: self.id.clone(),
            project_id: at.directory.to_string(),
            session_id: self.session_id.clone(),
            session_author: at.person.to_string(),
            pergunta: first.chars().take(PERGUNTA_MAX_CHARS).collect(),
            sugestao: None,
            afeta: Afeta::default(),
            autor: OPENCODE_AUTHOR.into(),
            source: "opencode".into(),
            created_at: at.seen_at,
            seq: 0,
            answer: None,
            prompts: self.questions.iter().map(QuestionInfo::to_prompt).collect(),
            upstream: Some(Upstream {
                kind: "opencode".into(),
                name: at.upstream_name.to_string(),
                directory: at.directory.to_string(),
                request_id: self.id.clone(),
                session_id: self.session_id.clone(),
                call_id: self.tool.as_ref().map(|t| t.call_id.clone()),
            }),
            closure: None,
            orphaned: false,
            handed_off: false,
            snooze: None,
        }
    }

    /// The request as oq shows it to the configured person (who can answer it).
    pub fn to_item(&self, at: &Placement<'_>, orphaned: bool) -> QuestionItem {
        let mut q = self.to_question(at);
        q.orphaned = orphaned;
        QuestionItem::from_question(&q, &Actor::person(at.person))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTED: &str = r#"[{"id":"que_22c1149a1001pK2nxFERQz8ZwZ","sessionID":"ses_dd3eec3f1ffeVpBHMXK6pY7Y6D","questions":[{"question":"Which database should the project use?","header":"Database","options":[{"label":"Postgres","description":"Relational, battle tested"},{"label":"SQLite","description":"Embedded, zero setup"}],"multiple":false}],"tool":{"messageID":"msg_22c114373001Xdh1YTAz6jHvr2","callID":"call_e16b2a687df4"}}]"#;

    #[test]
    fn a_listed_request_maps_to_an_open_question_item() {
        let reqs: Vec<Request> = serde_json::from_str(LISTED).expect("parses");
        let at = Placement {
            upstream_name: "http://127.0.0.1:4096",
            directory: "/srv/peer/work",
            person: "ana",
            seen_at: 7,
        };
        let item = reqs[0].to_item(&at, false);
        assert_eq!(item.question_id, "que_22c1149a1001pK2nxFERQz8ZwZ");
        assert_eq!(item.pergunta, "Which database should the project use?");
        assert_eq!(item.source, "opencode");
        assert_eq!(item.status, "open");
        assert_eq!(item.session_author, "ana");
        assert!(item.can_answer);
        assert_eq!(item.prompts.len(), 1);
        assert!(item.prompts[0].custom);
        assert!(!item.prompts[0].multiple);
        let up = item.upstream.expect("upstream");
        assert_eq!(up.directory, "/srv/peer/work");
        assert_eq!(up.session_id, "ses_dd3eec3f1ffeVpBHMXK6pY7Y6D");
    }

    #[test]
    fn a_long_question_is_cut_to_500_characters() {
        let text = "é".repeat(700);
        let req = Request {
            id: "que_1".into(),
            session_id: "ses_1".into(),
            questions: vec![QuestionInfo {
                question: text,
                header: "H".into(),
                options: vec![],
                multiple: false,
                custom: Some(false),
            }],
            tool: None,
        };
        let at = Placement {
            upstream_name: "x",
            directory: "/d",
            person: "p",
            seen_at: 0,
        };
        let item = req.to_item(&at, true);
        assert_eq!(item.pergunta.chars().count(), 500);
        assert!(item.orphaned);
        assert!(!item.prompts[0].custom);
    }
}
