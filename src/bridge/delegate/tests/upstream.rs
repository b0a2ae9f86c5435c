//! What each upstream outcome does to the claim: settle, release and pause, or tombstone.

use super::*;
use crate::bridge::delegate::{Claimant, PauseReason};

/// A request whose window ran out: the auto POST is in `fx`.
fn auto_posted() -> (Harness, Vec<Effect>) {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    let fx = h.advance_to(30_000);
    assert_eq!(posts(&fx).len(), 1);
    (h, fx)
}

fn manual_retry(h: &mut Harness) -> Result<Vec<Effect>, Refusal> {
    h.try_step(Input::ManualReply {
        request_id: "que_1".into(),
        answers: vec![vec!["SQLite".into()]],
        hints: Hints::none(),
    })
}

#[test]
fn a_200_settles_replied_and_unblocks_the_session() {
    let (mut h, fx) = auto_posted();
    assert!(h.d.is_blocking_session("ses_1"));
    let out = h.answer(&fx, Upstream::Ok200);
    assert!(matches!(out.last(), Some(Effect::NotifyTip { .. })));
    assert_eq!(h.word("que_1"), SettledWord::Replied);
    assert!(!h.d.is_blocking_session("ses_1"));
    assert_eq!(manual_retry(&mut h), Err(Refusal::Settled));
}

#[test]
fn a_404_from_the_authoritative_directory_means_settled_elsewhere() {
    let (mut h, fx) = auto_posted();
    h.answer(&fx, Upstream::NotFound404);
    assert_eq!(h.word("que_1"), SettledWord::Gone);
}

#[test]
fn a_404_from_a_hinted_directory_only_pauses_for_a_person() {
    let mut h = Harness::ready(true);
    let fx = h.step(Input::ManualReply {
        request_id: "que_x".into(),
        answers: vec![vec!["a".into()]],
        hints: hints(None, Some(OTHER_DIR)),
    });
    assert!(
        matches!(posts(&fx)[..], [Effect::PostReply { directory: Some(d), .. }] if d == OTHER_DIR)
    );
    h.answer(&fx, Upstream::NotFound404);
    assert_eq!(
        h.state("que_x"),
        RequestState::Paused {
            reason: PauseReason::Refused
        }
    );
}

#[test]
fn a_definitive_reject_releases_the_claim_and_pauses_without_retrying() {
    for script in [
        Upstream::BadRequest400,
        Upstream::Conflict409,
        Upstream::Unprocessable422,
        Upstream::FailBeforeSend,
    ] {
        let (mut h, fx) = auto_posted();
        let out = h.answer(&fx, script);
        assert_eq!(
            h.state("que_1"),
            RequestState::Paused {
                reason: PauseReason::Refused
            },
            "{script:?}"
        );
        assert!(
            posts(&out).is_empty() && armed(&out).is_empty(),
            "{script:?}"
        );
        // No automatic retry, however long we wait.
        assert!(posts(&h.advance_to(600_000)).is_empty(), "{script:?}");
        assert_eq!(h.posts.len(), 1, "{script:?}");
        assert!(h.d.is_blocking_session("ses_1"));
        // The claim is free again: a person may retry, once.
        let fx = manual_retry(&mut h).expect("claim released");
        assert_eq!(posts(&fx).len(), 1, "{script:?}");
        assert_eq!(manual_retry(&mut h), Err(Refusal::Claimed));
    }
}

#[test]
fn an_unclear_result_after_dispatch_leaves_a_blocking_tombstone_never_retried() {
    for script in [
        Upstream::ServerError500,
        Upstream::TimeoutAfterDispatch,
        Upstream::BareStatusZero,
    ] {
        let (mut h, fx) = auto_posted();
        h.answer(&fx, script);
        assert!(
            matches!(h.state("que_1"), RequestState::Uncertain { claim } if claim.by == Claimant::Auto),
            "{script:?}"
        );
        assert!(h.d.is_blocking_session("ses_1"), "{script:?}");
        assert!(posts(&h.advance_to(600_000)).is_empty(), "{script:?}");
        assert_eq!(manual_retry(&mut h), Err(Refusal::Claimed), "{script:?}");
        let delegate = h.try_step(Input::Delegate {
            request_id: "que_1".into(),
            hints: Hints::none(),
        });
        assert_eq!(delegate, Err(Refusal::Claimed), "{script:?}");
        assert_eq!(h.posts.len(), 1, "{script:?}");
        assert_eq!(
            h.d.snapshot().requests[0].state,
            crate::wire::AutoState::Uncertain
        );
    }
}

#[test]
fn an_upstream_that_never_answers_keeps_the_claim_and_blocks() {
    let (mut h, fx) = auto_posted();
    assert_eq!(h.answer(&fx, Upstream::NeverAnswer), vec![]);
    assert!(matches!(h.state("que_1"), RequestState::Submitting { .. }));
    assert!(posts(&h.advance_to(3_600_000)).is_empty());
    assert_eq!(manual_retry(&mut h), Err(Refusal::Claimed));
    assert!(h.d.is_blocking_session("ses_1"));
    assert_eq!(h.posts.len(), 1);
}

#[test]
fn settled_is_never_downgraded_by_a_late_failure() {
    let (mut h, fx) = auto_posted();
    // question.replied arrives before our POST's own result.
    h.step(Input::Replied {
        request_id: "que_1".into(),
        answers: None,
    });
    let settled = h.state("que_1");
    assert_eq!(h.word("que_1"), SettledWord::Replied);
    let revision = h.d.revision();
    for script in [
        Upstream::ServerError500,
        Upstream::Unprocessable422,
        Upstream::FailBeforeSend,
    ] {
        assert_eq!(h.answer(&fx, script), vec![]);
        assert_eq!(h.state("que_1"), settled);
    }
    assert_eq!(h.d.revision(), revision);
}

#[test]
fn a_result_for_an_older_claim_is_ignored() {
    let (mut h, first) = auto_posted();
    h.answer(&first, Upstream::Conflict409);
    let second = manual_retry(&mut h).expect("released");
    // A duplicate, late delivery of the first claim's outcome.
    assert_eq!(h.answer(&first, Upstream::ServerError500), vec![]);
    assert!(
        matches!(h.state("que_1"), RequestState::Submitting { claim } if claim.by == Claimant::Manual)
    );
    h.answer(&second, Upstream::Ok200);
    assert_eq!(h.word("que_1"), SettledWord::Replied);
}

#[test]
fn upstream_replied_and_rejected_events_settle_and_cancel_the_timer() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    h.ask("que_2", "ses_2", Some(DIR), 1);
    let (t1, _) = timer_of(h.state("que_1"));
    let (t2, _) = timer_of(h.state("que_2"));
    let fx = h.step(Input::Replied {
        request_id: "que_1".into(),
        answers: None,
    });
    assert_eq!(cancelled(&fx), vec![t1]);
    let fx = h.step(Input::Rejected {
        request_id: "que_2".into(),
    });
    assert_eq!(cancelled(&fx), vec![t2]);
    assert_eq!(h.word("que_1"), SettledWord::Replied);
    assert_eq!(h.word("que_2"), SettledWord::Rejected);
    assert!(posts(&h.advance_to(60_000)).is_empty());
}
