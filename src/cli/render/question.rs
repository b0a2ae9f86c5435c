//! A question as text: the list's lines and `oq show`. Every settled question says how
//! it was settled (its `decisionSource`), and a question with options is printed whole —
//! every part with its header, options, `multiple` and whether free text is allowed —
//! with the answer command that fits it.

use std::collections::BTreeSet;

use super::{age, one_line};
use crate::domain::DecisionSource;
use crate::wire::{AnswerItem, PromptItem, QuestionItem, QuestionList};

pub fn question_list(list: &QuestionList, now_ms: i64) -> String {
    if list.items.is_empty() {
        return format!("no questions ({} in all)\n", list.total_text(0));
    }
    let places = Places::of(list.items.iter().map(|q| q.project_id.as_str()));
    let mut out = String::new();
    for q in &list.items {
        let (mark, state) = standing(q);
        out.push_str(&format!(
            "{mark} {:<16} {:<w$} {:<9} {:<10} {:>4}  {}\n",
            q.question_id,
            places.name(&q.project_id),
            q.autor,
            state,
            age(now_ms, q.created_at),
            one_line(&q.pergunta, 60),
            w = places.width,
        ));
    }
    let shown = list.items.len();
    out.push_str(&format!("{shown} of {}", list.total_text(shown as u64)));
    if let Some(c) = &list.cursor {
        out.push_str(&format!(" · next page: --cursor {c}"));
    }
    out.push('\n');
    out
}

/// The list's mark and state word: `●` yours to answer, `○` open for someone else, `✓`
/// decided by a person, `·` settled otherwise — the word says how.
fn standing(q: &QuestionItem) -> (&'static str, &'static str) {
    if let Some((source, _)) = q.settlement() {
        let mark = if source.is_persons_own() { "✓" } else { "·" };
        return (mark, source_word(source));
    }
    if q.handed_off {
        return ("○", "in claude");
    }
    match (q.orphaned, q.can_answer) {
        (true, _) => ("○", "orphaned"),
        (false, true) => ("●", "for you"),
        (false, false) => ("○", "open"),
    }
}

/// The list's word for a decision source (≤ 10 characters).
fn source_word(s: DecisionSource) -> &'static str {
    match s {
        DecisionSource::Person => "answered",
        DecisionSource::Suggestion => "accepted",
        DecisionSource::AutoDelegate => "auto",
        DecisionSource::Delegate => "delegated",
        DecisionSource::Upstream => "upstream",
        DecisionSource::Vanished => "vanished",
        DecisionSource::Dismissed => "dismissed",
        DecisionSource::Withdrawn => "withdrawn",
    }
}

/// What a decision source means, in words, for `oq show`.
fn source_words(s: DecisionSource) -> &'static str {
    match s {
        DecisionSource::Person => "typed by the session's author",
        DecisionSource::Suggestion => "the session's author accepted the suggestion",
        DecisionSource::AutoDelegate => {
            "auto-delegated: the bridge's timer sent the continuation text, nobody decided"
        }
        DecisionSource::Delegate => "delegated: the continuation text, sent at a person's request",
        DecisionSource::Upstream => "answered in the agent's own interface, not in oq",
        DecisionSource::Vanished => "the agent is gone: upstream lost the request (not an answer)",
        DecisionSource::Dismissed => "dismissed by the session's author",
        DecisionSource::Withdrawn => "withdrawn by the agent that asked",
    }
}

pub fn question(q: &QuestionItem, now_ms: i64) -> String {
    let mut out = format!("{}  [{}]  {}\n\n", q.question_id, q.status, q.project_id);
    if q.prompts.is_empty() {
        out.push_str(&format!("{}\n\n", q.pergunta));
    } else {
        out.push_str(&prompts(&q.prompts));
    }
    out.push_str(&format!(
        "asked by  {} · session {} ({}) · {} ago\n",
        q.autor,
        q.session_id,
        q.session_author,
        age(now_ms, q.created_at)
    ));
    if q.orphaned {
        out.push_str("orphaned  the agent's session was aborted: nobody waits for this answer\n");
    }
    if q.handed_off && q.status == "open" {
        out.push_str(&format!(
            "handed    {}: the hook stopped waiting, an answer in oq would reach nobody\n",
            crate::domain::claude_code::HANDED_OFF
        ));
    }
    out.push_str(&format!("affects   {}\n", q.afeta.describe()));
    if let Some(s) = &q.sugestao {
        out.push_str(&format!("suggests  {s}\n"));
    }
    if let Some(a) = &q.answer {
        out.push_str(&answered(a, &q.prompts, now_ms));
    } else if let (Some(c), Some((source, _))) = (&q.closed, q.settlement()) {
        out.push_str(&format!(
            "closed    by {} {} ago · {}\n",
            c.by,
            age(now_ms, c.closed_at),
            source_words(source)
        ));
    } else if q.can_answer {
        out.push_str(&hint(q));
    }
    if let Some(s) = &q.similar_answer {
        // The memory of answers (`domain::similar`): shown, never applied.
        out.push_str(&format!(
            "similar   {}: «{}»\n          to «{}» ({}, {} %)\n",
            s.lead(None, now_ms),
            one_line(&s.resposta, 200),
            one_line(&s.pergunta, 120),
            s.question_id,
            s.similarity
        ));
    }
    if q.answer.is_none() && q.closed.is_none() && !q.can_answer {
        out.push_str(&format!(
            "you cannot answer: {}\n",
            q.reason.as_deref().unwrap_or("")
        ));
    }
    out
}

/// Every part of a question with options: its header, text, options and what it takes.
fn prompts(parts: &[PromptItem]) -> String {
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        let takes = match (p.multiple, p.custom) {
            (false, true) => "one option, or your own text",
            (false, false) => "one option",
            (true, true) => "any of the options, and your own text",
            (true, false) => "any of the options",
        };
        let header = if p.header.is_empty() {
            String::new()
        } else {
            format!(" · {}", p.header)
        };
        out.push_str(&format!(
            "part {}/{}{header} ({takes})\n  {}\n",
            i + 1,
            parts.len(),
            p.question
        ));
        for (n, o) in p.options.iter().enumerate() {
            if o.description.is_empty() {
                out.push_str(&format!("  {:>2}. {}\n", n + 1, o.label));
            } else {
                out.push_str(&format!(
                    "  {:>2}. {} — {}\n",
                    n + 1,
                    o.label,
                    o.description
                ));
            }
        }
        out.push('\n');
    }
    out
}

fn answered(a: &AnswerItem, parts: &[PromptItem], now_ms: i64) -> String {
    let mut out = format!(
        "answered  by {} {} ago · {}\n",
        a.respondida_por,
        age(now_ms, a.answered_at),
        source_words(
            a.decision_source
                .unwrap_or(DecisionSource::for_answer(a.aceitou_sugestao))
        )
    );
    if a.answers.is_empty() {
        out.push_str(&format!("          {}\n", a.resposta));
    }
    for (i, chosen) in a.answers.iter().enumerate() {
        let header = parts
            .get(i)
            .map(|p| p.header.as_str())
            .filter(|h| !h.is_empty())
            .map(|h| format!("{h}: "))
            .unwrap_or_default();
        out.push_str(&format!("          {header}{}\n", chosen.join(", ")));
    }
    out
}

/// The answer command that fits: `--answers-json` with one array per part for a question
/// with options (its first options as the example), `--text` (and `--accept`) otherwise.
fn hint(q: &QuestionItem) -> String {
    if q.prompts.is_empty() {
        let accept = if q.sugestao.is_some() {
            " (or --accept)"
        } else {
            ""
        };
        return format!(
            "you can answer: oq answer {} --text \"…\"{accept}\n",
            q.question_id
        );
    }
    let example: Vec<Vec<String>> = q
        .prompts
        .iter()
        .map(|p| {
            p.options
                .first()
                .map(|o| vec![o.label.clone()])
                .unwrap_or_else(|| vec!["your text".into()])
        })
        .collect();
    let json = serde_json::to_string(&example).unwrap_or_default();
    format!(
        "you can answer: oq answer {} --answers-json '{}' (one array per part)\n",
        q.question_id,
        json.replace('\'', "'\\''")
    )
}

/// How projects are named in the list: a project id as it is, but a directory (an
/// OpenCode source's projects) by the shortest tail of its path that no other directory
/// of the list shares, so two directories are never shown alike.
struct Places {
    names: Vec<(String, String)>,
    width: usize,
}

impl Places {
    fn of<'a>(ids: impl Iterator<Item = &'a str>) -> Places {
        let ids: BTreeSet<&str> = ids.collect();
        let names: Vec<(String, String)> = ids
            .iter()
            .map(|id| (id.to_string(), shortest_unique_tail(id, &ids)))
            .collect();
        let width = names
            .iter()
            .map(|(_, n)| n.chars().count())
            .max()
            .unwrap_or(0)
            .clamp(10, 40);
        Places { names, width }
    }

    fn name(&self, id: &str) -> String {
        self.names
            .iter()
            .find(|(i, _)| i == id)
            .map(|(_, n)| n.clone())
            .unwrap_or_else(|| id.to_string())
    }
}

fn shortest_unique_tail(id: &str, all: &BTreeSet<&str>) -> String {
    if !id.starts_with('/') {
        return id.to_string();
    }
    let parts: Vec<&str> = id.split('/').filter(|p| !p.is_empty()).collect();
    for n in 1..=parts.len() {
        let tail = parts[parts.len() - n..].join("/");
        let clash = all
            .iter()
            .any(|other| *other != id && (other.ends_with(&format!("/{tail}")) || *other == tail));
        if !clash {
            return if n == parts.len() {
                id.to_string()
            } else {
                format!("…/{tail}")
            };
        }
    }
    id.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str, settled: serde_json::Value) -> QuestionItem {
        let mut q = serde_json::json!({
            "questionId": id, "projectId": "p1", "sessionId": "s1", "sessionAuthor": "ana",
            "pergunta": "Which cache?", "afeta": {}, "autor": "po", "source": "opencode",
            "status": "open", "createdAt": 0, "canAnswer": false
        });
        if let (Some(q), Some(extra)) = (q.as_object_mut(), settled.as_object()) {
            q.extend(extra.clone());
        }
        serde_json::from_value(q).expect("a question item")
    }

    /// Only a person's own decision gets the ✓; the timer, upstream and a vanished
    /// request each say what they were.
    #[test]
    fn the_list_says_how_each_question_was_settled() {
        let answer = |source: &str| {
            serde_json::json!({"status": "answered", "answer": {
                "resposta": "x", "aceitouSugestao": false, "decisionEventId": "d",
                "respondidaPor": "ana", "answeredAt": 0, "decisionSource": source}})
        };
        let list = QuestionList {
            items: vec![
                item("q-person", answer("person")),
                item("q-auto", answer("auto_delegate")),
                item(
                    "q-gone",
                    serde_json::json!({"status": "closed", "closed": {
                        "reason": "external", "by": "bridge:laptop", "closedAt": 0,
                        "decisionSource": "vanished"}}),
                ),
                item("q-open", serde_json::json!({"orphaned": true})),
            ],
            total: 4,
            total_is_lower_bound: false,
            snoozed: 0,
            snoozed_next_return: None,
            cursor: None,
        };
        let text = question_list(&list, 0);
        assert!(text.ends_with("4 of 4\n"), "{text}");
        // A search's total that stopped at the cap reads as "at least".
        let capped = QuestionList {
            total: 1000,
            total_is_lower_bound: true,
            snoozed: 0,
            snoozed_next_return: None,
            ..list.clone()
        };
        assert!(question_list(&capped, 0).ends_with("4 of 1000+\n"));
        let line = |id: &str| {
            text.lines()
                .find(|l| l.contains(id))
                .unwrap_or_default()
                .to_string()
        };
        assert!(line("q-person").starts_with("✓ ") && line("q-person").contains(" answered "));
        assert!(line("q-auto").starts_with("· ") && line("q-auto").contains(" auto "));
        assert!(line("q-gone").starts_with("· ") && line("q-gone").contains(" vanished "));
        assert!(line("q-open").starts_with("○ ") && line("q-open").contains(" orphaned "));
        let shown = question(&list.items[2], 0);
        assert!(shown.contains("the agent is gone"), "{shown}");
        assert!(!shown.contains("you cannot answer"), "{shown}");
    }

    #[test]
    fn two_directories_with_one_name_are_told_apart() {
        let all: BTreeSet<&str> = ["/home/a/api", "/srv/b/api", "/srv/web"]
            .into_iter()
            .collect();
        assert_eq!(shortest_unique_tail("/home/a/api", &all), "…/a/api");
        assert_eq!(shortest_unique_tail("/srv/b/api", &all), "…/b/api");
        assert_eq!(shortest_unique_tail("/srv/web", &all), "…/web");
        assert_eq!(shortest_unique_tail("p1", &all), "p1");
    }
}
