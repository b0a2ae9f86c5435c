//! The Decisions view's filter line, one text the person types: free words are the
//! history's search (the list's own `domain::search`, over the whole history through the
//! source's index), and `kind:value` words narrow it — `project:P`, `agent:A` (who
//! asked), `task:ID` / `story:ID` / `rule:ID` (what it affects), `source:HOW` (the
//! `decisionSource`), `since:DATE` (UTC). Each part is checked by the engine's own rules,
//! so a bad one is refused in the engine's words and the view keeps its last filter.

use crate::engine::DecisionQuery;
use crate::engine::decisions::parse_source;

/// A filter as parsed: the query every source carries, and the project it asks in.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Filter {
    pub query: DecisionQuery,
    /// `project:P`: the one project asked; `None` for the projects in view.
    pub project: Option<String>,
}

/// Parses the filter line; the error names the part refused.
pub fn parse(text: &str) -> Result<Filter, String> {
    let mut words = Vec::new();
    let (mut since, mut affects, mut source, mut agent, mut project) =
        (None, None, None, None, None);
    for word in text.split_whitespace() {
        match word.split_once(':') {
            Some(("project", p)) if !p.is_empty() => project = Some(p.to_string()),
            Some(("agent", a)) if !a.is_empty() => agent = Some(a),
            Some(("since", d)) => since = Some(d),
            Some(("source" | "how", s)) => source = Some(s),
            Some(("task" | "story" | "rule", _)) => affects = Some(word),
            _ => words.push(word),
        }
    }
    let search = words.join(" ");
    let search = (!search.is_empty()).then_some(search.as_str());
    let query = DecisionQuery::parse(search, since, affects, None)
        .map_err(|e| e.to_string())?
        .by_agent(agent)
        .map_err(|e| e.to_string())?;
    let query = match source {
        Some(s) => DecisionQuery {
            source: Some(parse_source(s).map_err(|e| e.to_string())?),
            ..query
        },
        None => query,
    };
    Ok(Filter { query, project })
}

impl Filter {
    /// No filter: every decision of the projects in view.
    pub fn default_query() -> Filter {
        Filter {
            query: DecisionQuery::new(),
            project: None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::domain::DecisionSource;

    #[test]
    fn words_and_kinds_are_told_apart_and_each_is_checked() {
        let f = parse("redis  task:T-7 source:suggestion agent:qa project:loja cache").unwrap();
        assert_eq!(f.project.as_deref(), Some("loja"));
        assert_eq!(f.query.search.unwrap().text(), "redis cache");
        assert_eq!(f.query.affects.unwrap().encode(), "task:T-7");
        assert_eq!(f.query.source, Some(DecisionSource::Suggestion));
        assert_eq!(f.query.agent.as_deref(), Some("qa"));
        assert_eq!(parse("").unwrap(), Filter::default_query());
        assert!(parse("source:robot").unwrap_err().contains("robot"));
        assert!(parse("since:yesterday").unwrap_err().contains("yesterday"));
        assert!(parse("task:").unwrap_err().contains("task"));
        assert!(parse(&"x".repeat(10_000)).is_err());
    }
}
