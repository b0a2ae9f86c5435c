//! The Decisions view through the pure `update`: `D` asks the source's history (not the
//! loaded queue), the filter line becomes a `DecisionQuery`, a bad part is refused and
//! changes nothing, Esc goes back.
#![allow(clippy::unwrap_used)]

mod tui_fixtures;

use crossterm::event::KeyCode;
use oq::domain::DecisionSource;
use oq::tui::effect::{Effect, Msg};
use oq::tui::update::update;
use oq::wire::QuestionList;
use tui_fixtures::*;

#[test]
fn the_view_asks_the_history_and_its_filter_line_narrows_it() {
    let mut m = loaded("dev-a", sample("dev-a"));
    let fx = update(&mut m, ch('D'));
    let Some(Effect::LoadDecisions { id, query, .. }) = fx.first() else {
        panic!("{fx:?}")
    };
    assert!(m.decisions.open && query.cursor.is_none());
    let done = answered(sample("dev-a").remove(0), "dev-a", true, "Pix", 5);
    update(
        &mut m,
        Msg::Decisions {
            id: *id,
            append: false,
            page: Ok(QuestionList {
                items: vec![done],
                total: 1,
                total_is_lower_bound: false,
                snoozed: 0,
                snoozed_next_return: None,
                cursor: None,
            }),
        },
    );
    assert_eq!(m.decisions.items.len(), 1);
    update(&mut m, ch('/'));
    typed(&mut m, "pix source:suggestion agent:po task:T-7");
    let fx = update(&mut m, key(KeyCode::Enter));
    let Some(Effect::LoadDecisions { query, .. }) = fx.first() else {
        panic!("{fx:?}")
    };
    assert_eq!(query.source, Some(DecisionSource::Suggestion));
    assert_eq!(query.agent.as_deref(), Some("po"));
    assert_eq!(query.affects.as_ref().unwrap().encode(), "task:T-7");
    // A bad part: refused in words, nothing asked, the filter kept.
    update(&mut m, ch('/'));
    typed(&mut m, " source:robot");
    let fx = update(&mut m, key(KeyCode::Enter));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(m.notice.as_ref().unwrap().text.contains("robot"));
    update(&mut m, key(KeyCode::Esc));
    update(&mut m, key(KeyCode::Esc));
    assert!(!m.decisions.open);
}

/// A search whose count stopped at the cap: the title says "1000+", not a false total.
#[test]
fn a_capped_count_is_shown_as_a_lower_bound() {
    let mut m = loaded("dev-a", sample("dev-a"));
    let fx = update(&mut m, ch('D'));
    let Some(Effect::LoadDecisions { id, .. }) = fx.first() else {
        panic!("{fx:?}")
    };
    let done = answered(sample("dev-a").remove(0), "dev-a", true, "Pix", 5);
    let page = |total_is_lower_bound| QuestionList {
        items: vec![done.clone()],
        total: 1000,
        total_is_lower_bound,
        snoozed: 0,
        snoozed_next_return: None,
        cursor: Some("c".into()),
    };
    let id = *id;
    let theme = oq::tui::theme::Theme::embedded("dark").unwrap();
    let title = |m: &oq::tui::model::Model| text(&render(m, &theme, 120, 40));
    update(
        &mut m,
        Msg::Decisions {
            id,
            append: false,
            page: Ok(page(true)),
        },
    );
    assert!(
        title(&m).contains("Decisions (1 of 1000+ loaded)"),
        "{}",
        title(&m)
    );
    update(
        &mut m,
        Msg::Decisions {
            id,
            append: false,
            page: Ok(page(false)),
        },
    );
    assert!(
        title(&m).contains("Decisions (1 of 1000 loaded)"),
        "{}",
        title(&m)
    );
}
