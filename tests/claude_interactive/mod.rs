//! The interactive Claude Code of the tests: `claude` in a pseudo-terminal with `oq hook
//! claude-code --install`'s hooks (on the local engine or a real `oq serve`), `ASK` typed,
//! and what the tests read back (oq's question, the model's tool results).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use crate::common_claude::{self, Peer, until};
use crate::common_pty::Tui;
use crate::serve_process;
use serde_json::Value;

pub const ASK: &str = r#"CALL: {"name": "AskUserQuestion", "input": {"questions": [{"question": "Which database should we use?", "header": "Database", "options": [{"label": "Postgres", "description": "relational"}, {"label": "SQLite", "description": "embedded"}], "multiSelect": false}]}}"#;

/// The one open question of the store, once there is one.
pub fn open_question(peer: &Peer) -> Value {
    until("the question in oq's queue", || {
        let list = peer.oq_json("ana", &["list"]);
        list["items"].as_array()?.first().cloned()
    })
}

/// Claude Code in a pty with the hooks installed (waiting `wait` seconds) on the local
/// engine, `ASK` typed.
pub fn interactive(peer: &Peer, wait: &str) -> Claude {
    let out = peer.oq("ana", &["hook", "claude-code", "--install", "--wait", wait]);
    assert!(out.status.success(), "{out:?}");
    ask_in_pty(peer, &[])
}

/// Claude Code in a pty with the hooks installed for the server `s` (its agent's token
/// in Claude's environment only, never in the settings), `ASK` typed.
pub fn interactive_on(peer: &Peer, s: &serve_process::Serve, wait: &str) -> Claude {
    let out = std::process::Command::new(common_claude::OQ)
        .current_dir(peer.work())
        .env("HOME", peer.home())
        .env_remove("OQ_TOKEN")
        .args([
            "--source",
            &s.base,
            "-p",
            "loja",
            "hook",
            "claude-code",
            "--install",
        ])
        .args(["--wait", wait, "--session", "loja.checkout"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let settings = std::fs::read_to_string(peer.work().join(".claude/settings.json")).unwrap();
    assert!(!settings.contains(&s.agent_token), "{settings}");
    assert!(settings.contains("--session 'loja.checkout'"), "{settings}");
    ask_in_pty(peer, &[("OQ_TOKEN".into(), s.agent_token.clone())])
}

pub fn ask_in_pty(peer: &Peer, extra_env: &[(String, String)]) -> Claude {
    let settings = peer.work().join(".claude/settings.json");
    assert!(
        settings.exists(),
        "project scope writes .claude/settings.json"
    );
    let mut env = peer.env();
    env.extend(extra_env.iter().cloned());
    let mut tui = Tui::spawn_program(&peer.bin, &peer.work(), &env);
    // The prompt box is drawn with its footer; keys sent before it are not read.
    tui.wait_text("shift+tab to cycle");
    tui.send(ASK.as_bytes());
    tui.wait_text(r#""multiSelect": false}]}}"#);
    tui.send(b"\r");
    Claude(tui)
}

/// A server with the session `loja.checkout` dev-a started; the client dir to run oq in.
pub fn serve_with_session(peer: &Peer) -> (serve_process::Serve, std::path::PathBuf) {
    let mut s = serve_process::Serve::new();
    s.start();
    let client = peer.state.path().join("client");
    let started = s.run(
        &client,
        &["session", "start", "--id", "loja.checkout", "--json"],
    );
    assert!(started.status.success(), "{started:?}");
    (s, client)
}

/// On a server, the hook waiting 1 s: its question's id once it is there.
pub fn past_the_wait_on_serve(
    peer: &Peer,
) -> (serve_process::Serve, std::path::PathBuf, Claude, String) {
    let (s, client) = serve_with_session(peer);
    let claude = interactive_on(peer, &s, "1");
    let id = server_question(&s, &client)["questionId"]
        .as_str()
        .unwrap()
        .to_string();
    (s, client, claude, id)
}

/// The server's one question, once there is one (any status).
pub fn server_question(s: &serve_process::Serve, client: &std::path::Path) -> Value {
    until("the question on the server", || {
        let out = s.run(client, &["list", "--status", "all", "--json"]);
        let v: Value = serde_json::from_slice(&out.stdout).ok()?;
        v["items"].as_array()?.first().cloned()
    })
}

/// The interactive Claude Code; its whole process group (hooks included) stopped on drop.
pub struct Claude(pub Tui);

impl Drop for Claude {
    fn drop(&mut self) {
        self.0.kill_group();
    }
}

pub fn answered_text(peer: &Peer, label: &str) -> String {
    let want =
        format!("Your questions have been answered: \"Which database should we use?\"=\"{label}\"");
    until(&format!("the model to receive {want:?}"), || {
        peer.tool_results().into_iter().find(|r| r.contains(&want))
    })
}
