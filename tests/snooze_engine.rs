//! Snooze (issue 17 part 4) on a real SQLite store: the author's "not now" hides an open
//! question from a `Hide` list and counts it apart, `Show` (the default) still lists it,
//! `Only` lists only the snoozed; it ends on its own when the caller's clock passes
//! `until`, or early by an unsnooze; every refusal appends nothing; readiness and the
//! agent's wait still see the question open.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use oq::domain::snooze::{MAX_SNOOZE_MS, SnoozeInput};
use oq::domain::{Actor, Afeta, AnswerInput, DeclareInput, OqError, Role, SessionKind};
use oq::engine::{EngineConfig, ListQuery, LocalEngine, SnoozeFilter, SqliteStore, StatusFilter};
use tempfile::TempDir;

const NOW: i64 = 1_800_000_000_000;
const HOUR: i64 = 3_600_000;

fn engine_in(dir: &Path) -> LocalEngine {
    LocalEngine::new(
        SqliteStore::open_in(dir).expect("open store"),
        EngineConfig::default(),
    )
}

fn alice() -> Actor {
    Actor::person("alice")
}

/// Project `p`, alice's session `s-alice` and three open questions in it.
fn setup() -> (TempDir, LocalEngine, Vec<String>) {
    let dir = TempDir::new().unwrap();
    let e = engine_in(dir.path());
    e.start_session(&alice(), "p", SessionKind::Conversation, Some("s-alice"))
        .unwrap();
    let ids = ["first?", "second?", "third?"]
        .iter()
        .map(|text| {
            let input = DeclareInput {
                pergunta: (*text).into(),
                sugestao: Some("the suggestion".into()),
                afeta: Afeta::default(),
                session_id: "s-alice".into(),
                idempotency_key: None,
            };
            e.declare(&Actor::agent(Role::Po), "p", &input)
                .unwrap()
                .question_id
        })
        .collect();
    (dir, e, ids)
}

/// The ids listed with `filter` at `now`, the total and the snoozed count.
fn listed(e: &LocalEngine, filter: SnoozeFilter, now: i64) -> (Vec<String>, u64, u64) {
    let query = ListQuery::new(StatusFilter::Open).snoozed(filter);
    let page = e.list_at(Some("p"), &query, now).unwrap();
    let ids = page.items.iter().map(|q| q.question_id.clone()).collect();
    (ids, page.total, page.snoozed.count)
}

fn events(e: &LocalEngine, ids: &[String]) -> usize {
    ids.iter()
        .map(|id| e.question_events(id).unwrap().len())
        .sum()
}

fn code<T: std::fmt::Debug>(r: Result<T, OqError>) -> &'static str {
    r.expect_err("expected a refusal").code().as_str()
}

#[test]
fn a_snooze_hides_the_question_from_hide_counts_it_apart_and_show_still_lists_it() {
    let (_dir, e, ids) = setup();
    let q = e
        .snooze(
            &alice(),
            Some("p"),
            &ids[1],
            &SnoozeInput::for_seconds(3600),
            NOW,
        )
        .unwrap();
    let snooze = q.snooze.clone().expect("the question carries its snooze");
    assert_eq!(snooze.until, NOW + HOUR);
    assert_eq!(snooze.by, "alice");
    assert!(q.is_open(), "a snooze settles nothing");

    let (hidden, total, snoozed) = listed(&e, SnoozeFilter::Hide, NOW + 1);
    assert_eq!(hidden, vec![ids[0].clone(), ids[2].clone()]);
    assert_eq!((total, snoozed), (2, 1), "2 open · 1 snoozed");

    let (shown, total, snoozed) = listed(&e, SnoozeFilter::Show, NOW + 1);
    assert_eq!(shown, ids, "the default still lists every open question");
    assert_eq!((total, snoozed), (3, 1));
    assert_eq!(
        ListQuery::new(StatusFilter::Open).snoozed,
        SnoozeFilter::Show,
        "Show is the default"
    );

    let (only, total, _) = listed(&e, SnoozeFilter::Only, NOW + 1);
    assert_eq!(only, vec![ids[1].clone()]);
    assert_eq!(total, 1);

    let page = e
        .list_at(
            Some("p"),
            &ListQuery::new(StatusFilter::Open).snoozed(SnoozeFilter::Hide),
            NOW + 1,
        )
        .unwrap();
    assert_eq!(
        page.snoozed.next_wake,
        Some(NOW + HOUR),
        "the soonest return"
    );
}

#[test]
fn the_snooze_ends_on_its_own_when_the_clock_passes_until() {
    let (_dir, e, ids) = setup();
    e.snooze(
        &alice(),
        Some("p"),
        &ids[0],
        &SnoozeInput::until(NOW + HOUR),
        NOW,
    )
    .unwrap();
    let before = events(&e, &ids);
    let (listed_before, _, snoozed) = listed(&e, SnoozeFilter::Hide, NOW + HOUR - 1);
    assert!(!listed_before.contains(&ids[0]));
    assert_eq!(snoozed, 1);

    let (back, total, snoozed) = listed(&e, SnoozeFilter::Hide, NOW + HOUR);
    assert_eq!(back, ids, "back at `until`, nothing written");
    assert_eq!((total, snoozed), (3, 0));
    let (only, _, _) = listed(&e, SnoozeFilter::Only, NOW + HOUR);
    assert!(only.is_empty());
    assert_eq!(
        events(&e, &ids),
        before,
        "the return is the clock, not an event"
    );
    assert_eq!(
        code(e.unsnooze(&alice(), Some("p"), &ids[0], NOW + HOUR)),
        "not_snoozed",
        "a snooze past its time holds nothing to end"
    );
}

#[test]
fn unsnooze_brings_it_back_and_a_later_snooze_replaces_the_earlier() {
    let (_dir, e, ids) = setup();
    e.snooze(
        &alice(),
        Some("p"),
        &ids[2],
        &SnoozeInput::for_seconds(7200),
        NOW,
    )
    .unwrap();
    let q = e.unsnooze(&alice(), Some("p"), &ids[2], NOW + 1).unwrap();
    assert!(q.snooze.is_none(), "an unsnooze ends the snooze in the log");
    let (back, _, snoozed) = listed(&e, SnoozeFilter::Hide, NOW + 2);
    assert_eq!(back, ids);
    assert_eq!(snoozed, 0);

    e.snooze(
        &alice(),
        Some("p"),
        &ids[2],
        &SnoozeInput::for_seconds(7200),
        NOW,
    )
    .unwrap();
    e.snooze(
        &alice(),
        Some("p"),
        &ids[2],
        &SnoozeInput::for_seconds(60),
        NOW,
    )
    .unwrap();
    let (back, _, _) = listed(&e, SnoozeFilter::Hide, NOW + 61_000);
    assert_eq!(back, ids, "the newest snooze decides");
    let kinds: Vec<&str> = e
        .question_events(&ids[2])
        .unwrap()
        .iter()
        .map(|ev| ev.type_name())
        .filter(|k| k.contains("snooze"))
        .collect();
    assert_eq!(
        kinds,
        [
            "open_question.snoozed",
            "open_question.unsnoozed",
            "open_question.snoozed",
            "open_question.snoozed"
        ],
        "every snooze and wake is an event, none is deleted"
    );
}

#[test]
fn refusals_each_with_its_code_and_nothing_appended() {
    let (_dir, e, ids) = setup();
    let closed = ids[2].clone();
    e.answer(&alice(), Some("p"), &closed, &AnswerInput::text("done"))
        .unwrap();
    let before = events(&e, &ids);
    let hour = SnoozeInput::for_seconds(3600);
    let cases: Vec<(&str, Result<_, OqError>)> = vec![
        (
            "so_o_autor_da_sessao",
            e.snooze(&Actor::person("bob"), Some("p"), &ids[0], &hour, NOW),
        ),
        (
            "so_o_autor_da_sessao",
            e.snooze(&Actor::agent(Role::Po), Some("p"), &ids[0], &hour, NOW),
        ),
        (
            "pergunta_ja_respondida",
            e.snooze(&alice(), Some("p"), &closed, &hour, NOW),
        ),
        (
            "snooze_in_past",
            e.snooze(
                &alice(),
                Some("p"),
                &ids[0],
                &SnoozeInput::until(NOW - 1),
                NOW,
            ),
        ),
        (
            "snooze_in_past",
            e.snooze(&alice(), Some("p"), &ids[0], &SnoozeInput::until(NOW), NOW),
        ),
        (
            "snooze_in_past",
            e.snooze(
                &alice(),
                Some("p"),
                &ids[0],
                &SnoozeInput::for_seconds(-5),
                NOW,
            ),
        ),
        (
            "snooze_too_far",
            e.snooze(
                &alice(),
                Some("p"),
                &ids[0],
                &SnoozeInput::until(NOW + MAX_SNOOZE_MS + 1),
                NOW,
            ),
        ),
        (
            "invalid_snooze",
            e.snooze(&alice(), Some("p"), &ids[0], &SnoozeInput::default(), NOW),
        ),
        (
            "not_found",
            e.snooze(&alice(), Some("p"), "q-nope", &hour, NOW),
        ),
        ("not_snoozed", e.unsnooze(&alice(), Some("p"), &ids[0], NOW)),
        ("not_found", e.unsnooze(&alice(), Some("p"), "q-nope", NOW)),
    ];
    for (i, (want, got)) in cases.into_iter().enumerate() {
        assert_eq!(code(got), want, "case {i}");
    }
    assert_eq!(events(&e, &ids), before, "no refusal appends anything");
    let at_the_limit = SnoozeInput::until(NOW + MAX_SNOOZE_MS);
    e.snooze(&alice(), Some("p"), &ids[0], &at_the_limit, NOW)
        .expect("exactly 90 days is allowed");
    e.snooze(&alice(), Some("p"), &ids[1], &hour, NOW).unwrap();
    assert_eq!(
        code(e.unsnooze(&Actor::person("bob"), Some("p"), &ids[1], NOW + 1)),
        "so_o_autor_da_sessao"
    );
}

#[test]
fn readiness_counts_a_snoozed_question_and_the_wait_reports_it_open() {
    let (_dir, e, ids) = setup();
    let now = oq::engine::sqlite::now_ms();
    e.snooze(
        &alice(),
        Some("p"),
        &ids[0],
        &SnoozeInput::for_seconds(3600),
        now,
    )
    .unwrap();
    assert_eq!(e.readiness("p").unwrap().open_questions, 3);
    let waited = e.wait_for_answer(
        &ids[0],
        Some(Duration::from_millis(50)),
        Duration::from_millis(10),
    );
    assert_eq!(code(waited), "timeout", "still open: the wait goes on");
    let q = e.question(Some("p"), &ids[0]).unwrap();
    assert!(q.is_open());
    assert!(q.snooze.is_some_and(|s| s.holds_at(now + 1)));
    // The agent's list (the wire's default) still sees it.
    let page = e
        .list(Some("p"), &ListQuery::new(StatusFilter::Open))
        .unwrap();
    assert_eq!(page.items.len(), 3);
    assert_eq!(page.snoozed.count, 1);
}
