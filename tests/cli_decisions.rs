//! `oq decisions` through the built binary, on the local engine and on a real `oq serve`:
//! the same history newest decision first as text, `--json` and `--csv` (quoted as RFC
//! 4180 says), its filters and pages, and each bad input refused by name, nothing printed.
#![allow(clippy::unwrap_used)]

mod common;
mod serve_process;

use std::process::{Command, Stdio};

use common::{Out, oq, run};
use oq::domain::choices::ClosedReason;
use oq::domain::{Actor, AnswerInput, DeclareInput, Role, SessionKind};
use oq::engine::LocalEngine;

const PERSON: &str = "dev-a";
const PORT_ANSWER: &str = "9090, because\nthe proxy \"owns\" 8080";

/// The seeded decisions, newest first, and the question still open.
struct Seeded {
    newest_first: [String; 3],
    open: String,
    task: String,
}

/// In `loja`: an accepted suggestion (affecting a task), a typed answer with commas,
/// quotes and a newline (the architect's question; the others are the PO's), a
/// dismissal; and one question left open.
fn seed(e: &LocalEngine) -> Seeded {
    let me = Actor::person(PERSON);
    e.start_session(&me, "loja", SessionKind::Conversation, Some("s1"))
        .unwrap();
    e.start_session(&me, "loja", SessionKind::Execution, Some("x1"))
        .unwrap();
    let story = e
        .create_story(&Actor::agent(Role::Po), "loja", "Checkout")
        .unwrap();
    let task = e
        .create_task(
            &Actor::agent(Role::DevLead),
            "loja",
            &story.story_id,
            "x1",
            "Cache",
        )
        .unwrap()
        .task_id;
    let declare = |asker: Role, pergunta: &str, tarefas: Vec<String>| {
        let mut input = DeclareInput {
            pergunta: pergunta.into(),
            sugestao: Some("Redis".into()),
            session_id: "s1".into(),
            ..Default::default()
        };
        input.afeta.tarefas = tarefas;
        e.declare(&Actor::agent(asker), "loja", &input)
            .unwrap()
            .question_id
    };
    let cache = declare(
        Role::Po,
        "Which database for the cache?",
        vec![task.clone()],
    );
    e.answer(&me, Some("loja"), &cache, &AnswerInput::accept())
        .unwrap();
    let port = declare(Role::Arquiteto, "Which port, \"8080\" or 9090?", vec![]);
    e.answer(&me, Some("loja"), &port, &AnswerInput::text(PORT_ANSWER))
        .unwrap();
    let dropped = declare(Role::Po, "Drop the legacy table?", vec![]);
    e.close_question(&me, Some("loja"), &dropped, ClosedReason::Rejected)
        .unwrap();
    let open = declare(Role::Arquiteto, "Still open?", vec![]);
    Seeded {
        newest_first: [dropped, port, cache],
        open,
        task,
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

/// The same checks whatever the source: `oq` builds a command on it.
fn the_history_reads_the_same(oq: impl Fn() -> Command, s: &Seeded) {
    let decisions = |args: &[&str]| run(oq().arg("decisions").args(args));
    let [dropped, port, cache] = &s.newest_first;

    let all = decisions(&["--json"]);
    assert_eq!(ids(&all), s.newest_first);
    let v = all.json();
    assert_eq!(v["total"], 3);
    assert!(!all.stdout.contains(&s.open));
    assert_eq!(v["items"][0]["closed"]["decisionSource"], "dismissed");
    assert_eq!(v["items"][1]["answer"]["resposta"], PORT_ANSWER);
    assert_eq!(v["items"][1]["answer"]["respondidaPor"], PERSON);
    assert_eq!(v["items"][2]["answer"]["decisionSource"], "suggestion");

    assert_eq!(
        ids(&decisions(&["--json", "--search", "CACHE database"])),
        [cache.as_str()]
    );
    assert_eq!(
        ids(&decisions(&["--json", "--search", "proxy"])),
        [port.as_str()]
    );
    let affects = format!("task:{}", s.task);
    assert_eq!(
        ids(&decisions(&["--json", "--affects", &affects])),
        [cache.as_str()]
    );
    assert_eq!(
        ids(&decisions(&["--json", "--decision-source", "person"])),
        [port.as_str()]
    );
    // Who asked: the agent's own decisions, its questions still open never among them.
    assert_eq!(
        ids(&decisions(&["--json", "--agent", "arquiteto"])),
        [port.as_str()]
    );
    assert_eq!(
        ids(&decisions(&["--json", "--agent", "po"])),
        [dropped.as_str(), cache.as_str()]
    );
    assert_eq!(
        ids(&decisions(&[
            "--json", "--agent", "po", "--search", "cache"
        ])),
        [cache.as_str()]
    );
    assert_eq!(
        ids(&decisions(&["--json", "--agent", "nobody"])),
        Vec::<String>::new()
    );
    assert_eq!(
        ids(&decisions(&["--json", "--since", "9999-01-01"])),
        Vec::<String>::new()
    );
    // Every page, one at a time, in order.
    assert_eq!(
        ids(&decisions(&["--json", "--limit", "1", "--all"])),
        s.newest_first
    );
    let first = decisions(&["--json", "--limit", "2"]).json();
    let cursor = first["cursor"].as_str().unwrap();
    assert_eq!(
        ids(&decisions(&["--json", "--limit", "2", "--cursor", cursor])),
        [cache.as_str()]
    );

    let csv = decisions(&["--csv"]);
    assert_eq!(csv.code, 0, "{csv:?}");
    let header = "decidedAt,projectId,questionId,status,decisionSource,decidedBy,pergunta,resposta,sugestao,closedReason,afeta,autor,createdAt\r\n";
    assert!(csv.stdout.starts_with(header), "{csv:?}");
    let port_row = format!(
        ",loja,{port},answered,person,{PERSON},\"Which port, \"\"8080\"\" or 9090?\",\"9090, because\nthe proxy \"\"owns\"\" 8080\",Redis,,,arquiteto,"
    );
    assert!(csv.stdout.contains(&port_row), "{csv:?}");
    assert!(csv.stdout.contains(&format!(
        ",loja,{dropped},closed,dismissed,{PERSON},Drop the legacy table?,,Redis,rejected,,po,"
    )));
    assert!(csv.stdout.contains(&format!(",loja,{cache},answered,suggestion,{PERSON},Which database for the cache?,Redis,Redis,,{affects},po,")));
    // The header, three records (one spans two lines), each CRLF-terminated.
    assert_eq!(csv.stdout.matches("\r\n").count(), 4, "{csv:?}");

    let text = decisions(&[]);
    assert!(
        text.stdout
            .contains(&format!("{port}  person by {PERSON}  [loja]")),
        "{text:?}"
    );
    assert!(
        text.stdout
            .contains("A: 9090, because\n     the proxy \"owns\" 8080\n"),
        "{text:?}"
    );
    assert!(text.stdout.ends_with("3 of 3\n"), "{text:?}");

    let long = "x".repeat(10_000);
    for (args, code) in [
        (vec!["--since", "yesterday"], "invalid_date"),
        (
            vec!["--decision-source", "robot"],
            "invalid_decision_source",
        ),
        (vec!["--search", long.as_str()], "invalid_search"),
        (vec!["--affects", "epic:1"], "invalid_affects"),
        (vec!["--agent", "po\u{7}"], "invalid_id"),
        (vec!["--csv", "--json"], "invalid_format"),
    ] {
        let out = decisions(&args);
        assert_eq!(out.code, 6, "{args:.2?} {out:?}");
        assert!(out.stderr.starts_with(&format!("oq: {code}: ")), "{out:?}");
        assert!(out.stdout.is_empty() || args.contains(&"--json"), "{out:?}");
    }
}

#[test]
fn decisions_on_the_local_engine() {
    let dir = tempfile::tempdir().unwrap();
    let seeded = seed(&common::engine(dir.path()));
    the_history_reads_the_same(|| oq(dir.path(), PERSON), &seeded);
}

#[test]
fn decisions_on_oq_serve() {
    let mut serve = serve_process::Serve::new();
    let seeded = seed(&serve.engine());
    serve.start();
    let client = tempfile::tempdir().unwrap();
    the_history_reads_the_same(
        || {
            let mut c = serve.oq(client.path());
            c.stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            c
        },
        &seeded,
    );
}
