//! The memory of answers: whether an open question resembles one already answered in its
//! project, and which earlier answer to offer. Pure: a store finds the candidates (the
//! question's words through its search index, [`lookup_words`]); this module decides
//! which of them resemble the question and picks the one to show.
//!
//! The rule, once for every source: both texts are [`normalise`]d (case, accents,
//! punctuation and runs of whitespace aside). Equal normalised texts are
//! [`Resemblance::Same`]; otherwise the Jaccard similarity of their character trigram
//! sets (the normalised text with a space on each side) at or above
//! [`SIMILAR_THRESHOLD_PERCENT`] is [`Resemblance::Similar`]. Only text questions are
//! compared (an options question's answer is a choice per part, not a text to edit),
//! and only answers count, never closures. Invariant: a hint only fills an answer
//! field; nothing here records anything.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use super::Question;

/// At least this share (percent) of the two texts' trigrams in common, of all the
/// trigrams either has: a word changed in a sentence of ten stays above it, a different
/// question on the same subject falls below.
pub const SIMILAR_THRESHOLD_PERCENT: u32 = 70;
/// A store searches at most this many of the question's words (the longest: the rarest,
/// as a rule).
pub const LOOKUP_WORDS: usize = 8;
/// And keeps, per word, the newest this many questions holding it: every question
/// holding a rarer word is seen, and the cost stays bounded for words every question
/// holds.
pub const CANDIDATES_PER_WORD: usize = 32;

/// How an earlier question resembles this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Resemblance {
    /// At or above the threshold, not equal.
    Similar,
    /// The same text once normalised.
    Same,
}

/// The earlier answer offered beside an open question (`similarAnswer` on the wire).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SimilarAnswer {
    pub question_id: String,
    pub pergunta: String,
    pub resposta: String,
    pub respondida_por: String,
    /// Unix milliseconds.
    pub answered_at: i64,
    #[serde(rename = "match")]
    pub resemblance: Resemblance,
    /// The trigram similarity, in percent (100 for `same`).
    pub similarity: u32,
}

/// Lower case, accents folded away (NFKD, combining marks dropped), every character
/// that is neither a letter nor a digit a space, runs of spaces one, no space at the ends.
pub fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.nfkd().filter(|c| !is_combining_mark(*c)) {
        if c.is_alphanumeric() {
            if space && !out.is_empty() {
                out.push(' ');
            }
            space = false;
            out.extend(c.to_lowercase());
        } else {
            space = true;
        }
    }
    out
}

/// The words a store looks up: the question's own words as its index holds them (lower
/// case, accents kept), of 3 characters or more (what a trigram index can find), each
/// once, the longest first, at most [`LOOKUP_WORDS`].
pub fn lookup_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for w in text.split(|c: char| !c.is_alphanumeric()) {
        let w = w.to_lowercase();
        if w.chars().count() >= 3 && !words.contains(&w) {
            words.push(w);
        }
    }
    // Stable: equal lengths keep the order typed.
    words.sort_by_key(|w| std::cmp::Reverse(w.chars().count()));
    words.truncate(LOOKUP_WORDS);
    words
}

fn trigrams(normalised: &str) -> HashSet<[char; 3]> {
    let chars: Vec<char> = format!(" {normalised} ").chars().collect();
    chars.windows(3).map(|w| [w[0], w[1], w[2]]).collect()
}

/// How `b` resembles `a` (both already normalised), with the similarity in percent;
/// `None` below the threshold or for an empty text.
pub fn resemblance(a: &str, b: &str) -> Option<(Resemblance, u32)> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    if a == b {
        return Some((Resemblance::Same, 100));
    }
    let (ta, tb) = (trigrams(a), trigrams(b));
    let common = ta.intersection(&tb).count() as u32;
    let all = (ta.len() + tb.len()) as u32 - common;
    // Integer arithmetic: exactly at the threshold counts.
    (common * 100 >= SIMILAR_THRESHOLD_PERCENT * all)
        .then(|| (Resemblance::Similar, common * 100 / all))
}

/// Of `candidates` (questions a store found by the words of `question`), the answered
/// one of the same project that resembles it most: `same` before `similar`, then the
/// higher similarity, then the newest answer. `None` for a question with options.
pub fn best(question: &Question, candidates: &[Question]) -> Option<SimilarAnswer> {
    if !question.prompts.is_empty() {
        return None;
    }
    let own = normalise(&question.pergunta);
    candidates
        .iter()
        .filter(|c| {
            c.project_id == question.project_id
                && c.question_id != question.question_id
                && c.prompts.is_empty()
        })
        .filter_map(|c| {
            let answer = c
                .answer
                .as_ref()
                .filter(|a| !a.resposta.trim().is_empty())?;
            let (kind, similarity) = resemblance(&own, &normalise(&c.pergunta))?;
            Some(SimilarAnswer {
                question_id: c.question_id.clone(),
                pergunta: c.pergunta.clone(),
                resposta: answer.resposta.clone(),
                respondida_por: answer.respondida_por.clone(),
                answered_at: answer.answered_at,
                resemblance: kind,
                similarity,
            })
        })
        .max_by_key(|s| (s.resemblance, s.similarity, s.answered_at))
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// The day of Unix milliseconds `ms` as the hint says it (UTC): "3 Nov", with the year
/// ("3 Nov 2025") when it is not `now_ms`'s.
pub fn day(ms: i64, now_ms: i64) -> String {
    let (at, now) = (super::date::format_utc(ms), super::date::format_utc(now_ms));
    let num = |s: &str, r: std::ops::Range<usize>| s.get(r).and_then(|p| p.parse::<usize>().ok());
    match (num(&at, 5..7), num(&at, 8..10)) {
        (Some(m @ 1..=12), Some(d)) if at.get(..4) == now.get(..4) => {
            format!("{d} {}", MONTHS[m - 1])
        }
        (Some(m @ 1..=12), Some(d)) => format!("{d} {} {}", MONTHS[m - 1], &at[..4]),
        _ => at,
    }
}

impl SimilarAnswer {
    /// "You answered a similar question on 3 Nov" to `viewer` when the answer is theirs,
    /// "ana answered …" otherwise (the same words in `oq show` and the TUI).
    pub fn lead(&self, viewer: Option<&str>, now_ms: i64) -> String {
        let who = if viewer == Some(self.respondida_por.as_str()) {
            "You"
        } else {
            self.respondida_por.as_str()
        };
        // The words whether the text is the same or near it: `match` says which.
        format!(
            "{who} answered a similar question on {}",
            day(self.answered_at, now_ms)
        )
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn normalising_sets_case_accents_punctuation_and_spaces_aside() {
        assert_eq!(
            normalise("  Qual   DECISÃO, afinal?! Café\u{301}  "),
            "qual decisao afinal cafe"
        );
        assert_eq!(
            normalise("Deploy to staging?"),
            normalise("deploy  to   Staging")
        );
        assert_eq!(normalise("?!…"), "");
    }

    #[test]
    fn same_text_is_same_and_the_threshold_is_inclusive() {
        let a = normalise("Should the checkout accept Pix?");
        assert_eq!(
            resemblance(&a, &normalise("should the CHECKOUT accept pix")),
            Some((Resemblance::Same, 100))
        );
        // One word changed in a longer sentence: similar.
        let b = normalise("Should the checkout accept Pix in Brazil?");
        let c = normalise("Should the checkout accept Pix in Chile?");
        let (kind, pct) = resemblance(&b, &c).unwrap();
        assert_eq!(kind, Resemblance::Similar);
        assert!(pct >= SIMILAR_THRESHOLD_PERCENT, "{pct}");
        // Another question on the same subject: below.
        assert_eq!(
            resemblance(&a, &normalise("Which region ships the checkout first?")),
            None
        );
    }

    #[test]
    fn the_threshold_is_the_documented_one() {
        // " abcdefgh " has 8 trigrams; changing the last letter keeps 6 of them and adds
        // 2: 6 / 10 = 60 % — below 70.
        assert_eq!(resemblance("abcdefgh", "abcdefgx"), None);
        // Fourteen letters, the last changed: 14 trigrams each, 12 in common, 12 / 16 =
        // 75 %; and exactly 70 % counts (7 of 10 would; 69 % would not).
        let (kind, pct) = resemblance("abcdefghijklmn", "abcdefghijklmx").unwrap();
        assert_eq!((kind, pct), (Resemblance::Similar, 75));
    }

    #[test]
    fn lookup_words_are_the_longest_distinct_words_of_three_or_more() {
        assert_eq!(
            lookup_words("Is the checkout's PIX on? on the checkout"),
            ["checkout", "the", "pix"]
        );
        let many = "alpha bravo charlie delta echo foxtrot golf hotel india juliet";
        assert_eq!(lookup_words(many).len(), LOOKUP_WORDS);
        assert_eq!(lookup_words("Decisão?"), ["decisão"]);
    }

    #[test]
    fn the_hint_says_who_and_the_day_the_year_only_when_another() {
        // 2026-11-03 and 2025-11-03, 12:00 UTC.
        let (nov3, a_year_before) = (1_793_707_200_000, 1_762_171_200_000);
        assert_eq!(day(nov3, nov3 + 86_400_000), "3 Nov");
        assert_eq!(day(a_year_before, nov3), "3 Nov 2025");
        let s = SimilarAnswer {
            question_id: "q".into(),
            pergunta: "Which carrier?".into(),
            resposta: "Correios".into(),
            respondida_por: "ana".into(),
            answered_at: nov3,
            resemblance: Resemblance::Similar,
            similarity: 80,
        };
        assert_eq!(
            s.lead(Some("ana"), nov3),
            "You answered a similar question on 3 Nov"
        );
        assert_eq!(
            s.lead(Some("bia"), nov3),
            "ana answered a similar question on 3 Nov"
        );
    }
}
