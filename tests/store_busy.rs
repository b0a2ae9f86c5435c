//! Readers never wait for writers (issue 15): while another process holds the store's
//! write lock (`BEGIN IMMEDIATE` here, in the test process; an `oq ask` held in its flush
//! below), `oq list`, the TUI and `oq serve` read at once; a writer waits a bounded time
//! and then reports `store_busy` (exit 9; 503 with `Retry-After` from the server),
//! naming the holder — as an oq door when it is one.
#![allow(clippy::unwrap_used)]

mod common;
mod common_fault;
mod common_pty;
mod serve_process;

use std::path::Path;

use common::{Out, engine, oq, run, spawn, store_file};
use common_fault::Faults;
use common_pty::Tui;
use oq::domain::{Actor, DeclareInput, Role, SessionKind};
use serde_json::json;
use serve_process::{DEV, Serve};

const BUSY_MS: &str = "300";

fn door(dir: &Path, args: &[&str]) -> Out {
    run(oq(dir, DEV)
        .env("OQ_STORE_BUSY_TIMEOUT_MS", BUSY_MS)
        .args(["-p", "loja"])
        .args(args))
}

fn seeded(dir: &Path) {
    let e = engine(dir);
    e.start_session(
        &Actor::person(DEV),
        "loja",
        SessionKind::Conversation,
        Some("s1"),
    )
    .unwrap();
    for i in 0..3 {
        e.declare(
            &Actor::agent(Role::Po),
            "loja",
            &DeclareInput {
                pergunta: format!("Question {i}?"),
                session_id: "s1".into(),
                ..Default::default()
            },
        )
        .unwrap();
    }
}

fn ask(dir: &Path, text: &str) -> Out {
    door(dir, &["ask", text, "--agent", "po", "--session", "s1"])
}

#[test]
fn while_another_program_holds_the_write_lock_every_door_reads_and_writers_hear_store_busy() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().join("data");
    seeded(&dir);
    let mut serve = Serve::with_store(Some(&dir));
    serve.start_with(&[("OQ_STORE_BUSY_TIMEOUT_MS", BUSY_MS)]);

    let holder = rusqlite::Connection::open(store_file(&dir)).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();

    // Reads: no wait, no lock.
    let listed = door(&dir, &["list", "--json"]);
    assert_eq!(listed.code, 0, "{listed:?}");
    assert_eq!(listed.json()["total"], 3);
    let mut tui = Tui::spawn_args(&["--data-dir", dir.to_str().unwrap(), "--as", DEV], &[]);
    tui.wait_text("Open questions (3)");
    tui.send(b"q");
    tui.wait_exit();

    // A writer: store_busy after the bounded wait, naming this (non-oq) process.
    let refused = ask(&dir, "While locked?");
    assert_eq!(refused.code, 9, "{refused:?}");
    assert!(refused.stderr.contains("store_busy"), "{refused:?}");
    let me = format!("pid {}", std::process::id());
    assert!(refused.stderr.contains(&me), "{refused:?}");
    assert!(refused.stderr.contains("not an oq process"), "{refused:?}");

    // The server reads, and refuses writes with a retryable 503.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let url = serve.base.clone() + "/projects/loja/open-questions";
    let (status, body) = rt.block_on(async {
        let r = client
            .get(&url)
            .bearer_auth(&serve.token)
            .send()
            .await
            .unwrap();
        (
            r.status().as_u16(),
            r.json::<serde_json::Value>().await.unwrap(),
        )
    });
    assert_eq!((status, body["total"].as_u64()), (200, Some(3)), "{body}");
    let (status, retry, body) = rt.block_on(async {
        let r = client
            .post(&url)
            .bearer_auth(&serve.agent_token)
            .json(&json!({"pergunta": "Declared while locked?", "sessionId": "s1"}))
            .send()
            .await
            .unwrap();
        let retry = r
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_string());
        (
            r.status().as_u16(),
            retry,
            r.json::<serde_json::Value>().await.unwrap(),
        )
    });
    assert_eq!(
        (status, body["code"].as_str()),
        (503, Some("store_busy")),
        "{body}"
    );
    assert!(retry.is_some(), "no Retry-After");

    // The lock goes: writes go through, nothing of the refused ones is there.
    holder.execute_batch("ROLLBACK").unwrap();
    assert_eq!(ask(&dir, "After the lock?").code, 0);
    let listed = door(&dir, &["list", "--json"]);
    assert_eq!(listed.json()["total"], 4, "{listed:?}");
}

#[test]
fn a_writer_waiting_on_an_oq_process_names_its_door() {
    let Some(faults) = Faults::new() else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().join("data");
    seeded(&dir);
    // `oq ask` flushes inside COMMIT, holding the write lock: held there, it is the holder.
    faults.hang_flushes();
    let mut held = oq(&dir, DEV);
    held.args([
        "-p",
        "loja",
        "ask",
        "Held in its flush?",
        "--agent",
        "po",
        "--session",
        "s1",
    ]);
    for (k, v) in faults.env() {
        held.env(k, v);
    }
    let held = spawn(&mut held);
    faults.wait_until_hanging();
    let pid = held.0.as_ref().unwrap().id();
    let refused = ask(&dir, "Behind it?");
    assert_eq!(refused.code, 9, "{refused:?}");
    assert!(
        refused.stderr.contains(&format!("oq ask (pid {pid})")),
        "{refused:?}"
    );
    // Reads still go.
    assert_eq!(door(&dir, &["list"]).code, 0);
    faults.release();
    let out = held.wait();
    assert_eq!(out.code, 0, "{out:?}");
}

#[test]
fn an_old_store_migrates_once_and_says_so() {
    use oq::engine::sqlite::{APPLICATION_ID, LATEST_VERSION, MIGRATIONS};
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().join("data");
    std::fs::create_dir_all(&dir).unwrap();
    let behind = LATEST_VERSION - 1;
    {
        let conn = rusqlite::Connection::open(store_file(&dir)).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        for step in &MIGRATIONS[..behind as usize] {
            conn.execute_batch(step).unwrap();
        }
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .unwrap();
        conn.pragma_update(None, "user_version", behind).unwrap();
    }
    let first = door(&dir, &["list"]);
    assert_eq!(first.code, 0, "{first:?}");
    assert!(
        first
            .stderr
            .contains(&format!("from schema v{behind} to v{LATEST_VERSION}")),
        "{first:?}"
    );
    let again = door(&dir, &["list"]);
    assert!(!again.stderr.contains("migrated"), "{again:?}");
}
