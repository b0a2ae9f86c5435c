//! Across connections, restarts and time: outages pause the countdown and reconnecting
//! starts a fresh window; a restored request keeps its pause, its tombstone or its
//! deadline; upstream's word about a POST of ours is matched against what it sent; gone
//! requests are inspected; settled ones leave after their retention.

use super::*;
use crate::bridge::delegate::{
    Claimant, Inspection, PauseReason, PostKind, PostOutcome, Restored, Settlement,
};

fn pause(id: &str, reason: PauseReason, by: &str) -> Input {
    Input::Pause {
        request_id: id.into(),
        reason,
        by: Some(by.into()),
        hints: Hints::none(),
    }
}

fn manual(id: &str, answer: &str) -> Input {
    Input::ManualReply {
        request_id: id.into(),
        answers: vec![vec![answer.into()]],
        hints: Hints::none(),
    }
}

#[test]
fn an_outage_stops_the_countdown_and_the_return_starts_a_fresh_window() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    let (timer, _) = timer_of(h.state("que_1"));
    h.now = 10_000;
    let fx = h.step(Input::Disconnected);
    assert_eq!(cancelled(&fx), vec![timer]);
    assert_eq!(
        h.state("que_1"),
        RequestState::Paused {
            reason: PauseReason::Unreachable
        }
    );
    assert!(!h.d.snapshot().connected);
    // Long past the old deadline: nothing fires, nothing is posted.
    assert!(posts(&h.advance_to(120_000)).is_empty());
    // Nothing is claimed while away: a person's answer and a delegate are refused.
    assert_eq!(h.try_step(manual("que_1", "x")), Err(Refusal::Unreachable));
    let delegate = h.try_step(Input::Delegate {
        request_id: "que_1".into(),
        hints: Hints::none(),
    });
    assert_eq!(delegate, Err(Refusal::Unreachable));
    // Back: a full window from now, not the deadline that passed.
    let fx = h.step(Input::Connected);
    assert_eq!(armed(&fx).len(), 1);
    assert_eq!(timer_of(h.state("que_1")).1, 120_000 + 30_000);
    assert!(posts(&h.advance_to(149_999)).is_empty());
    assert_eq!(posts(&h.advance_to(150_000)).len(), 1);
}

#[test]
fn a_persons_pause_outlasts_an_outage_and_a_resume_starts_a_fresh_window() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    h.step(pause("que_1", PauseReason::User, "ana"));
    h.step(Input::Disconnected);
    h.step(Input::Connected);
    assert_eq!(
        h.state("que_1"),
        RequestState::Paused {
            reason: PauseReason::User
        }
    );
    let snap = h.d.snapshot();
    assert_eq!(snap.requests[0].paused_by.as_deref(), Some("ana"));
    assert!(posts(&h.advance_to(600_000)).is_empty());
    let fx = h.step(Input::Resume {
        request_id: "que_1".into(),
        hints: Hints::none(),
    });
    assert_eq!(armed(&fx), vec![(timer_of(h.state("que_1")).0, 630_000)]);
    assert_eq!(h.d.snapshot().requests[0].paused_by, None);
}

#[test]
fn resuming_what_is_not_paused_by_a_person_changes_nothing() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    let before = h.state("que_1");
    assert!(
        h.step(Input::Resume {
            request_id: "que_1".into(),
            hints: Hints::none(),
        })
        .is_empty()
    );
    assert_eq!(h.state("que_1"), before);
    h.step(Input::Disconnected);
    h.step(Input::Resume {
        request_id: "que_1".into(),
        hints: Hints::none(),
    });
    assert_eq!(
        h.state("que_1"),
        RequestState::Paused {
            reason: PauseReason::Unreachable
        }
    );
}

fn restore(h: &mut Harness, id: &str, restored: Restored) -> Vec<Effect> {
    h.step(Input::Restore {
        request: request(id, "ses_1", 1),
        directory: DIR.into(),
        restored,
    })
}

/// A driver just started: settings loaded, not connected yet.
fn restarted() -> Harness {
    let mut h = Harness::disconnected(30_000);
    h.step(Input::SettingsLoaded {
        generation: 0,
        value: Some(true),
    });
    h
}

#[test]
fn a_restored_pause_holds_with_its_actor_and_nothing_fires() {
    let mut h = restarted();
    restore(
        &mut h,
        "que_1",
        Restored {
            deadline_ms: Some(5_000),
            pause: Some((PauseReason::User, Some("ana".into()))),
            submitted: None,
        },
    );
    h.now = 1_000;
    h.step(Input::Connected);
    assert_eq!(
        h.state("que_1"),
        RequestState::Paused {
            reason: PauseReason::User
        }
    );
    assert_eq!(h.d.snapshot().requests[0].paused_by.as_deref(), Some("ana"));
    assert!(posts(&h.advance_to(600_000)).is_empty());
}

#[test]
fn a_restored_deadline_is_kept_while_ahead_and_a_passed_one_gets_a_fresh_window() {
    let mut h = restarted();
    let kept = Restored {
        deadline_ms: Some(20_000),
        ..Restored::default()
    };
    let passed = Restored {
        deadline_ms: Some(500),
        ..Restored::default()
    };
    restore(&mut h, "que_kept", kept);
    restore(&mut h, "que_passed", passed);
    h.now = 1_000;
    h.step(Input::Connected);
    assert_eq!(timer_of(h.state("que_kept")).1, 20_000);
    assert_eq!(timer_of(h.state("que_passed")).1, 31_000);
}

#[test]
fn a_restored_submission_is_a_tombstone_that_upstreams_word_resolves_as_ours() {
    let mut h = restarted();
    let sent = vec![vec!["Redis".to_string()]];
    restore(
        &mut h,
        "que_1",
        Restored {
            submitted: Some((Claimant::Manual, PostKind::Reply, sent.clone())),
            ..Restored::default()
        },
    );
    h.step(Input::Connected);
    let RequestState::Uncertain { claim } = h.state("que_1") else {
        panic!("not a tombstone: {:?}", h.state("que_1"));
    };
    assert_eq!(claim.by, Claimant::Manual);
    assert_eq!(
        h.try_step(manual("que_1", "Memcached")),
        Err(Refusal::Claimed)
    );
    let fx = h.step(Input::Replied {
        request_id: "que_1".into(),
        answers: Some(sent),
    });
    assert_eq!(
        Harness::settles(&fx),
        vec![("que_1".to_string(), Settlement::Ours { claim })]
    );
    assert_eq!(h.word("que_1"), SettledWord::Replied);
}

#[test]
fn an_uncertain_reply_resolves_as_ours_only_when_upstream_reports_what_we_sent() {
    for (reported, ours) in [
        (Some(vec![vec!["Redis".to_string()]]), true),
        (None, true),
        (Some(vec![vec!["Memcached".to_string()]]), false),
    ] {
        let mut h = Harness::ready(true);
        h.ask("que_1", "ses_1", Some(DIR), 1);
        let fx = h.step(manual("que_1", "Redis"));
        let out = h.answer(&fx, Upstream::TimeoutAfterDispatch);
        assert!(out.iter().any(|e| matches!(
            e,
            Effect::Resolved {
                outcome: PostOutcome::Uncertain,
                ..
            }
        )));
        let RequestState::Uncertain { claim } = h.state("que_1") else {
            panic!("not uncertain");
        };
        let fx = h.step(Input::Replied {
            request_id: "que_1".into(),
            answers: reported.clone(),
        });
        let expected = if ours {
            Settlement::Ours { claim }
        } else {
            Settlement::Replied { answers: reported }
        };
        assert_eq!(Harness::settles(&fx), vec![("que_1".to_string(), expected)]);
    }
}

#[test]
fn our_own_echo_settles_the_claim_in_flight_and_wakes_its_waiter_after_the_record() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    let post = h.step(manual("que_1", "Redis"));
    let fx = h.step(Input::Replied {
        request_id: "que_1".into(),
        answers: Some(vec![vec!["Redis".into()]]),
    });
    let settle = fx.iter().position(|e| matches!(e, Effect::Settle { .. }));
    let resolved = fx.iter().position(|e| {
        matches!(
            e,
            Effect::Resolved {
                outcome: PostOutcome::Applied,
                ..
            }
        )
    });
    assert!(settle.is_some() && resolved > settle, "{fx:?}");
    // The POST's own 200, arriving after, changes nothing.
    assert!(h.answer(&post, Upstream::Ok200).is_empty());
}

#[test]
fn a_gone_request_is_inspected_and_recorded_as_what_its_tool_part_says() {
    for (found, expected) in [
        (
            Inspection::Answered {
                answers: Some(vec![vec!["Kafka".into()]]),
            },
            Some(Settlement::Replied {
                answers: Some(vec![vec!["Kafka".into()]]),
            }),
        ),
        (Inspection::Dismissed, Some(Settlement::Rejected)),
        (Inspection::Lost, Some(Settlement::Vanished)),
        (Inspection::Unknown, None),
    ] {
        let mut h = Harness::ready(true);
        h.ask("que_1", "ses_1", Some(DIR), 1);
        let token = h.list_token();
        let fx = h.step(Input::ListResult {
            directory: Some(DIR.into()),
            token,
            result: Ok(vec![]),
        });
        assert!(
            fx.iter().any(
                |e| matches!(e, Effect::Inspect { tool: Some(t), .. } if t.call_id == "call_que_1")
            ),
            "{fx:?}"
        );
        assert_eq!(h.word("que_1"), SettledWord::Gone);
        let fx = h.step(Input::Inspected {
            request_id: "que_1".into(),
            found: found.clone(),
        });
        match expected {
            Some(s) => {
                assert_eq!(Harness::settles(&fx), vec![("que_1".to_string(), s)]);
                assert_ne!(h.word("que_1"), SettledWord::Gone);
            }
            None => {
                assert!(Harness::settles(&fx).is_empty());
                // Asked again after the next successful list of its directory.
                let token = h.list_token();
                let fx = h.step(Input::ListResult {
                    directory: Some(DIR.into()),
                    token,
                    result: Ok(vec![]),
                });
                assert!(fx.iter().any(|e| matches!(e, Effect::Inspect { .. })));
            }
        }
    }
}

#[test]
fn an_uncertain_post_whose_tool_completed_with_our_answers_is_ours() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    let fx = h.step(manual("que_1", "Redis"));
    h.answer(&fx, Upstream::TimeoutAfterDispatch);
    let RequestState::Uncertain { claim } = h.state("que_1") else {
        panic!("not uncertain");
    };
    let token = h.list_token();
    h.step(Input::ListResult {
        directory: Some(DIR.into()),
        token,
        result: Ok(vec![]),
    });
    let fx = h.step(Input::Inspected {
        request_id: "que_1".into(),
        found: Inspection::Answered {
            answers: Some(vec![vec!["Redis".into()]]),
        },
    });
    assert_eq!(
        Harness::settles(&fx),
        vec![("que_1".to_string(), Settlement::Ours { claim })]
    );
}

#[test]
fn a_settled_request_leaves_after_its_retention_and_is_never_revived() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    h.step(Input::Rejected {
        request_id: "que_1".into(),
    });
    h.now = super::super::DEFAULT_SETTLED_RETENTION_MS - 1;
    h.step(Input::Connected);
    assert!(h.d.request("que_1").is_some());
    h.now = super::super::DEFAULT_SETTLED_RETENTION_MS;
    h.step(Input::Connected);
    assert!(h.d.request("que_1").is_none());
    assert!(h.d.snapshot().requests.is_empty());
    // A late list still holding it does not bring it back.
    h.ask("que_1", "ses_1", Some(DIR), 1);
    assert!(h.d.request("que_1").is_none());
}
