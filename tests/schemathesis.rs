//! schemathesis (PyPI, installed by the repo's own `.ci/schemathesis.sh` into
//! `target/schemathesis/venv`) against a real `oq serve` (the built binary on a loopback
//! port) from its own `/openapi.json`, as a person and as an agent: every operation gets
//! generated requests, valid and invalid, and the run fails on any 5xx, a status the
//! document does not name for the route, a wrong content type or a body off its schema.
//!
//! Bounded for CI (seed 1, `OQ_SCHEMATHESIS_EXAMPLES` cases per operation and phase, 5 by
//! default, and 45 s per identity at most; `OQ_SCHEMATHESIS_SEED` and
//! `OQ_SCHEMATHESIS_SECONDS` explore further by hand); the ids it needs exist beforehand (a
//! session, an open question, a story and a task), so the routes are reached beyond their
//! 404. The event stream is left out: it never ends (its head is checked in
//! tests/openapi.rs); so is `/mcp`, MCP's JSON-RPC transport, which real MCP clients drive
//! (tests/mcp_serve.rs). Outside CI the test skips with the reason when schemathesis cannot
//! be installed; in CI it fails.
#![allow(clippy::unwrap_used)]

mod serve_process;

use std::path::{Path, PathBuf};
use std::process::Command;

use oq::domain::{Actor, Role, SessionKind};
use serve_process::{DEV, Serve};

fn target_dir() -> PathBuf {
    // target/tmp → target
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The venv's `st`, or `None` (skip) outside CI when it cannot be installed.
fn schemathesis() -> Option<PathBuf> {
    let out = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/.ci/schemathesis.sh"))
        .arg(target_dir())
        .output();
    let why = match out {
        Ok(o) if o.status.success() => {
            return Some(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
        }
        Ok(o) => format!(
            ".ci/schemathesis.sh failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => format!("cannot run .ci/schemathesis.sh: {e}"),
    };
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
    eprintln!("skipped: schemathesis is not available: {why}");
    None
}

#[test]
fn schemathesis_finds_no_5xx_and_no_reply_off_the_document() {
    let Some(st) = schemathesis() else { return };
    // The matrices send many wrong tokens from one address: the limiter is tested on
    // its own (serve_limits), and here it would only hide the routes behind 429.
    let mut s = Serve::with_config("\n\n[limits]\nauth_failures_per_minute = 1000000");
    let question = s.seed(1).remove(0);
    let e = s.engine();
    let po = Actor::agent(Role::Po);
    e.start_session(
        &Actor::person(DEV),
        "loja",
        SessionKind::Execution,
        Some("e1"),
    )
    .unwrap();
    let story = e.create_story(&po, "loja", "Checkout").unwrap().story_id;
    let task = e
        .create_task(&po, "loja", &story, "e1", "Build checkout")
        .unwrap()
        .task_id;
    drop(e);
    s.start();
    let config = s.dir.path().join("schemathesis.toml");
    std::fs::write(
        &config,
        format!(
            "[parameters]\n\"path.projectId\" = \"loja\"\n\"path.questionId\" = \"{question}\"\n\
             \"path.storyId\" = \"{story}\"\n\"path.taskId\" = \"{task}\"\n\"path.sessionId\" = \"s1\"\n"
        ),
    )
    .unwrap();
    let examples = std::env::var("OQ_SCHEMATHESIS_EXAMPLES").unwrap_or_else(|_| "5".into());
    // Another seed, or a longer run, explores further (by hand: the CI run stays seed 1).
    let seed = std::env::var("OQ_SCHEMATHESIS_SEED").unwrap_or_else(|_| "1".into());
    let max_time = std::env::var("OQ_SCHEMATHESIS_SECONDS").unwrap_or_else(|_| "45".into());
    for (who, token) in [("person", &s.token), ("agent", &s.agent_token)] {
        let out = Command::new(&st)
            .arg("--config-file")
            .arg(&config)
            .args(["run", &format!("{}/openapi.json", s.base)])
            .args(["-H", &format!("Authorization: Bearer {token}")])
            .args(["--checks", "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"])
            .args(["--exclude-path", "/projects/{projectId}/events", "--exclude-path", "/mcp"])
            .args(["--max-examples", &examples, "--max-time", &max_time, "--workers", "1"])
            .args(["--seed", &seed, "--generation-database", "none", "--no-color"])
            .current_dir(s.dir.path())
            .output()
            .unwrap();
        let report = String::from_utf8_lossy(&out.stdout);
        eprintln!("schemathesis as the {who}:\n{report}"); // shown with --nocapture
        assert!(
            out.status.success(),
            "schemathesis as the {who} failed:\n{report}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // It ran, and tested every operation it selected (all but the event stream and
        // /mcp's).
        let figure = |label: &str| {
            let line = report.lines().find_map(|l| l.trim().strip_prefix(label));
            line.unwrap_or_else(|| panic!("no {label} in {report}"))
                .trim()
                .to_string()
        };
        let selected = figure("Selected:");
        let selected = selected.split('/').next().unwrap().to_string();
        assert_eq!(figure("Tested:"), selected, "{report}");
        assert!(report.contains(" passed"), "{report}");
    }
    assert!(!s.stderr().contains("panicked"), "{}", s.stderr());
}
