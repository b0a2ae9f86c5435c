//! The memory of answers (issue 17 part 2) on a real SQLite store: an open question whose
//! text, once normalised, is an answered one's gets that answer (`same`); a near text
//! above the threshold gets it (`similar`), one below does not; another project's answer
//! is never offered; a dismissed question is no memory (only answers count: a closure
//! says "not this", not what to answer); the lookup records nothing.
#![allow(clippy::unwrap_used)]

use oq::domain::choices::ClosedReason;
use oq::domain::similar::{Resemblance, SIMILAR_THRESHOLD_PERCENT};
use oq::domain::{Actor, Afeta, AnswerInput, DeclareInput, Question, Role, SessionKind};
use oq::engine::{EngineConfig, LocalEngine, SqliteStore};
use tempfile::TempDir;

fn setup() -> (TempDir, LocalEngine) {
    let dir = TempDir::new().unwrap();
    let e = LocalEngine::new(
        SqliteStore::open_in(dir.path()).unwrap(),
        EngineConfig::default(),
    );
    for (project, session) in [("p", "s-p"), ("other", "s-other")] {
        e.start_session(
            &Actor::person("alice"),
            project,
            SessionKind::Conversation,
            Some(session),
        )
        .unwrap();
    }
    (dir, e)
}

fn ask(e: &LocalEngine, project: &str, text: &str) -> Question {
    let input = DeclareInput {
        pergunta: text.into(),
        sugestao: None,
        afeta: Afeta::default(),
        session_id: format!("s-{project}"),
        idempotency_key: None,
    };
    e.declare(&Actor::agent(Role::Po), project, &input).unwrap()
}

fn answered(e: &LocalEngine, project: &str, text: &str, answer: &str) -> Question {
    let q = ask(e, project, text);
    e.answer(
        &Actor::person("alice"),
        Some(project),
        &q.question_id,
        &AnswerInput::text(answer),
    )
    .unwrap()
}

fn seqs(e: &LocalEngine) -> usize {
    e.events_after(None, 0, 10_000).unwrap().len()
}

#[test]
fn the_same_text_after_normalisation_offers_the_answer() {
    let (_dir, e) = setup();
    let before = answered(
        &e,
        "p",
        "Should the checkout accept Pix?",
        "Yes, from day one",
    );
    let open = ask(&e, "p", "  should the CHECKOUT accept pix ");
    let events = seqs(&e);
    let s = e.similar_answer(&open).unwrap().expect("a hint");
    assert_eq!(s.question_id, before.question_id);
    assert_eq!(s.resposta, "Yes, from day one");
    assert_eq!(s.respondida_por, "alice");
    assert_eq!((s.resemblance, s.similarity), (Resemblance::Same, 100));
    // It only reads.
    assert_eq!(seqs(&e), events);
    assert!(
        e.question(Some("p"), &open.question_id)
            .unwrap()
            .answer
            .is_none()
    );
}

#[test]
fn a_near_text_above_the_threshold_is_similar_and_one_below_is_not() {
    let (_dir, e) = setup();
    answered(
        &e,
        "p",
        "Should the checkout accept Pix payments in Brazil?",
        "Pix and boleto",
    );
    let near = ask(
        &e,
        "p",
        "Should the checkout accept Pix payments in Brasil?",
    );
    let s = e.similar_answer(&near).unwrap().expect("a hint");
    assert_eq!(s.resemblance, Resemblance::Similar);
    assert!(s.similarity >= SIMILAR_THRESHOLD_PERCENT, "{s:?}");
    assert!(s.similarity < 100);
    // Same subject, same words in part, another question: below the threshold.
    let far = ask(
        &e,
        "p",
        "Which payments does the checkout show first in Brazil?",
    );
    assert_eq!(e.similar_answer(&far).unwrap(), None);
}

#[test]
fn another_projects_answer_is_never_offered() {
    let (_dir, e) = setup();
    answered(&e, "other", "Which carrier ships the returns?", "Correios");
    let open = ask(&e, "p", "Which carrier ships the returns?");
    assert_eq!(e.similar_answer(&open).unwrap(), None);
    // The same text answered in its own project is.
    answered(&e, "p", "Which carrier ships the returns?", "Jadlog");
    let open = ask(&e, "p", "Which carrier ships the returns?");
    assert_eq!(e.similar_answer(&open).unwrap().unwrap().resposta, "Jadlog");
}

#[test]
fn a_dismissed_question_is_no_memory_and_a_settled_one_gets_no_hint() {
    let (_dir, e) = setup();
    let q = ask(&e, "p", "Should we ship on Sundays?");
    e.close_question(
        &Actor::person("alice"),
        Some("p"),
        &q.question_id,
        ClosedReason::Rejected,
    )
    .unwrap();
    let open = ask(&e, "p", "Should we ship on Sundays?");
    assert_eq!(e.similar_answer(&open).unwrap(), None);
    // An answered question itself carries no hint (it needs none).
    let done = answered(&e, "p", "Should we ship on Sundays?", "No");
    assert_eq!(e.similar_answer(&done).unwrap(), None);
    let again = ask(&e, "p", "Should we ship on Sundays?");
    assert_eq!(e.similar_answer(&again).unwrap().unwrap().resposta, "No");
}

#[test]
fn the_newest_of_equal_answers_is_offered() {
    let (_dir, e) = setup();
    answered(&e, "p", "Deploy on Friday?", "No");
    answered(&e, "p", "Deploy on Friday?", "Only before noon");
    let open = ask(&e, "p", "deploy on friday");
    assert_eq!(
        e.similar_answer(&open).unwrap().unwrap().resposta,
        "Only before noon"
    );
}

/// The lookup looks at a bounded number of each query's newest matches
/// (`SCAN_PER_QUERY`, 500), answered or not: a word every open question holds never
/// reads the whole index on a selection. An answer within the bound is recalled; one
/// behind more newer matches than that is not (the documented cost of the bound).
#[test]
fn the_lookup_reads_a_bounded_number_of_matches() {
    let (_dir, e) = setup();
    let before = answered(&e, "p", "Should the checkout accept Pix?", "Yes");
    let filler = |e: &LocalEngine, from: usize, to: usize| {
        for i in from..to {
            ask(
                e,
                "p",
                &format!("Should the checkout accept Pix, variant {i}?"),
            );
        }
    };
    filler(&e, 0, 400);
    let open = ask(&e, "p", "should the checkout accept pix");
    let hint = e.similar_answer(&open).unwrap().expect("within the bound");
    assert_eq!(hint.question_id, before.question_id);
    filler(&e, 400, 600);
    assert!(
        e.similar_answer(&open).unwrap().is_none(),
        "601 newer matches: past the bound of 500"
    );
}

/// The all-words query may be asked of the rarest word alone (`view/similar.rs`), but
/// only when no row of that word can be cut by a bound. Here every word of the open
/// question is held by 41 answered questions newer than the one sought, each holding
/// only that word: asked alone, any of them would fill the 32 candidates with newer
/// answers and lose the same text; asked together, as they must be here, they find it.
/// With a rare word among them, the same text is found through it.
#[test]
fn the_same_text_is_found_whichever_word_is_rarest() {
    let (_dir, e) = setup();
    let before = answered(&e, "p", "Should checkout accept Pix?", "Yes");
    for i in 0..41 {
        for w in ["should", "checkout", "accept", "pix"] {
            answered(&e, "p", &format!("Only {w} here, variant {i}"), "n/a");
        }
    }
    let open = ask(&e, "p", "should CHECKOUT accept pix");
    let hint = e.similar_answer(&open).unwrap().expect("the same text");
    assert_eq!(
        (hint.question_id.as_str(), hint.resemblance),
        (before.question_id.as_str(), Resemblance::Same)
    );
    // A word few questions hold: it alone drives, and finds the same text too.
    let rare = answered(&e, "p", "Should checkout accept Pix at the zeppelin?", "No");
    let open = ask(&e, "p", "Should checkout accept pix at the Zeppelin");
    let hint = e.similar_answer(&open).unwrap().expect("the same text");
    assert_eq!(hint.question_id, rare.question_id);
    assert_eq!(hint.resemblance, Resemblance::Same);
}

/// The per-word walks skip all but the first of the words many questions hold
/// (`view/similar.rs`), never all of them: here the one word only the open question
/// holds is the one changed ("Brasil"), so the answer is found only through a common
/// word, among the newest answers holding it (the 40 newer questions are open).
#[test]
fn a_near_text_whose_rare_word_changed_is_found_through_a_common_word() {
    let (_dir, e) = setup();
    let before = answered(
        &e,
        "p",
        "Should the checkout accept Pix payments in Brazil?",
        "Pix and boleto",
    );
    for i in 0..40 {
        ask(
            &e,
            "p",
            &format!("Should the checkout accept Pix payments, variant {i}?"),
        );
    }
    let near = ask(
        &e,
        "p",
        "Should the checkout accept Pix payments in Brasil?",
    );
    let hint = e.similar_answer(&near).unwrap().expect("a hint");
    assert_eq!(
        (hint.question_id.as_str(), hint.resemblance),
        (before.question_id.as_str(), Resemblance::Similar)
    );
}
