//! A list query answered over items already in hand, for a source with no index of its
//! own (OpenCode direct, the offline mirror): the same status rule
//! (`StatusFilter::admits`), the same search words (`domain::search`), the same orders,
//! an offset for a cursor.
//!
//! Invariant: the total is the whole filter's, the search included; the cursor is an
//! offset into that filtered, sorted list.

use crate::domain::{ErrorCode, OqError};
use crate::engine::{ListQuery, Sort};
use crate::wire::{QuestionItem, QuestionList};

/// `items` in the order they were seen (oldest first), filtered, sorted and paged.
pub fn apply(mut items: Vec<QuestionItem>, query: &ListQuery) -> Result<QuestionList, OqError> {
    let limit = query.checked_limit()?;
    items.retain(|q| query.status.admits(q.settlement()));
    if let Some(search) = &query.search {
        items.retain(|q| {
            let answer = q.answer.as_ref().map(|a| a.resposta.as_str());
            search.matches(&[
                &q.pergunta,
                q.sugestao.as_deref().unwrap_or(""),
                answer.unwrap_or(""),
            ])
        });
    }
    // Stable sorts: ties keep the order seen.
    match query.sort {
        Sort::Oldest => items.sort_by_key(|q| q.created_at),
        Sort::Newest => {
            items.sort_by_key(|q| q.created_at);
            items.reverse();
        }
        Sort::Project => items.sort_by(|a, b| a.project_id.cmp(&b.project_id)),
        Sort::Asker => items.sort_by(|a, b| a.autor.cmp(&b.autor)),
    }
    let start = match query.cursor.as_deref() {
        None => 0,
        Some(c) => c.parse::<usize>().map_err(|_| {
            OqError::invalid(
                ErrorCode::InvalidCursor,
                format!("cursor {c:?} is not one of oq's"),
            )
        })?,
    };
    let total = items.len() as u64;
    let page: Vec<QuestionItem> = items.into_iter().skip(start).take(limit).collect();
    let next = start + page.len();
    Ok(QuestionList {
        cursor: (u64::try_from(next).unwrap_or(u64::MAX) < total).then(|| next.to_string()),
        items: page,
        total,
        // Counted in hand, every one.
        total_is_lower_bound: false,
        snoozed: 0,
        snoozed_next_return: None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::StatusFilter;

    fn item(id: &str, pergunta: &str, at: i64, autor: &str) -> QuestionItem {
        serde_json::from_value(serde_json::json!({
            "questionId": id, "projectId": "/dir", "sessionId": "s", "sessionAuthor": "ana",
            "pergunta": pergunta, "afeta": {}, "autor": autor, "source": "opencode",
            "status": "open", "createdAt": at, "canAnswer": true
        }))
        .unwrap()
    }

    #[test]
    fn search_sort_and_pages_over_the_items_in_hand() {
        let items: Vec<QuestionItem> = (0..53)
            .map(|i| {
                let text = if i == 50 {
                    "Zeppelin?".into()
                } else {
                    format!("q {i}")
                };
                item(&format!("q-{i}"), &text, i, ["b", "a"][i as usize % 2])
            })
            .collect();
        let q = ListQuery::new(StatusFilter::Open)
            .search("zeppelin")
            .unwrap();
        let found = apply(items.clone(), &q).unwrap();
        assert_eq!(
            (found.items[0].question_id.as_str(), found.total),
            ("q-50", 1)
        );
        let q = ListQuery::new(StatusFilter::Open).sorted(Sort::Newest);
        let page = apply(items.clone(), &q).unwrap();
        assert_eq!(
            (page.items[0].question_id.as_str(), page.total),
            ("q-52", 53)
        );
        let rest = apply(items.clone(), &q.clone().after(page.cursor.as_deref())).unwrap();
        assert_eq!(rest.items.len(), 3);
        assert_eq!(rest.items[2].question_id, "q-0");
        let q = ListQuery::new(StatusFilter::Open).sorted(Sort::Asker);
        let page = apply(items, &q).unwrap();
        assert_eq!(
            (
                page.items[0].question_id.as_str(),
                page.items[0].autor.as_str()
            ),
            ("q-1", "a")
        );
    }

    #[test]
    fn the_status_filters_the_items_in_hand_as_the_stores_do() {
        let mut auto = item("q-auto", "a", 1, "po");
        auto.answer = serde_json::from_value(serde_json::json!({
            "resposta": "go on", "aceitouSugestao": false, "decisionEventId": "d",
            "respondidaPor": "bridge:laptop", "answeredAt": 2, "decisionSource": "auto_delegate"
        }))
        .unwrap();
        let mut gone = item("q-gone", "b", 2, "po");
        // An older server's closure: no decisionSource, read from its reason.
        gone.closed = serde_json::from_value(
            serde_json::json!({"reason": "withdrawn", "by": "po", "closedAt": 3}),
        )
        .unwrap();
        let items = vec![item("q-open", "c", 3, "po"), auto, gone];
        let ids = |status: &str| {
            let q = ListQuery::new(status.parse().unwrap());
            let list = apply(items.clone(), &q).unwrap();
            list.items
                .into_iter()
                .map(|q| q.question_id)
                .collect::<Vec<_>>()
        };
        assert_eq!(ids("open"), ["q-open"]);
        assert_eq!(ids("answered"), ["q-auto"]);
        assert_eq!(ids("auto_delegate"), ["q-auto"]);
        assert_eq!(ids("closed"), ["q-gone"]);
        assert_eq!(ids("withdrawn"), ["q-gone"]);
        assert_eq!(ids("person"), Vec::<String>::new());
        assert_eq!(ids("all").len(), 3);
    }
}
