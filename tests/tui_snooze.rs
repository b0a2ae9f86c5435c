//! "Not now" through the pure `update` (issue 17 part 4): the snooze key's prompt, a
//! refused time named in it, the confirmation, the effect only after it, Esc at each
//! step recording nothing, the offline and not-the-author refusals, the snoozed list's
//! switch and its unsnooze, and the ring when a snooze ends on its own. Snapshots of the
//! prompt and of the snoozed list at 80×24 and 120×40.
#![allow(clippy::unwrap_used)]

mod tui_fixtures;

use crossterm::event::KeyCode;
use oq::domain::snooze::Snooze;
use oq::engine::{SnoozeFilter, StatusFilter};
use oq::tui::effect::{Effect, Msg, SnoozeChange};
use oq::tui::modal::Modal;
use oq::tui::model::{Connection, Model};
use oq::tui::theme::Theme;
use oq::tui::update::update;
use oq::wire::{QuestionItem, QuestionList};
use tui_fixtures::*;

const HOUR: i64 = 60 * MIN;

fn snoozes(fx: &[Effect]) -> Vec<(String, SnoozeChange)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Snooze {
                question_id,
                change,
                ..
            } => Some((question_id.clone(), *change)),
            _ => None,
        })
        .collect()
}

fn prompt_text(m: &Model) -> Option<String> {
    m.snooze.prompt.as_ref().map(|p| p.text.clone())
}

fn refused(m: &Model) -> String {
    m.snooze
        .prompt
        .as_ref()
        .and_then(|p| p.refused.clone())
        .unwrap_or_default()
}

/// Types `s` into the prompt and presses Enter; every effect on the way.
fn enter(m: &mut Model, s: &str) -> Vec<Effect> {
    let mut fx = Vec::new();
    for c in s.chars() {
        fx.extend(update(m, ch(c)));
    }
    fx.extend(update(m, key(KeyCode::Enter)));
    fx
}

fn clear_prompt(m: &mut Model) {
    while prompt_text(m).is_some_and(|t| !t.is_empty()) {
        update(m, key(KeyCode::Backspace));
    }
}

fn snoozed(mut q: QuestionItem, until: i64) -> QuestionItem {
    q.snooze = Some(Snooze {
        until,
        by: q.session_author.clone(),
    });
    q
}

/// The page the source sends for the generation in flight.
fn page(m: &mut Model, items: Vec<QuestionItem>, snoozed: u64, next: Option<i64>) -> Vec<Effect> {
    let (id, total) = (m.queue.generation, items.len() as u64);
    update(
        m,
        Msg::Loaded {
            id,
            append: false,
            page: Ok(QuestionList {
                items,
                total,
                total_is_lower_bound: false,
                snoozed,
                snoozed_next_return: next,
                cursor: None,
            }),
        },
    )
}

fn load_query(fx: &[Effect]) -> Option<SnoozeFilter> {
    fx.iter().find_map(|e| match e {
        Effect::Load { query, .. } => Some(query.snoozed),
        _ => None,
    })
}

#[test]
fn z_opens_the_prompt_and_a_refused_time_is_named_with_nothing_recorded() {
    let mut m = loaded("dev-a", sample("dev-a"));
    let fx = update(&mut m, ch('z'));
    assert!(fx.is_empty(), "{fx:?}");
    assert_eq!(m.snooze.prompt.as_ref().unwrap().question_id, "q-1");
    for (typed, why) in [
        ("soon", "is not a time"),
        ("11:00", "is not in the future"),
        ("91d", "more than 90 days away"),
        ("", "is not a time"),
    ] {
        clear_prompt(&mut m);
        let fx = enter(&mut m, typed);
        assert!(snoozes(&fx).is_empty(), "{typed}: {fx:?}");
        assert!(
            m.modal.is_none(),
            "{typed}: no confirmation for a refused time"
        );
        assert!(refused(&m).contains(why), "{typed}: {}", refused(&m));
        assert_eq!(
            prompt_text(&m).as_deref(),
            Some(typed),
            "the text stays to be fixed"
        );
    }
    // The refusal is of the text as it was: a change clears it.
    update(&mut m, ch('x'));
    assert_eq!(refused(&m), "");
}

#[test]
fn enter_asks_first_and_only_the_confirming_key_records_the_shown_time() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('z'));
    let fx = enter(&mut m, "2h");
    assert!(snoozes(&fx).is_empty(), "{fx:?}");
    let Some(Modal::Confirm(c)) = &m.modal else {
        panic!("a confirmation: {:?}", m.modal)
    };
    // NOW is 2026-01-01T12:00Z, a Thursday.
    assert_eq!(
        c.what,
        vec![
            "Snooze q-1 until Thu 1 Jan 14:00 UTC, in your name (dev-a): it leaves your open \
             view until then; it stays open for its agent."
                .to_string()
        ]
    );
    // The clock moving on before the confirmation does not change what is recorded.
    m.now += 30_000;
    let fx = update(&mut m, ch('z'));
    assert_eq!(
        snoozes(&fx),
        vec![("q-1".to_string(), SnoozeChange::Until(NOW + 2 * HOUR))]
    );
    assert!(m.snooze.prompt.is_none() && m.modal.is_none());
    // The reply: said with the source's time, and the view reloaded.
    let mut q = snoozed(m.queue.items[0].clone(), NOW + 2 * HOUR);
    q.question_id = "q-1".into();
    let fx = update(
        &mut m,
        Msg::Snoozed {
            question_id: "q-1".into(),
            change: SnoozeChange::Until(NOW + 2 * HOUR),
            result: Ok(Box::new(q)),
        },
    );
    assert_eq!(load_query(&fx), Some(SnoozeFilter::Hide));
    let notice = m.notice.as_ref().unwrap().text.clone();
    assert!(
        notice.contains("snoozed q-1 until Thu 1 Jan 14:00 UTC"),
        "{notice}"
    );
    // A refusal by the source is said; nothing is reloaded.
    let fx = update(
        &mut m,
        Msg::Snoozed {
            question_id: "q-1".into(),
            change: SnoozeChange::Until(NOW + 2 * HOUR),
            result: Err("so_o_autor_da_sessao: not yours".into()),
        },
    );
    assert!(fx.is_empty());
    assert!(
        m.notice
            .as_ref()
            .unwrap()
            .text
            .starts_with("snooze refused: ")
    );
}

#[test]
fn esc_cancels_at_each_step_and_nothing_is_recorded() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('z'));
    let mut fx = enter(&mut m, "tomorrow 9:00");
    assert!(matches!(m.modal, Some(Modal::Confirm(_))));
    // Esc on the confirmation: back to the prompt, the text as typed.
    fx.extend(update(&mut m, key(KeyCode::Esc)));
    assert!(m.modal.is_none());
    assert_eq!(prompt_text(&m).as_deref(), Some("tomorrow 9:00"));
    // Another key before the confirmation disarms it: Enter then records nothing.
    fx.extend(update(&mut m, key(KeyCode::Enter)));
    fx.extend(update(&mut m, ch('2')));
    fx.extend(update(&mut m, key(KeyCode::Enter)));
    fx.extend(update(&mut m, ch('z')));
    fx.extend(update(&mut m, key(KeyCode::Esc)));
    // Esc in the prompt closes it.
    fx.extend(update(&mut m, key(KeyCode::Esc)));
    assert!(m.snooze.prompt.is_none());
    assert!(snoozes(&fx).is_empty(), "{fx:?}");
    assert!(
        m.notice
            .as_ref()
            .unwrap()
            .text
            .contains("nothing was recorded")
    );
}

#[test]
fn offline_the_key_is_refused_and_says_a_snooze_is_not_queued() {
    let mut m = loaded("dev-a", sample("dev-a"));
    m.connection = Connection::Offline { since: NOW - MIN };
    let fx = update(&mut m, ch('z'));
    assert!(fx.is_empty());
    assert!(m.snooze.prompt.is_none());
    let notice = m.notice.as_ref().unwrap().text.clone();
    assert!(
        notice.contains("offline: a snooze is not queued"),
        "{notice}"
    );

    // Gone between the prompt and its Enter: refused there, the text kept.
    m.connection = Connection::Live { since: NOW };
    update(&mut m, ch('z'));
    m.connection = Connection::Reconnecting { since: NOW };
    let fx = enter(&mut m, "2h");
    assert!(snoozes(&fx).is_empty() && m.modal.is_none(), "{fx:?}");
    assert!(m.notice.as_ref().unwrap().text.contains("not queued"));
    assert_eq!(prompt_text(&m).as_deref(), Some("2h"));
}

#[test]
fn on_a_question_this_person_cannot_answer_z_says_why_and_records_nothing() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('j'));
    update(&mut m, ch('j'));
    assert_eq!(m.current().unwrap().question_id, "q-3");
    let mut fx = update(&mut m, ch('z'));
    assert!(m.snooze.prompt.is_none());
    let Some(Modal::Inert { reason, .. }) = &m.modal else {
        panic!("an inert notice: {:?}", m.modal)
    };
    assert!(
        reason.contains("only the person who started this session, ana"),
        "{reason}"
    );
    // What is typed next, believing a prompt is open, does not act.
    for c in "2h".chars() {
        fx.extend(update(&mut m, ch(c)));
    }
    fx.extend(update(&mut m, key(KeyCode::Enter)));
    assert!(snoozes(&fx).is_empty(), "{fx:?}");
}

#[test]
fn big_z_toggles_the_snoozed_list_and_u_unsnoozes_after_asking() {
    let mut m = loaded("dev-a", sample("dev-a"));
    let fx = update(&mut m, ch('Z'));
    assert!(m.snooze.show);
    assert_eq!(load_query(&fx), Some(SnoozeFilter::Only));
    let back = NOW + 3 * HOUR;
    let q2 = snoozed(sample("dev-a")[1].clone(), back);
    page(&mut m, vec![q2], 1, Some(back));
    let screen = text(&render(&m, &Theme::default(), 100, 24));
    assert!(screen.contains("Snoozed questions (1)"), "{screen}");
    assert!(screen.contains("back in 3h"), "{screen}");
    assert!(screen.contains("until Thu 1 Jan 15:00 UTC"), "{screen}");

    let fx = update(&mut m, ch('u'));
    assert!(snoozes(&fx).is_empty());
    let Some(Modal::Confirm(c)) = &m.modal else {
        panic!("a confirmation: {:?}", m.modal)
    };
    assert!(
        c.what[0].starts_with("Unsnooze q-2: back in your open view now"),
        "{:?}",
        c.what
    );
    let fx = update(&mut m, ch('u'));
    assert_eq!(snoozes(&fx), vec![("q-2".to_string(), SnoozeChange::Wake)]);

    // Z again: the open view, hiding the snoozed; a filter key leaves the list too.
    let fx = update(&mut m, ch('Z'));
    assert!(!m.snooze.show);
    assert_eq!(load_query(&fx), Some(SnoozeFilter::Hide));
    update(&mut m, ch('Z'));
    update(&mut m, ch('f'));
    assert!(!m.snooze.show && m.filter != StatusFilter::Open);
}

#[test]
fn u_on_a_question_that_is_not_snoozed_records_nothing() {
    let mut m = loaded("dev-a", sample("dev-a"));
    let fx = update(&mut m, ch('u'));
    assert!(snoozes(&fx).is_empty() && m.modal.is_none(), "{fx:?}");
    assert_eq!(m.notice.as_ref().unwrap().text, "q-1 is not snoozed");
}

#[test]
fn a_snooze_ending_on_its_own_rings_for_what_this_person_can_answer() {
    let mut m = loaded("dev-a", sample("dev-a"));
    let back = NOW + MIN;
    let all = sample("dev-a");
    page(&mut m, all[..2].to_vec(), 2, Some(back));
    let fx = update(&mut m, Msg::Tick { now: back });
    assert_eq!(load_query(&fx), Some(SnoozeFilter::Hide));
    assert!(
        !fx.contains(&Effect::Bell),
        "nothing rings before the list is back"
    );
    // The reload: dev-a's q-4 and ana's q-3 are back; q-1 was woken long ago.
    let items = vec![
        snoozed(all[0].clone(), NOW - HOUR),
        all[1].clone(),
        snoozed(all[2].clone(), back),
        snoozed(all[3].clone(), back),
    ];
    let fx = page(&mut m, items.clone(), 0, None);
    assert_eq!(
        fx.iter().filter(|e| **e == Effect::Bell).count(),
        1,
        "{fx:?}"
    );
    let note = fx.iter().find_map(|e| match e {
        Effect::Notify { title, body } => Some((title.clone(), body.clone())),
        _ => None,
    });
    let (title, body) = note.unwrap();
    assert_eq!(title, "oq: 1 question back from snooze");
    assert!(
        body.starts_with("Is the product code case-sensitive"),
        "{body}"
    );
    // A later reload of the same page rings no more.
    update(&mut m, ch('j'));
    let fx = reloaded(&mut m, items, true);
    assert!(!fx.contains(&Effect::Bell), "{fx:?}");
}

#[test]
fn in_the_snoozed_list_a_return_rings_at_the_tick() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('Z'));
    let back = NOW + MIN;
    let q2 = snoozed(sample("dev-a")[1].clone(), back);
    page(&mut m, vec![q2], 1, Some(back));
    let fx = update(&mut m, Msg::Tick { now: back + 500 });
    assert!(fx.contains(&Effect::Bell), "{fx:?}");
    assert_eq!(load_query(&fx), Some(SnoozeFilter::Only));
}

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn snap(name: &str, model: &Model) {
    let theme = Theme::embedded("dark").unwrap();
    for (w, h) in SIZES {
        let screen = text(&render(model, &theme, w, h));
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen);
    }
}

#[test]
fn snooze_prompt_snapshots() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('z'));
    enter(&mut m, "yesterday");
    snap("snooze_prompt_refused", &m);
    clear_prompt(&mut m);
    enter(&mut m, "tomorrow 9:00");
    snap("snooze_confirm", &m);
}

#[test]
fn snoozed_list_snapshots() {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('Z'));
    let all = sample("dev-a");
    let items = vec![
        snoozed(all[0].clone(), NOW + 2 * HOUR),
        snoozed(all[3].clone(), NOW + 21 * HOUR),
    ];
    page(&mut m, items, 2, Some(NOW + 2 * HOUR));
    snap("snoozed_list", &m);
}
