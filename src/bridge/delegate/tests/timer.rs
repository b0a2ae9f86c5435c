//! The window: when a timer is armed, when it posts, and stale timers.

use super::*;
use crate::bridge::delegate::{Awaiting, Claimant, SettingsState};

#[test]
fn nothing_at_29_999_ms_and_exactly_one_auto_reply_at_30_000_ms() {
    let mut h = Harness::ready(true);
    let fx = h.ask("que_1", "ses_1", Some(DIR), 2);
    assert_eq!(armed(&fx).len(), 1);
    let (timer_id, deadline) = timer_of(h.state("que_1"));
    assert_eq!(deadline, 30_000);

    // A premature wake-up of the right timer posts nothing and sleeps again.
    h.now = 29_999;
    let early = h.step(Input::TimerFired {
        request_id: "que_1".into(),
        timer_id,
    });
    assert!(posts(&early).is_empty());
    assert_eq!(armed(&early), vec![(timer_id, 30_000)]);
    assert_eq!(h.advance_to(29_999), vec![]);
    assert_eq!(timer_of(h.state("que_1")), (timer_id, 30_000));

    let fx = h.advance_to(30_000);
    assert_eq!(posts(&fx).len(), 1);
    let Effect::PostReply {
        directory, claim, ..
    } = posts(&fx)[0]
    else {
        panic!("a reply")
    };
    assert_eq!(directory.as_deref(), Some(DIR));
    assert_eq!(claim.by, Claimant::Auto);
    assert_eq!(reply_answers(&fx), continuation(2));
    assert!(
        matches!(h.state("que_1"), RequestState::Submitting { claim: c } if c.by == Claimant::Auto)
    );

    // Never a second one, however long nobody answers.
    h.advance_to(10 * 60_000);
    assert_eq!(h.posts.len(), 1);
}

#[test]
fn the_window_is_configurable() {
    let mut h = Harness::with_window(5_000);
    h.step(Input::SettingsLoaded {
        generation: 0,
        value: Some(true),
    });
    h.ask("que_1", "ses_1", Some(DIR), 1);
    assert!(posts(&h.advance_to(4_999)).is_empty());
    assert_eq!(posts(&h.advance_to(5_000)).len(), 1);
    assert_eq!(h.d.snapshot().window_ms, 5_000);
}

#[test]
fn a_stale_timer_id_is_ignored() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    let (old_timer, _) = timer_of(h.state("que_1"));
    h.now = 10_000;
    h.step(Input::ApplyEnabled(false.into()));
    h.step(Input::ApplyEnabled(true.into()));
    let (new_timer, deadline) = timer_of(h.state("que_1"));
    assert_ne!(old_timer, new_timer);
    assert_eq!(deadline, 40_000);
    let revision = h.d.revision();

    // The driver fires the old timer anyway: nothing happens, not even a tip.
    h.now = 30_000;
    let fx = h.step(Input::TimerFired {
        request_id: "que_1".into(),
        timer_id: old_timer,
    });
    assert_eq!(fx, vec![]);
    assert_eq!(h.d.revision(), revision);
    assert_eq!(timer_of(h.state("que_1")), (new_timer, 40_000));
    assert!(posts(&h.advance_to(39_999)).is_empty());
    assert_eq!(posts(&h.advance_to(40_000)).len(), 1);
}

#[test]
fn a_missing_directory_arms_no_timer_and_asks_for_the_session() {
    let mut h = Harness::ready(true);
    let fx = h.ask("que_1", "ses_1", None, 1);
    assert!(armed(&fx).is_empty());
    assert!(fx.contains(&Effect::ResolveSession {
        session_id: "ses_1".into()
    }));
    assert_eq!(
        h.state("que_1"),
        RequestState::Waiting {
            awaiting: Awaiting::Directory
        }
    );
    assert!(posts(&h.advance_to(120_000)).is_empty());

    // The getSession write-back binds the directory and starts a full window from now.
    let fx = h.step(Input::SessionDirectoryResolved {
        session_id: "ses_1".into(),
        directory: DIR.into(),
    });
    assert_eq!(armed(&fx).len(), 1);
    assert_eq!(armed(&fx)[0].1, 150_000);
    let req = h.d.request("que_1").expect("known");
    assert_eq!(req.authoritative_directory(), Some(DIR));
    assert!(posts(&h.advance_to(149_999)).is_empty());
    let fx = h.advance_to(150_000);
    assert!(matches!(posts(&fx)[..], [Effect::PostReply { directory: Some(d), .. }] if d == DIR));
}

#[test]
fn the_session_cache_makes_a_later_request_authoritative() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    let fx = h.ask("que_2", "ses_1", None, 1);
    assert_eq!(armed(&fx).len(), 1);
    assert!(
        !fx.iter()
            .any(|e| matches!(e, Effect::ResolveSession { .. }))
    );
    assert_eq!(
        h.d.request("que_2")
            .expect("known")
            .authoritative_directory(),
        Some(DIR)
    );
}

#[test]
fn no_timer_while_settings_load_then_a_full_window_once_ready() {
    let mut h = Harness::loading();
    let fx = h.ask("que_1", "ses_1", Some(DIR), 1);
    assert!(armed(&fx).is_empty());
    assert_eq!(
        h.state("que_1"),
        RequestState::Waiting {
            awaiting: Awaiting::Settings
        }
    );
    assert!(!h.d.snapshot().enabled);
    assert!(posts(&h.advance_to(60_000)).is_empty());

    let fx = h.step(Input::SettingsLoaded {
        generation: 0,
        value: Some(true),
    });
    assert_eq!(h.d.settings(), SettingsState::Ready { enabled: true });
    assert_eq!(
        armed(&fx).iter().map(|a| a.1).collect::<Vec<_>>(),
        vec![90_000]
    );
    assert_eq!(posts(&h.advance_to(90_000)).len(), 1);
}

#[test]
fn each_change_bumps_the_revision_once_and_sends_a_tip() {
    let mut h = Harness::ready(true);
    let before = h.d.revision();
    let fx = h.ask("que_1", "ses_1", Some(DIR), 1);
    assert_eq!(h.d.revision(), before + 1);
    assert_eq!(
        fx.last(),
        Some(&Effect::NotifyTip {
            epoch: EPOCH,
            revision: before + 1
        })
    );
    let tips = fx
        .iter()
        .filter(|e| matches!(e, Effect::NotifyTip { .. }))
        .count();
    assert_eq!(tips, 1);

    // A step that changes nothing sends nothing.
    let fx = h.step(Input::ApplyEnabled(true.into()));
    assert_eq!(fx, vec![]);
    assert_eq!(h.d.revision(), before + 1);

    let fx = h.advance_to(30_000);
    assert_eq!(
        fx.last(),
        Some(&Effect::NotifyTip {
            epoch: EPOCH,
            revision: before + 2
        })
    );
    assert_eq!(h.d.snapshot().revision, before + 2);
    assert_eq!(h.d.snapshot().epoch, EPOCH);
}
