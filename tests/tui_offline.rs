//! Offline is a mode, not a dead end (issue 11): the whole TUI (`tests/common/tui_app.rs`)
//! on a real `oq serve` (`tests/serve_process`) that is stopped under it. Answers —
//! typed text and chosen options alike — go to the outbox under their idempotency key,
//! each question shows where its answer stands, and when the server is back every
//! answer lands exactly once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod serve_process;

use std::path::Path;

use common::tui_app::{App, Start};
use crossterm::event::KeyCode;
use oq::domain::choices::{Prompt, PromptOption};
use oq::domain::declared::Origin;
use oq::domain::{Actor, DeclareInput, Role};
use oq::source::outbox::{Entry, Outbox, State};
use oq::source::{HttpSource, ResilientSource};
use serve_process::{DEV, Serve};

/// The remote source as `oq --source http://…` builds it, with its outbox in `client`.
fn remote(s: &Serve, client: &Path) -> ResilientSource<HttpSource> {
    ResilientSource::new(HttpSource::new(&s.base, &s.token).unwrap(), client).unwrap()
}

fn app(s: &Serve, client: &Path) -> App {
    let mut start = Start::new(client, DEV);
    start.project = Some("loja".into());
    App::start_on(remote(s, client), start)
}

/// A question with one part and two options, asked in dev-a's session `s1`.
fn options_question(s: &Serve, text: &str) -> String {
    let prompt = Prompt {
        header: "Provider".into(),
        question: text.into(),
        options: ["Stripe", "Adyen"]
            .map(|l| PromptOption {
                label: l.into(),
                description: String::new(),
            })
            .to_vec(),
        multiple: false,
        custom: false,
    };
    s.engine()
        .declare_from(
            &Actor::agent(Role::Po),
            "loja",
            Origin::Mcp,
            &DeclareInput {
                pergunta: text.into(),
                session_id: "s1".into(),
                ..Default::default()
            },
            &[prompt],
            None,
        )
        .unwrap()
        .question_id
}

fn entries(client: &Path, question_id: &str) -> Vec<Entry> {
    Outbox::open(client)
        .unwrap()
        .list()
        .unwrap()
        .into_iter()
        .filter(|e| e.question_id == question_id)
        .collect()
}

#[test]
fn an_options_answer_offline_is_queued_under_its_key_and_delivered_once() {
    let mut s = Serve::new();
    let _first = s.seed(1);
    let q = options_question(&s, "Which provider first?");
    s.start();
    let client = tempfile::tempdir().unwrap();
    let app = app(&s, client.path());
    app.wait_text("Which provider first?");
    app.ch('j');
    app.wait_text("Stripe");
    s.kill();
    app.wait_for("the source lost", |s| {
        s.contains("reconnecting") || s.contains("offline")
    });
    // Choose "Stripe", review, send: the server is gone.
    app.ch('i');
    app.key(KeyCode::Enter);
    app.wait_text("Review — Enter sends");
    app.key(KeyCode::Enter);
    app.wait_text("queued");
    app.wait_text("outbox 1");
    // Believing it failed, the person sends again: the TUI says it is queued already.
    app.key(KeyCode::Enter);
    app.ch('i');
    app.wait_text("already queued");
    app.key(KeyCode::Enter);
    app.key(KeyCode::Enter);
    let queued = entries(client.path(), &q);
    assert_eq!(queued.len(), 1, "{queued:?}");
    assert_eq!(queued[0].state, State::Pending);
    assert!(!queued[0].key.is_empty());
    assert_eq!(
        queued[0].body.answers,
        Some(vec![vec!["Stripe".to_string()]])
    );
    assert_eq!(s.answered(&q).0, 0);
    // The server is back: the TUI reattaches and delivers it, once.
    s.start();
    app.wait_for("the answer delivered", |_| {
        entries(client.path(), &q)
            .iter()
            .all(|e| e.state == State::Delivered)
    });
    assert_eq!(s.answered(&q).0, 1);
    assert_eq!(entries(client.path(), &q).len(), 1);
}

#[test]
fn an_answer_typed_offline_is_delivered_once_and_its_draft_kept_until_then() {
    let mut s = Serve::new();
    let q = s.seed(1).remove(0);
    s.start();
    let client = tempfile::tempdir().unwrap();
    let app = app(&s, client.path());
    app.wait_text("live");
    app.wait_text("Question 0?");
    s.kill();
    // Offline is a mode: the field says what Enter will do, and takes the answer.
    app.wait_text("offline — Enter queues your answer");
    app.ch('i');
    app.typed("Typed while the server was away");
    app.key(KeyCode::Enter);
    app.wait_text("queued");
    app.wait_text("outbox 1");
    app.wait_text("queued — sent when the source is back");
    let draft = client.path().join("drafts").join(format!("{q}.txt"));
    assert_eq!(
        std::fs::read_to_string(&draft).expect("the draft stays until it is recorded"),
        "Typed while the server was away"
    );
    let queued = entries(client.path(), &q);
    assert_eq!(queued.len(), 1, "{queued:?}");
    assert_eq!(
        queued[0].body.resposta.as_deref(),
        Some("Typed while the server was away")
    );
    // The outbox overlay lists it with the kept text.
    app.ch('O');
    app.wait_text("yours: «Typed while the server was away»");
    app.key(KeyCode::Esc);
    s.start();
    app.wait_text("1 queued answer delivered");
    assert_eq!(
        s.answered(&q),
        (1, Some("Typed while the server was away".to_string()))
    );
    app.wait_for("the draft removed", |_| !draft.exists());
    app.wait_text("outbox 0");
    assert_eq!(entries(client.path(), &q).len(), 1);
    assert_eq!(entries(client.path(), &q)[0].state, State::Delivered);
}
