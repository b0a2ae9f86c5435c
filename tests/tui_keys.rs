//! One table of keys (issue 11, the keymap review): every action's place, default keys,
//! words and hint live in `keymap::table::TABLE`, and the keymap, the help overlay and the
//! hint bar are all read from it. A field key rebound under `[keys]` acts in the field; a
//! key under `[keys.field]` for an action that does not act there is an error.
#![allow(clippy::unwrap_used)]

mod tui_fixtures;

use crossterm::event::KeyCode;
use oq::tui::effect::Effect;
use oq::tui::keymap::table::TABLE;
use oq::tui::keymap::{Action, Keymap, KeysConfig};
use oq::tui::model::Model;
use oq::tui::theme::Theme;
use oq::tui::update::update;
use tui_fixtures::*;

fn keymap(toml: &str) -> Result<Keymap, String> {
    Keymap::with_config(&toml::from_str::<KeysConfig>(toml).unwrap())
}

fn me_with(km: Keymap) -> Model {
    let mut m = loaded("dev-a", sample("dev-a"));
    m.keymap = km;
    m
}

fn screen(m: &Model, w: u16, h: u16) -> String {
    text(&render(m, &Theme::embedded("dark").unwrap(), w, h))
}

/// The hint bar: the last row of the screen.
fn hints(m: &mut Model) -> String {
    m.notice = None;
    screen(m, 120, 40)
        .lines()
        .last()
        .unwrap()
        .trim()
        .to_string()
}

fn line_with<'a>(screen: &'a str, what: &str) -> &'a str {
    screen
        .lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no line with {what:?}:\n{screen}"))
}

#[test]
fn a_field_key_rebound_under_keys_acts_in_the_field() {
    let km = keymap("submit = \"ctrl-s\"").unwrap();
    let mut m = me_with(km);
    update(&mut m, ch('i'));
    typed(&mut m, "Pix");
    // Enter no longer sends: it is text (a new line) now.
    let fx = update(&mut m, key(KeyCode::Enter));
    assert!(
        !fx.iter().any(|e| matches!(e, Effect::Submit { .. })),
        "{fx:?}"
    );
    typed(&mut m, "cards later");
    let fx = update(&mut m, ctrl('s'));
    let sent: Vec<_> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Submit { input, .. } => input.resposta.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(sent, vec!["Pix\ncards later".to_string()]);
}

#[test]
fn a_key_for_the_field_that_does_not_act_there_is_refused_by_name() {
    let err = keymap("[field]\naccept = \"ctrl-a\"").unwrap_err();
    assert!(err.contains("accept") && err.contains("[keys]"), "{err}");
    // An action of both places, rebound inside the field only.
    let km = keymap("[field]\neditor = \"ctrl-x\"").unwrap();
    assert_eq!(km.field_keys_for(Action::Editor), "Ctrl-x");
    assert_eq!(km.keys_for(Action::Editor), "e");
}

#[test]
fn undo_and_redo_are_field_keys_and_keep_the_draft_in_step() {
    let mut m = me_with(keymap("undo = \"ctrl-z\"").unwrap());
    update(&mut m, ch('i'));
    typed(&mut m, "Pix");
    let fx = update(&mut m, ctrl('z'));
    let draft = m.form.as_ref().unwrap().value();
    assert!(draft.len() < 3, "{draft:?}");
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::SaveDraft { .. } | Effect::RemoveDraft { .. })),
        "{fx:?}"
    );
    update(&mut m, ctrl('r'));
    assert_eq!(m.form.as_ref().unwrap().value(), "Pix");
}

#[test]
fn the_help_overlay_lists_every_row_of_the_table_with_its_live_keys() {
    let mut m = me_with(keymap("dismiss = \"X\"\nsubmit = \"ctrl-s\"").unwrap());
    assert_eq!(m.keymap.help_rows().len(), TABLE.len());
    update(&mut m, ch('?'));
    let s = screen(&m, 200, 60);
    for row in TABLE {
        assert!(s.contains(row.describe), "{:?} missing:\n{s}", row.describe);
    }
    assert!(line_with(&s, "dismiss without an answer").contains(" X "));
    assert!(line_with(&s, "send the answer").contains("Ctrl-s"));
    assert!(s.contains("In the answer field") && s.contains("In an options form"));
}

#[test]
fn hints_show_only_what_applies_to_the_selected_question_with_the_live_keys() {
    let mut m = me_with(keymap("accept = \"y\"").unwrap());
    // q-1: the author's, with a suggestion.
    let h = hints(&mut m);
    assert!(h.contains("y accept") && h.contains("i answer"), "{h}");
    assert!(h.starts_with("? help  j/k move"), "{h}");
    assert!(h.ends_with("/ search  q quit"), "{h}");
    // q-2: no suggestion to accept.
    update(&mut m, ch('j'));
    let h = hints(&mut m);
    assert!(!h.contains("accept") && h.contains("i answer"), "{h}");
    // q-3: someone else's session: neither.
    update(&mut m, ch('j'));
    let h = hints(&mut m);
    assert!(!h.contains("accept") && !h.contains("answer"), "{h}");
    // In the field, the field's rows.
    update(&mut m, ch('k'));
    update(&mut m, ch('i'));
    let h = hints(&mut m);
    assert!(
        h.contains("Enter send") && h.contains("Ctrl-e $EDITOR") && h.ends_with("Esc leave"),
        "{h}"
    );
}
