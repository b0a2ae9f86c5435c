//! The toggle: generation guard, unavailable, real booleans only, off, off→on, on→on.

use serde_json::json;

use super::*;
use crate::bridge::delegate::{Awaiting, PauseReason, SettingsState};

#[test]
fn a_late_settings_read_never_beats_a_newer_toggle() {
    let mut h = Harness::loading();
    h.ask("que_1", "ses_1", Some(DIR), 1);
    let generation = h.d.settings_generation();
    h.step(Input::ApplyEnabled(json!(false)));
    assert_eq!(h.state("que_1"), RequestState::Disabled);
    assert!(h.d.settings_generation() > generation);
    let revision = h.d.revision();

    let fx = h.step(Input::SettingsLoaded {
        generation,
        value: Some(true),
    });
    assert_eq!(fx, vec![]);
    assert_eq!(h.d.revision(), revision);
    assert_eq!(h.d.settings(), SettingsState::Ready { enabled: false });
    assert_eq!(h.state("que_1"), RequestState::Disabled);
    assert!(posts(&h.advance_to(120_000)).is_empty());
}

#[test]
fn a_failed_read_is_unavailable_partial_and_never_auto_answers() {
    let mut h = Harness::loading();
    h.ask("que_1", "ses_1", Some(DIR), 1);
    let fx = h.step(Input::SettingsLoaded {
        generation: 0,
        value: None,
    });
    assert!(armed(&fx).is_empty());
    assert_eq!(h.d.settings(), SettingsState::Unavailable);
    assert_eq!(h.state("que_1"), RequestState::Disabled);
    let snap = h.d.snapshot();
    assert!(!snap.enabled);
    assert!(snap.coverage.partial);
    assert_eq!(snap.settings.state, "unavailable");
    // A request asked later is not armed either.
    let fx = h.ask("que_2", "ses_2", Some(DIR), 1);
    assert!(armed(&fx).is_empty());
    assert!(posts(&h.advance_to(600_000)).is_empty());
}

#[test]
fn only_a_real_json_boolean_changes_anything() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    let before = (h.state("que_1"), h.d.revision(), h.d.settings_generation());
    for value in [
        json!("false"),
        json!(0),
        json!(null),
        json!({"enabled": false}),
        json!([false]),
    ] {
        assert_eq!(
            h.step(Input::ApplyEnabled(value.clone())),
            vec![],
            "{value}"
        );
        assert_eq!(
            h.try_step(Input::RequestEnabled(value.clone())),
            Err(Refusal::NotBoolean),
            "{value}"
        );
    }
    assert_eq!(
        (h.state("que_1"), h.d.revision(), h.d.settings_generation()),
        before
    );
    assert_eq!(h.d.settings(), SettingsState::Ready { enabled: true });
    assert_eq!(
        h.step(Input::RequestEnabled(json!(false))),
        vec![Effect::PersistSetting(false)]
    );
    assert_eq!(
        h.d.settings(),
        SettingsState::Ready { enabled: true },
        "persist first"
    );
}

#[test]
fn turning_off_cancels_timers_disables_pending_and_reports_a_takeover() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    h.ask("que_2", "ses_1", Some(DIR), 1);
    h.ask("que_3", "ses_3", None, 1);
    h.ask("que_4", "ses_4", Some(DIR), 1);
    h.step(Input::Pause {
        request_id: "que_4".into(),
        reason: PauseReason::Interaction,
        by: None,
        hints: Hints::none(),
    });
    let (t1, _) = timer_of(h.state("que_1"));
    let (t2, _) = timer_of(h.state("que_2"));
    let fx = h.step(Input::ApplyEnabled(json!(false)));
    let mut cancelled = cancelled(&fx);
    cancelled.sort_unstable();
    assert_eq!(cancelled, vec![t1, t2]);
    assert_eq!(takeovers(&fx), vec!["ses_1", "ses_3"]);
    assert_eq!(h.state("que_1"), RequestState::Disabled);
    assert_eq!(h.state("que_2"), RequestState::Disabled);
    assert_eq!(h.state("que_3"), RequestState::Disabled);
    assert_eq!(
        h.state("que_4"),
        RequestState::Paused {
            reason: PauseReason::Interaction
        }
    );
    assert!(h.timers.is_empty());
    assert!(posts(&h.advance_to(120_000)).is_empty());
    assert!(h.d.is_blocking_session("ses_1"));
}

#[test]
fn off_then_on_gives_directory_bound_requests_a_fresh_full_window() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    h.ask("que_2", "ses_2", None, 1);
    h.now = 10_000;
    h.step(Input::ApplyEnabled(json!(false)));
    h.now = 20_000;
    let fx = h.step(Input::ApplyEnabled(json!(true)));
    assert_eq!(
        armed(&fx).iter().map(|a| a.1).collect::<Vec<_>>(),
        vec![50_000]
    );
    assert_eq!(timer_of(h.state("que_1")).1, 50_000);
    assert_eq!(
        h.state("que_2"),
        RequestState::Waiting {
            awaiting: Awaiting::Directory
        }
    );
    assert!(posts(&h.advance_to(49_999)).is_empty());
    let fx = h.advance_to(50_000);
    assert_eq!(posts(&fx).len(), 1);
    assert_eq!(h.posts.len(), 1);
}

#[test]
fn a_repeated_true_is_a_no_op_that_keeps_deadlines() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    let timer = timer_of(h.state("que_1"));
    let revision = h.d.revision();
    h.now = 25_000;
    assert_eq!(h.step(Input::ApplyEnabled(json!(true))), vec![]);
    assert_eq!(timer_of(h.state("que_1")), timer);
    assert_eq!(h.d.revision(), revision);
    assert_eq!(posts(&h.advance_to(30_000)).len(), 1);
}

#[test]
fn a_toggle_while_loading_wins_and_arms() {
    let mut h = Harness::loading();
    h.ask("que_1", "ses_1", Some(DIR), 1);
    h.now = 3_000;
    let fx = h.step(Input::ApplyEnabled(json!(true)));
    assert_eq!(
        armed(&fx).iter().map(|a| a.1).collect::<Vec<_>>(),
        vec![33_000]
    );
    let fx = h.step(Input::SettingsLoaded {
        generation: 0,
        value: Some(false),
    });
    assert_eq!(fx, vec![]);
    assert_eq!(posts(&h.advance_to(33_000)).len(), 1);
}
