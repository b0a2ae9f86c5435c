//! The script doors through the built binary: output shapes, exit codes, one-line reasons,
//! `--wait`, and bad input that changes nothing.
#![allow(clippy::unwrap_used)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::Stdio;
use std::thread::JoinHandle;

use common::{Out, event_count, oq, run, spawn};
use oq::domain::Actor;
use oq::domain::AnswerInput;
use oq::domain::error::exit;
use serde_json::Value;
use tempfile::TempDir;

fn ask(dir: &Path, user: &str, pergunta: &str, extra: &[&str]) -> String {
    let out = run(oq(dir, user)
        .args(["ask", pergunta, "--agent", "po"])
        .args(extra));
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout.trim().to_string()
}

/// Answers through the library on the same store: another process than the binary.
fn answer_in_process(dir: &Path, user: &str, qid: &str, text: &str) {
    common::engine(dir)
        .answer(&Actor::person(user), None, qid, &AnswerInput::text(text))
        .expect("answer through the engine");
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().expect("object").keys().cloned().collect();
    k.sort();
    k
}

fn sorted(k: &[&str]) -> Vec<String> {
    let mut k: Vec<String> = k.iter().map(|s| s.to_string()).collect();
    k.sort();
    k
}

/// A refusal: the exit code, and one stderr line naming the code.
fn assert_refusal(out: &Out, code: i32, reason: &str) {
    assert_eq!(out.code, code, "{out:?}");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line on stderr: {:?}", out.stderr);
    assert!(
        lines[0].starts_with(&format!("oq: {reason}: ")),
        "{:?}",
        lines[0]
    );
}

/// Everything a script can see of the store, to compare before and after.
fn state(dir: &Path) -> (String, String, i64) {
    let list = run(oq(dir, "alice").args(["list", "--status", "all", "--json"]));
    let sessions = run(oq(dir, "alice").args(["session", "list", "--json"]));
    assert_eq!((list.code, sessions.code), (0, 0), "{list:?} {sessions:?}");
    (list.stdout, sessions.stdout, event_count(dir))
}

const ITEM_KEYS: [&str; 12] = [
    "questionId",
    "projectId",
    "sessionId",
    "sessionAuthor",
    "pergunta",
    "afeta",
    "autor",
    "source",
    "status",
    "createdAt",
    "canAnswer",
    "sugestao",
];

#[test]
fn ask_prints_the_id_and_json_has_the_documented_shapes() {
    let d = TempDir::new().unwrap();
    // What a question affects must exist in its project: a story and a task first.
    let made = |args: &[&str], field: &str| {
        let out = run(oq(d.path(), "alice").args(args).arg("--json"));
        assert_eq!(out.code, 0, "{out:?}");
        out.json()[field].as_str().unwrap().to_string()
    };
    made(
        &["session", "start", "--kind", "execution", "--id", "exec"],
        "sessionId",
    );
    let story = made(&["story", "add", "Shipping"], "storyId");
    let task = made(
        &[
            "task",
            "add",
            "Free shipping",
            "--story",
            &story,
            "--session",
            "exec",
        ],
        "taskId",
    );
    assert_refusal(
        &run(oq(d.path(), "alice").args([
            "ask",
            "Dangling?",
            "--agent",
            "po",
            "--affects",
            "task:t-nope",
        ])),
        exit::INVALID,
        "unknown_reference",
    );
    let id = ask(
        d.path(),
        "alice",
        "Free shipping above?",
        &[
            "--suggest",
            "R$ 200",
            "--affects",
            &format!("rule:RN-1,story:{story}"),
            "--affects",
            &format!("task:{task}"),
        ],
    );
    assert!(
        id.starts_with("q-") && id.len() == 19 && !id.contains(char::is_whitespace),
        "{id:?}"
    );

    let shown = run(oq(d.path(), "alice").args(["show", &id, "--json"]));
    let item = shown.json();
    assert_eq!(keys(&item), sorted(&ITEM_KEYS));
    assert_eq!(item["questionId"], id.as_str());
    assert_eq!(
        (item["status"].as_str(), item["canAnswer"].as_bool()),
        (Some("open"), Some(true))
    );
    assert_eq!(
        (item["sessionAuthor"].as_str(), item["autor"].as_str()),
        (Some("alice"), Some("po"))
    );
    assert_eq!(
        item["afeta"],
        serde_json::json!({"regras": ["RN-1"], "historias": [story], "tarefas": [task]})
    );
    assert_eq!(item["sugestao"], "R$ 200");

    let asked =
        run(oq(d.path(), "alice").args(["ask", "Second?", "--agent", "criativo", "--json"]));
    let second = asked.json();
    assert_eq!(second["autor"], "criativo");
    assert!(
        second.get("sugestao").is_none(),
        "absent, not null: {second}"
    );
    let third = ask(d.path(), "alice", "Third?", &[]);

    let list = run(oq(d.path(), "bob").args(["list", "--json"])).json();
    assert_eq!(
        keys(&list),
        sorted(&["items", "total"]),
        "no cursor on the last page"
    );
    assert_eq!(list["total"], 3);
    let theirs = &list["items"][0];
    assert_eq!(
        (theirs["canAnswer"].as_bool(), theirs["reason"].is_string()),
        (Some(false), true),
        "{theirs}"
    );
    assert!(theirs["reason"].as_str().unwrap().contains("alice"));

    let page = run(oq(d.path(), "alice").args(["list", "--json", "--limit", "2"])).json();
    assert_eq!(
        (
            page["items"].as_array().unwrap().len(),
            page["total"].as_u64()
        ),
        (2, Some(3))
    );
    let cursor = page["cursor"]
        .as_str()
        .expect("a cursor when more follow")
        .to_string();
    let rest =
        run(oq(d.path(), "alice").args(["list", "--json", "--limit", "2", "--cursor", &cursor]))
            .json();
    assert_eq!(rest["items"][0]["questionId"], third.as_str());
    assert!(rest.get("cursor").is_none());

    answer_in_process(d.path(), "alice", &id, "R$ 150");
    let done = run(oq(d.path(), "alice").args(["list", "--status", "answered", "--json"])).json();
    let item = &done["items"][0];
    assert_eq!(item["status"], "answered");
    assert_eq!(
        keys(&item["answer"]),
        sorted(&[
            "resposta",
            "aceitouSugestao",
            "decisionEventId",
            "respondidaPor",
            "answeredAt",
            "decisionSource"
        ])
    );
    assert_eq!(
        (
            item["answer"]["resposta"].as_str(),
            item["answer"]["respondidaPor"].as_str()
        ),
        (Some("R$ 150"), Some("alice"))
    );
    assert_eq!(item["canAnswer"], false);
}

#[test]
fn each_refusal_has_its_exit_code_and_a_one_line_reason() {
    let d = TempDir::new().unwrap();
    let dir = d.path();
    let id = ask(dir, "alice", "Open?", &[]);
    assert_refusal(
        &run(oq(dir, "alice").args(["ask", "x", "--agent", "qa-agent"])),
        exit::FORBIDDEN,
        "role_not_allowed",
    );
    assert_refusal(
        &run(oq(dir, "alice").args(["ask", "  ", "--agent", "po"])),
        exit::INVALID,
        "empty_text",
    );
    assert_refusal(
        &run(oq(dir, "alice").args(["ask", "x", "--agent", "boss"])),
        exit::INVALID,
        "unknown_role",
    );
    assert_refusal(
        &run(oq(dir, "alice").args(["show", "q-doesnotexist"])),
        exit::NOT_FOUND,
        "not_found",
    );
    assert_refusal(
        &run(oq(dir, "alice").args(["list", "--cursor=-5"])),
        exit::INVALID,
        "invalid_cursor",
    );
    assert_eq!(
        run(oq(dir, "alice").args(["session", "start", "--id", "s-x"])).code,
        0
    );
    assert_refusal(
        &run(oq(dir, "alice").args(["session", "start", "--id", "s-x"])),
        exit::CONFLICT,
        "session_exists",
    );
    // The QA gate: parked → conflict; parking on an answered question → already answered.
    let json = |args: &[&str]| run(oq(dir, "bob").args(args).arg("--json")).json();
    assert_eq!(
        run(oq(dir, "bob").args(["session", "start", "--kind", "execution", "--id", "exec"])).code,
        0
    );
    let story = json(&["story", "add", "Product page"])["storyId"]
        .as_str()
        .unwrap()
        .to_string();
    let task = json(&[
        "task",
        "add",
        "GET /:codigo",
        "--story",
        &story,
        "--session",
        "exec",
    ])["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    answer_in_process(dir, "alice", &id, "done");
    assert_refusal(
        &run(oq(dir, "bob").args([
            "verdict",
            &task,
            "needs_user_decision",
            "--open-question",
            &id,
        ])),
        exit::ALREADY_ANSWERED,
        "pergunta_ja_respondida",
    );
    assert_eq!(
        run(oq(dir, "bob").args([
            "verdict",
            &task,
            "needs_user_decision",
            "--question",
            "Case?"
        ]))
        .code,
        0
    );
    assert_refusal(
        &run(oq(dir, "bob").args(["verdict", &task, "approved"])),
        exit::CONFLICT,
        "gate_parked",
    );
    assert_refusal(
        &run(oq(dir, "bob").args(["verdict", &task, "approved", "--agent", "po"])),
        exit::FORBIDDEN,
        "role_not_allowed",
    );
    // The store: a data dir under a regular file, and a file that is not an oq store.
    let file = dir.join("plain");
    std::fs::write(&file, "x").unwrap();
    assert_refusal(
        &run(oq(&file.join("sub"), "alice").arg("list")),
        exit::STORE,
        "data_dir_not_writable",
    );
    let junk = dir.join("junk");
    std::fs::create_dir(&junk).unwrap();
    std::fs::write(common::store_file(&junk), vec![0x5a_u8; 4096]).unwrap();
    let out = run(oq(&junk, "alice").args(["list", "--json"]));
    assert_refusal(&out, exit::STORE, "not_an_oq_store");
    assert_eq!(
        out.json()["code"],
        "not_an_oq_store",
        "--json puts {{code, message}} on stdout"
    );
    // Usage errors are clap's.
    assert_eq!(run(oq(dir, "alice").arg("bogus")).code, exit::USAGE);
    assert_eq!(
        run(oq(dir, "alice").args(["list", "--status", "maybe"])).code,
        exit::USAGE
    );
    assert_eq!(
        run(oq(dir, "alice").args(["ask", "--agent", "po"])).code,
        exit::USAGE
    );
}

#[test]
fn the_answer_door() {
    let d = TempDir::new().unwrap();
    let dir = d.path();
    let id = ask(
        dir,
        "alice",
        "Free shipping above?",
        &["--suggest", "R$ 200"],
    );
    let bare = ask(dir, "alice", "No suggestion?", &[]);
    assert_refusal(
        &run(oq(dir, "bob").args(["answer", &id, "--text", "R$ 1"])),
        exit::NOT_SESSION_AUTHOR,
        "so_o_autor_da_sessao",
    );
    assert_refusal(
        &run(oq(dir, "alice").args(["answer", "q-doesnotexist", "--text", "x"])),
        exit::NOT_FOUND,
        "not_found",
    );
    assert_refusal(
        &run(oq(dir, "alice").args(["answer", &bare, "--accept"])),
        exit::INVALID,
        "sugestao_inexistente",
    );
    assert_eq!(
        run(oq(dir, "alice").args(["answer", &id, "--text", "x", "--accept"])).code,
        exit::USAGE
    );
    assert_eq!(
        run(oq(dir, "alice").args(["answer", &id])).code,
        exit::USAGE
    );
    let ok = run(oq(dir, "alice").args(["answer", &id, "--accept", "--json"]));
    assert_eq!(ok.code, 0, "{ok:?}");
    assert_eq!(
        (
            ok.json()["answer"]["resposta"].as_str(),
            ok.json()["answer"]["aceitouSugestao"].as_bool()
        ),
        (Some("R$ 200"), Some(true))
    );
    assert_refusal(
        &run(oq(dir, "alice").args(["answer", &id, "--text", "again"])),
        exit::ALREADY_ANSWERED,
        "pergunta_ja_respondida",
    );
    assert_refusal(
        &run(oq(dir, "bob").args(["answer", &id, "--text", "again"])),
        exit::NOT_SESSION_AUTHOR,
        "so_o_autor_da_sessao",
    );
    assert_eq!(common::answered_events(dir, &id), 1);
}

#[test]
fn answer_text_dash_reads_stdin() {
    let d = TempDir::new().unwrap();
    let id = ask(d.path(), "alice", "Long answer?", &[]);
    let mut child = spawn(
        oq(d.path(), "alice")
            .args(["answer", &id, "--text", "-"])
            .stdin(Stdio::piped()),
    );
    let text = "Line one — with ü and 🙂\nline two";
    child
        .child()
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait();
    assert_eq!(out.code, 0, "{out:?}");
    let shown = run(oq(d.path(), "alice").args(["show", &id, "--json"])).json();
    assert_eq!(shown["answer"]["resposta"], text);
}

/// `oq ask --wait` as alice; returns the child, the id it printed on stderr, and the rest
/// of its stderr (drained by a thread so the child never writes to a closed pipe).
fn ask_and_wait(dir: &Path, extra: &[&str]) -> (common::Kill, String, JoinHandle<String>) {
    let mut child = spawn(
        oq(dir, "alice")
            .args(["ask", "Ship on Sundays?", "--agent", "po", "--wait"])
            .args(extra),
    );
    let mut stderr = BufReader::new(child.child().stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let id = line
        .split_whitespace()
        .find(|w| w.starts_with("q-"))
        .unwrap_or_else(|| panic!("no id in {line:?}"))
        .to_string();
    let rest = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = stderr.read_to_string(&mut rest);
        rest
    });
    (child, id, rest)
}

fn wait_answered_by(answer: impl FnOnce(&Path, &str)) {
    let d = TempDir::new().unwrap();
    let (mut child, id, _rest) = ask_and_wait(d.path(), &["--json"]);
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert!(
        child.child().try_wait().unwrap().is_none(),
        "--wait returned before any answer"
    );
    answer(d.path(), &id);
    let out = child.wait();
    assert_eq!(out.code, 0, "{out:?}");
    let item = out.json();
    assert_eq!(
        (item["questionId"].as_str(), item["status"].as_str()),
        (Some(id.as_str()), Some("answered"))
    );
    assert_eq!(item["answer"]["resposta"], "Only in December");
}

#[test]
fn ask_wait_blocks_until_another_process_answers() {
    wait_answered_by(|dir, id| answer_in_process(dir, "alice", id, "Only in December"));
}

#[test]
fn ask_wait_returns_when_oq_answer_runs() {
    wait_answered_by(|dir, id| {
        let out = run(oq(dir, "alice").args(["answer", id, "--text", "Only in December"]));
        assert_eq!(out.code, 0, "{out:?}");
    });
}

#[test]
fn ask_wait_times_out_and_the_question_stays_open() {
    let d = TempDir::new().unwrap();
    let (child, id, rest) = ask_and_wait(d.path(), &["--timeout", "1"]);
    let out = child.wait();
    let stderr = rest.join().unwrap();
    assert_eq!(out.code, exit::TIMEOUT, "{out:?} {stderr:?}");
    assert_eq!(stderr.lines().collect::<Vec<_>>().len(), 1, "{stderr:?}");
    assert!(stderr.starts_with("oq: timeout: "), "{stderr:?}");
    let shown = run(oq(d.path(), "alice").args(["show", &id, "--json"])).json();
    assert_eq!(shown["status"], "open");
    assert_eq!(common::answered_events(d.path(), &id), 0);
    assert_eq!(
        run(oq(d.path(), "alice").args(["ask", "x", "--agent", "po", "--timeout", "1"])).code,
        exit::USAGE,
        "--timeout needs --wait"
    );
}

#[test]
fn demo_twice_adds_nothing() {
    let d = TempDir::new().unwrap();
    let first = run(oq(d.path(), "me").args(["demo", "--json"]));
    assert_eq!(first.code, 0, "{first:?}");
    let summary = first.json();
    assert_eq!(summary["created"], true);
    assert!(summary["open"].as_u64().unwrap() > 0 && summary["answered"].as_u64().unwrap() > 0);
    assert!(summary["waitingForYou"].as_u64().unwrap() >= 1);
    let before = state(d.path());
    let second = run(oq(d.path(), "me").args(["demo", "--json"]));
    assert_eq!(second.code, 0, "{second:?}");
    let again = second.json();
    assert_eq!(again["created"], false);
    for k in ["open", "answered", "waitingForYou"] {
        assert_eq!(again[k], summary[k], "{k}");
    }
    assert_eq!(state(d.path()), before);
    // The sample has another person's question and a parked task waiting for "me".
    let waiting = run(oq(d.path(), "me").args(["task", "waiting", "--json"])).json();
    // `{items, total}` (or a bare array in older builds).
    let waiting = waiting.get("items").unwrap_or(&waiting);
    assert_eq!(
        waiting.as_array().unwrap().len() as u64,
        summary["waitingForYou"].as_u64().unwrap()
    );
    let list = run(oq(d.path(), "me").args(["list", "--json"])).json();
    assert!(
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|q| q["canAnswer"] == false)
    );
}

#[test]
fn bad_input_changes_nothing() {
    let d = TempDir::new().unwrap();
    let dir = d.path();
    // An empty store first: a refused ask must not even start the person's session.
    let before = state(dir);
    let long = "é".repeat(501);
    let long_sug = "s".repeat(301);
    let cases: Vec<(Vec<&str>, i32)> = vec![
        (vec!["ask", &long, "--agent", "po"], exit::INVALID),
        (
            vec!["ask", "ok?", "--agent", "po", "--suggest", &long_sug],
            exit::INVALID,
        ),
        (vec!["ask", " \t ", "--agent", "po"], exit::INVALID),
        (
            vec!["ask", "ok?", "--agent", "po", "--suggest", "  "],
            exit::INVALID,
        ),
        (vec!["ask", "ok?", "--agent", "overlord"], exit::INVALID),
        (vec!["ask", "ok?", "--agent", "qa-agent"], exit::FORBIDDEN),
        (vec!["ask", "ok?"], exit::INVALID),
        (
            vec!["ask", "ok?", "--agent", "po", "--affects", "planet:X"],
            exit::INVALID,
        ),
        (
            vec!["ask", "ok?", "--agent", "po", "--affects", "nocolon"],
            exit::INVALID,
        ),
        (
            vec!["ask", "ok?", "--agent", "po", "--affects", "task:has space"],
            exit::INVALID,
        ),
        (
            vec!["ask", "ok?", "--agent", "po", "--affects", "story:"],
            exit::INVALID,
        ),
        (
            vec!["ask", "ok?", "--agent", "po", "--session", "s-nowhere"],
            exit::NOT_FOUND,
        ),
        (vec!["show", "q-nope"], exit::NOT_FOUND),
        (vec!["readiness", "--record", "maybe"], exit::INVALID),
    ];
    for (args, code) in &cases {
        let out = run(oq(dir, "alice").args(args));
        assert_eq!(out.code, *code, "{args:?}: {out:?}");
        assert_eq!(state(dir), before, "{args:?} changed the store");
    }
    // Same with questions in the store.
    let id = ask(dir, "alice", "Has a question?", &[]);
    let before = state(dir);
    for (args, code) in &cases {
        assert_eq!(run(oq(dir, "alice").args(args)).code, *code, "{args:?}");
    }
    assert_eq!(state(dir), before);
    assert_eq!(run(oq(dir, "alice").args(["show", &id])).code, 0);
}

#[test]
fn bad_answers_change_nothing() {
    let d = TempDir::new().unwrap();
    let dir = d.path();
    let bare = ask(dir, "alice", "No suggestion?", &[]);
    let done = ask(dir, "alice", "Done?", &[]);
    answer_in_process(dir, "alice", &done, "yes");
    let before = state(dir);
    let long = "x".repeat(2_001);
    for (user, args, code) in [
        (
            "alice",
            vec!["answer", "q-nope", "--text", "x"],
            exit::NOT_FOUND,
        ),
        ("alice", vec!["answer", &bare, "--accept"], exit::INVALID),
        (
            "alice",
            vec!["answer", &bare, "--text", "   "],
            exit::INVALID,
        ),
        (
            "alice",
            vec!["answer", &bare, "--text", &long],
            exit::INVALID,
        ),
        (
            "alice",
            vec!["answer", &done, "--text", "again"],
            exit::ALREADY_ANSWERED,
        ),
        (
            "bob",
            vec!["answer", &bare, "--text", "mine"],
            exit::NOT_SESSION_AUTHOR,
        ),
        (
            "bob",
            vec!["answer", &done, "--text", "mine"],
            exit::NOT_SESSION_AUTHOR,
        ),
    ] {
        let out = run(oq(dir, user).args(&args));
        assert_eq!(out.code, code, "{args:?}: {out:?}");
        assert_eq!(state(dir), before, "{args:?} changed the store");
    }
}

#[test]
fn the_declare_door_carries_the_central_instruction_word_for_word() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_oq"))
        .args(["ask", "--help"])
        .output()
        .expect("oq ask --help");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains(oq::domain::CENTRAL_INSTRUCTION),
        "oq ask --help lacks the instruction:\n{help}"
    );
    assert!(oq::domain::CENTRAL_INSTRUCTION.starts_with(
        "Every doubt you leave for the user becomes declare_open_question, with your suggestion and what it affects; do not end the turn with a question only in the text."
    ));
}
