//! Snooze (issue 17 part 4) on a real PostgreSQL: what `snooze_engine.rs` proves of the
//! SQLite store, the PostgreSQL list answers the same — `Hide` hides the snoozed and
//! counts it apart with the soonest return, `Show` still lists it, `Only` lists only
//! it; the clock passing `until` brings it back with nothing written; an unsnooze ends
//! it early; and a listed question carries its (ended) snooze, which the TUI's ring on
//! return reads. Skipped outside CI when PostgreSQL is not installed.
#![allow(clippy::unwrap_used)]

mod common_pg;

use oq::domain::snooze::SnoozeInput;
use oq::domain::{Actor, Afeta, DeclareInput, Role, SessionKind};
use oq::engine::postgres::PgStore;
use oq::engine::{Engine, EngineConfig, ListQuery, SnoozeFilter, StatusFilter};

const NOW: i64 = 1_800_000_000_000;
const HOUR: i64 = 3_600_000;

fn alice() -> Actor {
    Actor::person("alice")
}

/// (ids listed, total, snoozed count, soonest return) of `filter` at `now`.
fn listed(
    e: &Engine<PgStore>,
    filter: SnoozeFilter,
    now: i64,
) -> (Vec<String>, u64, u64, Option<i64>) {
    let query = ListQuery::new(StatusFilter::Open).snoozed(filter);
    let page = e.list_at(Some("p"), &query, now).unwrap();
    let ids = page.items.iter().map(|q| q.question_id.clone()).collect();
    (ids, page.total, page.snoozed.count, page.snoozed.next_wake)
}

#[test]
fn snooze_hides_counts_returns_and_ends_on_postgres() {
    if !common_pg::or_skip("snooze_hides_counts_returns_and_ends_on_postgres") {
        return;
    }
    let db = common_pg::shared().database();
    let e = Engine::new(
        PgStore::open(&db.app_target()).expect("open"),
        EngineConfig::default(),
    );
    e.start_session(&alice(), "p", SessionKind::Conversation, Some("s-alice"))
        .unwrap();
    let ids: Vec<String> = ["first?", "second?"]
        .iter()
        .map(|text| {
            let input = DeclareInput {
                pergunta: (*text).into(),
                sugestao: None,
                afeta: Afeta::default(),
                session_id: "s-alice".into(),
                idempotency_key: None,
            };
            e.declare(&Actor::agent(Role::Po), "p", &input)
                .unwrap()
                .question_id
        })
        .collect();
    let until = NOW + HOUR;
    let q = e
        .snooze(
            &alice(),
            Some("p"),
            &ids[1],
            &SnoozeInput::until(until),
            NOW,
        )
        .unwrap();
    assert_eq!(q.snooze.unwrap().until, until);

    let (hidden, total, snoozed, next) = listed(&e, SnoozeFilter::Hide, NOW + 1);
    assert_eq!(hidden, vec![ids[0].clone()]);
    assert_eq!((total, snoozed, next), (1, 1, Some(until)));
    let (shown, total, _, _) = listed(&e, SnoozeFilter::Show, NOW + 1);
    assert_eq!((shown, total), (ids.clone(), 2));
    let (only, total, _, _) = listed(&e, SnoozeFilter::Only, NOW + 1);
    assert_eq!((only, total), (vec![ids[1].clone()], 1));

    // At `until` it is back with nothing written, and carries the snooze that ended.
    let events = e.events_after(None, 0, 1000).unwrap().len();
    let (back, total, snoozed, _) = listed(&e, SnoozeFilter::Hide, until);
    assert_eq!((back, total, snoozed), (ids.clone(), 2, 0));
    let page = e
        .list_at(
            Some("p"),
            &ListQuery::new(StatusFilter::Open).snoozed(SnoozeFilter::Hide),
            until,
        )
        .unwrap();
    let returned = page.items.iter().find(|q| q.question_id == ids[1]).unwrap();
    assert_eq!(returned.snooze.as_ref().map(|s| s.until), Some(until));
    assert_eq!(e.events_after(None, 0, 1000).unwrap().len(), events);

    // After it, another snoozed and woken early: back at once.
    let later = until + 1;
    e.snooze(
        &alice(),
        Some("p"),
        &ids[0],
        &SnoozeInput::for_seconds(60),
        later,
    )
    .unwrap();
    assert_eq!(
        listed(&e, SnoozeFilter::Only, later + 1).0,
        vec![ids[0].clone()]
    );
    e.unsnooze(&alice(), Some("p"), &ids[0], later + 2).unwrap();
    assert!(listed(&e, SnoozeFilter::Only, later + 3).0.is_empty());
    let refused = e.unsnooze(&alice(), Some("p"), &ids[0], later + 4);
    assert_eq!(refused.unwrap_err().code().as_str(), "not_snoozed");
}
