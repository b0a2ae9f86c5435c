//! The single-flight claim shared by the timer, manual reply/reject and delegate; hints
//! and identity; pause; unknown requests.

use super::*;
use crate::bridge::delegate::{Claimant, PauseReason, PostKind};

fn manual_reply(id: &str, answers: Vec<Vec<String>>) -> Input {
    Input::ManualReply {
        request_id: id.into(),
        answers,
        hints: Hints::none(),
    }
}

fn delegate(id: &str) -> Input {
    Input::Delegate {
        request_id: id.into(),
        hints: Hints::none(),
    }
}

#[test]
fn a_manual_reply_claims_cancels_the_timer_forwards_answers_and_takes_over() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 2);
    let (timer_id, _) = timer_of(h.state("que_1"));
    h.now = 12_000;
    let answers = vec![vec!["SQLite".to_string()], vec!["a".into(), "b".into()]];
    let fx = h.step(manual_reply("que_1", answers.clone()));
    assert_eq!(cancelled(&fx), vec![timer_id]);
    assert_eq!(reply_answers(&fx), answers);
    assert_eq!(takeovers(&fx), vec!["ses_1"]);
    assert!(matches!(
        h.state("que_1"),
        RequestState::Submitting { claim } if claim.by == Claimant::Manual && claim.post == PostKind::Reply
    ));
    // The cancelled timer firing anyway does nothing.
    let fx = h.step(Input::TimerFired {
        request_id: "que_1".into(),
        timer_id,
    });
    assert_eq!(fx, vec![]);
    assert_eq!(h.posts.len(), 1);
}

#[test]
fn a_manual_reply_forwards_an_empty_answers_array_as_given() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    let fx = h.step(manual_reply("que_1", vec![]));
    assert_eq!(reply_answers(&fx), Vec::<Vec<String>>::new());
    assert!(!format!("{fx:?}").contains(crate::bridge::delegate::CONTINUATION_TEXT));
}

#[test]
fn the_loser_of_a_claim_is_refused_with_question_submission_claimed() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    h.advance_to(30_000); // the timer claims first
    let revision = h.d.revision();
    for input in [
        manual_reply("que_1", vec![vec!["x".into()]]),
        Input::ManualReject {
            request_id: "que_1".into(),
            hints: Hints::none(),
        },
        delegate("que_1"),
        Input::Pause {
            request_id: "que_1".into(),
            reason: PauseReason::User,
            by: None,
            hints: Hints::none(),
        },
    ] {
        let refused = h.try_step(input).expect_err("claimed");
        assert_eq!(refused, Refusal::Claimed);
        let wire = crate::bridge::upstream::refusal(refused);
        assert_eq!(wire.code(), "question_submission_claimed");
        assert_eq!(wire.http_status(), 409);
    }
    assert_eq!(h.d.revision(), revision);
    assert!(
        matches!(h.state("que_1"), RequestState::Submitting { claim } if claim.by == Claimant::Auto)
    );
    assert_eq!(h.posts.len(), 1);
}

#[test]
fn a_manual_claim_beats_the_timer_and_the_timer_posts_nothing() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    h.now = 29_999;
    h.step(manual_reply("que_1", vec![vec!["Postgres".into()]]));
    assert!(posts(&h.advance_to(31_000)).is_empty());
    assert_eq!(h.posts.len(), 1);
    assert!(h.timers.is_empty());
}

#[test]
fn two_manual_replies_racing_reach_upstream_once() {
    let mut h = Harness::ready(false);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    h.step(manual_reply("que_1", vec![vec!["a".into()]]));
    let second = h.try_step(manual_reply("que_1", vec![vec!["b".into()]]));
    assert_eq!(second, Err(Refusal::Claimed));
    assert_eq!(h.posts.len(), 1);
}

#[test]
fn a_manual_reject_posts_a_reject_and_settles_rejected() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    let fx = h.step(Input::ManualReject {
        request_id: "que_1".into(),
        hints: hints(Some("ses_1"), Some(DIR)),
    });
    assert!(matches!(posts(&fx)[..], [Effect::PostReject { directory: Some(d), .. }] if d == DIR));
    h.answer(&fx, Upstream::Ok200);
    assert_eq!(h.word("que_1"), SettledWord::Rejected);
}

#[test]
fn delegate_posts_the_continuation_once_and_cancels_the_timer() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 3);
    let (timer_id, _) = timer_of(h.state("que_1"));
    let fx = h.step(delegate("que_1"));
    assert_eq!(cancelled(&fx), vec![timer_id]);
    assert_eq!(reply_answers(&fx), continuation(3));
    assert!(takeovers(&fx).is_empty(), "delegate is not a takeover");
    assert!(
        matches!(h.state("que_1"), RequestState::Submitting { claim } if claim.by == Claimant::Delegate)
    );
    assert_eq!(h.try_step(delegate("que_1")), Err(Refusal::Claimed));
    h.advance_to(60_000);
    assert_eq!(h.posts.len(), 1);
}

#[test]
fn with_the_feature_off_an_explicit_delegate_still_posts_once() {
    let mut h = Harness::ready(false);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    assert_eq!(h.state("que_1"), RequestState::Disabled);
    assert!(posts(&h.advance_to(100_000)).is_empty());
    let fx = h.step(delegate("que_1"));
    assert_eq!(reply_answers(&fx), continuation(1));
    assert_eq!(h.try_step(delegate("que_1")), Err(Refusal::Claimed));
    assert_eq!(h.posts.len(), 1);
}

#[test]
fn hints_never_override_a_bound_identity() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    let before = h.state("que_1");
    let bad_session = hints(Some("ses_other"), Some(DIR));
    let bad_dir = hints(Some("ses_1"), Some(OTHER_DIR));
    for hint in [bad_session, bad_dir] {
        for input in [
            Input::ManualReply {
                request_id: "que_1".into(),
                answers: vec![],
                hints: hint.clone(),
            },
            Input::ManualReject {
                request_id: "que_1".into(),
                hints: hint.clone(),
            },
            Input::Delegate {
                request_id: "que_1".into(),
                hints: hint.clone(),
            },
            Input::Pause {
                request_id: "que_1".into(),
                reason: PauseReason::User,
                by: None,
                hints: hint.clone(),
            },
        ] {
            let refused = h.try_step(input).expect_err("conflict");
            assert_eq!(refused, Refusal::IdentityConflict);
            assert_eq!(crate::bridge::upstream::refusal(refused).http_status(), 409);
        }
    }
    assert_eq!(h.state("que_1"), before);
    let req = h.d.request("que_1").expect("known");
    assert_eq!(req.session_id.as_deref(), Some("ses_1"));
    assert_eq!(req.directory.as_deref(), Some(DIR));
    assert!(h.posts.is_empty());
}

#[test]
fn a_hinted_directory_routes_a_manual_post_but_never_arms_a_timer() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", None, 1);
    let fx = h.step(Input::Delegate {
        request_id: "que_1".into(),
        hints: hints(None, Some(DIR)),
    });
    assert!(
        posts(&fx).is_empty(),
        "delegate needs an authoritative directory"
    );
    assert!(fx.contains(&Effect::RecoverViaList {
        request_id: "que_1".into(),
        directory: Some(DIR.into())
    }));
    assert!(armed(&fx).is_empty());
    assert!(!h.d.request("que_1").expect("known").directory_authoritative);

    let fx = h.step(Input::ManualReply {
        request_id: "que_1".into(),
        answers: vec![vec!["x".into()]],
        hints: hints(None, Some(DIR)),
    });
    assert!(matches!(posts(&fx)[..], [Effect::PostReply { directory: Some(d), .. }] if d == DIR));
    assert!(!h.d.request("que_1").expect("known").directory_authoritative);
}

#[test]
fn pause_cancels_the_timer_even_without_a_directory_and_only_a_user_pause_takes_over() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    h.ask("que_2", "ses_2", Some(DIR), 1);
    let (timer_1, _) = timer_of(h.state("que_1"));
    let fx = h.step(Input::Pause {
        request_id: "que_1".into(),
        reason: PauseReason::Interaction,
        by: None,
        hints: hints(Some("ses_1"), Some("")),
    });
    assert_eq!(cancelled(&fx), vec![timer_1]);
    assert!(takeovers(&fx).is_empty());
    assert_eq!(
        h.state("que_1"),
        RequestState::Paused {
            reason: PauseReason::Interaction
        }
    );
    let fx = h.step(Input::Pause {
        request_id: "que_2".into(),
        reason: PauseReason::User,
        by: None,
        hints: Hints::none(),
    });
    assert_eq!(takeovers(&fx), vec!["ses_2"]);
    assert!(posts(&h.advance_to(120_000)).is_empty());
    assert!(h.d.is_blocking_session("ses_1"));
}

#[test]
fn pause_or_delegate_of_an_unknown_request_recovers_via_list_and_invents_nothing() {
    let mut h = Harness::ready(true);
    let revision = h.d.revision();
    let fx = h.step(Input::Pause {
        request_id: "que_9".into(),
        reason: PauseReason::User,
        by: None,
        hints: hints(Some("ses_9"), Some(DIR)),
    });
    assert_eq!(
        fx,
        vec![Effect::RecoverViaList {
            request_id: "que_9".into(),
            directory: Some(DIR.into())
        }]
    );
    let fx = h.step(delegate("que_9"));
    assert_eq!(
        fx,
        vec![Effect::RecoverViaList {
            request_id: "que_9".into(),
            directory: None
        }]
    );
    assert!(h.d.request("que_9").is_none());
    assert_eq!(h.d.revision(), revision);
    assert!(h.posts.is_empty());

    // The recovery list tells the real question count; the retried delegate uses it.
    let token = h.list_token();
    h.step(Input::ListResult {
        directory: Some(DIR.into()),
        token,
        result: Ok(vec![request("que_9", "ses_9", 2)]),
    });
    let fx = h.step(delegate("que_9"));
    assert_eq!(reply_answers(&fx), continuation(2));
}
