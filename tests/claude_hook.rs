//! `oq hook claude-code` through the built binary on a real store, without Claude Code
//! (tests/claude_code.rs drives the real one): bad hook input declares nothing and exits
//! 1 (Claude Code's non-blocking error), the installer merges beside a user's own hooks,
//! is idempotent, removes exactly what it wrote, and refuses a settings file that is not
//! JSON, leaving it byte for byte.
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

const OQ: &str = env!("CARGO_BIN_EXE_oq");

/// `oq --data-dir <dir>/oq --as ana ARGS…` in `dir` (HOME there too), `stdin` fed.
fn oq(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(OQ)
        .current_dir(dir)
        .env("HOME", dir)
        .env_remove("OQ_AGENT")
        .env_remove("OQ_PROJECT")
        .env_remove("OQ_SOURCE")
        .arg("--data-dir")
        .arg(dir.join("oq"))
        .args(["--as", "ana"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn hook_input(tool: &str, questions: Value) -> String {
    json!({"session_id": "s-1", "cwd": "/w", "hook_event_name": "PreToolUse",
           "tool_name": tool, "tool_use_id": "toolu_1",
           "tool_input": {"questions": questions}})
    .to_string()
}

fn total(dir: &Path) -> u64 {
    let out = oq(dir, &["list", "--status", "all", "--json"], "");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["total"].as_u64().unwrap()
}

/// The store's head (`oq store head`): it moves with every event written.
fn revision(dir: &Path) -> String {
    let out = oq(dir, &["store", "head"], "");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn bad_hook_input_is_a_clear_error_exit_1_and_declares_nothing() {
    let d = tempfile::tempdir().unwrap();
    let questions = json!([{"question": "Which?", "header": "H", "multiSelect": false,
        "options": [{"label": "a", "description": ""}]}]);
    let bad_options = json!([{"question": "Which?", "header": "H", "multiSelect": false,
        "options": [{"label": "a", "description": ""}, {"label": "a", "description": ""}]}]);
    for (input, says) in [
        ("{not json".to_string(), "not Claude Code's hook JSON"),
        (hook_input("Bash", questions), "called for \"Bash\""),
        (
            hook_input("AskUserQuestion", json!("no")),
            "tool_input.questions",
        ),
        (hook_input("AskUserQuestion", bad_options), "given twice"),
    ] {
        let out = oq(d.path(), &["hook", "claude-code", "--wait", "1"], &input);
        let err = String::from_utf8_lossy(&out.stderr);
        // 1 is Claude Code's non-blocking error: the tool goes on (2 would block it).
        assert_eq!(out.status.code(), Some(1), "{input}: {err}");
        assert!(err.contains(says), "{input}: {err}");
        assert!(
            out.stdout.is_empty(),
            "nothing for Claude to read as an answer"
        );
    }
    assert_eq!(total(d.path()), 0, "nothing declared");
}

#[test]
fn an_unanswered_question_prints_nothing_and_stays_open_for_the_post_hook() {
    let d = tempfile::tempdir().unwrap();
    let questions = json!([{"question": "Which?", "header": "H", "multiSelect": true,
        "options": [{"label": "a", "description": ""}, {"label": "b", "description": ""}]}]);
    let input = hook_input("AskUserQuestion", questions.clone());
    let out = oq(d.path(), &["hook", "claude-code", "--wait", "0"], &input);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "Claude shows its own dialog");
    let listed = oq(d.path(), &["list", "--json"], "");
    let item = serde_json::from_slice::<Value>(&listed.stdout).unwrap()["items"][0].clone();
    assert_eq!(item["status"], "open");
    assert_eq!(item["handedOff"], true, "handed to Claude's dialog: {item}");
    assert_eq!(item["prompts"][0]["multiple"], true);
    // The same tool call again is the same question, not a second one (nor a second
    // hand-off).
    let before = revision(d.path());
    oq(d.path(), &["hook", "claude-code", "--wait", "0"], &input);
    assert_eq!(total(d.path()), 1);
    assert_eq!(revision(d.path()), before);
    // The dialog's multiple choice comes back joined; it settles the question upstream.
    let mut post: Value = serde_json::from_str(&input).unwrap();
    post["hook_event_name"] = json!("PostToolUse");
    post["tool_input"]["answers"] = json!({"Which?": "a, b"});
    let out = oq(d.path(), &["hook", "claude-code"], &post.to_string());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let id = item["questionId"].as_str().unwrap();
    let shown: Value =
        serde_json::from_slice(&oq(d.path(), &["show", id, "--json"], "").stdout).unwrap();
    assert_eq!(shown["answer"]["answers"], json!([["a", "b"]]));
    assert_eq!(shown["answer"]["decisionSource"], "upstream");
    assert_eq!(shown["answer"]["respondidaPor"], "claude-code");
}

#[test]
fn install_merges_beside_the_users_hooks_and_uninstall_takes_out_only_ours() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("settings.json");
    let theirs = json!({"hooks": {"PreToolUse": [{"matcher": "AskUserQuestion",
        "hooks": [{"type": "command", "command": "my-logger"}]}]}, "model": "x"});
    std::fs::write(&file, theirs.to_string()).unwrap();
    let install = ["hook", "claude-code", "--install", "--wait", "30"];
    let out = oq(d.path(), &install, "");
    assert!(out.status.success(), "{out:?}");
    let once = std::fs::read(&file).unwrap();
    let v: Value = serde_json::from_slice(&once).unwrap();
    let pre = v["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "{v}");
    assert_eq!(pre[0], theirs["hooks"]["PreToolUse"][0]);
    let ours = &pre[1]["hooks"][0];
    assert_eq!(ours["timeout"], 40);
    let command = ours["command"].as_str().unwrap();
    assert!(
        command.contains("hook claude-code --agent 'dev-lead' --wait 30"),
        "{command}"
    );
    assert!(
        command.contains(&d.path().join("oq").display().to_string()),
        "{command}"
    );
    assert_eq!(v["hooks"]["PostToolUse"][0]["hooks"][0], *ours);
    // Again: nothing changes.
    let again = oq(d.path(), &install, "");
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing changed"));
    assert_eq!(std::fs::read(&file).unwrap(), once);
    let out = oq(d.path(), &["hook", "claude-code", "--uninstall"], "");
    assert!(out.status.success(), "{out:?}");
    let back: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(back, theirs);
    // A user scope is ~/.claude/settings.json.
    let user = oq(
        d.path(),
        &["hook", "claude-code", "--install", "--scope", "user"],
        "",
    );
    assert!(user.status.success(), "{user:?}");
}

#[test]
fn a_settings_file_that_is_not_json_is_refused_and_left_as_it_was() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("settings.local.json");
    for text in [
        "{\"hooks\": [oops",
        "[]",
        "{\"hooks\": {\"PostToolUse\": 3}}",
    ] {
        std::fs::write(&file, text).unwrap();
        for action in ["--install", "--uninstall"] {
            let out = oq(
                d.path(),
                &["hook", "claude-code", action, "--scope", "local"],
                "",
            );
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{text} {action}");
            assert!(
                err.contains("invalid_hook_settings"),
                "{text} {action}: {err}"
            );
            assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
        }
    }
}
