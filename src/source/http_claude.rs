//! The Claude Code hook's two calls on an `oq serve` (`oq hook claude-code --source
//! http://…`): declare Claude's `AskUserQuestion` as one question with its parts and
//! upstream, and report what Claude's own dialog did with it.

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
}
