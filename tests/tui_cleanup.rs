//! The one cleanup (SPEC §6, HUB-1), replayed: each terminal path of the TUI — the
//! silence backstop shrunk to force a stall, an error mid-way, the peer killed, a
//! teardown — driven by the real watcher against a scripted source and fed to the real
//! `update`. Everything held is released exactly once, several paths for one exit are
//! safe, and nothing of the dead connection leaks into the next one.
#![allow(clippy::unwrap_used)]

mod tui_fixtures;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossterm::event::KeyCode;
use oq::domain::readiness::ReadinessGate;
use oq::domain::{Actor, AnswerInput, DeclareInput, ErrorCode, OqError, Role, SessionKind};
use oq::engine::{EngineConfig, ListQuery, LocalEngine, SqliteStore, VerdictInput};
use oq::source::outbox::{Outbox, State};
use oq::source::{Identity, LocalSource, Source};
use oq::tui::cleanup::{ExitReason, Teardown, abort_open_work};
use oq::tui::effect::{Effect, Msg};
use oq::tui::model::{Focus, Model};
use oq::tui::update::update;
use oq::tui::watch::{Watcher, watch_once};
use oq::wire::*;
use tui_fixtures::*;

#[derive(Clone)]
enum Step {
    Rev(i64),
    Fail(OqError),
    Stall,
}

/// A source whose revision follows a script; everything else is refused.
#[derive(Clone)]
struct Scripted(Arc<Mutex<VecDeque<Step>>>);

impl Scripted {
    fn new(steps: Vec<Step>) -> Self {
        Scripted(Arc::new(Mutex::new(steps.into())))
    }
}

fn no<T>() -> Result<T, OqError> {
    Err(OqError::Internal("scripted".into()))
}

impl Source for Scripted {
    fn describe(&self) -> String {
        "scripted".into()
    }
    async fn identity(&self) -> Result<Identity, OqError> {
        no()
    }
    async fn list(&self, _: Option<&str>, _: &ListQuery) -> Result<QuestionList, OqError> {
        no()
    }
    async fn question(&self, _: Option<&str>, _: &str) -> Result<QuestionItem, OqError> {
        no()
    }
    async fn declare(
        &self,
        _: &str,
        _: Option<Role>,
        _: &DeclareInput,
    ) -> Result<QuestionItem, OqError> {
        no()
    }
    async fn answer(
        &self,
        _: Option<&str>,
        _: &str,
        _: &AnswerInput,
    ) -> Result<QuestionItem, OqError> {
        no()
    }
    async fn dismiss(&self, _: Option<&str>, _: &str) -> Result<QuestionItem, OqError> {
        no()
    }
    async fn readiness(&self, _: &str, _: Option<ReadinessGate>) -> Result<Readiness, OqError> {
        no()
    }
    async fn verdict(
        &self,
        _: &str,
        _: Option<Role>,
        _: &str,
        _: &VerdictInput,
    ) -> Result<VerdictReply, OqError> {
        no()
    }
    async fn waiting(&self, _: Option<&str>) -> Result<Vec<WaitingItem>, OqError> {
        no()
    }
    async fn dev_context(&self, _: &str, _: &str) -> Result<DevContext, OqError> {
        no()
    }
    async fn start_session(
        &self,
        _: &str,
        _: SessionKind,
        _: Option<&str>,
    ) -> Result<SessionItem, OqError> {
        no()
    }
    async fn default_session(&self, _: &str) -> Result<Option<String>, OqError> {
        Ok(None)
    }
    async fn revision(&self, _: Option<&str>) -> Result<i64, OqError> {
        let step = self.0.lock().unwrap().pop_front().unwrap_or(Step::Stall);
        match step {
            Step::Rev(r) => Ok(r),
            Step::Fail(e) => Err(e),
            Step::Stall => std::future::pending().await,
        }
    }
}

const BACKSTOP: Duration = Duration::from_millis(20);

/// A connection holding everything at once: a typed draft, an answer in flight (its
/// claim and spinner), and a counts reply out that could ring the bell.
fn busy() -> Model {
    let mut m = loaded("dev-a", sample("dev-a"));
    update(&mut m, ch('i'));
    typed(&mut m, "half a thought");
    let fx = update(&mut m, key(KeyCode::Enter));
    assert!(matches!(fx.as_slice(), [Effect::Submit { .. }]));
    // A change arrives: the list and the counts go out.
    update(
        &mut m,
        Msg::Revision {
            now: NOW,
            revision: Ok(2),
        },
    );
    assert!(m.in_flight.is_some() && m.counts_in_flight);
    assert_eq!(
        m.form.as_ref().map(|f| f.value()).as_deref(),
        Some("half a thought")
    );
    m
}

/// Runs the scripted watcher until it reports something other than a live revision.
async fn replay(source: &Scripted, m: &mut Model) -> Vec<Effect> {
    let mut all = Vec::new();
    for _ in 0..10 {
        let msgs = watch_once(source, None, BACKSTOP).await;
        let ended = msgs.iter().any(|m| {
            matches!(
                m,
                Msg::End(_)
                    | Msg::Revision {
                        revision: Err(_),
                        ..
                    }
            )
        });
        for msg in msgs {
            all.extend(update(m, msg));
        }
        if ended {
            return all;
        }
    }
    panic!("the script never ended the connection");
}

fn count(fx: &[Effect], pred: impl Fn(&Effect) -> bool) -> usize {
    fx.iter().filter(|e| pred(e)).count()
}

/// Everything released exactly once; a second path for the same exit releases nothing.
fn assert_released_once(m: &mut Model, fx: &[Effect]) {
    assert_eq!(count(fx, |e| matches!(e, Effect::StopWatcher)), 1, "{fx:?}");
    let reconciled: Vec<_> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::Reconcile {
                key, question_id, ..
            } => Some((key.clone(), question_id.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(reconciled, vec![("tui-1".to_string(), "q-1".to_string())]);
    // The draft stays on disk until the answer is known delivered (saved as typed).
    assert_eq!(
        m.drafts.get("q-1").map(String::as_str),
        Some("half a thought")
    );
    assert!(m.in_flight.is_none() && !m.counts_in_flight);
    assert!(m.form.is_none(), "the stale form is reset");
    assert_ne!(m.focus, Focus::Answer);
    assert!(!m.quit, "a lost connection does not end the session");
    for again in [
        ExitReason::Errored("again".into()),
        ExitReason::PeerDied("again".into()),
        ExitReason::Stalled,
    ] {
        assert!(
            abort_open_work(m, &again).is_empty(),
            "{again:?} released twice"
        );
    }
}

/// The next connection: nothing of the dead one leaks in.
fn assert_next_connection_is_clean(m: &mut Model) {
    let stale_counts = m.counts_generation - 1;
    let fx = update(
        m,
        Msg::Counts {
            id: stale_counts,
            open: Ok(99),
            waiting: Ok(vec![]),
            newest: vec![question("q-99", "dev-a", "dev-a", "Late?", None, 0)],
        },
    );
    assert!(
        fx.is_empty(),
        "the dead connection's notification rang: {fx:?}"
    );
    let fx = update(
        m,
        Msg::Revision {
            now: NOW + 1,
            revision: Ok(3),
        },
    );
    assert!(fx.contains(&Effect::FlushOutbox), "{fx:?}");
    assert!(m.attached);
    let id = m.queue.generation;
    update(
        m,
        Msg::Loaded {
            id,
            append: false,
            page: Ok(QuestionList {
                items: sample("dev-a"),
                total: 4,
                total_is_lower_bound: false,
                snoozed: 0,
                snoozed_next_return: None,
                cursor: None,
            }),
        },
    );
    // The form is rebuilt from the saved draft; no spinner, no "sending…".
    let form = m.form.as_ref().unwrap();
    assert_eq!(form.value(), "half a thought");
    assert!(m.in_flight.is_none());
    assert!(
        !m.notice
            .as_ref()
            .is_some_and(|n| n.text.contains("sending"))
    );
}

#[tokio::test]
async fn a_stall_past_the_backstop_releases_everything_once() {
    let mut m = busy();
    let source = Scripted::new(vec![Step::Rev(2), Step::Stall]);
    let fx = replay(&source, &mut m).await;
    assert_released_once(&mut m, &fx);
    assert!(m.notice.as_ref().unwrap().text.contains("silent"));
    assert_next_connection_is_clean(&mut m);
}

#[tokio::test]
async fn an_error_mid_way_releases_everything_once() {
    let bad = OqError::Source {
        code: ErrorCode::Unauthorized,
        message: "the token was refused".into(),
    };
    let mut m = busy();
    let source = Scripted::new(vec![Step::Rev(2), Step::Rev(2), Step::Fail(bad)]);
    let fx = replay(&source, &mut m).await;
    assert_released_once(&mut m, &fx);
    assert_next_connection_is_clean(&mut m);
}

#[tokio::test]
async fn the_peer_killed_fires_two_paths_and_releases_once() {
    let dead = OqError::Source {
        code: ErrorCode::Unreachable,
        message: "connection refused".into(),
    };
    let mut m = busy();
    let source = Scripted::new(vec![Step::Rev(2), Step::Fail(dead)]);
    // PeerDied AND the failed revision both reach the cleanup.
    let fx = replay(&source, &mut m).await;
    assert_released_once(&mut m, &fx);
    assert_next_connection_is_clean(&mut m);
}

#[test]
fn teardown_releases_everything_and_the_final_pass_nothing() {
    for how in [
        Teardown::Quit,
        Teardown::Signal,
        Teardown::TtyGone,
        Teardown::Panic,
    ] {
        let mut m = busy();
        let fx = update(&mut m, Msg::End(ExitReason::Teardown(how)));
        assert_eq!(count(&fx, |e| matches!(e, Effect::Quit)), 1);
        assert_eq!(count(&fx, |e| matches!(e, Effect::Reconcile { .. })), 1);
        assert_eq!(count(&fx, |e| matches!(e, Effect::StopWatcher)), 1);
        assert!(m.quit);
        // The driver's pass after the loop, and a signal racing the quit key.
        assert!(update(&mut m, Msg::End(ExitReason::Teardown(Teardown::Panic))).is_empty());
        assert!(update(&mut m, Msg::Quit).is_empty());
    }
}

#[test]
fn a_stall_then_a_teardown_hands_over_once() {
    let mut m = busy();
    let first = update(&mut m, Msg::End(ExitReason::Stalled));
    let then = update(&mut m, Msg::End(ExitReason::Teardown(Teardown::Signal)));
    assert_eq!(count(&first, |e| matches!(e, Effect::Reconcile { .. })), 1);
    assert_eq!(then, vec![Effect::Quit]);
}

#[tokio::test]
async fn a_stopped_watcher_never_delivers_its_reply() {
    let source = Scripted::new(vec![Step::Stall]);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let w = Watcher::default();
    w.poll(&source, None, Duration::from_secs(3600), &tx);
    drop(tx);
    w.stop();
    w.stop();
    // The aborted task dropped its sender without sending: the channel just closes.
    assert!(rx.recv().await.is_none());
}

/// The handed-over submission had in fact landed before the connection died: the next
/// start delivers it again under its key and it is applied once.
#[tokio::test(flavor = "multi_thread")]
async fn a_reconciled_answer_that_had_landed_is_applied_once() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(LocalEngine::new(
        SqliteStore::open_in(dir.path()).unwrap(),
        EngineConfig::default(),
    ));
    let dev = Actor::person("dev-a");
    engine
        .start_session(&dev, "p", SessionKind::Conversation, Some("s"))
        .unwrap();
    let q = engine
        .declare(
            &Actor::agent(Role::Po),
            "p",
            &DeclareInput {
                pergunta: "Q?".into(),
                session_id: "s".into(),
                ..Default::default()
            },
        )
        .unwrap();
    let source = LocalSource::new(Arc::clone(&engine), "dev-a");
    let input = AnswerInput::text("yes");
    source
        .answer_once(Some("p"), &q.question_id, &input, "tui-nonce-1")
        .await
        .unwrap();
    let rev = engine.revision().unwrap();
    let outbox = Outbox::open(dir.path()).unwrap();
    outbox
        .enqueue("tui-nonce-1", "local", Some("p"), &q.question_id, &input)
        .unwrap();
    let report = outbox.deliver_all(&source, "local").await.unwrap();
    assert_eq!(report.delivered, vec!["tui-nonce-1".to_string()]);
    assert_eq!(
        engine.revision().unwrap(),
        rev,
        "delivered again, applied once"
    );
    assert_eq!(
        outbox.get("tui-nonce-1").unwrap().unwrap().state,
        State::Delivered
    );
}
