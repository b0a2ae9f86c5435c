//! Whole screens at 80×24 and 120×40 on ratatui's TestBackend, snapshotted with insta.
//! The clock is fixed (`NOW`), so ages are stable and need no masking.
#![allow(clippy::unwrap_used)]

mod tui_fixtures;

use crossterm::event::KeyCode;
use oq::engine::StatusFilter;
use oq::tui::effect::Msg;
use oq::tui::model::{Connection, Model};
use oq::tui::theme::Theme;
use oq::tui::update::update;
use oq::wire::QuestionList;
use tui_fixtures::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn snap(name: &str, model: &Model, theme: &Theme) {
    for (w, h) in SIZES {
        let screen = text(&render(model, theme, w, h));
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen);
    }
}

fn dark() -> Theme {
    Theme::embedded("dark").unwrap()
}

fn queue() -> Model {
    let mut m = loaded("dev-a", sample("dev-a"));
    let id = m.counts_generation;
    update(
        &mut m,
        Msg::Counts {
            id,
            open: Ok(4),
            waiting: Ok(waiting()),
            newest: vec![],
        },
    );
    m
}

#[test]
fn empty_store() {
    let m = loaded("dev-a", vec![]);
    snap("empty_store", &m, &dark());
}

#[test]
fn queue_with_banner() {
    snap("queue_with_banner", &queue(), &dark());
}

#[test]
fn author_form_while_typing() {
    let mut m = queue();
    update(&mut m, ch('i'));
    typed(&mut m, "Pix first.");
    update(&mut m, ctrl('j'));
    typed(&mut m, "Cards when the gateway supports 3DS.");
    snap("author_form", &m, &dark());
}

#[test]
fn non_author_sees_inert_controls_and_the_reason() {
    let mut m = queue();
    update(&mut m, ch('j'));
    update(&mut m, ch('j'));
    assert_eq!(m.current().unwrap().question_id, "q-3");
    snap("non_author", &m, &dark());
    // An answering key there: the modal that takes what is typed next.
    update(&mut m, ch('a'));
    snap("inert_notice", &m, &dark());
}

#[test]
fn the_field_closed_under_the_person() {
    let mut m = queue();
    update(&mut m, ch('i'));
    typed(&mut m, "Pix first, then");
    let rest: Vec<_> = sample("dev-a").into_iter().skip(1).collect();
    reloaded(&mut m, rest, false);
    let by_ana = answered(sample("dev-a").remove(0), "ana", false, "Cards first", 0);
    looked_up(&mut m, by_ana);
    snap("interrupted_notice", &m, &dark());
}

/// Two decisions: an accepted suggestion and a typed answer, both dev-a's.
fn decided() -> Vec<oq::wire::QuestionItem> {
    vec![
        answered(
            question(
                "q-9",
                "dev-a",
                "dev-a",
                "Above which order value is shipping free?",
                Some("R$ 200, as in the current site"),
                300,
            ),
            "dev-a",
            true,
            "R$ 200, as in the current site",
            240,
        ),
        answered(
            question(
                "q-8",
                "dev-a",
                "dev-a",
                "May the integration tests use SQLite?",
                Some("Yes for unit tests"),
                200,
            ),
            "dev-a",
            false,
            "PostgreSQL everywhere: the suite must catch dialect bugs.",
            100,
        ),
    ]
}

#[test]
fn answered_view() {
    let mut m = queue();
    update(&mut m, ch('f'));
    assert_eq!(m.filter, StatusFilter::Answered);
    let items = decided();
    let id = m.queue.generation;
    update(
        &mut m,
        Msg::Loaded {
            id,
            append: false,
            page: Ok(QuestionList {
                items,
                total: 2,
                total_is_lower_bound: false,
                snoozed: 0,
                snoozed_next_return: None,
                cursor: None,
            }),
        },
    );
    snap("answered_view", &m, &dark());
}

#[test]
fn options_with_multi_select() {
    let mut items = sample("dev-a");
    items.insert(0, release());
    let mut m = loaded("dev-a", items);
    update(&mut m, ch('i'));
    update(&mut m, key(KeyCode::Char(' ')));
    update(&mut m, ch('j'));
    update(&mut m, ch('j'));
    update(&mut m, key(KeyCode::Char(' ')));
    snap("options_multi_select", &m, &dark());
}

#[test]
fn help_overlay() {
    let mut m = queue();
    update(&mut m, ch('?'));
    snap("help_overlay", &m, &dark());
}

#[test]
fn offline_status() {
    let mut m = queue();
    m.connection = Connection::Offline {
        since: NOW - 3 * MIN,
    };
    snap("offline_status", &m, &dark());
}

#[test]
fn monochrome_shows_selection_and_focus_without_colour() {
    let m = queue();
    let theme = Theme::monochrome();
    for (w, h) in SIZES {
        let b = render(&m, &theme, w, h);
        let colours = (0..b.area.height)
            .flat_map(|y| (0..b.area.width).map(move |x| (x, y)))
            .filter(|&p| {
                b[p].fg != ratatui::style::Color::Reset || b[p].bg != ratatui::style::Color::Reset
            })
            .count();
        assert_eq!(colours, 0, "monochrome uses no colour");
        insta::assert_snapshot!(
            format!("monochrome_{w}x{h}"),
            format!("{}\n{}", text(&b), styles(&b))
        );
    }
}

/// The outbox overlay with one entry in each state a person meets, the conflict's
/// winning answer looked up beside the kept text.
#[test]
fn outbox_view() {
    use oq::domain::AnswerInput;
    use oq::source::outbox::{Entry, State};
    let mut m = queue();
    m.connection = Connection::Offline {
        since: NOW - 120_000,
    };
    let entry = |n: i64, q: &str, body: AnswerInput, state, detail: Option<&str>| Entry {
        key: format!("tui-{n}"),
        source: "local".into(),
        project: Some("loja".into()),
        question_id: q.into(),
        body,
        created_at: NOW - 600_000 + n * 60_000,
        state,
        detail: detail.map(str::to_string),
    };
    let entries = vec![
        entry(1, "q-9", AnswerInput::accept(), State::Delivered, None),
        entry(
            2,
            "q-2",
            AnswerInput::text("Monthly, with a yearly discount"),
            State::Conflict,
            Some("settled elsewhere meanwhile: the question was already answered"),
        ),
        entry(
            3,
            "q-8",
            AnswerInput::text("Drop it"),
            State::Refused,
            Some("forbidden: only ana can answer"),
        ),
        entry(
            4,
            "q-1",
            AnswerInput::text("Pix first."),
            State::Pending,
            None,
        ),
    ];
    let pending: Vec<Entry> = entries
        .iter()
        .cloned()
        .map(|mut e| {
            if e.state != State::Delivered {
                e.state = State::Pending;
            }
            e
        })
        .collect();
    update(&mut m, Msg::Outbox { entries: pending });
    update(&mut m, Msg::Outbox { entries });
    let q2 = m
        .queue
        .items
        .iter()
        .find(|q| q.question_id == "q-2")
        .cloned()
        .unwrap();
    looked_up(&mut m, answered(q2, "bia", false, "Yearly only", 3));
    update(&mut m, ch('O'));
    assert!(m.show_outbox);
    snap("outbox_view", &m, &dark());
}

/// Two questions marked (q-1 and q-3), the selection on the second.
fn marked() -> Model {
    let mut m = queue();
    update(&mut m, key(KeyCode::Char(' ')));
    update(&mut m, ch('j'));
    update(&mut m, ch('j'));
    update(&mut m, key(KeyCode::Char(' ')));
    m
}

#[test]
fn triage_marks_in_the_queue() {
    snap("triage_marks", &marked(), &dark());
}

/// The review of a bulk accept: one to record, one skipped with its reason.
#[test]
fn triage_review() {
    let mut m = marked();
    update(&mut m, ch('a'));
    assert!(m.triage.screen.is_some());
    snap("triage_review", &m, &dark());
}

/// The Decisions view on its first page.
#[test]
fn decisions_view() {
    let mut m = queue();
    let fx = update(&mut m, ch('D'));
    let Some(oq::tui::effect::Effect::LoadDecisions { id, .. }) = fx.first() else {
        panic!("{fx:?}")
    };
    update(
        &mut m,
        Msg::Decisions {
            id: *id,
            append: false,
            page: Ok(QuestionList {
                items: decided(),
                total: 2,
                total_is_lower_bound: false,
                snoozed: 0,
                snoozed_next_return: None,
                cursor: None,
            }),
        },
    );
    snap("decisions_view", &m, &dark());
}

/// The memory of answers: the earlier answer the selected question resembles, with its
/// copy key and the question it answered (`tui_memory.rs` drives it).
#[test]
fn similar_answer_hint() {
    let mut m = queue();
    update(
        &mut m,
        Msg::Recalled {
            question_id: "q-1".into(),
            result: Ok(Some(oq::wire::SimilarAnswer {
                question_id: "q-old".into(),
                pergunta: "Which payment provider should the checkout offer first?".into(),
                resposta: "Pix first through the current gateway, then cards once 3DS is in".into(),
                respondida_por: "dev-a".into(),
                answered_at: NOW - 59 * 24 * 60 * MIN,
                resemblance: oq::domain::similar::Resemblance::Similar,
                similarity: 88,
            })),
        },
    );
    snap("similar_answer_hint", &m, &dark());
}
