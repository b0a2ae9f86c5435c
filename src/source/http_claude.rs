//! The Claude Code hook's two calls on an `oq serve` (`oq hook claude-code --source
//! http://…`): declare Claude's `AskUserQuestion` as one question with its parts and
//! upstream, say when the hook hands it to Claude's own dialog, and report what that
//! dialog did with it.

use super::http::HttpSource;
use super::http_call::seg;
use crate::domain::OqError;
use crate::domain::claude_code::{ClaudeDeclare, ClaudeSettlement};
use crate::wire::QuestionItem;

impl HttpSource {
    /// `POST /projects/{p}/claude-code/questions`: a retry of the same tool call gets the
    /// first question back.
    pub async fn claude_declare(
        &self,
        project: &str,
        d: &ClaudeDeclare,
    ) -> Result<QuestionItem, OqError> {
        let path = format!("/projects/{}/claude-code/questions", seg(project));
        self.post(&path, d).await
    }

    /// `POST /projects/{p}/claude-code/questions/{id}/settlement`.
    pub async fn claude_settle(
        &self,
        project: &str,
        question_id: &str,
        how: &ClaudeSettlement,
    ) -> Result<QuestionItem, OqError> {
        let path = format!(
            "/projects/{}/claude-code/questions/{}/settlement",
            seg(project),
            seg(question_id)
        );
        self.post(&path, how).await
    }

    /// `POST /projects/{p}/claude-code/questions/{id}/handoff`: the question as it now
    /// is (answered, when an answer came first).
    pub async fn claude_hand_off(
        &self,
        project: &str,
        question_id: &str,
    ) -> Result<QuestionItem, OqError> {
        let path = format!(
            "/projects/{}/claude-code/questions/{}/handoff",
            seg(project),
            seg(question_id)
        );
        self.post(&path, &serde_json::json!({})).await
    }
}
