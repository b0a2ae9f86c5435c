//! `oq answer --accept ID…` through the built binary, on the local engine and on a real
//! `oq serve`: each question its own answer and decision record (`decisionSource:
//! suggestion`), the others skipped with their reason, none lost to another's refusal.
#![allow(clippy::unwrap_used)]

mod common;
mod serve_process;

use std::path::Path;

use common::{oq, run};
use oq::domain::{Actor, DeclareInput, Role};
use serde_json::Value;

fn ask(dir: &Path, user: &str, pergunta: &str, suggest: Option<&str>) -> String {
    let mut cmd = oq(dir, user);
    cmd.args(["ask", pergunta, "--agent", "po"]);
    if let Some(s) = suggest {
        cmd.args(["--suggest", s]);
    }
    let out = run(&mut cmd);
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout.trim().to_string()
}

fn show(dir: &Path, id: &str) -> Value {
    run(oq(dir, "ana").args(["show", id, "--json"])).json()
}

/// The outcome and code of each id, in the order reported.
fn outcomes(v: &Value) -> Vec<(String, String, String)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let s = |k: &str| o[k].as_str().unwrap_or("").to_string();
            (s("questionId"), s("outcome"), s("code"))
        })
        .collect()
}

#[test]
fn accept_several_answers_each_and_skips_the_rest_with_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = ask(d, "ana", "Which database?", Some("SQLite"));
    let b = ask(d, "ana", "Which port?", Some("7878"));
    let none = ask(d, "ana", "Which colour?", None);
    let bias = ask(d, "bia", "Bia's call?", Some("yes"));
    let done = ask(d, "ana", "Done already?", Some("no"));
    assert_eq!(
        run(oq(d, "ana").args(["answer", &done, "--text", "yes"])).code,
        0
    );

    let out = run(oq(d, "ana").args([
        "answer", "--accept", "--json", &a, &none, &bias, &b, &done, &a, "que_nope",
    ]));
    assert_eq!(out.code, 15, "{out:?}");
    assert_eq!(
        outcomes(&out.json()),
        vec![
            (a.clone(), "accepted".into(), String::new()),
            (
                none.clone(),
                "skipped".into(),
                "sugestao_inexistente".into()
            ),
            (
                bias.clone(),
                "skipped".into(),
                "so_o_autor_da_sessao".into()
            ),
            (b.clone(), "accepted".into(), String::new()),
            (
                done.clone(),
                "skipped".into(),
                "pergunta_ja_respondida".into()
            ),
            ("que_nope".into(), "skipped".into(), "not_found".into()),
        ]
    );
    for (id, text) in [(&a, "SQLite"), (&b, "7878")] {
        let q = show(d, id);
        assert_eq!(q["status"], "answered");
        assert_eq!(q["answer"]["resposta"], text);
        assert_eq!(q["answer"]["decisionSource"], "suggestion");
        assert_eq!(q["answer"]["respondidaPor"], "ana");
    }
    assert_eq!(show(d, &none)["status"], "open");
    assert_eq!(show(d, &bias)["status"], "open");
    // Each accepted question has its own decision record.
    let conn = rusqlite::Connection::open(d.join("oq.sqlite3")).unwrap();
    let records: i64 = conn
        .query_row(
            "SELECT count(*) FROM events WHERE type = 'decision_record'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(records, 3);

    // Every one accepted: exit 0, one line each.
    let c = ask(d, "ana", "Which queue?", Some("redis"));
    let e = ask(d, "ana", "Which cache?", Some("none"));
    let out = run(oq(d, "ana").args(["answer", "--accept", &c, &e]));
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout.lines().count(), 2, "{out:?}");
    assert!(out.stdout.lines().all(|l| l.starts_with("accepted ")));
}

#[test]
fn several_ids_without_accept_are_refused_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a = ask(d, "ana", "One?", Some("1"));
    let b = ask(d, "ana", "Two?", Some("2"));
    let out = run(oq(d, "ana").args(["answer", &a, &b, "--text", "x"]));
    assert_eq!(out.code, 6, "{out:?}");
    assert!(out.stderr.contains("only --accept"), "{out:?}");
    assert_eq!(show(d, &a)["status"], "open");
    assert_eq!(show(d, &b)["status"], "open");
}

#[test]
fn accept_several_on_oq_serve() {
    let mut serve = serve_process::Serve::new();
    let ids = serve.seed(1);
    let e = serve.engine();
    let with = |s: &str| {
        e.declare(
            &Actor::agent(Role::Po),
            "loja",
            &DeclareInput {
                pergunta: format!("About {s}?"),
                sugestao: Some(s.into()),
                session_id: "s1".into(),
                ..Default::default()
            },
        )
        .unwrap()
        .question_id
    };
    let (a, b) = (with("alpha"), with("beta"));
    drop(e);
    serve.start();
    let client = tempfile::tempdir().unwrap();
    let out: common::Out = serve
        .oq(client.path())
        .args(["answer", "--accept", "--json", &a, &ids[0], &b])
        .output()
        .unwrap()
        .into();
    assert_eq!(out.code, 15, "{out:?}");
    assert_eq!(
        outcomes(&out.json()),
        vec![
            (a.clone(), "accepted".into(), String::new()),
            (
                ids[0].clone(),
                "skipped".into(),
                "sugestao_inexistente".into()
            ),
            (b.clone(), "accepted".into(), String::new()),
        ]
    );
    assert_eq!(serve.answered(&a), (1, Some("alpha".into())));
    assert_eq!(serve.answered(&b), (1, Some("beta".into())));
    assert_eq!(serve.answered(&ids[0]).0, 0);
}
