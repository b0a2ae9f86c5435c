//! Session linkage: blocking per session tree, takeovers at the root, goal pauses; and the
//! snapshot's wire shape.

use super::*;
use crate::bridge::delegate::PauseReason;

fn parent(h: &mut Harness, child: &str, parent: &str) {
    h.step(Input::SessionParent {
        session_id: child.into(),
        parent_id: parent.into(),
    });
}

#[test]
fn every_unsettled_state_blocks_its_session_and_settled_does_not() {
    let mut h = Harness::loading();
    h.ask("que_w", "ses_w", Some(DIR), 1); // waiting (settings)
    assert!(h.d.is_blocking_session("ses_w"));
    h.step(Input::SettingsLoaded {
        generation: 0,
        value: Some(true),
    });
    h.ask("que_c", "ses_c", Some(DIR), 1); // counting
    h.ask("que_p", "ses_p", Some(DIR), 1);
    h.step(Input::Pause {
        request_id: "que_p".into(),
        reason: PauseReason::Interaction,
        by: None,
        hints: Hints::none(),
    });
    h.ask("que_s", "ses_s", Some(DIR), 1);
    let submitting = h.step(Input::Delegate {
        request_id: "que_s".into(),
        hints: Hints::none(),
    });
    h.ask("que_u", "ses_u", Some(DIR), 1);
    let fx = h.step(Input::Delegate {
        request_id: "que_u".into(),
        hints: Hints::none(),
    });
    h.answer(&fx, Upstream::ServerError500);
    for session in ["ses_w", "ses_c", "ses_p", "ses_s", "ses_u"] {
        assert!(h.d.is_blocking_session(session), "{session}");
    }
    assert!(!h.d.is_blocking_session("ses_unrelated"));

    h.answer(&submitting, Upstream::Ok200);
    assert!(!h.d.is_blocking_session("ses_s"));

    let mut off = Harness::ready(false);
    off.ask("que_d", "ses_d", Some(DIR), 1);
    assert_eq!(off.state("que_d"), RequestState::Disabled);
    assert!(off.d.is_blocking_session("ses_d"));
}

#[test]
fn blocking_walks_subagent_sessions_up_to_the_root() {
    let mut h = Harness::ready(true);
    parent(&mut h, "ses_child", "ses_mid");
    parent(&mut h, "ses_mid", "ses_root");
    parent(&mut h, "ses_sibling", "ses_root");
    h.ask("que_1", "ses_child", Some(DIR), 1);
    assert_eq!(h.d.root_of("ses_child"), "ses_root");
    for session in ["ses_child", "ses_mid", "ses_root", "ses_sibling"] {
        assert!(h.d.is_blocking_session(session), "{session}");
    }
    assert!(!h.d.is_blocking_session("ses_other_root"));
    // A cycle in the lineage does not hang the walk.
    parent(&mut h, "ses_a", "ses_b");
    parent(&mut h, "ses_b", "ses_a");
    assert!(!h.d.is_blocking_session("ses_a"));
}

#[test]
fn a_takeover_names_the_root_session_and_its_directory() {
    let mut h = Harness::ready(true);
    parent(&mut h, "ses_child", "ses_root");
    h.step(Input::SessionDirectoryResolved {
        session_id: "ses_root".into(),
        directory: OTHER_DIR.into(),
    });
    h.ask("que_1", "ses_child", Some(DIR), 1);
    let fx = h.step(Input::ManualReply {
        request_id: "que_1".into(),
        answers: vec![vec!["x".into()]],
        hints: hints(Some("ses_child"), None),
    });
    assert!(fx.contains(&Effect::UserTakeover {
        root_session: "ses_root".into(),
        directory: Some(OTHER_DIR.into()),
    }));
}

#[test]
fn a_goal_pause_pauses_the_timers_of_its_tree_only() {
    let mut h = Harness::ready(true);
    parent(&mut h, "ses_child", "ses_root");
    h.ask("que_root", "ses_root", Some(DIR), 1);
    h.ask("que_child", "ses_child", Some(DIR), 1);
    h.ask("que_user", "ses_child", Some(DIR), 1);
    h.ask("que_other", "ses_other", Some(DIR), 1);
    h.step(Input::Pause {
        request_id: "que_user".into(),
        reason: PauseReason::User,
        by: None,
        hints: Hints::none(),
    });
    let (t_root, _) = timer_of(h.state("que_root"));
    let (t_child, _) = timer_of(h.state("que_child"));
    let other = h.state("que_other");

    let fx = h.step(Input::GoalPaused {
        root_session: "ses_root".into(),
    });
    let mut cancelled = cancelled(&fx);
    cancelled.sort_unstable();
    assert_eq!(cancelled, vec![t_root, t_child]);
    let goal = RequestState::Paused {
        reason: PauseReason::Goal,
    };
    assert_eq!(h.state("que_root"), goal);
    assert_eq!(h.state("que_child"), goal);
    assert_eq!(
        h.state("que_user"),
        RequestState::Paused {
            reason: PauseReason::User
        }
    );
    assert_eq!(h.state("que_other"), other);
    let fx = h.advance_to(30_000);
    assert!(
        matches!(posts(&fx)[..], [Effect::PostReply { request_id, .. }] if request_id == "que_other")
    );
    let snap = h.d.snapshot();
    let root = snap
        .requests
        .iter()
        .find(|r| r.request_id == "que_root")
        .expect("listed");
    assert_eq!(
        (root.state, root.pause_reason),
        (crate::wire::AutoState::Paused, Some(PauseReason::Goal))
    );
}

#[test]
fn the_snapshot_speaks_camel_case() {
    let mut h = Harness::ready(true);
    h.ask("que_1", "ses_1", Some(DIR), 2);
    h.ask("que_2", "ses_2", Some(DIR), 1);
    h.step(Input::Pause {
        request_id: "que_2".into(),
        reason: PauseReason::User,
        by: None,
        hints: Hints::none(),
    });
    h.step(Input::Replied {
        request_id: "que_3".into(),
        answers: None,
    });
    let v = serde_json::to_value(h.d.snapshot()).expect("serialisable");
    assert_eq!(v["epoch"], EPOCH);
    assert_eq!(v["revision"], h.d.revision());
    assert_eq!(v["enabled"], true);
    assert_eq!(v["settings"]["state"], "ready");
    assert_eq!(v["coverage"]["partial"], false);
    assert_eq!(
        v["coverage"]["successfulDirectories"],
        serde_json::json!([])
    );
    let first = &v["requests"][0];
    assert_eq!(first["requestID"], "que_1");
    assert_eq!(first["sessionID"], "ses_1");
    assert_eq!(first["directory"], DIR);
    assert_eq!(first["state"], "counting");
    assert_eq!(first["deadline"], 30_000);
    assert_eq!(first["questionCount"], 2);
    let second = &v["requests"][1];
    assert_eq!(second["state"], "paused");
    assert_eq!(second["pauseReason"], "user");
    assert!(second.get("deadline").is_none());
    assert_eq!(
        v["requests"].as_array().map(Vec::len),
        Some(2),
        "unknown que_3 not invented"
    );
}
