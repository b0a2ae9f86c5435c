//! Lists: scoped lists settle only their directory, unscoped lists only discover, failures
//! mark coverage partial and keep state.

use super::*;
use crate::bridge::delegate::{Awaiting, ListError};

fn list(
    h: &mut Harness,
    dir: Option<&str>,
    token: ListToken,
    items: Vec<QuestionRequest>,
) -> Vec<Effect> {
    h.step(Input::ListResult {
        directory: dir.map(str::to_string),
        token,
        result: Ok(items),
    })
}

#[test]
fn a_successful_scoped_list_settles_missing_requests_only_for_that_directory() {
    let mut h = Harness::ready(true);
    h.ask("que_a", "ses_1", Some(DIR), 1);
    h.ask("que_b", "ses_2", Some(OTHER_DIR), 1);
    h.ask("que_c", "ses_3", Some(DIR), 1);
    h.ask("que_keep", "ses_4", Some(DIR), 1);
    h.ask("que_nodir", "ses_5", None, 1);
    // que_c becomes an uncertain tombstone.
    let fx = h.step(Input::Delegate {
        request_id: "que_c".into(),
        hints: Hints::none(),
    });
    h.answer(&fx, Upstream::TimeoutAfterDispatch);
    let (timer_a, _) = timer_of(h.state("que_a"));
    let b_before = h.state("que_b");

    let token = h.list_token();
    let fx = list(
        &mut h,
        Some(DIR),
        token,
        vec![request("que_keep", "ses_4", 1)],
    );
    assert_eq!(cancelled(&fx), vec![timer_a]);
    assert_eq!(h.word("que_a"), SettledWord::Gone);
    assert_eq!(h.word("que_c"), SettledWord::Gone);
    assert!(matches!(h.state("que_keep"), RequestState::Counting { .. }));
    assert_eq!(h.state("que_b"), b_before);
    assert_eq!(
        h.state("que_nodir"),
        RequestState::Waiting {
            awaiting: Awaiting::Directory
        }
    );
    let snap = h.d.snapshot();
    assert_eq!(snap.coverage.successful_directories, vec![DIR.to_string()]);
    assert!(!snap.coverage.partial);
    assert!(!h.d.is_blocking_session("ses_3"));
}

#[test]
fn a_scoped_list_binds_and_arms_a_request_found_there() {
    let mut h = Harness::ready(true);
    let token = h.list_token();
    list(&mut h, None, token, vec![request("que_1", "ses_1", 1)]);
    assert_eq!(
        h.state("que_1"),
        RequestState::Waiting {
            awaiting: Awaiting::Directory
        }
    );
    h.now = 1_000;
    let token = h.list_token();
    let fx = list(&mut h, Some(DIR), token, vec![request("que_1", "ses_1", 1)]);
    assert_eq!(
        armed(&fx).iter().map(|a| a.1).collect::<Vec<_>>(),
        vec![31_000]
    );
    assert_eq!(
        h.d.request("que_1")
            .expect("known")
            .authoritative_directory(),
        Some(DIR)
    );
}

#[test]
fn an_unscoped_list_only_discovers() {
    let mut h = Harness::ready(true);
    h.ask("que_known", "ses_1", Some(DIR), 1);
    let before = h.state("que_known");
    let token = h.list_token();
    let fx = list(&mut h, None, token, vec![request("que_new", "ses_9", 2)]);
    assert_eq!(
        h.state("que_known"),
        before,
        "absent from an unscoped list is not gone"
    );
    assert!(cancelled(&fx).is_empty());
    assert!(armed(&fx).is_empty());
    assert!(fx.contains(&Effect::ResolveSession {
        session_id: "ses_9".into()
    }));
    let new = h.d.request("que_new").expect("discovered");
    assert_eq!(new.directory, None);
    assert_eq!(new.question_count, Some(2));
    assert!(h.d.snapshot().coverage.successful_directories.is_empty());
}

#[test]
fn a_list_failure_marks_coverage_partial_and_keeps_prior_state() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    let token = h.list_token();
    list(&mut h, Some(DIR), token, vec![request("que_1", "ses_1", 1)]);
    let before = h.state("que_1");

    let fx = h.step(Input::ListResult {
        directory: Some(DIR.into()),
        token: h.list_token(),
        result: Err(ListError("connection refused".into())),
    });
    assert!(matches!(fx[..], [Effect::NotifyTip { .. }]));
    assert_eq!(h.state("que_1"), before);
    let snap = h.d.snapshot();
    assert!(snap.coverage.partial);
    assert!(snap.coverage.successful_directories.is_empty());
    assert_eq!(
        posts(&h.advance_to(30_000)).len(),
        1,
        "the timer still runs"
    );

    // The next successful list of that directory restores full coverage.
    let token = h.list_token();
    list(&mut h, Some(DIR), token, vec![request("que_1", "ses_1", 1)]);
    assert!(!h.d.snapshot().coverage.partial);
}

#[test]
fn a_list_issued_before_a_request_was_asked_does_not_settle_it() {
    let mut h = Harness::ready(true);
    let token = h.list_token();
    h.ask("que_late", "ses_1", Some(DIR), 1);
    list(&mut h, Some(DIR), token, vec![]);
    assert!(matches!(h.state("que_late"), RequestState::Counting { .. }));
    let token = h.list_token();
    list(&mut h, Some(DIR), token, vec![]);
    assert_eq!(h.word("que_late"), SettledWord::Gone);
}

#[test]
fn a_request_with_a_post_in_flight_waits_for_its_own_outcome() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 1);
    let fx = h.advance_to(30_000);
    let token = h.list_token();
    list(&mut h, Some(DIR), token, vec![]);
    assert!(matches!(h.state("que_1"), RequestState::Submitting { .. }));
    h.answer(&fx, Upstream::Ok200);
    assert_eq!(h.word("que_1"), SettledWord::Replied);
}
