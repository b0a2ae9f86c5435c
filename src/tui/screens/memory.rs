//! The memory of answers in the TUI (issue 17 part 2): which question the earlier-answer
//! lookup was last asked for, and its reply. Plain data; `tui::memory` asks (an effect
//! when the selection moves to a question the person can answer) and copies.

use crate::wire::SimilarAnswer;

#[derive(Debug, Clone, Default)]
pub struct Memory {
    /// The question the lookup was last asked for: in flight, or answered in `hint`. A
    /// selection on another question asks again; a reply for any other is stale.
    pub asked: Option<String>,
    /// The earlier answer `asked` resembles, once the reply says so.
    pub hint: Option<SimilarAnswer>,
}

impl Memory {
    /// The hint for `question_id`, if its reply has come and found one.
    pub fn for_question(&self, question_id: &str) -> Option<&SimilarAnswer> {
        self.hint
            .as_ref()
            .filter(|_| self.asked.as_deref() == Some(question_id))
    }
}
