//! What a list's search text means, once for every source: the words of the text, each
//! of which must appear — as a substring, case aside — in the question, its suggestion
//! or its answer.
//!
//! The stores answer it from an index (SQLite's FTS5 trigram table, PostgreSQL's
//! `ILIKE`); a source with no index (OpenCode direct) filters with [`Search::matches`].
//! Invariant: a `Search` is never empty and never longer than [`SEARCH_MAX_CHARS`].

use super::{ErrorCode, OqError};

/// Longer text is refused (`invalid_search`): nobody types it, and each word is a lookup.
pub const SEARCH_MAX_CHARS: usize = 200;
/// At most this many words.
pub const SEARCH_MAX_WORDS: usize = 8;

/// Validated search words, lower-cased.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    words: Vec<String>,
}

impl Search {
    /// `None` for text with no word in it (an empty box searches nothing).
    pub fn parse(text: &str) -> Result<Option<Search>, OqError> {
        let chars = text.chars().count();
        if chars > SEARCH_MAX_CHARS {
            return Err(OqError::invalid(
                ErrorCode::InvalidSearch,
                format!("search text of {chars} characters: at most {SEARCH_MAX_CHARS}"),
            ));
        }
        // Stored text holds no control characters (`text::check_text`), so such a search
        // could match nothing; and a NUL would end the FTS5 query string mid-phrase.
        if text.chars().any(|c| c.is_control() && !c.is_whitespace()) {
            return Err(OqError::invalid(
                ErrorCode::InvalidSearch,
                "search text contains control characters",
            ));
        }
        let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
        if words.len() > SEARCH_MAX_WORDS {
            return Err(OqError::invalid(
                ErrorCode::InvalidSearch,
                format!(
                    "search text of {} words: at most {SEARCH_MAX_WORDS}",
                    words.len()
                ),
            ));
        }
        Ok((!words.is_empty()).then_some(Search { words }))
    }

    /// The words, lower-cased, in the order typed.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// The text as given back on the wire (its words, one space apart).
    pub fn text(&self) -> String {
        self.words.join(" ")
    }

    /// `%word%` for SQL's `LIKE … ESCAPE '\'`: the word's own `%`, `_` and `\` are text.
    pub fn like_pattern(word: &str) -> String {
        let escaped = word
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_");
        format!("%{escaped}%")
    }

    /// Whether every word appears in one of `texts`.
    pub fn matches(&self, texts: &[&str]) -> bool {
        let texts: Vec<String> = texts.iter().map(|t| t.to_lowercase()).collect();
        self.words
            .iter()
            .all(|w| texts.iter().any(|t| t.contains(w.as_str())))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_word_must_appear_somewhere_case_aside() {
        let s = Search::parse("  Deploy  STAG ").unwrap().unwrap();
        assert_eq!(s.words(), ["deploy", "stag"]);
        assert!(s.matches(&["Which deploy?", "the staging one"]));
        assert!(!s.matches(&["Which deploy?", "production"]));
    }

    #[test]
    fn empty_text_is_no_search_and_long_text_is_refused() {
        assert_eq!(Search::parse(" \t ").unwrap(), None);
        let long = "x".repeat(10_000);
        let e = Search::parse(&long).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidSearch);
        let many = "a b c d e f g h i";
        assert_eq!(
            Search::parse(many).unwrap_err().code(),
            ErrorCode::InvalidSearch
        );
    }

    #[test]
    fn control_characters_are_refused_but_tabs_and_newlines_split_words() {
        for text in ["9\u{0}s", "a\u{10}b", "x\u{7f}"] {
            let e = Search::parse(text).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidSearch, "{text:?}");
            assert!(e.to_string().contains("control characters"), "{e}");
        }
        let s = Search::parse("a\tb\nc").unwrap().unwrap();
        assert_eq!(s.words(), ["a", "b", "c"]);
    }
}
