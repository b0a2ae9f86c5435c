//! `oq snooze` / `oq unsnooze` and `oq list --snoozed` through the built binary, on the
//! local engine and on a real `oq serve` (issue 17 part 4): the same replies, the same
//! list, and each bad input refused with the same code and exit, nothing appended.
#![allow(clippy::unwrap_used)]

mod common;
mod serve_process;

use std::path::Path;
use std::process::{Command, Stdio};

use common::{Out, oq, run};
use oq::domain::{Actor, AnswerInput, DeclareInput, Role, SessionKind};
use oq::engine::LocalEngine;

const PERSON: &str = "dev-a";

struct Seeded {
    /// Three open questions of dev-a's session, oldest first.
    mine: [String; 3],
    /// An open question of another person's session.
    theirs: String,
    /// dev-a's question already answered.
    answered: String,
}

fn seed(e: &LocalEngine) -> Seeded {
    let me = Actor::person(PERSON);
    e.start_session(&me, "loja", SessionKind::Conversation, Some("s1"))
        .unwrap();
    e.start_session(
        &Actor::person("dev-b"),
        "loja",
        SessionKind::Conversation,
        Some("s2"),
    )
    .unwrap();
    let declare = |session: &str, pergunta: &str| {
        let input = DeclareInput {
            pergunta: pergunta.into(),
            sugestao: Some("yes".into()),
            session_id: session.into(),
            ..Default::default()
        };
        e.declare(&Actor::agent(Role::Po), "loja", &input)
            .unwrap()
            .question_id
    };
    let mine = [
        declare("s1", "First?"),
        declare("s1", "Second?"),
        declare("s1", "Third?"),
    ];
    let theirs = declare("s2", "Theirs?");
    let answered = declare("s1", "Done?");
    e.answer(&me, Some("loja"), &answered, &AnswerInput::accept())
        .unwrap();
    Seeded {
        mine,
        theirs,
        answered,
    }
}

fn ids(out: &Out) -> Vec<String> {
    assert_eq!(out.code, 0, "{out:?}");
    out.json()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["questionId"].as_str().unwrap().to_string())
        .collect()
}

/// The same checks whatever the source; `events` counts the log's events.
fn snooze_reads_the_same(oq: impl Fn() -> Command, events: impl Fn() -> i64, s: &Seeded) {
    let cmd = |args: &[&str]| run(oq().args(args));
    let [first, second, third] = &s.mine;

    let out = cmd(&["snooze", second, "--for", "2h"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .starts_with(&format!("snoozed {second} until 20")),
        "{out:?}"
    );
    // The default list shows every open question, snoozed or not (agents, scripts).
    let all = cmd(&["--json", "list"]);
    let mut expected = vec![
        first.clone(),
        second.clone(),
        third.clone(),
        s.theirs.clone(),
    ];
    expected.sort();
    let mut got = ids(&all);
    got.sort();
    assert_eq!(got, expected);
    let v = all.json();
    assert_eq!(v["snoozed"], 1, "{v}");
    assert!(v["snoozedNextReturn"].as_i64().is_some(), "{v}");
    let listed = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["questionId"] == second.as_str())
        .unwrap()
        .clone();
    assert_eq!(listed["status"], "open");
    assert_eq!(listed["snooze"]["by"], PERSON);

    // --snoozed: only the snoozed.
    assert_eq!(
        ids(&cmd(&["--json", "list", "--snoozed"])),
        [second.as_str()]
    );
    let text = cmd(&["list", "--snoozed"]);
    assert_eq!(text.code, 0, "{text:?}");
    assert!(text.stdout.contains(second.as_str()), "{text:?}");
    assert!(!text.stdout.contains(first.as_str()), "{text:?}");

    // Unsnooze brings it back; a second unsnooze has nothing to end.
    let out = cmd(&["unsnooze", second]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, format!("unsnoozed {second}\n"));
    assert!(ids(&cmd(&["--json", "list", "--snoozed"])).is_empty());

    let before = events();
    for (args, code, exit) in [
        (
            vec!["snooze", first, "--until", "2001-01-01"],
            "snooze_in_past",
            6,
        ),
        (
            vec!["snooze", first, "--until", "2099-01-01"],
            "snooze_too_far",
            6,
        ),
        (vec!["snooze", first, "--for", "91d"], "snooze_too_far", 6),
        (vec!["snooze", first, "--for", "2x"], "invalid_snooze", 6),
        (
            vec!["snooze", first, "--until", "tomorrow"],
            "invalid_date",
            6,
        ),
        (
            vec!["snooze", &s.theirs, "--for", "1h"],
            "so_o_autor_da_sessao",
            3,
        ),
        (
            vec!["snooze", &s.answered, "--for", "1h"],
            "pergunta_ja_respondida",
            4,
        ),
        (vec!["snooze", "q-nope", "--for", "1h"], "not_found", 5),
        (vec!["unsnooze", first], "not_snoozed", 8),
        (vec!["unsnooze", &s.theirs], "so_o_autor_da_sessao", 3),
    ] {
        let out = cmd(&args);
        assert_eq!(out.code, exit, "{args:?} {out:?}");
        assert!(
            out.stderr.starts_with(&format!("oq: {code}: ")),
            "{args:?} {out:?}"
        );
        assert!(out.stdout.is_empty(), "{out:?}");
    }
    // Neither or both of --until and --for: clap's usage error.
    assert_eq!(cmd(&["snooze", first]).code, 2);
    assert_eq!(
        cmd(&["snooze", first, "--for", "1h", "--until", "2026-01-01"]).code,
        2
    );
    assert_eq!(events(), before, "no refusal appends anything");
}

fn event_count(dir: &Path) -> i64 {
    common::event_count(dir)
}

#[test]
fn snooze_on_the_local_engine() {
    let dir = tempfile::tempdir().unwrap();
    let seeded = seed(&common::engine(dir.path()));
    snooze_reads_the_same(
        || oq(dir.path(), PERSON),
        || event_count(dir.path()),
        &seeded,
    );
}

#[test]
fn snooze_on_oq_serve() {
    let mut serve = serve_process::Serve::new();
    let seeded = seed(&serve.engine());
    serve.start();
    let client = tempfile::tempdir().unwrap();
    let store = serve.store_dir();
    snooze_reads_the_same(
        || {
            let mut c = serve.oq(client.path());
            c.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            c
        },
        || event_count(&store),
        &seeded,
    );
}
