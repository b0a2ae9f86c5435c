//! The project's own harness for tests against a real Claude Code (npm
//! `@anthropic-ai/claude-code`, the version the shared peer notes checked).
//!
//! - [`Peer::start`] installs it with the repo's `.ci/claude-code.sh` under `target/`
//!   (once; later runs keep it), lays out a HOME that skips onboarding and trusts the
//!   work directory (what `../shared/peers/claude-code/start.sh` does), and starts
//!   `tests/claude_peer/fake_anthropic.py`, our scripted model, on a port it picks on
//!   127.0.0.1. Nothing reaches beyond loopback.
//! - The model is stopped on drop, and dies on its own when this test process's pipe to
//!   it closes, so a killed run leaks nothing. [`Peer::headless`] runs `claude -p` in its
//!   own process group and kills the group after it; an interactive Claude Code runs in
//!   `common_pty`'s pseudo-terminal, whose process group is killed the same way.
//! - Where the install fails (no npm), a test skips with the reason outside CI and fails
//!   in CI (`CI=true`).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub const OQ: &str = env!("CARGO_BIN_EXE_oq");
/// A generous bound for slow machines; loops return as soon as the thing happens.
pub const DEADLINE: Duration = Duration::from_secs(90);
const KEY: &str = "sk-ant-scripted-peer-0123456789";

#[path = "../common_ci/mod.rs"]
mod common_ci;

/// The `claude` binary, or `None` (skip, reason printed) outside CI when it cannot be
/// installed.
pub fn claude() -> Option<PathBuf> {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let got = BIN.get_or_init(|| common_ci::install("claude-code.sh"));
    common_ci::or_skip(got, "a real Claude Code")
}

/// A scripted model, a HOME and a work directory for one Claude Code.
pub struct Peer {
    model: Child,
    lifeline: Option<ChildStdin>,
    pub bin: PathBuf,
    pub port: u16,
    pub state: tempfile::TempDir,
}

impl Drop for Peer {
    fn drop(&mut self) {
        drop(self.lifeline.take());
        let _ = self.model.kill();
        let _ = self.model.wait();
    }
}

impl Peer {
    /// `None` when Claude Code is not available (outside CI).
    pub fn start() -> Option<Peer> {
        let bin = claude()?;
        let state = tempfile::Builder::new()
            .prefix("oq-claude-")
            .tempdir()
            .unwrap();
        let root = state.path();
        std::fs::create_dir_all(root.join("home/.claude")).unwrap();
        // Claude Code's Bun runtime unpacks a 5 MB library into TMPDIR per start: here,
        // not /tmp, so it goes with the test's directory.
        std::fs::create_dir_all(root.join("home/tmp")).unwrap();
        std::fs::create_dir_all(root.join("work")).unwrap();
        std::fs::create_dir_all(root.join("oq")).unwrap();
        let work = root.join("work");
        // Onboarding done, the work directory trusted, the key pre-approved (else an
        // interactive run asks about each).
        let dot = json!({
            "hasCompletedOnboarding": true, "theme": "dark",
            "customApiKeyResponses": {"approved": [&KEY[KEY.len() - 20..]], "rejected": []},
            "projects": {work.display().to_string(): {"hasTrustDialogAccepted": true, "allowedTools": []}}
        });
        std::fs::write(root.join("home/.claude.json"), dot.to_string()).unwrap();
        std::fs::write(root.join("home/.claude/settings.json"), "{}\n").unwrap();
        let port_file = root.join("model.port");
        let mut model = Command::new("python3")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/claude_peer/fake_anthropic.py"
            ))
            .arg(&port_file)
            .arg(root.join("requests.jsonl"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(root.join("model.err")).unwrap(),
            ))
            .spawn()
            .expect("start python3 fake_anthropic.py");
        let lifeline = model.stdin.take();
        let port = until("the scripted model's port", || {
            std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|p| p.trim().parse::<u16>().ok())
        });
        Some(Peer {
            model,
            lifeline,
            bin,
            port,
            state,
        })
    }

    pub fn home(&self) -> PathBuf {
        self.state.path().join("home")
    }
    pub fn work(&self) -> PathBuf {
        self.state.path().join("work")
    }
    /// The oq data dir of the test.
    pub fn data(&self) -> PathBuf {
        self.state.path().join("oq")
    }

    /// Claude Code's environment: this HOME, our model, MCP tools offered directly
    /// (`ENABLE_TOOL_SEARCH=false`), nothing else on the network.
    pub fn env(&self) -> Vec<(String, String)> {
        [
            ("HOME", self.home().display().to_string()),
            ("TMPDIR", self.home().join("tmp").display().to_string()),
            (
                "ANTHROPIC_BASE_URL",
                format!("http://127.0.0.1:{}", self.port),
            ),
            ("ANTHROPIC_API_KEY", KEY.to_string()),
            ("ENABLE_TOOL_SEARCH", "false".into()),
            ("DISABLE_TELEMETRY", "1".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// Every request the model received, oldest first.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(self.state.path().join("requests.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The text of every tool result the model was given, in order.
    pub fn tool_results(&self) -> Vec<String> {
        let last = self.requests().pop().unwrap_or(Value::Null);
        let mut out = Vec::new();
        for m in last["messages"].as_array().into_iter().flatten() {
            for part in m["content"].as_array().into_iter().flatten() {
                if part["type"] == "tool_result" {
                    out.push(match &part["content"] {
                        Value::String(s) => s.clone(),
                        Value::Array(xs) => xs.iter().filter_map(|x| x["text"].as_str()).collect(),
                        other => other.to_string(),
                    });
                }
            }
        }
        out
    }

    /// `claude -p PROMPT ARGS…` in the work directory, in its own process group (killed
    /// whole afterwards: the MCP servers it started too); its stdout, once it exits.
    pub fn headless(&self, prompt: &str, args: &[&str]) -> (bool, String) {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(&self.bin);
        cmd.current_dir(self.work())
            .arg("-p")
            .arg(prompt)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        for (k, v) in self.env() {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("start claude -p");
        let group = Group(child.id());
        let out = child.wait_with_output().expect("claude -p");
        drop(group);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        if !out.status.success() {
            eprintln!("claude -p stderr: {}", String::from_utf8_lossy(&out.stderr));
        }
        (out.status.success(), text)
    }

    /// `oq --data-dir <data> --as USER ARGS…` run in the work directory.
    pub fn oq(&self, user: &str, args: &[&str]) -> std::process::Output {
        Command::new(OQ)
            .current_dir(self.work())
            .env("HOME", self.home())
            .env_remove("OQ_AGENT")
            .env_remove("OQ_SOURCE")
            .env_remove("OQ_PROJECT")
            .arg("--data-dir")
            .arg(self.data())
            .arg("--as")
            .arg(user)
            .args(args)
            .output()
            .expect("run oq")
    }

    /// `oq … ARGS… --json` parsed.
    pub fn oq_json(&self, user: &str, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.oq(user, &all);
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "oq {args:?}: {e}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }
}

/// A process group killed when dropped (TERM, then KILL after a grace).
pub struct Group(pub u32);

impl Drop for Group {
    fn drop(&mut self) {
        let group = format!("-{}", self.0);
        let _ = Command::new("kill")
            .args(["-TERM", "--", &group])
            .stderr(Stdio::null())
            .status();
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until && group_alive(self.0) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status();
    }
}

/// Some process of group `pgid` is still there.
pub fn group_alive(pgid: u32) -> bool {
    Command::new("kill")
        .args(["-0", "--", &format!("-{pgid}")])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Polls `f` until it gives a value; panics naming `what` past [`DEADLINE`].
pub fn until<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}
