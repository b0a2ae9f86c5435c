//! `oq decisions`: the decision history for scripts and export — every answered or closed
//! question, newest decision first, as text, `--json` (the list's shape) or `--csv` (one
//! row per decision, RFC 4180). `--all` walks every page of the filter.

use clap::Args;

use super::context::Context;
use super::csv;
use crate::domain::date::format_utc;
use crate::domain::error::exit;
use crate::domain::{ErrorCode, OqError};
use crate::engine::DecisionQuery;
use crate::source::Source;
use crate::wire::{QuestionItem, QuestionList};

#[derive(Debug, Args)]
pub struct DecisionsArgs {
    /// Only decisions with every word of TEXT in their question, suggestion or answer.
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
    /// Only decisions made at or after this UTC date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[.mmm]Z).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Only questions that affect this: task:ID, story:ID or rule:ID.
    #[arg(long, value_name = "KIND:ID")]
    pub affects: Option<String>,
    /// Only decisions made this way: person, suggestion, auto_delegate, delegate,
    /// upstream, vanished, dismissed or withdrawn.
    /// (`--source` is the global flag that names where oq works.)
    #[arg(long = "decision-source", value_name = "HOW")]
    pub decision_source: Option<String>,
    /// Only questions this agent asked (their `autor`).
    #[arg(long, value_name = "AGENT")]
    pub agent: Option<String>,
    /// One row per decision, comma-separated, quoted where needed (RFC 4180).
    #[arg(long)]
    pub csv: bool,
    /// Every page of the filter, not one.
    #[arg(long)]
    pub all: bool,
    /// At most this many a page (1–50).
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    /// The cursor a previous page printed.
    #[arg(long)]
    pub cursor: Option<String>,
}

/// The CSV's columns, in order.
const COLUMNS: [&str; 13] = [
    "decidedAt",
    "projectId",
    "questionId",
    "status",
    "decisionSource",
    "decidedBy",
    "pergunta",
    "resposta",
    "sugestao",
    "closedReason",
    "afeta",
    "autor",
    "createdAt",
];

pub async fn run(ctx: &Context, a: DecisionsArgs) -> Result<i32, OqError> {
    if a.csv && ctx.global.json {
        return Err(OqError::invalid(
            ErrorCode::InvalidFormat,
            "--csv and --json: choose one",
        ));
    }
    let query = DecisionQuery::parse(
        a.search.as_deref(),
        a.since.as_deref(),
        a.affects.as_deref(),
        a.decision_source.as_deref(),
    )?
    .by_agent(a.agent.as_deref())?
    .after(a.cursor.as_deref())
    .limit(a.limit);
    let mut list = ctx.source.decisions(ctx.project_filter(), &query).await?;
    while a.all
        && let Some(cursor) = list.cursor.take()
    {
        let next = query.clone().after(Some(&cursor));
        let page = ctx.source.decisions(ctx.project_filter(), &next).await?;
        list.items.extend(page.items);
        list.cursor = page.cursor;
    }
    if a.csv {
        print!("{}", to_csv(&list.items));
    } else {
        ctx.emit(&list, || human(&list));
    }
    Ok(exit::OK)
}

/// Who decided, when and how, for an answered or a closed question.
fn decision(q: &QuestionItem) -> (i64, String, String) {
    if let Some(a) = &q.answer {
        let how = a.decision_source.map(|d| d.as_str()).unwrap_or_else(|| {
            crate::domain::DecisionSource::for_answer(a.aceitou_sugestao).as_str()
        });
        (a.answered_at, a.respondida_por.clone(), how.into())
    } else if let Some(c) = &q.closed {
        let how = c.decision_source.map(|d| d.as_str().to_string());
        (
            c.closed_at,
            c.by.clone(),
            how.unwrap_or_else(|| c.reason.clone()),
        )
    } else {
        (q.created_at, String::new(), String::new())
    }
}

/// `task:T-1 story:S-1 rule:RN-1`, the `--affects` spelling.
fn afeta(q: &QuestionItem) -> String {
    let kinds = [
        ("rule", &q.afeta.regras),
        ("story", &q.afeta.historias),
        ("task", &q.afeta.tarefas),
    ];
    kinds
        .iter()
        .flat_map(|(k, ids)| ids.iter().map(move |id| format!("{k}:{id}")))
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn to_csv(items: &[QuestionItem]) -> String {
    let mut out = csv::record(&COLUMNS);
    for q in items {
        let (at, by, how) = decision(q);
        out.push_str(&csv::record(&[
            format_utc(at),
            q.project_id.clone(),
            q.question_id.clone(),
            q.status.clone(),
            how,
            by,
            q.pergunta.clone(),
            q.answer
                .as_ref()
                .map(|a| a.resposta.clone())
                .unwrap_or_default(),
            q.sugestao.clone().unwrap_or_default(),
            q.closed
                .as_ref()
                .map(|c| c.reason.clone())
                .unwrap_or_default(),
            afeta(q),
            q.autor.clone(),
            format_utc(q.created_at),
        ]));
    }
    out
}

/// The text in full, its later lines under the first.
fn indented(text: &str) -> String {
    text.lines().collect::<Vec<_>>().join("\n     ")
}

fn human(list: &QuestionList) -> String {
    if list.items.is_empty() {
        return "no decisions\n".into();
    }
    let mut out = String::new();
    for q in &list.items {
        let (at, by, how) = decision(q);
        out.push_str(&format!(
            "{}  {}  {how} by {by}  [{}]\n  Q: {}\n",
            format_utc(at),
            q.question_id,
            q.project_id,
            indented(&q.pergunta)
        ));
        match (&q.answer, &q.closed) {
            (Some(a), _) => out.push_str(&format!("  A: {}\n", indented(&a.resposta))),
            (None, Some(c)) => out.push_str(&format!("  closed: {}\n", c.reason)),
            (None, None) => {}
        }
        let affects = afeta(q);
        if !affects.is_empty() {
            out.push_str(&format!("  affects: {affects}\n"));
        }
    }
    let shown = list.items.len();
    out.push_str(&format!("{shown} of {}\n", list.total_text(shown as u64)));
    if let Some(c) = &list.cursor {
        out.push_str(&format!("more: --cursor {c}\n"));
    }
    out
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn list(total: u64, total_is_lower_bound: bool) -> QuestionList {
        let answered = serde_json::json!({
            "questionId": "q-1", "projectId": "p1", "sessionId": "s1", "sessionAuthor": "ana",
            "pergunta": "Which cache?", "afeta": {}, "autor": "po", "source": "opencode",
            "status": "answered", "createdAt": 0, "canAnswer": false,
            "answer": {"resposta": "Valkey", "aceitouSugestao": false, "decisionEventId": "d",
                       "respondidaPor": "ana", "answeredAt": 0, "decisionSource": "person"}
        });
        QuestionList {
            items: vec![serde_json::from_value(answered).expect("a question item")],
            total,
            total_is_lower_bound,
            snoozed: 0,
            snoozed_next_return: None,
            cursor: Some("c".into()),
        }
    }

    #[test]
    fn the_closing_line_says_when_a_count_stopped_at_the_cap() {
        assert!(human(&list(1000, true)).contains("\n1 of 1000+\n"));
        assert!(human(&list(7, false)).contains("\n1 of 7\n"));
    }
}
