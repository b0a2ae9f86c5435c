//! The memory of answers on `oq show` (issue 17 part 2), through the built binary, on the
//! local engine and on a real `oq serve`: an open question whose text an answered one of
//! the project had shows that answer, who gave it, when and to what question — in the
//! text and as `similarAnswer` in `--json` — and answers nothing.
#![allow(clippy::unwrap_used)]

mod common;
mod serve_process;

use std::process::{Command, Stdio};

use common::{oq, run};
use oq::domain::{Actor, AnswerInput, DeclareInput, Role, SessionKind};
use oq::engine::LocalEngine;

const PERSON: &str = "dev-a";

/// (the answered question, the open one like it, an open one like nothing).
fn seed(e: &LocalEngine) -> (String, String, String) {
    let me = Actor::person(PERSON);
    e.start_session(&me, "loja", SessionKind::Conversation, Some("s1"))
        .unwrap();
    let declare = |pergunta: &str| {
        let input = DeclareInput {
            pergunta: pergunta.into(),
            session_id: "s1".into(),
            ..Default::default()
        };
        e.declare(&Actor::agent(Role::Po), "loja", &input)
            .unwrap()
            .question_id
    };
    let before = declare("Which carrier ships the returns?");
    e.answer(
        &me,
        Some("loja"),
        &before,
        &AnswerInput::text("Correios, by PAC"),
    )
    .unwrap();
    (
        before,
        declare("which carrier ships the returns"),
        declare("Is the product code case-sensitive?"),
    )
}

fn shows_the_same(
    oq: impl Fn() -> Command,
    events: impl Fn() -> i64,
    s: &(String, String, String),
) {
    let cmd = |args: &[&str]| run(oq().args(args));
    let (before, like, unlike) = s;
    let n = events();
    let text = cmd(&["show", like]);
    assert_eq!(text.code, 0, "{text:?}");
    let line = text
        .stdout
        .lines()
        .find(|l| l.starts_with("similar"))
        .unwrap_or_else(|| panic!("no hint: {text:?}"));
    assert!(
        line.contains(&format!("{PERSON} answered a similar question on "))
            && line.ends_with(": «Correios, by PAC»"),
        "{line}"
    );
    assert!(
        text.stdout.contains(&format!(
            "to «Which carrier ships the returns?» ({before}, 100 %)"
        )),
        "{text:?}"
    );
    let json = cmd(&["--json", "show", like]).json();
    let s = &json["similarAnswer"];
    assert_eq!(s["questionId"], before.as_str(), "{json}");
    assert_eq!(s["resposta"], "Correios, by PAC");
    assert_eq!(s["respondidaPor"], PERSON);
    assert_eq!(s["match"], "same");
    assert_eq!(s["similarity"], 100);
    assert!(s["answeredAt"].as_i64().unwrap() > 0);
    assert_eq!(json["status"], "open", "the hint answers nothing");
    // Nothing like it, nothing shown; an answered question needs no hint.
    let other = cmd(&["--json", "show", unlike]).json();
    assert!(other.get("similarAnswer").is_none(), "{other}");
    assert!(!cmd(&["show", unlike]).stdout.contains("similar"));
    let done = cmd(&["--json", "show", before]).json();
    assert!(done.get("similarAnswer").is_none(), "{done}");
    assert_eq!(events(), n, "showing appends nothing");
}

#[test]
fn show_carries_the_hint_on_the_local_engine() {
    let dir = tempfile::tempdir().unwrap();
    let seeded = seed(&common::engine(dir.path()));
    shows_the_same(
        || oq(dir.path(), PERSON),
        || common::event_count(dir.path()),
        &seeded,
    );
}

#[test]
fn show_carries_the_hint_on_oq_serve() {
    let mut serve = serve_process::Serve::new();
    let seeded = seed(&serve.engine());
    serve.start();
    let client = tempfile::tempdir().unwrap();
    let store = serve.store_dir();
    shows_the_same(
        || {
            let mut c = serve.oq(client.path());
            c.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            c
        },
        || common::event_count(&store),
        &seeded,
    );
}
