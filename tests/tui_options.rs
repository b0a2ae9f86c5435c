//! Options forms (issue 11, item 10): the options scroll with the cursor; what was chosen
//! and typed is a draft saved at every change and restored when the form opens again;
//! the author can dismiss the question from the form, confirmed; an orphaned question
//! says so in the queue, and so does one handed to Claude Code's dialog. Pure `update` and
//! the real view on `TestBackend`.
#![allow(clippy::unwrap_used)]

mod tui_fixtures;

use crossterm::event::KeyCode;
use oq::tui::effect::{Effect, Msg};
use oq::tui::modal::Modal;
use oq::tui::model::{Focus, Model};
use oq::tui::theme::Theme;
use oq::tui::update::update;
use oq::wire::{OptionItem, QuestionItem};
use tui_fixtures::*;

fn screen(m: &Model) -> String {
    text(&render(m, &Theme::embedded("dark").unwrap(), 80, 24))
}

/// The author's options question on top of the sample.
fn with(q: QuestionItem) -> Model {
    let mut items = vec![q];
    items.extend(sample("dev-a"));
    loaded("dev-a", items)
}

fn saved(fx: &[Effect]) -> Option<String> {
    fx.iter().rev().find_map(|e| match e {
        Effect::SaveDraft { text, .. } => Some(text.clone()),
        _ => None,
    })
}

#[test]
fn many_options_scroll_with_the_cursor() {
    let mut q = release();
    q.prompts[0].options = (1..=14)
        .map(|i| OptionItem {
            label: format!("target-{i}"),
            description: format!("the build for platform number {i}, with its own runner"),
        })
        .collect();
    let mut m = with(q);
    update(&mut m, ch('i'));
    for _ in 0..14 {
        update(&mut m, ch('j'));
    }
    let s = screen(&m);
    // The free-text row, after the 14 options, is the cursor's and is on screen.
    assert!(s.contains("> ✎ type your own answer"), "{s}");
    assert!(
        !s.contains("target-1 "),
        "the first rows scrolled away:\n{s}"
    );
    insta::assert_snapshot!("options_scrolled_80x24", s);
    update(&mut m, ch('g'));
    assert!(screen(&m).contains("> [ ] target-1 "));
}

#[test]
fn choices_and_free_text_are_a_draft_restored_when_the_form_opens_again() {
    let mut m = with(release());
    update(&mut m, ch('i'));
    let fx = update(&mut m, key(KeyCode::Char(' ')));
    assert_eq!(
        saved(&fx).as_deref(),
        Some(r#"[{"picked":["linux"],"typed":""},{"picked":[],"typed":""}]"#)
    );
    // To the free-text row, and type.
    for _ in 0..3 {
        update(&mut m, ch('j'));
    }
    update(&mut m, key(KeyCode::Enter));
    let mut last = Vec::new();
    for c in "freebsd".chars() {
        last = update(&mut m, ch(c));
    }
    assert!(saved(&last).unwrap().contains(r#""typed":"freebsd""#));
    // Away and back: the form starts from the draft.
    update(&mut m, key(KeyCode::Esc));
    update(&mut m, key(KeyCode::Esc));
    update(&mut m, ch('j'));
    update(&mut m, ch('k'));
    assert!(m.choices.is_none());
    assert!(screen(&m).contains("[x] linux"), "drawn from the draft");
    update(&mut m, ch('i'));
    let form = m.choices.as_ref().unwrap();
    assert_eq!(form.picked[0], vec![true, false, false]);
    assert_eq!(form.custom[0], "freebsd");
    // Sent (the second prompt's first option, then the review) and recorded: its draft
    // has done its job.
    update(&mut m, key(KeyCode::Tab));
    update(&mut m, key(KeyCode::Enter));
    let fx = update(&mut m, key(KeyCode::Enter));
    let Some(Effect::Submit { id, .. }) = fx.first() else {
        panic!("not sent: {fx:?}")
    };
    assert!(m.drafts.contains_key("q-0"), "kept until it is recorded");
    let fx = update(
        &mut m,
        Msg::Answered {
            id: *id,
            question_id: "q-0".into(),
            result: Ok(Box::new(release())),
        },
    );
    assert!(
        fx.contains(&Effect::RemoveDraft {
            question_id: "q-0".into()
        }),
        "{fx:?}"
    );
    assert!(!m.drafts.contains_key("q-0"));
}

#[test]
fn the_author_dismisses_from_the_form_after_confirming() {
    let mut m = with(release());
    update(&mut m, ch('i'));
    update(&mut m, key(KeyCode::Char(' ')));
    assert!(update(&mut m, ch('x')).is_empty());
    let Some(Modal::Confirm(c)) = &m.modal else {
        panic!("no confirmation: {:?}", m.modal)
    };
    assert_eq!(c.draft, Some(("q-0".into(), "linux".into(), "Dismissing")));
    let fx = update(&mut m, ch('x'));
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Dismiss { question_id, .. } if question_id == "q-0")),
        "{fx:?}"
    );
    // The person left the form by choice: no "the field closed" notice follows.
    assert_eq!(m.focus, Focus::Queue);
    assert!(m.modal.is_none());
    let fx = update(
        &mut m,
        Msg::Dismissed {
            question_id: "q-0".into(),
            result: Ok(()),
        },
    );
    assert!(fx.contains(&Effect::RemoveDraft {
        question_id: "q-0".into()
    }));
}

#[test]
fn someone_elses_options_question_cannot_be_dismissed() {
    let mut q = release();
    q.session_author = "ana".into();
    q.can_answer = false;
    q.reason = Some("only the person who started this session, ana, can answer".into());
    let mut m = with(q);
    assert!(update(&mut m, ch('x')).is_empty());
    assert!(
        matches!(m.modal, Some(Modal::Inert { .. })),
        "{:?}",
        m.modal
    );
}

#[test]
fn an_orphaned_question_says_so_in_the_queue_and_in_full() {
    let mut q = release();
    q.orphaned = true;
    let m = with(q);
    let s = screen(&m);
    assert!(s.contains("> orphaned · Releas"), "{s}");
    assert!(s.contains("orphaned: its session was aborted"), "{s}");
}

#[test]
fn a_question_handed_to_claude_codes_dialog_says_so_and_opens_no_answer_form() {
    let mut q = release();
    q.source = "claude-code".into();
    q.handed_off = true;
    q.can_answer = false;
    q.reason = Some("waiting in Claude Code's dialog — answer there".into());
    let mut m = with(q);
    let s = screen(&m);
    assert!(s.contains("> in Claude · Rel"), "{s}");
    assert!(
        s.contains("waiting in Claude Code's dialog — answer"),
        "{s}"
    );
    // Enter opens no form: the inert control says why instead.
    let fx = update(&mut m, key(KeyCode::Enter));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(
        matches!(m.modal, Some(Modal::Inert { .. })),
        "{:?}",
        m.modal
    );
}
