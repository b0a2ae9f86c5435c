//! `oq mcp` over stdio, driven by the official Python MCP client (PyPI `mcp`) on a real
//! store file: initialize, tools/list, every tool, progress, cancellation, refusals.
#![allow(clippy::unwrap_used)]

mod common_mcp;

use common_mcp::{OQ, code, oq_json, python, run_plan, run_plan_with, stdio};
use serde_json::{Value, json};

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn answer_cmd(dir: &std::path::Path, user: &str, id: &str, how: &[&str]) -> Value {
    let mut cmd = vec![
        OQ.to_string(),
        "--data-dir".into(),
        dir.display().to_string(),
        "--as".into(),
        user.into(),
        "answer".into(),
        id.into(),
    ];
    cmd.extend(how.iter().map(|s| s.to_string()));
    json!(cmd)
}

#[test]
fn initialize_and_tools_list_carry_the_central_sentence() {
    let Some(py) = python() else { return };
    let d = dir();
    let obs = run_plan(
        &py,
        stdio(d.path(), "ana", "po", &[]),
        json!([{"list_tools": true}]),
    );
    let init = &obs[0]["structured"];
    assert_eq!(init["serverName"], "oq");
    let instructions = init["instructions"].as_str().unwrap();
    assert!(
        instructions.starts_with(oq::domain::CENTRAL_INSTRUCTION),
        "{instructions}"
    );
    let tools = obs[1]["structured"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "declare_open_question",
            "wait_for_answer",
            "get_question",
            "list_my_questions",
            "withdraw_question"
        ]
    );
    let declare = tools[0]["description"].as_str().unwrap();
    assert!(
        declare.contains(oq::domain::CENTRAL_INSTRUCTION),
        "{declare}"
    );
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["pergunta"]));
}

#[test]
fn a_declared_choice_is_answered_in_oq_and_the_wait_returns_it_with_progress() {
    let Some(py) = python() else { return };
    let d = dir();
    let obs = run_plan(
        &py,
        stdio(d.path(), "ana", "arquiteto", &[]),
        json!([
            {"tool": "declare_open_question", "args": {
                "pergunta": "Which database?", "sugestao": "SQLite",
                "options": [{"label": "SQLite", "description": "one file"}, {"label": "PostgreSQL"}],
                "afeta": {"regras": ["RN-1"]}}},
            {"run": [OQ, "--data-dir", d.path(), "--as", "bruno", "list", "--json"]},
            {"tool": "wait_for_answer", "args": {"questionId": "$1.questionId", "timeoutSeconds": 30},
             "progress": true,
             "during": {"after": 0.5, "run": answer_cmd(d.path(), "ana", "$1.questionId", &["--answers-json", "[[\"SQLite\"]]"])}},
            {"tool": "get_question", "args": {"questionId": "$1.questionId"}},
            {"tool": "list_my_questions", "args": {"status": "answered"}},
        ]),
    );
    let declared = &obs[1]["structured"];
    assert_eq!(code(&obs[1]), None, "{:?}", obs[1]);
    assert_eq!(declared["answeredBy"], "ana");
    assert_eq!(declared["status"], "open");
    // Another oq client sees it at once, with its author and origin.
    let listed = &obs[2]["json"]["items"][0];
    assert_eq!(listed["questionId"], declared["questionId"]);
    assert_eq!(listed["autor"], "arquiteto");
    assert_eq!(listed["source"], "mcp");
    assert_eq!(listed["sessionAuthor"], "ana");
    assert_eq!(listed["prompts"][0]["options"][1]["label"], "PostgreSQL");
    let waited = &obs[3];
    assert_eq!(waited["during"]["rc"], 0, "{:?}", waited["during"]);
    let out = &waited["structured"];
    assert_eq!(out["outcome"], "answered", "{waited:?}");
    assert_eq!(out["answers"], json!([["SQLite"]]));
    assert_eq!(out["respondidaPor"], "ana");
    assert_eq!(out["decisionSource"], "person");
    assert_eq!(out["aceitouSugestao"], false);
    assert!(out["decisionEventId"].as_str().unwrap().len() > 3);
    assert!(
        !waited["progress"].as_array().unwrap().is_empty(),
        "a progress token gets progress: {waited:?}"
    );
    assert_eq!(obs[4]["structured"]["status"], "answered");
    assert_eq!(obs[5]["structured"]["total"], 1);
}

#[test]
fn a_wait_that_runs_out_is_still_open_and_a_cancelled_one_leaves_the_question_open() {
    let Some(py) = python() else { return };
    let d = dir();
    let obs = run_plan(
        &py,
        stdio(d.path(), "ana", "po", &[]),
        json!([
            {"tool": "declare_open_question", "args": {"pergunta": "Ship on Friday?"}},
            {"tool": "wait_for_answer", "args": {"questionId": "$1.questionId", "timeoutSeconds": 1}},
            {"tool": "wait_for_answer", "args": {"questionId": "$1.questionId", "timeoutSeconds": 60},
             "cancel_after": 0.5},
            {"tool": "get_question", "args": {"questionId": "$1.questionId"}},
            {"tool": "list_my_questions", "args": {}},
            {"tool": "wait_for_answer", "args": {"questionId": "$1.questionId", "timeoutSeconds": 30},
             "during": {"after": 0.3, "run": answer_cmd(d.path(), "ana", "$1.questionId", &["--text", "yes"])}},
        ]),
    );
    let still = &obs[2]["structured"];
    assert_eq!(still["outcome"], "still_open", "{:?}", obs[2]);
    assert!(still.get("resposta").is_none(), "never an invented answer");
    assert_eq!(obs[3]["cancelled"], true);
    assert_eq!(obs[4]["structured"]["status"], "open");
    assert_eq!(obs[5]["structured"]["total"], 1);
    // The connection goes on after a cancelled call: the next wait gets the answer.
    assert_eq!(obs[6]["structured"]["outcome"], "answered", "{:?}", obs[6]);
    assert_eq!(obs[6]["structured"]["resposta"], "yes");
}

#[test]
fn only_the_declaring_agent_withdraws_and_the_wait_says_withdrawn() {
    let Some(py) = python() else { return };
    let d = dir();
    let first = run_plan(
        &py,
        stdio(d.path(), "ana", "po", &[]),
        json!([{"tool": "declare_open_question", "args": {"pergunta": "Rename the story?"}}]),
    );
    let id = first[1]["structured"]["questionId"]
        .as_str()
        .unwrap()
        .to_string();
    // Another agent in the same session may read it but not withdraw it.
    let other = run_plan(
        &py,
        stdio(d.path(), "ana", "arquiteto", &[]),
        json!([{"tool": "withdraw_question", "args": {"questionId": id, "reason": "not mine"}}]),
    );
    assert_eq!(code(&other[1]), Some("not_declarer"), "{:?}", other[1]);
    assert_eq!(oq_json(d.path(), "ana", &["show", &id])["status"], "open");
    let obs = run_plan(
        &py,
        stdio(d.path(), "ana", "po", &[]),
        json!([
            {"tool": "withdraw_question", "args": {"questionId": id, "reason": "found it in the ADR"}},
            {"tool": "wait_for_answer", "args": {"questionId": id, "timeoutSeconds": 5}},
            {"tool": "withdraw_question", "args": {"questionId": id, "reason": "again"}},
        ]),
    );
    assert_eq!(obs[1]["structured"]["outcome"], "withdrawn", "{:?}", obs[1]);
    let waited = &obs[2]["structured"];
    assert_eq!(waited["outcome"], "withdrawn");
    assert_eq!(waited["by"], "po");
    assert_eq!(waited["reason"], "found it in the ADR");
    assert_eq!(code(&obs[3]), Some("question_closed"));
    let shown = oq_json(d.path(), "ana", &["show", &id]);
    assert_eq!(shown["status"], "closed");
    assert_eq!(shown["closed"]["decisionSource"], "withdrawn");
    assert_eq!(shown["closed"]["reason"], "withdrawn");
}

#[test]
fn bad_input_is_a_tool_error_with_its_code_and_writes_nothing() {
    let Some(py) = python() else { return };
    let d = dir();
    // A question of another session (ana's other one), declared by `oq ask`.
    oq_json(
        d.path(),
        "ana",
        &["session", "start", "--id", "default.other"],
    );
    let theirs = oq_json(
        d.path(),
        "ana",
        &[
            "ask",
            "Theirs?",
            "--agent",
            "po",
            "--session",
            "default.other",
        ],
    );
    let theirs = theirs["questionId"].as_str().unwrap().to_string();
    let long = "x".repeat(501);
    let obs = run_plan(
        &py,
        stdio(d.path(), "ana", "po", &[]),
        json!([
            {"tool": "declare_open_question", "args": {"pergunta": long}},
            {"tool": "declare_open_question", "args": {"pergunta": "   "}},
            {"tool": "declare_open_question", "args": {"pergunta": 5}},
            {"tool": "declare_open_question", "args": {"pergunta": "ok?", "colour": "red"}},
            {"tool": "declare_open_question", "args": {}},
            {"tool": "declare_open_question", "args": {"pergunta": "ok?", "options": []}},
            {"tool": "declare_open_question", "args": {"pergunta": "ok?", "options": [{"label": "a"}, {"label": "a"}]}},
            {"tool": "declare_open_question", "args": {"pergunta": "ok?", "multiple": true}},
            {"tool": "wait_for_answer", "args": {"questionId": theirs, "timeoutSeconds": 1}},
            {"tool": "get_question", "args": {"questionId": theirs}},
            {"tool": "withdraw_question", "args": {"questionId": theirs, "reason": "x"}},
            {"tool": "wait_for_answer", "args": {"questionId": "q-nope"}},
            {"tool": "wait_for_answer", "args": {"questionId": theirs, "timeoutSeconds": 601}},
            {"tool": "no_such_tool", "args": {}},
            {"tool": "list_my_questions", "args": {"status": "maybe"}},
        ]),
    );
    let codes: Vec<Option<&str>> = obs[1..14].iter().map(code).collect();
    assert_eq!(
        codes,
        [
            Some("text_too_long"),
            Some("empty_text"),
            Some("invalid_body"),
            Some("invalid_body"),
            Some("invalid_body"),
            Some("invalid_options"),
            Some("invalid_options"),
            Some("invalid_options"),
            Some("other_session"),
            Some("other_session"),
            Some("other_session"),
            Some("not_found"),
            Some("invalid_body"),
        ],
        "{obs:#?}"
    );
    // Each message names the problem in one line.
    assert!(
        obs[3]["text"].as_str().unwrap().contains("pergunta"),
        "{:?}",
        obs[3]
    );
    assert!(
        obs[4]["text"].as_str().unwrap().contains("colour"),
        "{:?}",
        obs[4]
    );
    assert!(
        obs[14]["protocolError"]
            .as_str()
            .unwrap()
            .contains("no_such_tool"),
        "{:?}",
        obs[14]
    );
    assert_eq!(code(&obs[15]), Some("invalid_status"));
    // Nothing was written: the only question is theirs, still open.
    let all = oq_json(d.path(), "ana", &["list", "--status", "all"]);
    assert_eq!(all["total"], 1, "{all}");
    assert_eq!(all["items"][0]["status"], "open");
}

#[test]
fn killed_mid_call_a_retry_with_the_same_idempotency_key_is_the_same_question() {
    let Some(py) = python() else { return };
    let d = dir();
    let pidfile = d.path().join("mcp.pid");
    let obs = run_plan_with(
        &py,
        json!({
            "server": stdio(d.path(), "ana", "dev-lead", &[]),
            "expect_death": true,
            "steps": [
                {"tool": "declare_open_question", "args": {"pergunta": "Keep the cache?", "idempotencyKey": "turn-7"}},
                {"tool": "wait_for_answer", "args": {"questionId": "$1.questionId", "timeoutSeconds": 60},
                 "during": {"after": 0.5, "run": ["sh", "-c", format!("kill -9 $(cat '{}')", pidfile.display())]}},
            ]
        }),
    );
    let first = obs[1]["structured"]["questionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        obs[2].get("structured").is_none(),
        "the call died: {:?}",
        obs[2]
    );
    let retry = run_plan(
        &py,
        stdio(d.path(), "ana", "dev-lead", &[]),
        json!([
            {"tool": "declare_open_question", "args": {"pergunta": "Keep the cache?", "idempotencyKey": "turn-7"}},
            {"tool": "declare_open_question", "args": {"pergunta": "Drop the cache?", "idempotencyKey": "turn-7"}},
        ]),
    );
    assert_eq!(retry[1]["structured"]["questionId"], first.as_str());
    assert_eq!(code(&retry[2]), Some("idempotency_key_reused"));
    let all = oq_json(d.path(), "ana", &["list", "--status", "all"]);
    assert_eq!(
        all["total"], 1,
        "one question, however often retried: {all}"
    );
}

/// The memory of answers (issue 17 part 2): `get_question` on an open question whose
/// text an answered one of the project had carries `similarAnswer`, and answers nothing.
#[test]
fn get_question_carries_the_answer_of_a_question_it_resembles() {
    let Some(py) = python() else { return };
    let d = dir();
    let obs = run_plan(
        &py,
        stdio(d.path(), "ana", "po", &[]),
        json!([
            {"tool": "declare_open_question", "args": {"pergunta": "Deploy on Fridays?"}},
            {"run": answer_cmd(d.path(), "ana", "$1.questionId", &["--text", "Only before noon"])},
            {"tool": "declare_open_question", "args": {"pergunta": "deploy on fridays"}},
            {"tool": "get_question", "args": {"questionId": "$3.questionId"}},
            {"tool": "get_question", "args": {"questionId": "$1.questionId"}},
        ]),
    );
    let q = &obs[4]["structured"];
    assert_eq!(code(&obs[4]), None, "{:?}", obs[4]);
    assert_eq!(q["status"], "open", "the hint answers nothing: {q}");
    let s = &q["similarAnswer"];
    assert_eq!(s["questionId"], obs[1]["structured"]["questionId"], "{q}");
    assert_eq!(s["resposta"], "Only before noon");
    assert_eq!(s["respondidaPor"], "ana");
    assert_eq!(s["match"], "same");
    // The answered question itself needs no hint.
    assert!(
        obs[5]["structured"].get("similarAnswer").is_none(),
        "{:?}",
        obs[5]
    );
}
