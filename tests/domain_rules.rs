//! ADR 0214's pure rules, one table per rule: each test fails when its rule breaks.
#![allow(clippy::unwrap_used)]

use oq::domain::actor::{Actor, Role};
use oq::domain::answering::{AnswerInput, decide_answer};
use oq::domain::dev_context::{Decisao, MAX_DECISION_CHARS, MAX_DECISIONS, select_decisions};
use oq::domain::error::OqError;
use oq::domain::events::Event;
use oq::domain::gate::{
    DEFAULT_CORRECTION_CEILING, Gate, GateChange, GateEvent, GateState, Verdict, consolidate,
};
use oq::domain::question::{Afeta, Answer, DeclareInput, Question, check_declarer};
use oq::domain::readiness::readiness_notice;
use oq::domain::work::{CitedQuestion, Story, WorkState, check_story_correction};

fn declare(pergunta: &str, sugestao: Option<&str>) -> DeclareInput {
    DeclareInput {
        pergunta: pergunta.into(),
        sugestao: sugestao.map(Into::into),
        afeta: Afeta::default(),
        session_id: "s-1".into(),
        idempotency_key: None,
    }
}

fn code<T: std::fmt::Debug>(r: Result<T, OqError>) -> &'static str {
    r.expect_err("expected a refusal").code().as_str()
}

// ---- text limits --------------------------------------------------------------------

#[test]
fn pergunta_limit_counts_characters_not_bytes() {
    for unit in ["a", "é", "🙂", "語"] {
        let ok = unit.repeat(500);
        let v = declare(&ok, None)
            .validated()
            .unwrap_or_else(|e| panic!("500 × {unit:?} ({} bytes) refused: {e}", ok.len()));
        assert_eq!(v.pergunta.chars().count(), 500);
        let too_long = unit.repeat(501);
        assert_eq!(code(declare(&too_long, None).validated()), "text_too_long");
    }
}

#[test]
fn sugestao_limit_counts_characters_not_bytes() {
    for unit in ["a", "é", "🙂"] {
        let ok = unit.repeat(300);
        let v = declare("Q?", Some(&ok))
            .validated()
            .expect("300 chars accepted");
        assert_eq!(v.sugestao.as_deref(), Some(ok.as_str()));
        assert_eq!(
            code(declare("Q?", Some(&unit.repeat(301))).validated()),
            "text_too_long"
        );
    }
}

#[test]
fn empty_or_whitespace_text_is_refused() {
    for blank in ["", " ", "   \t\n ", "\u{3000}"] {
        assert_eq!(
            code(declare(blank, None).validated()),
            "empty_text",
            "{blank:?}"
        );
        assert_eq!(
            code(declare("Q?", Some(blank)).validated()),
            "empty_text",
            "{blank:?}"
        );
    }
    // Trimmed before counting and recording.
    let v = declare(&format!("  {}  ", "x".repeat(500)), None)
        .validated()
        .unwrap();
    assert_eq!(v.pergunta, "x".repeat(500));
}

// ---- answering ----------------------------------------------------------------------

fn question(sugestao: Option<&str>, answered: bool) -> Question {
    Question {
        question_id: "q-1".into(),
        project_id: "p".into(),
        session_id: "s-1".into(),
        session_author: "alice".into(),
        pergunta: "Free shipping above what?".into(),
        sugestao: sugestao.map(Into::into),
        afeta: Afeta::default(),
        autor: "po".into(),
        source: "oq".into(),
        created_at: 0,
        seq: 1,
        answer: answered.then(|| Answer {
            resposta: "200".into(),
            aceitou_sugestao: false,
            decision_event_id: "d-1".into(),
            respondida_por: "alice".into(),
            answered_at: 1,
            choices: Vec::new(),
            idempotency_key: None,
            decision_source: oq::domain::DecisionSource::Person,
        }),
        prompts: Vec::new(),
        upstream: None,
        closure: None,
        orphaned: false,
        handed_off: false,
        snooze: None,
    }
}

fn body(resposta: Option<&str>, aceitar: Option<bool>) -> AnswerInput {
    AnswerInput {
        resposta: resposta.map(Into::into),
        aceitar_sugestao: aceitar,
        answers: None,
    }
}

#[test]
fn answer_body_must_be_exactly_one_of_resposta_or_accept_true() {
    let q = question(Some("R$ 200"), false);
    let alice = Actor::person("alice");
    for (b, expected) in [
        (body(Some("x"), Some(true)), "invalid_body"),
        (body(Some("x"), Some(false)), "invalid_body"),
        (body(None, None), "invalid_body"),
        (body(None, Some(false)), "invalid_body"),
        (body(Some("   "), None), "empty_text"),
    ] {
        assert_eq!(code(decide_answer(&q, &alice, &b)), expected, "{b:?}");
    }
    let text = decide_answer(&q, &alice, &body(Some(" 150 "), None)).unwrap();
    assert_eq!(
        (text.resposta.as_str(), text.aceitou_sugestao),
        ("150", false)
    );
    let acc = decide_answer(&q, &alice, &AnswerInput::accept()).unwrap();
    assert_eq!(
        (acc.resposta.as_str(), acc.aceitou_sugestao),
        ("R$ 200", true)
    );
}

#[test]
fn accepting_a_missing_suggestion_is_refused() {
    let q = question(None, false);
    let r = decide_answer(&q, &Actor::person("alice"), &AnswerInput::accept());
    assert_eq!(code(r), "sugestao_inexistente");
}

#[test]
fn only_the_session_author_answers() {
    let q = question(Some("s"), false);
    let refused = [
        Actor::person("bob"),
        Actor::person("Alice"),
        Actor::agent(Role::Po),
        Actor::agent(Role::QaAgent),
        // An agent that carries the author's id is still not the author.
        Actor::Agent {
            id: "alice".into(),
            role: Role::DevLead,
        },
    ];
    for actor in refused {
        let e = decide_answer(&q, &actor, &AnswerInput::text("x")).expect_err("refused");
        assert!(
            matches!(&e, OqError::NotSessionAuthor { author } if author == "alice"),
            "{actor:?}: {e:?}"
        );
        assert_eq!(e.code(), "so_o_autor_da_sessao");
        assert_eq!(e.http_status(), 403);
        assert!(!q.answerability(&actor).0);
        assert!(q.answerability(&actor).1.is_some(), "the reason in words");
    }
    assert!(decide_answer(&q, &Actor::person("alice"), &AnswerInput::text("x")).is_ok());
    assert_eq!(q.answerability(&Actor::person("alice")), (true, None));
}

#[test]
fn answering_twice_is_refused() {
    let q = question(Some("s"), true);
    let e = decide_answer(&q, &Actor::person("alice"), &AnswerInput::text("again"))
        .expect_err("refused");
    assert_eq!(e.code(), "pergunta_ja_respondida");
    assert_eq!(e.http_status(), 409);
    assert!(!q.answerability(&Actor::person("alice")).0);
}

#[test]
fn refusal_order_is_shape_then_author_then_state() {
    let answered = question(Some("s"), true);
    let bad = body(Some("x"), Some(true));
    let bob = Actor::person("bob");
    let alice = Actor::person("alice");
    // A bad body from a non-author on an answered question: the shape first (422).
    let e = decide_answer(&answered, &bob, &bad).expect_err("refused");
    assert_eq!((e.code().as_str(), e.http_status()), ("invalid_body", 422));
    // A good body from a non-author on an answered question: who answers (403).
    let e = decide_answer(&answered, &bob, &AnswerInput::text("x")).expect_err("refused");
    assert_eq!(
        (e.code().as_str(), e.http_status()),
        ("so_o_autor_da_sessao", 403)
    );
    // The author on an answered question: the state (409).
    let e = decide_answer(&answered, &alice, &AnswerInput::text("x")).expect_err("refused");
    assert_eq!(
        (e.code().as_str(), e.http_status()),
        ("pergunta_ja_respondida", 409)
    );
    // Accepting a missing suggestion is a shape error, also before the author check.
    let no_sug = question(None, true);
    assert_eq!(
        code(decide_answer(&no_sug, &bob, &AnswerInput::accept())),
        "sugestao_inexistente"
    );
}

// ---- roles --------------------------------------------------------------------------

#[test]
fn roles_that_may_declare() {
    for (name, may) in [
        ("criativo", true),
        ("po", true),
        ("arquiteto", true),
        ("dev-lead", true),
        ("qa-agent", false),
    ] {
        let role: Role = name.parse().expect("a known role");
        assert_eq!(role.as_str(), name);
        assert_eq!(role.may_declare(), may, "{name}");
        let r = check_declarer(&Actor::agent(role));
        assert_eq!(r.is_ok(), may, "{name}: {r:?}");
        if !may {
            assert_eq!(code(r), "role_not_allowed");
        }
    }
    assert_eq!(
        code(check_declarer(&Actor::person("alice"))),
        "role_not_allowed"
    );
}

#[test]
fn unknown_role_strings_are_refused() {
    for s in ["", "qa", "PO", "dev_lead", "devlead", "criativo ", "admin"] {
        assert_eq!(code(s.parse::<Role>()), "unknown_role", "{s:?}");
    }
}

// ---- the gate -----------------------------------------------------------------------

fn run_corrections(ceiling: u32) -> Gate {
    let mut gate = Gate::new(ceiling);
    for n in 1..=ceiling {
        assert_eq!(gate.state, GateState::Active);
        match gate.decide(Verdict::ChangesRequested).expect("active gate") {
            GateChange::CountCorrection {
                corrections,
                exhausted,
            } => {
                assert_eq!(corrections, n);
                assert_eq!(exhausted, n == ceiling, "ceiling {ceiling}, correction {n}");
                gate.apply(&GateEvent::CorrectionCounted { corrections });
            }
            other => panic!("changes_requested gave {other:?}"),
        }
    }
    gate
}

#[test]
fn changes_requested_counts_and_exhausts_at_the_default_ceiling() {
    assert_eq!(DEFAULT_CORRECTION_CEILING, 3);
    let gate = run_corrections(DEFAULT_CORRECTION_CEILING);
    assert_eq!((gate.state, gate.corrections), (GateState::Exhausted, 3));
    for v in [
        Verdict::Approved,
        Verdict::ChangesRequested,
        Verdict::NeedsUserDecision,
    ] {
        assert_eq!(code(gate.decide(v)), "gate_closed");
    }
}

#[test]
fn a_custom_ceiling_is_honoured() {
    for ceiling in [1, 5] {
        let gate = run_corrections(ceiling);
        assert_eq!(
            (gate.state, gate.corrections),
            (GateState::Exhausted, ceiling)
        );
    }
}

#[test]
fn needs_user_decision_parks_without_counting() {
    let mut gate = Gate::new(3);
    gate.apply(&GateEvent::CorrectionCounted { corrections: 2 });
    assert_eq!(
        gate.decide(Verdict::NeedsUserDecision).unwrap(),
        GateChange::Park
    );
    gate.apply(&GateEvent::Parked {
        question_id: "q-9".into(),
    });
    assert_eq!(gate.state, GateState::Parked);
    assert_eq!(gate.corrections, 2, "parking spends no cycle");
    assert_eq!(gate.parked_on.as_deref(), Some("q-9"));
    for v in [
        Verdict::Approved,
        Verdict::ChangesRequested,
        Verdict::NeedsUserDecision,
    ] {
        let e = gate.decide(v).expect_err("parked");
        assert_eq!(e.code(), "gate_parked");
        assert!(e.to_string().contains("q-9"), "{e}");
    }
    gate.apply(&GateEvent::Resumed);
    assert_eq!(
        (gate.state, gate.corrections, gate.parked_on.clone()),
        (GateState::Active, 2, None)
    );
    // Resumed, the gate still exhausts at the same ceiling: parking changed nothing.
    assert_eq!(
        gate.decide(Verdict::ChangesRequested).unwrap(),
        GateChange::CountCorrection {
            corrections: 3,
            exhausted: true
        }
    );
}

#[test]
fn approved_closes_the_gate() {
    let mut gate = Gate::new(3);
    assert_eq!(gate.decide(Verdict::Approved).unwrap(), GateChange::Approve);
    gate.apply(&GateEvent::Approved);
    assert_eq!(gate.state, GateState::Approved);
    assert_eq!(code(gate.decide(Verdict::ChangesRequested)), "gate_closed");
}

#[test]
fn consolidation_precedence() {
    use Verdict::*;
    for (verdicts, expected) in [
        (vec![], None),
        (vec![Approved], Some(Approved)),
        (vec![Approved, NeedsUserDecision], Some(NeedsUserDecision)),
        (
            vec![NeedsUserDecision, Approved, Approved],
            Some(NeedsUserDecision),
        ),
        (
            vec![NeedsUserDecision, ChangesRequested],
            Some(ChangesRequested),
        ),
        (
            vec![Approved, ChangesRequested, NeedsUserDecision],
            Some(ChangesRequested),
        ),
        (vec![ChangesRequested, Approved], Some(ChangesRequested)),
    ] {
        assert_eq!(consolidate(&verdicts), expected, "{verdicts:?}");
    }
}

// ---- stories ------------------------------------------------------------------------

fn story(state: WorkState) -> Story {
    Story {
        story_id: "st-1".into(),
        project_id: "p".into(),
        title: "t".into(),
        state,
    }
}

/// (story state, its tasks' states, the cited question, the expected refusal code).
type Case = (
    WorkState,
    &'static [WorkState],
    CitedQuestion,
    Result<(), &'static str>,
);

#[test]
fn story_correction_rule() {
    use CitedQuestion as C;
    use WorkState::*;
    let free: &[WorkState] = &[Draft, Ready, Done];
    let cases: &[Case] = &[
        (Draft, &[], C::None, Ok(())),
        (Draft, &[], C::Open, Ok(())),
        (Draft, free, C::Answered, Ok(())),
        (Ready, &[], C::Answered, Ok(())),
        (Ready, free, C::Answered, Ok(())),
        (Ready, &[], C::Open, Err("pergunta_nao_respondida")),
        (Ready, &[], C::None, Err("historia_pronta_sem_resposta")),
        (
            Draft,
            &[Draft, InReview],
            C::None,
            Err("tarefa_em_andamento"),
        ),
        (
            Draft,
            &[InProgress],
            C::Answered,
            Err("tarefa_em_andamento"),
        ),
        (Ready, &[InReview], C::Answered, Err("tarefa_em_andamento")),
        (InProgress, &[], C::Answered, Err("historia_nao_corrigivel")),
        (InReview, &[], C::Answered, Err("historia_nao_corrigivel")),
        (Done, &[], C::Answered, Err("historia_nao_corrigivel")),
        (Archived, &[], C::Answered, Err("historia_nao_corrigivel")),
    ];
    for (state, tasks, cited, expected) in cases {
        let r = check_story_correction(&story(*state), tasks, *cited);
        match expected {
            Ok(()) => assert!(r.is_ok(), "{state:?} {tasks:?} {cited:?}: {r:?}"),
            Err(c) => {
                let e = r.expect_err("refused");
                assert_eq!(e.code(), *c, "{state:?} {tasks:?} {cited:?}");
                assert_eq!(e.http_status(), 409);
            }
        }
    }
}

#[test]
fn archiving_only_from_draft() {
    use WorkState::*;
    assert!(story(Draft).check_move(Archived).is_ok());
    for from in [Ready, InProgress, InReview, Done] {
        assert_eq!(
            code(story(from).check_move(Archived)),
            "invalid_transition",
            "{from:?}"
        );
        assert!(
            story(from).check_move(Draft).is_ok(),
            "other moves are free"
        );
    }
    for to in [Draft, Ready, Done] {
        assert_eq!(code(story(Archived).check_move(to)), "invalid_transition");
    }
}

// ---- dev-context --------------------------------------------------------------------

fn decisao(seq: i64, pergunta: usize, resposta: usize) -> Decisao {
    Decisao {
        question_id: format!("q-{seq}"),
        pergunta: "p".repeat(pergunta),
        resposta: "r".repeat(resposta),
        aceitou_sugestao: false,
        respondida_por: "alice".into(),
        decision_event_id: format!("d-{seq}"),
        decided_at: seq,
        seq,
    }
}

fn seqs(d: &[Decisao]) -> Vec<i64> {
    d.iter().map(|d| d.seq).collect()
}

fn chars(d: &[Decisao]) -> usize {
    d.iter()
        .map(|d| d.pergunta.chars().count() + d.resposta.chars().count())
        .sum()
}

#[test]
fn decisions_newest_first_at_most_ten() {
    assert_eq!((MAX_DECISIONS, MAX_DECISION_CHARS), (10, 1_500));
    let input: Vec<Decisao> = [7, 3, 15, 1, 12, 9, 4, 14, 2, 11, 6, 13, 5, 8, 10]
        .into_iter()
        .map(|s| decisao(s, 10, 10))
        .collect();
    let out = select_decisions(input);
    assert_eq!(seqs(&out), (6..=15).rev().collect::<Vec<_>>());
    assert!(out.iter().all(|d| !d.resposta.ends_with('…')));
    assert!(select_decisions(Vec::new()).is_empty());
}

#[test]
fn decisions_fit_the_character_budget_whole() {
    // 5 × (100 + 200) = 1,500 exactly: all whole; the 6th has no room even for its question.
    let out = select_decisions((1..=6).map(|s| decisao(s, 100, 200)).collect());
    assert_eq!(seqs(&out), vec![6, 5, 4, 3, 2]);
    assert_eq!(chars(&out), 1_500);
}

#[test]
fn the_decision_that_does_not_fit_is_cut_and_ends_the_selection() {
    // The newest 4 use 1,200; the 5th (100 + 400) has 300 left: its question whole and
    // its resposta cut to the 200 that remain (ending in "…"); nothing older follows.
    let mut input: Vec<Decisao> = (7..=10).map(|s| decisao(s, 100, 200)).collect();
    input.push(decisao(6, 100, 400));
    input.push(decisao(5, 1, 1));
    let out = select_decisions(input);
    assert_eq!(seqs(&out), vec![10, 9, 8, 7, 6]);
    let cut = &out[4];
    assert_eq!(cut.pergunta, "p".repeat(100), "the question is never cut");
    assert_eq!(cut.resposta.chars().count(), 200);
    assert!(cut.resposta.ends_with('…'));
    assert_eq!(cut.resposta.trim_end_matches('…'), "r".repeat(199));
    assert_eq!(chars(&out), 1_500);
}

#[test]
fn a_cut_under_twenty_characters_is_dropped() {
    // 4 × 350 = 1,400; the next (90 + 100) would leave 10 characters of answer: dropped,
    // and the selection stops even though an older tiny decision would fit.
    let mut input: Vec<Decisao> = (7..=10).map(|s| decisao(s, 150, 200)).collect();
    input.push(decisao(6, 90, 100));
    input.push(decisao(5, 1, 1));
    let out = select_decisions(input);
    assert_eq!(seqs(&out), vec![10, 9, 8, 7]);
    assert_eq!(chars(&out), 1_400);
}

#[test]
fn the_budget_counts_characters_not_bytes() {
    let mut ds: Vec<Decisao> = (1..=5).map(|s| decisao(s, 0, 0)).collect();
    for d in &mut ds {
        d.pergunta = "é".repeat(100);
        d.resposta = "🙂".repeat(200);
    }
    let out = select_decisions(ds);
    assert_eq!(out.len(), 5, "1,500 characters (5,000+ bytes) all fit");
    assert!(out.iter().all(|d| !d.resposta.ends_with('…')));
}

// ---- readiness ----------------------------------------------------------------------

#[test]
fn readiness_notice_wording() {
    assert_eq!(readiness_notice(0), None);
    assert_eq!(
        readiness_notice(1).as_deref(),
        Some("1 question is still open — answer")
    );
    assert_eq!(
        readiness_notice(2).as_deref(),
        Some("2 questions are still open — answer")
    );
    assert_eq!(
        readiness_notice(57).as_deref(),
        Some("57 questions are still open — answer")
    );
}

// ---- event JSON ---------------------------------------------------------------------

fn keys(v: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().expect("an object").keys().cloned().collect();
    k.sort();
    k
}

fn sorted(k: &[&str]) -> Vec<String> {
    let mut k: Vec<String> = k.iter().map(|s| s.to_string()).collect();
    k.sort();
    k
}

#[test]
fn events_use_the_adr_field_names() {
    let declared = Event::OpenQuestion {
        question_id: "q-1".into(),
        pergunta: "Case-sensitive?".into(),
        sugestao: Some("No".into()),
        afeta: Afeta {
            regras: vec!["RN-858".into()],
            historias: vec!["st-1".into()],
            tarefas: vec!["t-1".into()],
        },
        autor: "qa-agent".into(),
        session_id: "s-1".into(),
        source: "oq".into(),
        prompts: Vec::new(),
        upstream: None,
    };
    let v = serde_json::to_value(&declared).unwrap();
    assert_eq!(
        keys(&v),
        sorted(&[
            "type",
            "questionId",
            "pergunta",
            "sugestao",
            "afeta",
            "autor",
            "sessionId",
            "source"
        ])
    );
    assert_eq!(v["type"], "artifact.open_question");
    assert_eq!(
        keys(&v["afeta"]),
        sorted(&["regras", "historias", "tarefas"])
    );
    assert_eq!(v["afeta"]["tarefas"][0], "t-1");
    assert_eq!(v["questionId"], "q-1");
    assert_eq!(v["sessionId"], "s-1");
    assert_eq!(serde_json::from_value::<Event>(v).unwrap(), declared);

    let answered = Event::QuestionAnswered {
        question_id: "q-1".into(),
        resposta: "No".into(),
        aceitou_sugestao: true,
        decision_event_id: "d-1".into(),
        respondida_por: "alice".into(),
        answers: Vec::new(),
        idempotency_key: None,
        decision_source: Some(oq::domain::DecisionSource::Suggestion),
    };
    let v = serde_json::to_value(&answered).unwrap();
    assert_eq!(
        keys(&v),
        sorted(&[
            "type",
            "questionId",
            "resposta",
            "aceitouSugestao",
            "decisionEventId",
            "respondidaPor",
            "decisionSource"
        ])
    );
    assert_eq!(v["type"], "open_question.answered");
    assert_eq!(v["aceitouSugestao"], true);
    assert_eq!(v["decisionSource"], "suggestion");
    assert_eq!(
        serde_json::from_value::<Event>(v.clone()).unwrap(),
        answered
    );
    // An answer written before `decisionSource` existed says how it was decided through
    // `aceitouSugestao` alone.
    let mut old = v;
    old.as_object_mut().unwrap().remove("decisionSource");
    let old = serde_json::from_value::<Event>(old).unwrap();
    let answer = oq::domain::Answer::from_event(old, 1).unwrap();
    assert_eq!(
        answer.decision_source,
        oq::domain::DecisionSource::Suggestion
    );

    let record = Event::DecisionRecord {
        decision_event_id: "d-1".into(),
        actor: "alice".into(),
        context: "Case-sensitive?".into(),
        choice: "No".into(),
        consequences: Afeta::default(),
        question_id: "q-1".into(),
    };
    let v = serde_json::to_value(&record).unwrap();
    assert_eq!(v["type"], "decision_record");
    for k in [
        "actor",
        "context",
        "choice",
        "consequences",
        "questionId",
        "decisionEventId",
    ] {
        assert!(v.get(k).is_some(), "decision_record lacks {k}: {v}");
    }
}

#[test]
fn sugestao_is_optional_on_the_wire() {
    let v = serde_json::json!({
        "type": "artifact.open_question", "questionId": "q-2", "pergunta": "?",
        "afeta": {"regras": [], "historias": [], "tarefas": []},
        "autor": "po", "sessionId": "s-1"
    });
    match serde_json::from_value::<Event>(v).unwrap() {
        Event::OpenQuestion {
            sugestao, source, ..
        } => {
            assert_eq!((sugestao, source.as_str()), (None, "oq"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_question_handed_to_claude_codes_dialog_is_not_answered_here_but_may_be_dismissed() {
    let mut q = question(Some("R$ 200"), false);
    q.handed_off = true;
    let alice = Actor::person("alice");
    for b in [body(Some("150"), None), AnswerInput::accept()] {
        assert_eq!(
            code(decide_answer(&q, &alice, &b)),
            "handed_to_claude_code",
            "{b:?}"
        );
    }
    // The order stands: a bad body, then someone else, before the state.
    assert_eq!(
        code(decide_answer(&q, &alice, &body(None, None))),
        "invalid_body"
    );
    let bob = Actor::person("bob");
    assert_eq!(
        code(decide_answer(&q, &bob, &body(Some("150"), None))),
        "so_o_autor_da_sessao"
    );
    assert_eq!(
        q.answerability(&alice),
        (
            false,
            Some("waiting in Claude Code's dialog — answer there".into())
        )
    );
    // Dismissing is the author's as before: only the state of being open is checked.
    assert!(oq::domain::answering::check_author_and_open(&q, &alice).is_ok());
}
