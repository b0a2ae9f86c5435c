//! The memory of answers' lookup in PostgreSQL: what SQLite finds through its trigram
//! index (`sqlite/view/similar.rs`), here by `ILIKE` (PostgreSQL's own case folding) on
//! the question, its suggestion and its answer: for each word, and for all of them
//! together, the newest `per_word` answered questions of the project, newest answer
//! first. `domain::similar` decides which of them resemble the question.

use super::list::Param;
use crate::domain::search::Search;
use crate::engine::store::Lookup;

/// The parameters of each query: `$1` the project, `$2` the limit, then one pattern per
/// word of the set.
pub(super) fn queries(
    project_id: &str,
    words: &[String],
    per_word: usize,
    lookup: Lookup,
) -> Vec<Vec<Param>> {
    let sets: Vec<Vec<&String>> = match lookup {
        Lookup::AllWords => vec![words.iter().collect()],
        Lookup::EachWord => words.iter().map(|w| vec![w]).collect(),
    };
    sets.into_iter()
        .map(|set| {
            let mut params = vec![Param::Text(project_id.into()), Param::Int(per_word as i64)];
            params.extend(set.iter().map(|w| Param::Text(Search::like_pattern(w))));
            params
        })
        .collect()
}

/// The query for `params` parameters (two, then the patterns).
pub(super) fn sql(params: usize, columns: &str, settlement_join: &str) -> String {
    let filter: String = (3..=params)
        .map(|n| {
            format!(
                " AND (d.payload->>'pergunta' ILIKE ${n} OR coalesce(d.payload->>'sugestao', '') ILIKE ${n}
                       OR st.payload->>'resposta' ILIKE ${n})"
            )
        })
        .collect();
    format!(
        "SELECT {columns} FROM oq.events d {settlement_join}
          WHERE d.type = 'artifact.open_question' AND d.project_id = $1
            AND st.type = 'open_question.answered' {filter}
          ORDER BY st.seq DESC LIMIT $2"
    )
}
