//! The HTTP source's query strings and paths (`http.rs`), built from the same queries
//! the local engine takes, so a remote list asks exactly what a local one would.

use super::http_call::seg;
use crate::engine::{DecisionQuery, ListQuery, SnoozeFilter, Sort};

/// `GET …/open-questions`'s parameters; the defaults are left out.
pub(super) fn list_params(list: &ListQuery) -> Vec<(&'static str, String)> {
    let mut query = vec![
        ("status", list.status.as_str().to_string()),
        ("limit", list.limit.to_string()),
    ];
    if let Some(c) = &list.cursor {
        query.push(("cursor", c.clone()));
    }
    if let Some(s) = &list.search {
        query.push(("q", s.text()));
    }
    if list.sort != Sort::Oldest {
        query.push(("sort", list.sort.as_str().to_string()));
    }
    if list.snoozed != SnoozeFilter::Show {
        query.push(("snoozed", list.snoozed.as_str().to_string()));
    }
    query
}

/// `GET …/decisions`'s parameters: only those the query sets.
pub(super) fn decisions_params(q: &DecisionQuery) -> Vec<(&'static str, String)> {
    let mut query = vec![("limit", q.limit.to_string())];
    let parts = [
        ("cursor", q.cursor.clone()),
        ("q", q.search.as_ref().map(|s| s.text())),
        ("since", q.since.map(crate::domain::date::format_utc_exact)),
        ("affects", q.affects.as_ref().map(|a| a.encode())),
        ("source", q.source.map(|s| s.as_str().to_string())),
        ("agent", q.agent.clone()),
    ];
    query.extend(parts.into_iter().filter_map(|(k, v)| Some((k, v?))));
    query
}

/// `/projects/{p}/open-questions/{id}/{action}`, each segment escaped.
pub(super) fn question_path(project: &str, question_id: &str, action: &str) -> String {
    format!(
        "/projects/{}/open-questions/{}/{action}",
        seg(project),
        seg(question_id)
    )
}
