//! `update` as a table: each case asserts the new state AND the effects. No IO, no
//! async, no clock. Then a property-style run: random key sequences through `update`
//! and `view` at several sizes must never panic.
#![allow(clippy::unwrap_used)]

mod tui_fixtures;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers};
use oq::domain::readiness::ReadinessGate;
use oq::domain::{AnswerInput, DecisionSource};
use oq::engine::{ListQuery, SnoozeFilter, Sort, StatusFilter};
use oq::tui::effect::{Effect, Msg};
use oq::tui::keymap::{Action, Keymap, KeysConfig};
use oq::tui::link::LinkError;
use oq::tui::model::{Connection, Focus, Model};
use oq::tui::theme::Theme;
use oq::tui::update::{init, update};
use oq::wire::{QuestionList, Readiness};
use tui_fixtures::*;

/// The author's queue, with writing keys acting at once (their confirmation is
/// `tui_confirm.rs`'s).
fn me() -> Model {
    let mut m = loaded("dev-a", sample("dev-a"));
    m.behaviour.confirm = false;
    m
}

fn notice(m: &Model) -> String {
    m.notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default()
}

#[test]
fn start_up_loads_the_first_page_and_the_counts() {
    let mut m = Model::new("dev-a", "local", None, NOW, Keymap::default());
    let fx = init(&mut m);
    assert_eq!(
        fx,
        vec![
            Effect::Load {
                id: 1,
                query: ListQuery::new(StatusFilter::Open).snoozed(SnoozeFilter::Hide),
                pages: 1
            },
            Effect::LoadCounts { id: 1 },
            Effect::ReadOutbox,
        ]
    );
    assert!(!m.queue.loaded_once);
}

#[test]
fn a_stale_page_is_dropped() {
    let mut m = me();
    let before = m.queue.items.len();
    let stale = m.queue.generation - 1;
    let fx = update(
        &mut m,
        Msg::Loaded {
            id: stale,
            append: false,
            page: Ok(QuestionList {
                items: vec![],
                total: 0,
                total_is_lower_bound: false,
                snoozed: 0,
                snoozed_next_return: None,
                cursor: None,
            }),
        },
    );
    assert!(fx.is_empty());
    assert_eq!(m.queue.items.len(), before);
}

#[test]
fn the_selection_survives_a_live_update() {
    let mut m = me();
    update(&mut m, ch('j'));
    assert_eq!(m.selected_id.as_deref(), Some("q-2"));
    let fx = update(
        &mut m,
        Msg::Revision {
            now: NOW,
            revision: Ok(2),
        },
    );
    let id = m.queue.generation;
    assert_eq!(
        fx[0],
        Effect::Load {
            id,
            query: ListQuery::new(StatusFilter::Open).snoozed(SnoozeFilter::Hide),
            pages: 1
        }
    );
    let mut items = sample("dev-a");
    items.insert(
        0,
        question("q-new", "dev-a", "dev-a", "A newer question", None, 0),
    );
    items.remove(1);
    update(
        &mut m,
        Msg::Loaded {
            id,
            append: false,
            page: Ok(QuestionList {
                items,
                total: 4,
                total_is_lower_bound: false,
                snoozed: 0,
                snoozed_next_return: None,
                cursor: None,
            }),
        },
    );
    assert_eq!(m.selected_id.as_deref(), Some("q-2"));
    assert_eq!(m.selected, 1);
}

#[test]
fn same_revision_reloads_nothing() {
    let mut m = me();
    assert!(
        update(
            &mut m,
            Msg::Revision {
                now: NOW,
                revision: Ok(1)
            }
        )
        .is_empty()
    );
}

#[test]
fn accept_sends_the_suggestion_for_the_author() {
    let mut m = me();
    let fx = update(&mut m, ch('a'));
    assert_eq!(
        fx,
        vec![Effect::Submit {
            id: 1,
            key: "tui-1".into(),
            question_id: "q-1".into(),
            project: "loja".into(),
            input: AnswerInput::accept()
        }]
    );
    assert_eq!(
        m.in_flight.as_ref().map(|f| f.question_id.as_str()),
        Some("q-1")
    );
    assert!(
        update(&mut m, ch('a')).is_empty(),
        "no second send while one is in flight"
    );
}

#[test]
fn a_non_author_gets_the_reason_and_no_effect_from_any_answer_key() {
    let mut m = me();
    update(&mut m, ch('j'));
    update(&mut m, ch('j'));
    assert_eq!(m.current().unwrap().question_id, "q-3");
    assert!(update(&mut m, ctrl('e')).is_empty());
    for k in [ch('a'), ch('i'), ch('e'), key(KeyCode::Enter)] {
        let fx = update(&mut m, k);
        assert!(fx.is_empty(), "{fx:?}");
        assert_eq!(m.focus, Focus::Queue);
        // A modal (`tui_modes.rs`): what is typed next must not act.
        assert!(matches!(
            &m.modal,
            Some(oq::tui::modal::Modal::Inert { reason, .. })
                if reason == "only the person who started this session, ana, can answer"
        ));
        update(&mut m, key(KeyCode::Esc));
    }
    assert!(m.form.is_none());
}

#[test]
fn typing_a_never_accepts_and_each_change_saves_the_draft() {
    let mut m = me();
    assert!(update(&mut m, ch('i')).is_empty());
    assert_eq!(m.focus, Focus::Answer);
    let fx = update(&mut m, ch('a'));
    assert_eq!(
        fx,
        vec![Effect::SaveDraft {
            question_id: "q-1".into(),
            text: "a".into()
        }]
    );
    typed(&mut m, "qy1");
    assert_eq!(m.form.as_ref().unwrap().value(), "aqy1");
    assert_eq!(m.drafts.get("q-1").map(String::as_str), Some("aqy1"));
    assert!(m.in_flight.is_none());
}

#[test]
fn enter_sends_and_ctrl_j_or_alt_enter_adds_a_line() {
    let mut m = me();
    update(&mut m, ch('i'));
    typed(&mut m, "one");
    update(&mut m, ctrl('j'));
    typed(&mut m, "two");
    update(
        &mut m,
        Msg::Key(KeyEvent {
            code: KeyCode::Enter,
            modifiers: KeyModifiers::ALT,
            kind: KeyEventKind::Press,
            state: KeyEventState::NONE,
        }),
    );
    typed(&mut m, "three");
    let fx = update(&mut m, key(KeyCode::Enter));
    assert_eq!(
        fx,
        vec![Effect::Submit {
            id: 1,
            key: "tui-1".into(),
            question_id: "q-1".into(),
            project: "loja".into(),
            input: AnswerInput::text("one\ntwo\nthree")
        }]
    );
}

#[test]
fn enter_on_an_empty_field_says_so() {
    let mut m = me();
    update(&mut m, ch('i'));
    assert!(update(&mut m, key(KeyCode::Enter)).is_empty());
    assert!(notice(&m).contains("type an answer first"));
}

#[test]
fn an_answer_removes_the_draft_and_reloads() {
    let mut m = me();
    send_text(&mut m, "ok");
    let q = answered(sample("dev-a").remove(0), "dev-a", false, "ok", 0);
    let fx = update(&mut m, recorded(1, q));
    let g = m.queue.generation;
    assert_eq!(
        fx,
        vec![
            Effect::RemoveDraft {
                question_id: "q-1".into()
            },
            Effect::Load {
                id: g,
                query: ListQuery::new(StatusFilter::Open).snoozed(SnoozeFilter::Hide),
                pages: 1
            },
            Effect::LoadCounts {
                id: m.counts_generation
            },
        ]
    );
    assert!(m.drafts.is_empty());
    assert_eq!(m.focus, Focus::Queue);
    assert!(m.in_flight.is_none());
}

/// The reply of submission `id`: `q` recorded.
fn recorded(id: u64, q: oq::wire::QuestionItem) -> Msg {
    Msg::Answered {
        id,
        question_id: q.question_id.clone(),
        result: Ok(Box::new(q)),
    }
}

/// Opens the field on the selected question, types `text` and sends it.
fn send_text(m: &mut Model, text: &str) {
    update(m, ch('i'));
    typed(m, text);
    update(m, key(KeyCode::Enter));
}

#[test]
fn a_refused_answer_keeps_the_draft() {
    let mut m = me();
    send_text(&mut m, "ok");
    let fx = update(
        &mut m,
        Msg::Answered {
            id: 1,
            question_id: "q-1".into(),
            result: Err("pergunta_ja_respondida".into()),
        },
    );
    assert!(fx.is_empty());
    assert_eq!(m.drafts.get("q-1").map(String::as_str), Some("ok"));
    assert_eq!(notice(&m), "pergunta_ja_respondida");
}

#[test]
fn a_stale_reply_changes_nothing_and_the_current_one_settles_the_claim() {
    let mut m = me();
    send_text(&mut m, "ok");
    let q = answered(sample("dev-a").remove(0), "dev-a", false, "ok", 0);
    // A reply under another id (an earlier submission, handed to the outbox since).
    let fx = update(&mut m, recorded(7, q.clone()));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(m.in_flight.is_some());
    assert_eq!(m.drafts.get("q-1").map(String::as_str), Some("ok"));
    let fx = update(
        &mut m,
        Msg::Queued {
            id: 7,
            question_id: "q-1".into(),
        },
    );
    assert!(fx.is_empty() && m.in_flight.is_some());
    update(&mut m, recorded(1, q));
    assert!(m.in_flight.is_none());
    assert!(m.drafts.is_empty());
}

#[test]
fn a_queued_answer_keeps_its_draft_until_the_outbox_reports_it_delivered() {
    use oq::source::outbox::{Entry, State};
    let mut m = me();
    send_text(&mut m, "offline words");
    let fx = update(
        &mut m,
        Msg::Queued {
            id: 1,
            question_id: "q-1".into(),
        },
    );
    assert!(fx.is_empty(), "{fx:?}");
    assert!(notice(&m).contains("offline — your answer to q-1 is queued"));
    assert_eq!(m.focus, Focus::Queue);
    assert_eq!(
        m.drafts.get("q-1").map(String::as_str),
        Some("offline words")
    );
    let entry = |state| Entry {
        key: "tui-1".into(),
        source: "local".into(),
        project: Some("loja".into()),
        question_id: "q-1".into(),
        body: AnswerInput::text("offline words"),
        created_at: NOW,
        state,
        detail: None,
    };
    update(
        &mut m,
        Msg::Outbox {
            entries: vec![entry(State::Pending)],
        },
    );
    // A second answer while one is queued is refused in words; nothing is sent.
    for k in [ch('i'), ch('a')] {
        assert!(update(&mut m, k).is_empty());
        assert!(notice(&m).contains("already queued"), "{}", notice(&m));
    }
    let fx = update(
        &mut m,
        Msg::Outbox {
            entries: vec![entry(State::Delivered)],
        },
    );
    assert_eq!(
        fx[0],
        Effect::RemoveDraft {
            question_id: "q-1".into()
        }
    );
    assert!(
        fx.iter().any(|e| matches!(e, Effect::Load { .. })),
        "{fx:?}"
    );
    assert!(m.drafts.is_empty());
    assert_eq!(notice(&m), "1 queued answer delivered");
    // The same snapshot again is no news.
    assert!(
        update(
            &mut m,
            Msg::Outbox {
                entries: vec![entry(State::Delivered)]
            }
        )
        .is_empty()
    );
}

#[test]
fn a_draft_comes_back_when_the_question_is_reopened() {
    let mut m = me();
    update(&mut m, ch('i'));
    typed(&mut m, "half");
    update(&mut m, key(KeyCode::Esc));
    update(&mut m, ch('j'));
    assert_eq!(m.form.as_ref().unwrap().value(), "");
    update(&mut m, ch('k'));
    assert_eq!(m.form.as_ref().unwrap().value(), "half");
}

#[test]
fn paste_goes_into_the_field_only() {
    let mut m = me();
    assert!(update(&mut m, Msg::Paste("a\r\nb".into())).is_empty());
    update(&mut m, ch('i'));
    let fx = update(&mut m, Msg::Paste("a\r\nb".into()));
    assert_eq!(
        fx,
        vec![Effect::SaveDraft {
            question_id: "q-1".into(),
            text: "a\nb".into()
        }]
    );
}

#[test]
fn the_link_goes_reconnecting_then_offline_then_live() {
    let mut m = me();
    update(
        &mut m,
        Msg::Revision {
            now: NOW,
            revision: Err(LinkError::unreachable("down")),
        },
    );
    assert_eq!(m.connection, Connection::Reconnecting { since: NOW });
    update(
        &mut m,
        Msg::Revision {
            now: NOW + 11_000,
            revision: Err(LinkError::unreachable("down")),
        },
    );
    assert_eq!(m.connection, Connection::Offline { since: NOW });
    let fx = update(
        &mut m,
        Msg::Revision {
            now: NOW + 12_000,
            revision: Ok(1),
        },
    );
    assert_eq!(
        m.connection,
        Connection::Live {
            since: NOW + 12_000
        }
    );
    // Every attach rehydrates the queue and delivers the outbox (issue 6).
    assert!(matches!(
        fx.as_slice(),
        [
            Effect::Load { .. },
            Effect::LoadCounts { .. },
            Effect::FlushOutbox
        ]
    ));
}

#[test]
fn what_was_said_about_the_link_goes_when_it_is_back_and_nothing_else_does() {
    let mut m = me();
    let down = |m: &mut Model, now| {
        update(
            m,
            Msg::Revision {
                now,
                revision: Err(LinkError::unreachable("connection refused")),
            },
        )
    };
    let back = |m: &mut Model, now| {
        update(
            m,
            Msg::Revision {
                now,
                revision: Ok(1),
            },
        )
    };
    back(&mut m, NOW);
    down(&mut m, NOW + 1_000);
    assert!(
        notice(&m).contains("connection refused — reconnecting"),
        "{}",
        notice(&m)
    );
    back(&mut m, NOW + 2_000);
    assert_eq!(notice(&m), "", "the cause went, and its words with it");
    // Something said meanwhile is no longer the link's: it stays.
    down(&mut m, NOW + 3_000);
    m.notice = Some(oq::tui::model::Notice {
        kind: oq::tui::model::NoticeKind::Info,
        text: "something else".into(),
    });
    back(&mut m, NOW + 4_000);
    assert_eq!(notice(&m), "something else");
}

/// A counts reply whose newest page holds `qs`.
fn counts_with(m: &mut Model, qs: Vec<oq::wire::QuestionItem>) -> Vec<Effect> {
    let id = m.counts_generation;
    let n = qs.len() as u64;
    update(
        m,
        Msg::Counts {
            id,
            open: Ok(n),
            waiting: Ok(vec![]),
            newest: qs,
        },
    )
}

#[test]
fn only_a_question_this_person_can_answer_notifies_named_and_counted() {
    let mut m = me();
    let mine = |id: &str, text: &str| question(id, "dev-a", "dev-a", text, None, 0);
    // Someone else's new question never rings.
    let fx = counts_with(
        &mut m,
        vec![question("q-8", "ana", "dev-a", "Ana's?", None, 0)],
    );
    assert!(fx.is_empty(), "{fx:?}");
    let fx = counts_with(&mut m, vec![mine("q-9", "Ship on Friday?")]);
    assert_eq!(fx[0], Effect::Bell);
    assert_eq!(
        fx[1],
        Effect::Notify {
            title: "oq: 1 new question".into(),
            body: "Ship on Friday?".into()
        }
    );
    // Seen once is not news again; three new ones are counted in the plural.
    assert!(counts_with(&mut m, vec![mine("q-9", "Ship on Friday?")]).is_empty());
    let fx = counts_with(
        &mut m,
        vec![
            mine("q-12", "Newest?"),
            mine("q-11", "B?"),
            mine("q-10", "A?"),
        ],
    );
    assert!(
        matches!(&fx[1], Effect::Notify { title, body } if title == "oq: 3 new questions" && body == "Newest? (and 2 more)"),
        "{fx:?}"
    );
    m.behaviour.bell = false;
    m.behaviour.notify = false;
    assert!(counts_with(&mut m, vec![mine("q-13", "Quiet?")]).is_empty());
    assert_eq!(m.open_count, Some(1));
}

#[test]
fn filter_cycles_and_reloads() {
    let mut m = me();
    let fx = update(&mut m, ch('f'));
    assert_eq!(m.filter, StatusFilter::Answered);
    assert_eq!(
        fx[0],
        Effect::Load {
            id: m.queue.generation,
            query: ListQuery::new(StatusFilter::Answered),
            pages: 1
        }
    );
    update(&mut m, ch('f'));
    assert_eq!(m.filter, StatusFilter::Closed);
    update(&mut m, ch('f'));
    assert_eq!(m.filter, StatusFilter::All);
    // Then each way of settling (`decisionSource`), and `F` the other way round.
    let fx = update(&mut m, ch('f'));
    assert_eq!(m.filter, StatusFilter::Decided(DecisionSource::Person));
    assert_eq!(
        fx[0],
        Effect::Load {
            id: m.queue.generation,
            query: ListQuery::new(StatusFilter::Decided(DecisionSource::Person)),
            pages: 1
        }
    );
    update(&mut m, ch('F'));
    assert_eq!(m.filter, StatusFilter::All);
    for _ in 0..4 {
        update(&mut m, ch('F'));
    }
    assert_eq!(
        m.filter,
        StatusFilter::Decided(DecisionSource::Withdrawn),
        "back past open to the last"
    );
    let fx = update(&mut m, ch('o'));
    assert_eq!(
        m.filter,
        StatusFilter::Open,
        "the banner's key goes back to the open queue"
    );
    assert_eq!(
        fx[0],
        Effect::Load {
            id: m.queue.generation,
            query: ListQuery::new(StatusFilter::Open).snoozed(SnoozeFilter::Hide),
            pages: 1
        }
    );
}

#[test]
fn search_and_sort_ask_the_source_over_the_whole_filter() {
    let mut m = me();
    update(&mut m, ch('/'));
    let mut fx = Vec::new();
    for c in "guest".chars() {
        fx = update(&mut m, ch(c));
    }
    let g = m.queue.generation;
    let searched = ListQuery::new(StatusFilter::Open)
        .snoozed(SnoozeFilter::Hide)
        .search("guest")
        .unwrap();
    assert_eq!(
        fx[0],
        Effect::Load {
            id: g,
            query: searched,
            pages: 1
        },
        "each keystroke asks the source, the last one's reply wins"
    );
    update(&mut m, key(KeyCode::Esc));
    assert_eq!(m.search, "");
    let fx = update(&mut m, ch('s'));
    assert_eq!(
        fx[0],
        Effect::Load {
            id: m.queue.generation,
            query: ListQuery::new(StatusFilter::Open)
                .snoozed(SnoozeFilter::Hide)
                .sorted(Sort::Newest),
            pages: 1
        }
    );
    assert_eq!(m.selected_id.as_deref(), Some("q-1"), "the selection stays");
}

#[test]
fn a_search_the_source_would_refuse_is_not_typed() {
    let mut m = me();
    update(&mut m, ch('/'));
    for w in ["a ", "b ", "c ", "d ", "e ", "f ", "g ", "h "] {
        for c in w.chars() {
            update(&mut m, ch(c));
        }
    }
    let fx = update(&mut m, ch('i'));
    assert!(fx.is_empty(), "{fx:?}");
    assert_eq!(m.search, "a b c d e f g h ");
    assert!(notice(&m).contains("at most 8"), "{}", notice(&m));
}

#[test]
fn scrolling_near_the_end_loads_the_next_page_once() {
    let mut m = Model::new("dev-a", "local", None, NOW, Keymap::default());
    init(&mut m);
    let items: Vec<_> = (0..50)
        .map(|i| question(&format!("q-{i}"), "dev-a", "dev-a", "Q", None, 1))
        .collect();
    let id = m.queue.generation;
    update(
        &mut m,
        Msg::Loaded {
            id,
            append: false,
            page: Ok(QuestionList {
                items,
                total: 100_000,
                total_is_lower_bound: false,
                snoozed: 0,
                snoozed_next_return: None,
                cursor: Some("c50".into()),
            }),
        },
    );
    let mut more = Vec::new();
    for _ in 0..30 {
        // Each move also asks for the new selection's earlier answer (`tui_memory.rs`).
        more.extend(
            update(&mut m, ch('j'))
                .into_iter()
                .filter(|e| !matches!(e, Effect::RecallSimilar { .. })),
        );
    }
    assert_eq!(
        more,
        vec![Effect::LoadMore {
            id,
            query: ListQuery::new(StatusFilter::Open)
                .snoozed(SnoozeFilter::Hide)
                .after(Some("c50")),
        }]
    );
    let items: Vec<_> = (50..100)
        .map(|i| question(&format!("q-{i}"), "dev-a", "dev-a", "Q", None, 1))
        .collect();
    update(
        &mut m,
        Msg::Loaded {
            id,
            append: true,
            page: Ok(QuestionList {
                items,
                total: 100_000,
                total_is_lower_bound: false,
                snoozed: 0,
                snoozed_next_return: None,
                cursor: Some("c100".into()),
            }),
        },
    );
    assert_eq!(m.queue.items.len(), 100);
    assert_eq!(m.selected_id.as_deref(), Some("q-30"));
}

#[test]
fn readiness_records_for_the_selected_project_and_shows_the_notice() {
    let mut m = me();
    let fx = update(&mut m, ch('r'));
    assert_eq!(
        fx,
        vec![Effect::Readiness {
            project: "loja".into(),
            gate: ReadinessGate::ImReady
        }]
    );
    let fx = update(&mut m, ch('R'));
    assert_eq!(
        fx,
        vec![Effect::Readiness {
            project: "loja".into(),
            gate: ReadinessGate::ArchitectureReady
        }]
    );
    update(
        &mut m,
        Msg::ReadinessRecorded {
            gate: ReadinessGate::ImReady,
            result: Ok(Readiness {
                open_questions: 3,
                notice: Some("3 questions are still open — answer".into()),
            }),
        },
    );
    assert_eq!(
        notice(&m),
        "I'm ready recorded — 3 questions are still open — answer"
    );
}

#[test]
fn options_multi_select_review_and_send() {
    let mut items = sample("dev-a");
    items.insert(
        0,
        with_prompts(question("q-0", "dev-a", "dev-a", "Release", None, 1)),
    );
    let mut m = loaded("dev-a", items);
    update(&mut m, ch('i'));
    assert_eq!(m.focus, Focus::Choices);
    update(&mut m, key(KeyCode::Char(' ')));
    update(&mut m, ch('j'));
    update(&mut m, ch('j'));
    update(&mut m, key(KeyCode::Char(' ')));
    update(&mut m, ch('j'));
    update(&mut m, key(KeyCode::Enter));
    assert!(
        m.choices.as_ref().unwrap().typing,
        "Enter on the free-text row types"
    );
    typed(&mut m, "bsd");
    update(&mut m, key(KeyCode::Enter));
    let c = m.choices.as_ref().unwrap();
    assert_eq!(c.current, 1);
    update(&mut m, ch('j'));
    update(&mut m, key(KeyCode::Enter));
    assert!(m.choices.as_ref().unwrap().review);
    let fx = update(&mut m, key(KeyCode::Enter));
    assert_eq!(
        fx,
        vec![Effect::Submit {
            id: 1,
            key: "tui-1".into(),
            question_id: "q-0".into(),
            project: "loja".into(),
            input: AnswerInput {
                answers: Some(vec![
                    vec!["linux".into(), "windows".into(), "bsd".into()],
                    vec!["beta".into()]
                ]),
                ..AnswerInput::default()
            },
        }]
    );
    assert!(
        update(&mut m, key(KeyCode::Enter)).is_empty(),
        "no second send while one is in flight"
    );
    update(
        &mut m,
        Msg::Answered {
            id: 1,
            question_id: "q-0".into(),
            result: Err("not supported by this source yet".into()),
        },
    );
    assert!(notice(&m).contains("not supported"));
    assert!(m.choices.is_some(), "a refusal keeps the form");
}

#[test]
fn help_opens_and_holds_the_keys_until_closed() {
    let mut m = me();
    update(&mut m, ch('?'));
    assert!(m.help.is_some());
    assert!(
        update(&mut m, ch('a')).is_empty(),
        "keys behind the overlay do nothing"
    );
    // "a" went to the overlay's filter; Esc closes it (tui_long_text.rs has the rest).
    assert_eq!(m.help.as_ref().unwrap().filter, "a");
    update(&mut m, key(KeyCode::Esc));
    assert!(m.help.is_none());
}

#[test]
fn quit_and_key_releases() {
    let mut m = me();
    let release = Msg::Key(KeyEvent {
        code: KeyCode::Char('q'),
        modifiers: KeyModifiers::NONE,
        kind: KeyEventKind::Release,
        state: KeyEventState::NONE,
    });
    assert!(update(&mut m, release).is_empty());
    assert!(!m.quit);
    // Quitting is a teardown through the one cleanup: the watcher stops, then the end.
    assert_eq!(
        update(&mut m, ch('q')),
        vec![Effect::StopWatcher, Effect::Quit]
    );
    assert!(m.quit);
    let mut m = me();
    assert_eq!(
        update(&mut m, Msg::Quit),
        vec![Effect::StopWatcher, Effect::Quit]
    );
}

#[test]
fn keys_from_config_replace_the_defaults_and_feed_help() {
    let cfg: KeysConfig = toml::from_str(
        "accept = \"y\"\ndown = [\"n\", \"down\"]\n[field]\nnewline = \"alt-enter\"",
    )
    .unwrap();
    let km = Keymap::with_config(&cfg).unwrap();
    assert_eq!(km.keys_for(Action::Accept), "y");
    assert_eq!(km.keys_for(Action::Down), "n/↓");
    assert_eq!(km.field_keys_for(Action::Newline), "Alt-Enter");
    assert!(toml::from_str::<KeysConfig>("no_such_action = \"x\"").is_err());
    let mut m = Model::new("dev-a", "local", None, NOW, km);
    init(&mut m);
    let id = m.queue.generation;
    update(
        &mut m,
        Msg::Loaded {
            id,
            append: false,
            page: Ok(QuestionList {
                items: sample("dev-a"),
                total: 4,
                total_is_lower_bound: false,
                snoozed: 0,
                snoozed_next_return: None,
                cursor: None,
            }),
        },
    );
    assert!(update(&mut m, ch('a')).is_empty());
    // The rebound key asks, and confirms.
    assert!(update(&mut m, ch('y')).is_empty());
    assert!(matches!(m.modal, Some(oq::tui::modal::Modal::Confirm(_))));
    assert!(matches!(
        update(&mut m, ch('y')).as_slice(),
        [Effect::Submit { .. }]
    ));
}

/// xorshift: deterministic, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn random_key(r: &mut Rng) -> Msg {
    const CODES: &[KeyCode] = &[
        KeyCode::Enter,
        KeyCode::Esc,
        KeyCode::Tab,
        KeyCode::BackTab,
        KeyCode::Backspace,
        KeyCode::Up,
        KeyCode::Down,
        KeyCode::Left,
        KeyCode::Right,
        KeyCode::Home,
        KeyCode::End,
        KeyCode::PageUp,
        KeyCode::PageDown,
        KeyCode::Delete,
        KeyCode::F(1),
    ];
    const CHARS: &str = "jkJKgGhlaiefs/rR?oq xy1 \u{e9}—";
    let code = if r.next() % 3 == 0 {
        CODES[(r.next() % CODES.len() as u64) as usize]
    } else {
        let chars: Vec<char> = CHARS.chars().collect();
        KeyCode::Char(chars[(r.next() % chars.len() as u64) as usize])
    };
    let modifiers = match r.next() % 8 {
        0 => KeyModifiers::CONTROL,
        1 => KeyModifiers::ALT,
        2 => KeyModifiers::SHIFT,
        _ => KeyModifiers::NONE,
    };
    Msg::Key(KeyEvent {
        code,
        modifiers,
        kind: KeyEventKind::Press,
        state: KeyEventState::NONE,
    })
}

#[test]
fn no_key_sequence_panics_at_any_size() {
    let sizes = [
        (80, 24),
        (120, 40),
        (40, 12),
        (20, 5),
        (1, 1),
        (200, 3),
        (69, 30),
    ];
    let themes = [Theme::embedded("dark").unwrap(), Theme::monochrome()];
    for seed in 1..=6u64 {
        let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut items = sample("dev-a");
        items.insert(
            2,
            with_prompts(question("q-0", "dev-a", "dev-a", "Release", None, 1)),
        );
        items.push(answered(
            question("q-9", "dev-a", "dev-a", "Done?", Some("yes"), 9),
            "dev-a",
            true,
            "yes",
            1,
        ));
        let mut m = loaded("dev-a", items.clone());
        for step in 0..400 {
            let msg = match r.next() % 40 {
                0 => Msg::Paste("pasted\nline".into()),
                1 => Msg::Revision {
                    now: NOW + step * 1000,
                    revision: if r.next() % 2 == 0 {
                        Ok(step)
                    } else {
                        Err(LinkError::unreachable("x"))
                    },
                },
                2 => {
                    let id = m.queue.generation;
                    Msg::Loaded {
                        id,
                        append: false,
                        page: Ok(QuestionList {
                            items: items[..(r.next() % 6) as usize].to_vec(),
                            total: 6,
                            total_is_lower_bound: false,
                            snoozed: 0,
                            snoozed_next_return: None,
                            cursor: None,
                        }),
                    }
                }
                3 => Msg::Resize,
                _ => random_key(&mut r),
            };
            update(&mut m, msg);
            if m.quit {
                m = loaded("dev-a", items.clone());
            }
            let (w, h) = sizes[(step as usize) % sizes.len()];
            render(&m, &themes[(step as usize) % 2], w, h);
        }
    }
}

#[test]
fn a_g_still_loading_is_dropped_when_the_filter_changes() {
    let mut m = Model::new("dev-a", "local", None, NOW, Keymap::default());
    init(&mut m);
    let page = |from: usize| -> Vec<_> {
        (from..from + 50)
            .map(|i| question(&format!("q-{i}"), "dev-a", "dev-a", "Q", None, 1))
            .collect()
    };
    let id = m.queue.generation;
    update(
        &mut m,
        Msg::Loaded {
            id,
            append: false,
            page: Ok(QuestionList {
                items: page(0),
                total: 200,
                total_is_lower_bound: false,
                snoozed: 0,
                snoozed_next_return: None,
                cursor: Some("c50".into()),
            }),
        },
    );
    let fx = update(&mut m, ch('G'));
    assert!(
        fx.iter().any(|e| matches!(e, Effect::LoadMore { .. })),
        "{fx:?}"
    );
    update(&mut m, ch('f'));
    let g = m.queue.generation;
    // The answered filter's first page, with pages after it: nothing more is asked for.
    let fx = update(
        &mut m,
        Msg::Loaded {
            id: g,
            append: false,
            page: Ok(QuestionList {
                items: page(100),
                total: 200,
                total_is_lower_bound: false,
                snoozed: 0,
                snoozed_next_return: None,
                cursor: Some("c150".into()),
            }),
        },
    );
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::LoadMore { .. })),
        "{fx:?}"
    );
    assert_eq!(
        m.selected, 0,
        "the selection stays at the top of the new filter"
    );
}

#[test]
fn the_open_view_hides_the_snoozed_counts_them_and_reloads_when_one_returns() {
    let mut m = me();
    let page = QuestionList {
        items: m.queue.items.clone(),
        total: m.queue.items.len() as u64,
        total_is_lower_bound: false,
        snoozed: 2,
        snoozed_next_return: Some(NOW + 60_000),
        cursor: None,
    };
    let id = m.queue.generation;
    update(
        &mut m,
        Msg::Loaded {
            id,
            append: false,
            page: Ok(page),
        },
    );
    assert_eq!(m.list_query().snoozed, SnoozeFilter::Hide);
    let screen = text(&render(&m, &Theme::default(), 100, 24));
    assert!(screen.contains("· 2 snoozed"), "{screen}");

    // Before the first return, the second's tick changes nothing of the list.
    let fx = update(&mut m, Msg::Tick { now: NOW + 59_999 });
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Load { .. })),
        "{fx:?}"
    );
    // At it, the view reloads: the question is back on its own.
    let fx = update(&mut m, Msg::Tick { now: NOW + 60_000 });
    assert!(
        fx.iter().any(
            |e| matches!(e, Effect::Load { query, .. } if query.snoozed == SnoozeFilter::Hide)
        ),
        "{fx:?}"
    );
    assert_eq!(m.queue.snoozed_next_return, None);

    // Other views show every question, snoozed or not.
    update(&mut m, ch('f'));
    assert_eq!(m.list_query().snoozed, SnoozeFilter::Show);
}

/// `G` while a reload is in flight: no page is appended to rows the reload will replace
/// (its reply could land after the page and throw it away, leaving "50 of 53 loaded"
/// with `G` done); the pages load after the reload's reply, and `G` lands on the last.
#[test]
fn g_during_a_reload_waits_for_it_and_still_reaches_the_last_question() {
    let mut m = Model::new("dev-a", "local", None, NOW, Keymap::default());
    init(&mut m);
    let rows = |from: usize, n: usize| -> Vec<_> {
        (from..from + n)
            .map(|i| question(&format!("q-{i}"), "dev-a", "dev-a", "Q", None, 1))
            .collect()
    };
    let page = |items, cursor: Option<&str>| QuestionList {
        items,
        total: 53,
        total_is_lower_bound: false,
        snoozed: 0,
        snoozed_next_return: None,
        cursor: cursor.map(str::to_string),
    };
    let id = m.queue.generation;
    let first = || Ok(page(rows(0, 50), Some("c50")));
    update(
        &mut m,
        Msg::Loaded {
            id,
            append: false,
            page: first(),
        },
    );
    // The store changed: a reload of the loaded page goes out.
    let before = m.queue.generation;
    let fx = update(
        &mut m,
        Msg::Revision {
            now: NOW,
            revision: Ok(7),
        },
    );
    assert!(
        fx.iter().any(|e| matches!(e, Effect::Load { .. })),
        "{fx:?}"
    );
    assert!(m.queue.generation > before);
    let id = m.queue.generation;
    let fx = update(&mut m, ch('G'));
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::LoadMore { .. })),
        "no page on top of rows being replaced: {fx:?}"
    );
    let fx = update(
        &mut m,
        Msg::Loaded {
            id,
            append: false,
            page: first(),
        },
    );
    let Some(Effect::LoadMore { id: more, query }) =
        fx.iter().find(|e| matches!(e, Effect::LoadMore { .. }))
    else {
        panic!("G goes on after the reload: {fx:?}")
    };
    assert_eq!((*more, query.cursor.as_deref()), (id, Some("c50")));
    update(
        &mut m,
        Msg::Loaded {
            id,
            append: true,
            page: Ok(page(rows(50, 3), None)),
        },
    );
    assert_eq!(m.queue.items.len(), 53);
    assert_eq!(m.current().unwrap().question_id, "q-52");
}
