//! The harness for tests against the official Python MCP client (PyPI `mcp`).
//!
//! - [`python`] installs it with the repo's own `.ci/mcp-python.sh` into
//!   `target/mcp-peer/venv`, once (later runs keep it); where that fails, a test skips
//!   with the reason outside CI and fails in CI (`CI=true`).
//! - [`run_plan`] runs `tests/mcp_peer/client.py` with a plan (the server, the steps)
//!   and returns its observations, one per step (step 0 is `initialize`'s result). The
//!   client starts `oq mcp` itself (stdio) and stops it when the session ends.
//! - [`stdio`] is the server part of a plan: `oq mcp` for an agent, with its pid in a
//!   file so a test can kill it mid-call.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};

pub const OQ: &str = env!("CARGO_BIN_EXE_oq");

#[path = "../common_ci/mod.rs"]
mod common_ci;

/// The venv's python with `mcp` installed, or `None` (skip) outside CI when it cannot be.
pub fn python() -> Option<PathBuf> {
    static PY: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let got = PY.get_or_init(|| common_ci::install("mcp-python.sh"));
    common_ci::or_skip(got, "the Python MCP client")
}

/// `oq mcp` over stdio as `user`'s agent `role`, its pid written to `<dir>/mcp.pid`.
pub fn stdio(dir: &Path, user: &str, role: &str, extra: &[&str]) -> Value {
    let mut cmd = format!(
        "echo $$ > '{}/mcp.pid'; exec '{OQ}' --data-dir '{}' --as {user} mcp --agent {role}",
        dir.display(),
        dir.display()
    );
    for e in extra {
        cmd.push_str(&format!(" '{e}'"));
    }
    json!({"stdio": ["sh", "-c", cmd], "env": {"OQ_LOG": "info"}})
}

/// The client's observations of `steps` against `server`.
pub fn run_plan(py: &Path, server: Value, steps: Value) -> Vec<Value> {
    run_plan_with(py, json!({"server": server, "steps": steps}))
}

pub fn run_plan_with(py: &Path, plan: Value) -> Vec<Value> {
    let out = Command::new(py)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/mcp_peer/client.py"
        ))
        .arg(plan.to_string())
        .output()
        .expect("run the Python MCP client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the client failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout.lines().last().unwrap_or("[]");
    serde_json::from_str(line).unwrap_or_else(|e| panic!("client output {line:?}: {e}"))
}

/// `oq --data-dir DIR --as USER ARGS… --json`: its JSON output, or the error body.
pub fn oq_json(dir: &Path, user: &str, args: &[&str]) -> Value {
    let out = Command::new(OQ)
        .env_remove("OQ_AGENT")
        .env_remove("OQ_SOURCE")
        .env_remove("OQ_PROJECT")
        .arg("--data-dir")
        .arg(dir)
        .arg("--as")
        .arg(user)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// The refusal code of a tool call's observation (`None` when it succeeded).
pub fn code(obs: &Value) -> Option<&str> {
    if obs["isError"] != json!(true) {
        return None;
    }
    obs["structured"]["code"].as_str()
}
