//! The auto-delegate countdown in the TUI (issue 5, item 3): `update` tables asserting
//! the state AND the effects on a fixed clock, whole screens of a bridged question
//! counting down, and `HttpSource`'s auto-delegate calls against a tiny axum server
//! serving canned bodies in the shape of `src/server/routes/delegate.rs`.
#![allow(clippy::unwrap_used)]

mod tui_fixtures;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use crossterm::event::KeyCode;
use oq::domain::OqError;
use oq::domain::delegation::PauseReason;
use oq::engine::{ListQuery, SnoozeFilter, StatusFilter};
use oq::source::{HttpSource, Source};
use oq::tui::auto::{AutoAction, line};
use oq::tui::effect::{Effect, Msg};
use oq::tui::model::{Focus, Model, NoticeKind};
use oq::tui::theme::Theme;
use oq::tui::update::update;
use oq::wire::{
    AutoCommand, AutoDelegate, AutoRequest, AutoState, BridgeHealth, QuestionItem, Upstream,
};
use serde_json::{Value, json};
use tui_fixtures::*;

const BRIDGED: &str = "que_oc_1";
const OTHERS: &str = "que_oc_2";

/// An OpenCode question imported by the bridge (its id is OpenCode's request id).
fn bridged(id: &str, author: &str, me: &str, pergunta: &str) -> QuestionItem {
    let mut q = question(id, author, me, pergunta, None, 1);
    q.source = "opencode".into();
    q.autor = "build".into();
    q.session_id = "oc-ses_7".into();
    q.afeta = Default::default();
    q.upstream = Some(Upstream {
        kind: "opencode".into(),
        name: "laptop".into(),
        directory: "/src/loja".into(),
        request_id: id.into(),
        session_id: "ses_7".into(),
        call_id: None,
    });
    q
}

fn counting(left_ms: i64) -> AutoRequest {
    AutoRequest {
        state: AutoState::Counting,
        deadline_unix_ms: Some(NOW + left_ms),
        pause_reason: None,
        paused_by: None,
        enabled: true,
    }
}

fn view(entries: &[(&str, AutoRequest)]) -> AutoDelegate {
    AutoDelegate {
        enabled: true,
        bridges: Vec::new(),
        requests: entries
            .iter()
            .map(|(id, r)| ((*id).to_string(), r.clone()))
            .collect::<BTreeMap<_, _>>(),
    }
}

/// "dev-a" sees their own bridged question first, then someone else's, then the sample.
fn model_with(auto: Option<AutoDelegate>) -> Model {
    let mut items = vec![
        bridged(
            BRIDGED,
            "dev-a",
            "dev-a",
            "Which database should the integration tests run against?",
        ),
        bridged(
            OTHERS,
            "ana",
            "dev-a",
            "May I delete the generated fixtures?",
        ),
    ];
    items.extend(sample("dev-a"));
    let mut m = loaded("dev-a", items);
    let id = m.queue.generation;
    update(&mut m, Msg::AutoDelegate { id, view: Ok(auto) });
    // `p` and `d` act at once here: their confirmation is `tui_confirm.rs`'s.
    m.behaviour.confirm = false;
    m.dirty = false;
    m
}

fn counting_model() -> Model {
    model_with(Some(view(&[
        (BRIDGED, counting(23_000)),
        (OTHERS, counting(9_000)),
    ])))
}

fn shown(m: &Model) -> Option<String> {
    m.current().and_then(|q| line(m, q)).map(|l| l.full())
}

fn notice(m: &Model) -> (String, Option<NoticeKind>) {
    m.notice.as_ref().map_or((String::new(), None), |n| {
        (n.text.clone(), Some(n.kind.clone()))
    })
}

fn with_state(state: AutoState, reason: Option<&str>) -> Model {
    model_with(Some(view(&[(
        BRIDGED,
        AutoRequest {
            state,
            deadline_unix_ms: None,
            pause_reason: reason.map(Into::into),
            paused_by: None,
            enabled: state != AutoState::Disabled,
        },
    )])))
}

// ---- the text ----------------------------------------------------------------------

#[test]
fn the_countdown_reads_from_the_fixed_clock() {
    let m = counting_model();
    assert_eq!(m.current().unwrap().question_id, BRIDGED);
    assert_eq!(
        shown(&m).as_deref(),
        Some("auto-answers in 23 s — p pause · d delegate now")
    );
    assert!(m.countdown_on_screen());
    // A part of a second left shows as the whole second.
    let m = model_with(Some(view(&[(BRIDGED, counting(22_001))])));
    assert_eq!(
        shown(&m).as_deref(),
        Some("auto-answers in 23 s — p pause · d delegate now")
    );
}

#[test]
fn every_state_has_its_words() {
    let cases = [
        (
            AutoState::Paused,
            Some("user"),
            "auto-answer paused (user) — d delegate now",
        ),
        (AutoState::Submitting, None, "submitting…"),
        (
            AutoState::Uncertain,
            None,
            "uncertain: upstream may already have an answer — it will not be sent again",
        ),
        (
            AutoState::Disabled,
            None,
            "auto-answer off — d delegate now",
        ),
    ];
    for (state, reason, want) in cases {
        let m = with_state(state, reason);
        assert_eq!(shown(&m).as_deref(), Some(want), "{state:?}");
        assert!(!m.countdown_on_screen(), "{state:?} does not tick");
    }
    // Settled: nothing to say; the question leaves the queue on the next reload.
    assert_eq!(shown(&with_state(AutoState::Settled, None)), None);
}

#[test]
fn a_bridged_question_the_snapshot_misses_reads_off_when_the_feature_is_off() {
    let mut v = view(&[]);
    v.enabled = false;
    let m = model_with(Some(v));
    assert_eq!(
        shown(&m).as_deref(),
        Some("auto-answer off — d delegate now")
    );
}

#[test]
fn without_a_bridge_there_is_no_line_and_no_tick() {
    let mut m = model_with(None);
    assert_eq!(shown(&m), None);
    assert!(!m.countdown_on_screen());
    // A local question never shows one either.
    let mut local = counting_model();
    update(&mut local, ch('j'));
    update(&mut local, ch('j'));
    assert_eq!(local.current().unwrap().question_id, "q-1");
    assert_eq!(shown(&local), None);
    // And the keys say why.
    let fx = update(&mut m, ch('p'));
    assert!(fx.is_empty());
    assert_eq!(
        notice(&m),
        (
            "this question has no auto-answer (only open questions of an OpenCode bridge do)"
                .into(),
            Some(NoticeKind::Error)
        )
    );
}

// ---- the clock ---------------------------------------------------------------------

#[test]
fn the_tick_redraws_only_when_the_shown_second_changes() {
    let mut m = counting_model();
    assert!(update(&mut m, Msg::Tick { now: NOW + 400 }).is_empty());
    assert!(!m.dirty, "still 23 s");
    assert!(update(&mut m, Msg::Tick { now: NOW + 1_000 }).is_empty());
    assert!(m.dirty);
    assert_eq!(
        shown(&m).as_deref(),
        Some("auto-answers in 22 s — p pause · d delegate now")
    );
    m.dirty = false;
    // The revision poll moves the clock too, by the same rule.
    update(
        &mut m,
        Msg::Revision {
            now: NOW + 2_000,
            revision: Ok(1),
        },
    );
    assert!(m.dirty);
    assert_eq!(m.now, NOW + 2_000);
    m.dirty = false;
    update(&mut m, Msg::Tick { now: NOW + 23_500 });
    assert!(m.dirty);
    assert_eq!(
        shown(&m).as_deref(),
        Some("auto-answering now — p pause · d delegate now")
    );
}

// ---- the keys ----------------------------------------------------------------------

#[test]
fn p_and_d_send_their_effect_for_the_author() {
    let mut m = counting_model();
    let fx = update(&mut m, ch('p'));
    assert_eq!(
        fx,
        vec![Effect::PauseAuto {
            question_id: BRIDGED.into(),
            reason: PauseReason::User,
        }]
    );
    assert_eq!(m.auto.pending, Some((BRIDGED.into(), AutoAction::Pause)));
    assert_eq!(notice(&m).0, "pausing the auto-answer…");
    assert!(update(&mut m, ch('d')).is_empty(), "one command at a time");

    let mut m = counting_model();
    let fx = update(&mut m, ch('d'));
    assert_eq!(
        fx,
        vec![Effect::DelegateNow {
            question_id: BRIDGED.into()
        }]
    );
    assert_eq!(m.auto.pending, Some((BRIDGED.into(), AutoAction::Delegate)));
}

#[test]
fn others_see_the_keys_inert() {
    let mut m = counting_model();
    update(&mut m, ch('j'));
    assert_eq!(m.current().unwrap().question_id, OTHERS);
    assert_eq!(
        shown(&m).as_deref(),
        Some("auto-answers in 9 s — p pause · d delegate now")
    );
    for k in ['p', 'd'] {
        let fx = update(&mut m, ch(k));
        assert!(fx.is_empty(), "{fx:?}");
        assert_eq!(
            notice(&m),
            (
                "only the person who started this session, ana, can answer".into(),
                Some(NoticeKind::Error)
            )
        );
        assert!(m.auto.pending.is_none());
    }
}

#[test]
fn p_and_d_are_text_while_typing() {
    let mut m = counting_model();
    update(&mut m, ch('i'));
    assert_eq!(m.focus, Focus::Answer);
    let fx = update(&mut m, ch('p'));
    assert_eq!(
        fx,
        vec![Effect::SaveDraft {
            question_id: BRIDGED.into(),
            text: "p".into()
        }]
    );
    let fx = update(&mut m, ch('d'));
    assert_eq!(
        fx,
        vec![Effect::SaveDraft {
            question_id: BRIDGED.into(),
            text: "pd".into()
        }]
    );
    assert!(m.auto.pending.is_none());
    // The search line too.
    update(&mut m, key(KeyCode::Esc));
    update(&mut m, ch('/'));
    assert_eq!(m.focus, Focus::Search);
    // Search keys ask the source for the list again, and do nothing else.
    for c in ['p', 'd'] {
        let fx = update(&mut m, ch(c));
        assert!(
            fx.iter()
                .all(|e| matches!(e, Effect::Load { .. } | Effect::LoadCounts { .. })),
            "{fx:?}"
        );
    }
    assert_eq!(m.search, "pd");
    assert!(m.auto.pending.is_none());
}

#[test]
fn a_state_that_cannot_take_the_command_says_so() {
    let mut m = with_state(AutoState::Paused, Some("user"));
    assert!(update(&mut m, ch('p')).is_empty());
    assert_eq!(
        notice(&m),
        (
            "cannot pause: the auto-answer is paused".into(),
            Some(NoticeKind::Error)
        )
    );
    // Delegating a paused one is fine; so is delegating with the feature off.
    assert_eq!(update(&mut m, ch('d')).len(), 1);
    let mut m = with_state(AutoState::Disabled, None);
    assert_eq!(update(&mut m, ch('d')).len(), 1);
    // Never once the post is out.
    let mut m = with_state(AutoState::Uncertain, None);
    assert!(update(&mut m, ch('d')).is_empty());
    assert_eq!(
        notice(&m).0,
        "cannot delegate: the auto-answer is uncertain"
    );
}

// ---- the replies -------------------------------------------------------------------

#[test]
fn a_stale_auto_delegate_reply_is_dropped() {
    let mut m = counting_model();
    let before = m.auto.view.clone();
    let stale = m.queue.generation;
    // A reload goes out (a new revision): the reply of the previous one is stale.
    let fx = update(
        &mut m,
        Msg::Revision {
            now: NOW,
            revision: Ok(2),
        },
    );
    let fresh = m.queue.generation;
    assert!(fx.contains(&Effect::Load {
        id: fresh,
        query: ListQuery::new(StatusFilter::Open).snoozed(SnoozeFilter::Hide),
        pages: 1
    }));
    let fx = update(
        &mut m,
        Msg::AutoDelegate {
            id: stale,
            view: Ok(Some(view(&[(BRIDGED, counting(1_000))]))),
        },
    );
    assert!(fx.is_empty());
    assert_eq!(m.auto.view, before);
    // The fresh one applies.
    let paused = view(&[(
        BRIDGED,
        AutoRequest {
            state: AutoState::Paused,
            deadline_unix_ms: None,
            pause_reason: Some("interaction".into()),
            paused_by: None,
            enabled: true,
        },
    )]);
    let fx = update(
        &mut m,
        Msg::AutoDelegate {
            id: fresh,
            view: Ok(Some(paused.clone())),
        },
    );
    assert!(fx.is_empty());
    assert!(m.dirty);
    assert_eq!(m.auto.view, Some(paused));
    assert_eq!(
        shown(&m).as_deref(),
        Some("auto-answer paused while its author answers — d delegate now")
    );
    // A failed read keeps what was known.
    update(
        &mut m,
        Msg::AutoDelegate {
            id: fresh,
            view: Err("cannot reach".into()),
        },
    );
    assert!(m.auto.view.is_some());
}

#[test]
fn a_refusal_is_shown_and_nothing_reloads() {
    let mut m = counting_model();
    update(&mut m, ch('d'));
    let fx = update(
        &mut m,
        Msg::AutoCommanded {
            question_id: BRIDGED.into(),
            action: AutoAction::Delegate,
            result: Err(
                "question_submission_claimed: request que_oc_1 is already being submitted".into(),
            ),
        },
    );
    assert!(fx.is_empty());
    assert!(m.auto.pending.is_none());
    assert_eq!(
        notice(&m),
        (
            "delegate refused: question_submission_claimed: request que_oc_1 is already being submitted"
                .into(),
            Some(NoticeKind::Error)
        )
    );
}

#[test]
fn an_accepted_command_is_reported_and_reloads_the_queue() {
    let mut m = counting_model();
    update(&mut m, ch('p'));
    let fx = update(
        &mut m,
        Msg::AutoCommanded {
            question_id: BRIDGED.into(),
            action: AutoAction::Pause,
            result: Ok(AutoCommand {
                recovering: false,
                state: Some(AutoState::Paused),
            }),
        },
    );
    let id = m.queue.generation;
    assert_eq!(
        fx,
        vec![
            Effect::Load {
                id,
                query: ListQuery::new(StatusFilter::Open).snoozed(SnoozeFilter::Hide),
                pages: 1
            },
            Effect::LoadCounts {
                id: m.counts_generation
            }
        ]
    );
    assert!(m.auto.pending.is_none());
    assert_eq!(
        notice(&m),
        (
            format!("auto-answer paused for {BRIDGED}"),
            Some(NoticeKind::Info)
        )
    );
}

// ---- the author's interaction pauses the countdown (issue 13, item 4) -------------

fn interaction_pause() -> Effect {
    Effect::PauseAuto {
        question_id: BRIDGED.into(),
        reason: PauseReason::Interaction,
    }
}

fn resume() -> Effect {
    Effect::ResumeAuto {
        question_id: BRIDGED.into(),
    }
}

fn paused_for_interaction(m: &mut Model) {
    let id = m.queue.generation;
    let mut r = counting(0);
    r.state = AutoState::Paused;
    r.deadline_unix_ms = None;
    r.pause_reason = Some("interaction".into());
    r.paused_by = Some("dev-a".into());
    update(
        m,
        Msg::AutoDelegate {
            id,
            view: Ok(Some(view(&[(BRIDGED, r)]))),
        },
    );
}

/// However the session ends with the field open over its own interaction pause, the
/// last cleanup lifts the pause: it would otherwise hold the countdown on the server
/// after the person who was answering has gone.
#[test]
fn ending_the_session_with_the_field_open_resumes_the_countdown() {
    use oq::tui::cleanup::{ExitReason, Teardown};
    for how in [
        Teardown::Quit,
        Teardown::Signal,
        Teardown::TtyGone,
        Teardown::Panic,
    ] {
        let mut m = counting_model();
        update(&mut m, ch('i'));
        paused_for_interaction(&mut m);
        update(&mut m, ch('x'));
        let fx = update(&mut m, Msg::End(ExitReason::Teardown(how)));
        assert!(fx.contains(&resume()), "{how:?}: {fx:?}");
    }
}

#[test]
fn opening_the_field_pauses_at_once_and_leaving_it_resumes() {
    let mut m = counting_model();
    let fx = update(&mut m, ch('i'));
    assert_eq!(m.focus, Focus::Answer);
    // No confirmation: the pause records no decision, only itself and its actor.
    assert_eq!(fx, vec![interaction_pause()]);
    assert!(m.modal.is_none() && m.auto.pending.is_none());
    assert_eq!(
        shown(&m).as_deref(),
        Some("auto-answer pausing while you answer… — p pause · d delegate now")
    );
    // The reply is quiet (the author is typing) and reloads; then the view says paused.
    let fx = update(
        &mut m,
        Msg::AutoCommanded {
            question_id: BRIDGED.into(),
            action: AutoAction::Interaction,
            result: Ok(AutoCommand {
                recovering: false,
                state: Some(AutoState::Paused),
            }),
        },
    );
    assert!(
        fx.iter().any(|e| matches!(e, Effect::Load { .. })),
        "{fx:?}"
    );
    assert!(m.notice.is_none(), "{:?}", m.notice);
    paused_for_interaction(&mut m);
    assert_eq!(
        shown(&m).as_deref(),
        Some(
            "auto-answer paused while you answer (Esc resumes it, sending settles it) — d delegate now"
        )
    );
    assert!(!m.countdown_on_screen());
    // Typing sends nothing more; leaving without an answer resumes, once.
    let fx = update(&mut m, ch('x'));
    assert!(
        fx.iter().all(|e| matches!(e, Effect::SaveDraft { .. })),
        "{fx:?}"
    );
    let fx = update(&mut m, key(KeyCode::Esc));
    assert_eq!(fx, vec![resume()]);
    assert_eq!(m.auto.interaction, None);
    assert!(update(&mut m, key(KeyCode::Esc)).is_empty());
    // Opening it again over its own pause does not pause twice, and still resumes.
    assert!(update(&mut m, ch('i')).is_empty());
    assert_eq!(update(&mut m, key(KeyCode::Esc)), vec![resume()]);
}

#[test]
fn sending_the_answer_settles_it_and_resumes_nothing() {
    let mut m = counting_model();
    update(&mut m, ch('i'));
    for c in "sqlite".chars() {
        update(&mut m, ch(c));
    }
    let fx = update(&mut m, key(KeyCode::Enter));
    let Some(&Effect::Submit { id, .. }) = fx.iter().find(|e| matches!(e, Effect::Submit { .. }))
    else {
        panic!("{fx:?}")
    };
    assert!(!fx.contains(&resume()), "{fx:?}");
    let mut answered = m.current().unwrap().clone();
    answered.status = "answered".into();
    let fx = update(
        &mut m,
        Msg::Answered {
            id,
            question_id: BRIDGED.into(),
            result: Ok(Box::new(answered)),
        },
    );
    assert!(!fx.contains(&resume()), "{fx:?}");
    assert_eq!(m.focus, Focus::Queue);
    assert_eq!(m.auto.interaction, None);
}

#[test]
fn no_interaction_pause_where_there_is_nothing_to_pause_or_it_is_not_theirs() {
    // Someone else's question: the field does not open, nothing is sent.
    let mut m = counting_model();
    update(&mut m, ch('j'));
    assert!(!update(&mut m, ch('i')).contains(&interaction_pause()));
    // Paused by the person already: opening the field neither pauses nor, on leaving,
    // lifts their pause.
    let mut m = with_state(AutoState::Paused, Some("user"));
    assert!(update(&mut m, ch('i')).is_empty());
    assert_eq!(m.focus, Focus::Answer);
    assert!(update(&mut m, key(KeyCode::Esc)).is_empty());
    // The pause was refused: leaving has nothing to resume, and the refusal is shown.
    let mut m = counting_model();
    update(&mut m, ch('i'));
    update(
        &mut m,
        Msg::AutoCommanded {
            question_id: BRIDGED.into(),
            action: AutoAction::Interaction,
            result: Err("upstream_unreachable: OpenCode cannot be reached".into()),
        },
    );
    assert_eq!(
        notice(&m),
        (
            "the countdown was not paused while you answer: upstream_unreachable: OpenCode cannot be reached".into(),
            Some(NoticeKind::Error)
        )
    );
    assert!(update(&mut m, key(KeyCode::Esc)).is_empty());
}

// ---- the bridge's health (issue 13, item 6) ------------------------------------------

/// 11:57 UTC on the fixtures' day (NOW is 12:00).
const LOST_AT: i64 = NOW - 3 * 60_000;

fn disconnected(entries: &[(&str, AutoRequest)]) -> Model {
    let mut v = view(entries);
    v.bridges = vec![BridgeHealth {
        name: "laptop".into(),
        connected: false,
        since_unix_ms: LOST_AT,
        driven_elsewhere: false,
    }];
    model_with(Some(v))
}

#[test]
fn a_lost_upstream_is_named_on_the_status_line_and_its_countdown_reads_paused() {
    let mut unreachable = counting(0);
    unreachable.state = AutoState::Paused;
    unreachable.deadline_unix_ms = None;
    unreachable.pause_reason = Some("unreachable".into());
    // A snapshot from before the bridge paused it: counting, its deadline past.
    let m = disconnected(&[(BRIDGED, unreachable), (OTHERS, counting(-5_000))]);
    assert_eq!(
        shown(&m).as_deref(),
        Some("paused: OpenCode laptop unreachable — d delegate now")
    );
    let mut other = m.clone();
    update(&mut other, ch('j'));
    assert_eq!(
        shown(&other).as_deref(),
        Some("paused: OpenCode laptop unreachable — p pause · d delegate now")
    );
    let theme = Theme::embedded("dark").unwrap();
    let screen = text(&render(&m, &theme, 120, 40));
    assert!(
        screen.contains("OpenCode laptop unreachable since 11:57 UTC"),
        "{screen}"
    );
    insta::assert_snapshot!("bridged_upstream_unreachable_120x40", screen);
    // Connected again: the status line is plain and the countdown is back.
    let m = model_with(Some(view(&[(BRIDGED, counting(23_000))])));
    let screen = text(&render(&m, &theme, 120, 40));
    assert!(!screen.contains("unreachable"), "{screen}");
    assert_eq!(
        shown(&m).as_deref(),
        Some("auto-answers in 23 s — p pause · d delegate now")
    );
}

// ---- the screen --------------------------------------------------------------------

#[test]
fn snapshot_a_bridged_question_counting_down() {
    let m = counting_model();
    let theme = Theme::embedded("dark").unwrap();
    for (w, h) in [(80, 24), (120, 40)] {
        let screen = text(&render(&m, &theme, w, h));
        assert!(screen.contains("auto-answers in 23 s"), "{screen}");
        insta::assert_snapshot!(format!("bridged_countdown_{w}x{h}"), screen);
    }
}

// ---- HttpSource against a tiny server ----------------------------------------------

type Seen = Arc<Mutex<Vec<(String, Value)>>>;

fn canned_snapshot() -> Value {
    json!({
        "upstreams": [{
            "name": "laptop", "project": "loja", "connected": true,
            "nowMs": 1_000_000, "epoch": 1, "revision": 7, "enabled": true, "windowMs": 30_000,
            "settings": {"state": "ready", "generation": 1},
            "coverage": {"partial": false, "successfulDirectories": ["/src/loja"]},
            "requests": [
                {"requestID": "que_a", "sessionID": "ses_1", "directory": "/src/loja",
                 "directoryAuthoritative": true, "questionCount": 1, "state": "counting",
                 "deadline": 1_023_000, "deadlineUnixMs": 1_767_000_023_000_i64},
                {"requestID": "que_b", "sessionID": "ses_1", "directory": "/src/loja",
                 "directoryAuthoritative": true, "questionCount": 2, "state": "paused",
                 "pauseReason": "user"},
                {"requestID": "que_c", "sessionID": null, "directory": null,
                 "directoryAuthoritative": false, "questionCount": null, "state": "uncertain",
                 "claimant": "auto"},
                {"requestID": "que_d", "state": "some_future_state"}
            ]
        }]
    })
}

async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    format!("http://{addr}")
}

fn bridge_server(seen: Seen) -> Router {
    Router::new()
        .route(
            "/api/question-auto-delegate",
            get(|headers: HeaderMap| async move {
                if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("Bearer tok")
                {
                    return (StatusCode::UNAUTHORIZED, axum::Json(json!({})));
                }
                (StatusCode::OK, axum::Json(canned_snapshot()))
            }),
        )
        .route(
            "/api/question-auto-delegate/requests/{id}/{cmd}",
            post(
                |State(seen): State<Seen>,
                 Path((id, cmd)): Path<(String, String)>,
                 axum::Json(body): axum::Json<Value>| async move {
                    seen.lock().unwrap().push((format!("{cmd} {id}"), body));
                    if id == "que_taken" {
                        return (
                            StatusCode::CONFLICT,
                            axum::Json(json!({
                                "code": "question_submission_claimed",
                                "message": "request que_taken is already being submitted"
                            })),
                        );
                    }
                    let state = if cmd == "pause" {
                        "paused"
                    } else {
                        "submitting"
                    };
                    (
                        StatusCode::OK,
                        axum::Json(json!({
                            "upstream": "laptop", "requestID": id, "recovering": false,
                            "request": {"requestID": id, "state": state}
                        })),
                    )
                },
            ),
        )
        .with_state(seen)
}

#[tokio::test]
async fn http_source_reads_the_snapshot_onto_the_local_clock() {
    let seen = Seen::default();
    let base = serve(bridge_server(seen)).await;
    let src = HttpSource::new(&base, "tok").unwrap();
    let before = oq::engine::sqlite::now_ms();
    let v = src.auto_delegate().await.unwrap().unwrap();
    let after = oq::engine::sqlite::now_ms();
    assert!(v.enabled);
    assert_eq!(
        v.requests.keys().collect::<Vec<_>>(),
        ["que_a", "que_b", "que_c", "que_d"]
    );
    let a = &v.requests["que_a"];
    assert_eq!(a.state, AutoState::Counting);
    // 23 s left by the server's own clock, counted from ours.
    let d = a.deadline_unix_ms.unwrap();
    assert!(d >= before + 23_000 && d <= after + 23_000, "{d}");
    assert_eq!(v.requests["que_b"].state, AutoState::Paused);
    assert_eq!(v.requests["que_b"].pause_reason.as_deref(), Some("user"));
    assert_eq!(v.requests["que_b"].deadline_unix_ms, None);
    assert_eq!(v.requests["que_c"].state, AutoState::Uncertain);
    assert_eq!(v.requests["que_d"].state, AutoState::Unknown);
}

#[tokio::test]
async fn http_source_without_a_bridge_is_none() {
    // The server's own 404 body, and a bare 404 of a server without the route.
    let with_body = Router::new().route(
        "/api/question-auto-delegate",
        get(|| async {
            (
                StatusCode::NOT_FOUND,
                axum::Json(json!({
                    "code": "not_found",
                    "message": "no OpenCode bridge here for this caller"
                })),
            )
        }),
    );
    for router in [with_body, Router::new()] {
        let base = serve(router).await;
        let src = HttpSource::new(&base, "tok").unwrap();
        assert_eq!(src.auto_delegate().await.unwrap(), None);
    }
}

#[tokio::test]
async fn http_source_pauses_delegates_and_keeps_the_refusal_code() {
    let seen = Seen::default();
    let base = serve(bridge_server(seen.clone())).await;
    let src = HttpSource::new(&base, "tok").unwrap();
    let paused = src
        .pause_auto("que_a", oq::domain::delegation::PauseReason::User)
        .await
        .unwrap();
    assert_eq!(
        paused,
        AutoCommand {
            recovering: false,
            state: Some(AutoState::Paused)
        }
    );
    let sent = src.delegate_now("que_a").await.unwrap();
    assert_eq!(sent.state, Some(AutoState::Submitting));
    let refused = src.delegate_now("que_taken").await.unwrap_err();
    assert_eq!(refused.code(), "question_submission_claimed");
    assert!(matches!(refused, OqError::Conflict { .. }));
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            ("pause que_a".to_string(), json!({"reason": "user"})),
            ("delegate que_a".to_string(), json!({})),
            ("delegate que_taken".to_string(), json!({})),
        ]
    );
}

#[tokio::test]
async fn the_local_source_has_no_auto_delegate() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(oq::engine::LocalEngine::new(
        oq::engine::SqliteStore::open_in(dir.path()).unwrap(),
        oq::engine::EngineConfig::default(),
    ));
    let src = oq::source::LocalSource::new(engine, "dev-a");
    assert_eq!(src.auto_delegate().await.unwrap(), None);
    let e = src
        .pause_auto("q-1", oq::domain::delegation::PauseReason::User)
        .await
        .unwrap_err();
    assert_eq!(e.code(), "not_supported");
    let e = src.delegate_now("q-1").await.unwrap_err();
    assert_eq!(e.code(), "not_supported");
}
