//! A real Claude Code in a pseudo-terminal with `oq hook claude-code --install`'s hooks,
//! and Esc: on Claude's own dialog (past the hook's wait), and while the hook still waits
//! for an answer in oq. Either way nobody answered, the agent was told so, and the oq
//! question ends closed as declined upstream — not left open for an answer nobody gets.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod claude_interactive;
mod common_claude;
mod common_pty;
mod serve_process;

use claude_interactive::*;
use common_claude::{Peer, until};
use serde_json::Value;

/// Past the wait, Esc on Claude's own dialog; then the person's next prompt.
fn decline_then_prompt(claude: &mut Claude) {
    claude.0.wait_text("Type something");
    claude.0.send(b"\x1b");
    claude.0.wait_text("Declined to answer");
    claude.0.send(b"what now?");
    claude.0.wait_text("what now?");
    claude.0.send(b"\r");
}

#[test]
fn a_dialog_declined_with_esc_closes_the_oq_question_as_declined_upstream_not_answered() {
    let Some(peer) = Peer::start() else { return };
    let mut claude = interactive(&peer, "1");
    let id = open_question(&peer)["questionId"]
        .as_str()
        .unwrap()
        .to_string();
    decline_then_prompt(&mut claude);
    let shown = until("the declined dialog's closure", || {
        let s = peer.oq_json("ana", &["show", &id]);
        (s["status"] != "open").then_some(s)
    });
    assert_eq!(shown["status"], "closed", "{shown}");
    assert!(shown["answer"].is_null(), "{shown}");
    assert_eq!(shown["closed"]["decisionSource"], "upstream", "{shown}");
    assert_eq!(shown["closed"]["by"], "claude-code", "{shown}");
    // Nobody waits for an answer now: oq refuses one rather than record it for nobody.
    let late = peer.oq("ana", &["answer", &id, "--answers-json", r#"[["SQLite"]]"#]);
    assert!(!late.status.success());
}

#[test]
fn on_oq_serve_a_dialog_declined_with_esc_closes_the_question_as_declined_upstream() {
    let Some(peer) = Peer::start() else { return };
    let (s, client, mut claude, id) = past_the_wait_on_serve(&peer);
    decline_then_prompt(&mut claude);
    let shown = until("the declined dialog's closure on the server", || {
        let out = s.run(&client, &["show", &id, "--json"]);
        let v: Value = serde_json::from_slice(&out.stdout).ok()?;
        (v["status"] != "open").then_some(v)
    });
    assert_eq!(shown["status"], "closed", "{shown}");
    assert!(shown["answer"].is_null(), "{shown}");
    assert_eq!(shown["closed"]["decisionSource"], "upstream", "{shown}");
}

/// The `oq hook claude-code` processes still running whose command line names `needle`
/// (the peer's data dir, or the server's address).
fn hook_processes(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = raw
            .split(|b| *b == 0)
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let is_hook = args.iter().any(|a| a == "hook") && args.iter().any(|a| a == "claude-code");
        if is_hook && args.iter().any(|a| a.contains(needle)) {
            out.push(pid);
        }
    }
    out
}

/// The hook is waiting for an answer in oq (its question is there, nothing printed):
/// Esc, and the hook is gone.
fn esc_while_waiting(claude: &mut Claude, needle: &str) {
    until("the waiting hook", || {
        (!hook_processes(needle).is_empty()).then_some(())
    });
    claude.0.send(b"\x1b");
    until("the interrupted hook to end", || {
        hook_processes(needle).is_empty().then_some(())
    });
}

#[test]
fn esc_while_the_hook_waits_ends_the_hook_and_closes_the_question_as_declined_upstream() {
    let Some(peer) = Peer::start() else { return };
    let mut claude = interactive(&peer, "300");
    let id = open_question(&peer)["questionId"]
        .as_str()
        .unwrap()
        .to_string();
    esc_while_waiting(&mut claude, &peer.data().display().to_string());
    // Closed by the hook as it goes, before any later prompt looks back.
    let shown = peer.oq_json("ana", &["show", &id]);
    assert_eq!(shown["status"], "closed", "{shown}");
    assert_eq!(shown["closed"]["decisionSource"], "upstream", "{shown}");
    // The next prompt's look-back finds it settled already and leaves it so.
    claude.0.send(b"what now?");
    claude.0.wait_text("what now?");
    claude.0.send(b"\r");
    claude.0.wait_text("DONE");
    let again = peer.oq_json("ana", &["show", &id]);
    assert_eq!(again, shown);
    assert_eq!(shown["status"], "closed", "{shown}");
    assert!(shown["answer"].is_null(), "{shown}");
    assert_eq!(shown["closed"]["decisionSource"], "upstream", "{shown}");
    assert_eq!(shown["closed"]["by"], "claude-code", "{shown}");
    let late = peer.oq("ana", &["answer", &id, "--answers-json", r#"[["SQLite"]]"#]);
    assert!(!late.status.success());
}

#[test]
fn on_oq_serve_esc_while_the_hook_waits_ends_it_and_closes_the_question_as_declined_upstream() {
    let Some(peer) = Peer::start() else { return };
    let (s, client) = serve_with_session(&peer);
    let mut claude = interactive_on(&peer, &s, "300");
    let id = server_question(&s, &client)["questionId"]
        .as_str()
        .unwrap()
        .to_string();
    esc_while_waiting(&mut claude, &s.base);
    let out = s.run(&client, &["show", &id, "--json"]);
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["status"], "closed", "{shown}");
    assert!(shown["answer"].is_null(), "{shown}");
    assert_eq!(shown["closed"]["decisionSource"], "upstream", "{shown}");
}
