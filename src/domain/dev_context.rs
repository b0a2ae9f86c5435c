//! ADR 0214 §7: the decisions a task's dev and QA see — linked through `afeta` to the task
//! or its story, newest first, at most 10 and at most 1,500 characters in all.

use serde::{Deserialize, Serialize};

pub const DEV_CONTEXT_HEADER: &str = "User decisions — they win over FR/DoR when they conflict";
pub const MAX_DECISIONS: usize = 10;
pub const MAX_DECISION_CHARS: usize = 1_500;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decisao {
    #[serde(rename = "questionId")]
    pub question_id: String,
    pub pergunta: String,
    pub resposta: String,
    #[serde(rename = "aceitouSugestao")]
    pub aceitou_sugestao: bool,
    #[serde(rename = "respondidaPor")]
    pub respondida_por: String,
    #[serde(rename = "decisionEventId")]
    pub decision_event_id: String,
    #[serde(rename = "decidedAt")]
    pub decided_at: i64,
    /// Log position of the answer: orders "newest first".
    #[serde(skip, default)]
    pub seq: i64,
}

impl Decisao {
    fn chars(&self) -> usize {
        self.pergunta.chars().count() + self.resposta.chars().count()
    }
}

/// Picks the decisions for the context. The character budget counts `pergunta` + `resposta`
/// of each decision. When the next decision does not fit, its `resposta` is cut to what
/// remains (ending in "…") if at least its question and a few characters fit, and the
/// selection stops there: the newest decisions always come first and whole.
pub fn select_decisions(mut linked: Vec<Decisao>) -> Vec<Decisao> {
    linked.sort_by_key(|d| std::cmp::Reverse(d.seq));
    let mut out = Vec::new();
    let mut used = 0usize;
    for mut d in linked.into_iter().take(MAX_DECISIONS) {
        let need = d.chars();
        if used + need <= MAX_DECISION_CHARS {
            used += need;
            out.push(d);
            continue;
        }
        let room = MAX_DECISION_CHARS.saturating_sub(used + d.pergunta.chars().count());
        // Under 20 characters of answer the cut would mislead more than inform.
        if room >= 20 {
            d.resposta = d.resposta.chars().take(room - 1).collect::<String>() + "…";
            out.push(d);
        }
        break;
    }
    out
}
