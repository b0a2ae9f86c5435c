//! The memory of answers: the earlier answer an open question resembles, looked up when
//! the question is read (`oq show`, `GET …/open-questions/{id}`, MCP `get_question`, the
//! TUI's question pane). The store finds candidates by the question's words, the domain
//! (`domain::similar`) decides. It only reads: a hint never answers anything.

use super::Engine;
use crate::domain::similar::{self, CANDIDATES_PER_WORD, Resemblance, SimilarAnswer};
use crate::domain::{OqError, Question};
use crate::engine::store::{Lookup, Store};

impl<S: Store> Engine<S> {
    /// The answered question of the same project that `question` resembles most, if
    /// any. `None` for a question already settled or one with options.
    pub fn similar_answer(&self, question: &Question) -> Result<Option<SimilarAnswer>, OqError> {
        if question.answer.is_some() || question.closure.is_some() || !question.prompts.is_empty() {
            return Ok(None);
        }
        let words = similar::lookup_words(&question.pergunta);
        if words.is_empty() {
            return Ok(None);
        }
        let project = &question.project_id;
        // A text the same once normalised holds every word (accents aside): the one query
        // of all the words finds it, and no candidate of the per-word walks can beat a
        // `same` (only a newer `same`, which holds every word too). Most lookups that
        // find one stop here.
        let all = self.store.read(|v| {
            v.similar_candidates(project, &words, CANDIDATES_PER_WORD, Lookup::AllWords)
        })?;
        if let Some(same) =
            similar::best(question, &all).filter(|s| s.resemblance == Resemblance::Same)
        {
            return Ok(Some(same));
        }
        let mut candidates = all;
        if words.len() > 1 {
            // Then each word alone: the near texts that miss a word or spell one otherwise.
            candidates.extend(self.store.read(|v| {
                v.similar_candidates(project, &words, CANDIDATES_PER_WORD, Lookup::EachWord)
            })?);
        }
        Ok(similar::best(question, &candidates))
    }
}
