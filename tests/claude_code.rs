//! A real Claude Code (npm, installed by `.ci/claude-code.sh`) against our scripted model
//! (`tests/claude_peer/fake_anthropic.py`): headless with `oq mcp` as its MCP server, and
//! interactive in a pseudo-terminal with `oq hook claude-code --install`'s hooks — the
//! question in oq's queue, answered there, and the answer in what the model receives;
//! or, past the hook's wait, handed to Claude's own dialog (oq refusing an answer that
//! would reach nobody), answered there and settled as `upstream`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod claude_interactive;
mod common_claude;
mod common_pty;
mod serve_process;

use claude_interactive::*;
use common_claude::{Peer, until};
use common_pty::Tui;
use serde_json::{Value, json};

#[test]
fn headless_claude_declares_over_mcp_and_its_wait_receives_the_answer() {
    let Some(peer) = Peer::start() else { return };
    let config = json!({"mcpServers": {"oq": {"type": "stdio", "command": common_claude::OQ,
        "args": ["--data-dir", peer.data(), "--as", "ana", "mcp", "--agent", "arquiteto"]}}});
    std::fs::write(peer.work().join("mcp.json"), config.to_string()).unwrap();
    // The key makes the id known before the call: the script's second call names it.
    let id = oq::engine::ids::keyed_question_id("default", "arquiteto", "db-1");
    let prompt = format!(
        "CALL: {}\nCALL: {}",
        json!({"name": "mcp__oq__declare_open_question", "input": {
            "pergunta": "Which database?", "sugestao": "SQLite", "idempotencyKey": "db-1"}}),
        json!({"name": "mcp__oq__wait_for_answer", "input": {"questionId": id, "timeoutSeconds": 120}}),
    );
    let claude = std::thread::scope(|s| {
        let run = s.spawn(|| {
            peer.headless(
                &prompt,
                &[
                    "--mcp-config",
                    "mcp.json",
                    "--allowedTools",
                    "mcp__oq__declare_open_question,mcp__oq__wait_for_answer",
                    "--output-format",
                    "json",
                ],
            )
        });
        // Another oq client sees it, for the session's author, from the agent.
        let q = open_question(&peer);
        assert_eq!(q["questionId"], id.as_str());
        assert_eq!(q["sessionAuthor"], "ana");
        assert_eq!(q["autor"], "arquiteto");
        assert_eq!(q["source"], "mcp");
        let out = peer.oq(
            "ana",
            &["answer", &id, "--text", "PostgreSQL, for the team"],
        );
        assert!(out.status.success(), "{out:?}");
        run.join().unwrap()
    });
    let (ok, stdout) = claude;
    assert!(ok, "claude -p failed: {stdout}");
    let results = peer.tool_results();
    assert_eq!(results.len(), 2, "{results:?}");
    let declared: Value = serde_json::from_str(&results[0]).unwrap();
    assert_eq!(declared["questionId"], id.as_str());
    assert_eq!(declared["answeredBy"], "ana");
    let waited: Value = serde_json::from_str(&results[1]).unwrap();
    assert_eq!(waited["outcome"], "answered", "{waited}");
    assert_eq!(waited["resposta"], "PostgreSQL, for the team");
    assert_eq!(waited["respondidaPor"], "ana");
    assert_eq!(waited["decisionSource"], "person");
    // What Claude Code ended its turn with is that same result.
    let result: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert!(
        result["result"]
            .as_str()
            .unwrap()
            .contains("PostgreSQL, for the team"),
        "{result}"
    );
}

#[test]
fn headless_claude_declares_over_mcp_on_oq_serve_and_receives_the_answer() {
    let Some(peer) = Peer::start() else { return };
    let mut s = serve_process::Serve::new();
    s.start();
    let client = peer.state.path().join("client");
    let started = s.run(
        &client,
        &["session", "start", "--id", "loja.checkout", "--json"],
    );
    assert!(started.status.success(), "{started:?}");
    let config = json!({"mcpServers": {"oq": {"type": "http",
        "url": format!("{}/mcp?session=loja.checkout", s.base),
        "headers": {"Authorization": format!("Bearer {}", s.agent_token)}}}});
    std::fs::write(peer.work().join("mcp.json"), config.to_string()).unwrap();
    let id = oq::engine::ids::keyed_question_id("loja", serve_process::PO_BOT, "pay-1");
    let prompt = format!(
        "CALL: {}\nCALL: {}",
        json!({"name": "mcp__oq__declare_open_question", "input": {
            "pergunta": "Card or invoice first?", "idempotencyKey": "pay-1"}}),
        json!({"name": "mcp__oq__wait_for_answer", "input": {"questionId": id, "timeoutSeconds": 120}}),
    );
    let (ok, stdout) = std::thread::scope(|scope| {
        let run = scope.spawn(|| {
            peer.headless(
                &prompt,
                &[
                    "--mcp-config",
                    "mcp.json",
                    "--allowedTools",
                    "mcp__oq__declare_open_question,mcp__oq__wait_for_answer",
                    "--output-format",
                    "json",
                ],
            )
        });
        let listed = until("the question on the server", || {
            let out = s.run(&client, &["list", "--json"]);
            let v: Value = serde_json::from_slice(&out.stdout).ok()?;
            v["items"].as_array()?.first().cloned()
        });
        assert_eq!(listed["questionId"], id.as_str());
        assert_eq!(listed["sessionAuthor"], serve_process::DEV);
        assert_eq!(listed["autor"], "po");
        let out = s.run(&client, &["answer", &id, "--text", "card"]);
        assert!(out.status.success(), "{out:?}");
        run.join().unwrap()
    });
    assert!(ok, "claude -p failed: {stdout}");
    let results = peer.tool_results();
    let waited: Value = serde_json::from_str(results.last().unwrap()).unwrap();
    assert_eq!(waited["outcome"], "answered", "{waited}");
    assert_eq!(waited["resposta"], "card");
    assert_eq!(waited["respondidaPor"], serve_process::DEV);
}
#[test]
fn interactive_claude_asks_in_oq_and_the_person_answers_there() {
    let Some(peer) = Peer::start() else { return };
    let claude = interactive(&peer, "300");
    let q = open_question(&peer);
    assert_eq!(q["source"], "claude-code");
    assert_eq!(q["autor"], "dev-lead");
    assert_eq!(q["sessionAuthor"], "ana");
    assert_eq!(q["pergunta"], "Which database should we use?");
    assert_eq!(q["prompts"][0]["header"], "Database");
    assert_eq!(q["prompts"][0]["options"][1]["label"], "SQLite");
    assert_eq!(
        q["upstream"]["directory"].as_str().unwrap(),
        peer.work().display().to_string()
    );
    let session = q["sessionId"].as_str().unwrap();
    assert!(session.starts_with("default.cc-"), "{session}");
    let id = q["questionId"].as_str().unwrap();
    // The TUI says where it came from: the agent's door and Claude's working directory.
    {
        let tui = Tui::spawn(&peer.data(), "ana");
        tui.wait_text("dev-lead via claude-code");
        tui.wait_text(&peer.work().display().to_string());
    }
    let out = peer.oq("ana", &["answer", id, "--answers-json", r#"[["SQLite"]]"#]);
    assert!(out.status.success(), "{out:?}");
    answered_text(&peer, "SQLite");
    // The PostToolUse hook that follows leaves the person's answer as it was.
    claude.0.wait_text("SQLite");
    let shown = peer.oq_json("ana", &["show", id]);
    assert_eq!(shown["answer"]["respondidaPor"], "ana");
    assert_eq!(shown["answer"]["decisionSource"], "person");
}

#[test]
fn past_the_wait_claude_shows_its_dialog_and_that_answer_settles_oq_as_upstream() {
    let Some(peer) = Peer::start() else { return };
    let mut claude = interactive(&peer, "1");
    let q = open_question(&peer);
    let id = q["questionId"].as_str().unwrap().to_string();
    // The hook gave up: Claude's own dialog. oq says the question waits there…
    claude.0.wait_text("Type something");
    let handed = open_question(&peer);
    assert_eq!(handed["questionId"], id.as_str());
    assert_eq!(handed["handedOff"], true, "{handed}");
    assert_eq!(handed["canAnswer"], false, "{handed}");
    assert_eq!(
        handed["reason"], "waiting in Claude Code's dialog — answer there",
        "{handed}"
    );
    let listed = peer.oq("ana", &["list"]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("in claude"),
        "{listed:?}"
    );
    // …and refuses an answer that would reach nobody, changing nothing.
    let before = peer.oq_json("ana", &["show", &id]);
    let refused = peer.oq("ana", &["answer", &id, "--answers-json", r#"[["SQLite"]]"#]);
    assert_eq!(refused.status.code(), Some(8), "{refused:?}");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("handed_to_claude_code"), "{err}");
    assert_eq!(peer.oq_json("ana", &["show", &id]), before);
    assert_eq!(before["status"], "open");
    // Its first option chosen in the dialog.
    claude.0.send(b"\r");
    answered_text(&peer, "Postgres");
    let shown = until("the upstream settlement", || {
        let s = peer.oq_json("ana", &["show", &id]);
        (s["status"] == "answered").then_some(s)
    });
    assert_eq!(shown["answer"]["decisionSource"], "upstream", "{shown}");
    assert_eq!(shown["answer"]["respondidaPor"], "claude-code");
    assert_eq!(shown["answer"]["answers"], json!([["Postgres"]]));
    // Answering it in oq now is refused: it was settled in Claude Code.
    let late = peer.oq("ana", &["answer", &id, "--answers-json", r#"[["SQLite"]]"#]);
    assert!(!late.status.success());
}

#[test]
fn interactive_claude_on_oq_serve_asks_there_and_the_person_answers_there() {
    let Some(peer) = Peer::start() else { return };
    let (s, client) = serve_with_session(&peer);
    let _claude = interactive_on(&peer, &s, "300");
    let q = server_question(&s, &client);
    assert_eq!(q["status"], "open");
    assert_eq!(q["source"], "claude-code");
    assert_eq!(q["autor"], "po");
    assert_eq!(q["sessionId"], "loja.checkout");
    assert_eq!(q["sessionAuthor"], serve_process::DEV);
    assert_eq!(q["prompts"][0]["options"][1]["label"], "SQLite");
    assert_eq!(q["upstream"]["kind"], "claude-code");
    assert_eq!(
        q["upstream"]["directory"].as_str().unwrap(),
        peer.work().display().to_string()
    );
    let id = q["questionId"].as_str().unwrap();
    let out = s.run(
        &client,
        &["answer", id, "--answers-json", r#"[["SQLite"]]"#],
    );
    assert!(out.status.success(), "{out:?}");
    answered_text(&peer, "SQLite");
    let shown = s.run(&client, &["show", id, "--json"]);
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(shown["answer"]["respondidaPor"], serve_process::DEV);
    assert_eq!(shown["answer"]["decisionSource"], "person");
    // The token reached the server as a bearer header only: never in its audit log.
    let audit = std::fs::read_to_string(s.store_dir().join("logs/audit.log")).unwrap_or_default();
    assert!(!audit.contains(&s.agent_token));
}

#[test]
fn on_oq_serve_past_the_wait_the_dialogs_answer_settles_the_question_as_upstream() {
    let Some(peer) = Peer::start() else { return };
    let (s, client, mut claude, id) = past_the_wait_on_serve(&peer);
    claude.0.wait_text("Type something");
    // Handed to the dialog through the hook's route: the author's answer is refused.
    let handed = server_question(&s, &client);
    assert_eq!(handed["handedOff"], true, "{handed}");
    let refused = s.run(
        &client,
        &["answer", &id, "--answers-json", r#"[["SQLite"]]"#],
    );
    assert_eq!(refused.status.code(), Some(8), "{refused:?}");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("handed_to_claude_code"));
    claude.0.send(b"\r");
    answered_text(&peer, "Postgres");
    let shown = until("the upstream settlement on the server", || {
        let out = s.run(&client, &["show", &id, "--json"]);
        let v: Value = serde_json::from_slice(&out.stdout).ok()?;
        (v["status"] == "answered").then_some(v)
    });
    assert_eq!(shown["answer"]["decisionSource"], "upstream", "{shown}");
    assert_eq!(shown["answer"]["respondidaPor"], "claude-code");
    assert_eq!(shown["answer"]["answers"], json!([["Postgres"]]));
}
