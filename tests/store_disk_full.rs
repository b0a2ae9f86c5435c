//! A full disk is a state, not a crash (issue 15): on a real ext4 filled to 0, 4, 16
//! and 64 KiB free, every door — `oq list`/`show`/`ask`/`answer`, the TUI, `oq serve` —
//! keeps reading, refuses writes with `disk_full` (exit 9, HTTP 507) naming the place,
//! never dies of a signal, writes nothing half-way, leaves no stray file behind a failed
//! open, and writes again once space returns. Needs root to mount (CI runs as root).
#![allow(clippy::unwrap_used)]

mod common;
mod common_disk;
mod common_pty;
mod serve_process;

use std::path::Path;
use std::time::Duration;

use common::{Out, oq, run};
use common_disk::SmallDisk;
use common_pty::Tui;
use serde_json::{Value, json};
use serve_process::{DEV, Serve};

/// Writes tried before the disk must have said it is full.
const WRITES_UNTIL_FULL: usize = 400;

fn door(dir: &Path, args: &[&str]) -> Out {
    let out = run(oq(dir, DEV).args(["-p", "loja"]).args(args));
    // A signal (SIGBUS was exit 135) leaves no exit code.
    assert!(out.code >= 0, "{args:?} died of a signal: {out:?}");
    out
}

fn total(dir: &Path) -> u64 {
    let out = door(dir, &["list", "--status", "all", "--json"]);
    assert_eq!(out.code, 0, "list while full: {out:?}");
    out.json()["total"].as_u64().unwrap()
}

/// A refusal is `disk_full` with the place, exit 9 — never internal, never "I/O error".
fn assert_disk_full(out: &Out, place: &Path) {
    assert_eq!(out.code, 9, "{out:?}");
    assert!(out.stderr.contains("disk_full"), "{out:?}");
    assert!(
        out.stderr
            .contains(&format!("no space left on {}", place.display())),
        "{out:?}"
    );
}

fn http(rt: &tokio::runtime::Runtime, req: reqwest::RequestBuilder) -> (u16, Value) {
    rt.block_on(async {
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    })
}

#[test]
fn every_door_reads_refuses_writes_cleanly_and_writes_again_when_space_returns() {
    for kib in [0, 4, 16, 64] {
        let Some(disk) = SmallDisk::new(16) else {
            return;
        };
        eprintln!("--- {kib} KiB free");
        full_disk_at(&disk, kib);
    }
}

fn full_disk_at(disk: &SmallDisk, kib: u64) {
    let data = disk.path("data");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    // A store in use: questions in dev-a's session, with suggestions to accept.
    let out = door(&data, &["session", "start", "--id", "s1"]);
    assert_eq!(out.code, 0, "{out:?}");
    let mut asked = Vec::new();
    for i in 0..3 {
        let out = door(
            &data,
            &[
                "ask",
                &format!("Seeded {i}?"),
                "--agent",
                "po",
                "--suggest",
                "yes",
                "--session",
                "s1",
            ],
        );
        assert_eq!(out.code, 0, "{out:?}");
        asked.push(out.stdout.trim().to_string());
    }
    let mut serve = Serve::with_store(Some(&data));
    serve.start();
    let list_url = serve.base.clone() + "/projects/loja/open-questions?status=all";
    let declare_url = serve.base.clone() + "/projects/loja/open-questions";
    disk.fill_to(kib);
    let mut expected = total(&data);

    // Reads go on.
    assert_eq!(door(&data, &["show", &asked[1]]).code, 0);
    let (status, body) = http(&rt, client.get(&list_url).bearer_auth(&serve.token));
    assert_eq!(status, 200, "{body}");

    // Writes until the disk says it is full: each either lands whole or is refused.
    let mut refused = None;
    for i in 0..WRITES_UNTIL_FULL {
        let out = door(
            &data,
            &[
                "ask",
                &format!("While full {i}?"),
                "--agent",
                "po",
                "--session",
                "s1",
            ],
        );
        if out.code == 0 {
            expected += 1;
            continue;
        }
        assert_disk_full(&out, &data);
        refused = Some(out);
        break;
    }
    assert!(refused.is_some(), "the disk never filled at {kib} KiB");
    assert_eq!(
        total(&data),
        expected,
        "a refused ask left something behind"
    );
    let out = door(&data, &["answer", &asked[0], "--accept"]);
    if out.code != 0 {
        assert_disk_full(&out, &data);
    }
    let answered_locally = out.code == 0;

    // The server: its writes are 507 disk_full, its reads 200, and it stays up.
    let declare = json!({"pergunta": "From the server?", "sessionId": "s1"});
    let mut server_full = false;
    for _ in 0..WRITES_UNTIL_FULL {
        let (status, body) = http(
            &rt,
            client
                .post(&declare_url)
                .bearer_auth(&serve.agent_token)
                .json(&declare),
        );
        if status == 201 {
            expected += 1;
            continue;
        }
        assert_eq!(
            (status, body["code"].as_str()),
            (507, Some("disk_full")),
            "{body}"
        );
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("no space left on"),
            "{body}"
        );
        server_full = true;
        break;
    }
    assert!(server_full, "the server never said the disk is full");
    let (status, _) = http(&rt, client.get(serve.base.clone() + "/healthz"));
    assert_eq!(status, 200);
    let (status, body) = http(&rt, client.get(&list_url).bearer_auth(&serve.token));
    assert_eq!(
        (status, body["total"].as_u64()),
        (200, Some(expected)),
        "{body}"
    );

    // The TUI opens on the full disk, shows the queue, and says why an answer failed.
    let mut tui = Tui::spawn_args(
        &[
            "--data-dir",
            data.to_str().unwrap(),
            "--as",
            DEV,
            "-p",
            "loja",
        ],
        &[],
    );
    tui.wait_text("Open questions");
    if !answered_locally {
        // The rows, not just the pane's title: `a` before them selects nothing.
        tui.wait_text("> Seeded 0?");
        tui.send(b"a");
        tui.wait_text("Record this in your name?");
        tui.send(b"a");
        tui.wait_text("no space left on");
    }
    tui.send(b"q");
    tui.wait_exit();

    // A new store cannot be made on a full disk, and its failed open leaves nothing.
    let fresh = disk.path("fresh");
    let out = door(&fresh, &["list"]);
    if out.code != 0 {
        assert_disk_full(&out, &fresh);
        let left: Vec<_> = std::fs::read_dir(&fresh)
            .map(|d| d.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "a failed open left {left:?}");
    }
    assert_eq!(total(&data), expected, "something was half-written");

    // Space returns: every door writes again, without a restart.
    disk.release();
    let out = door(
        &data,
        &["ask", "After the disk was freed?", "--agent", "po"],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let (status, body) = http(
        &rt,
        client
            .post(&declare_url)
            .bearer_auth(&serve.agent_token)
            .json(&declare),
    );
    assert_eq!(status, 201, "{body}");
    assert_eq!(total(&data), expected + 2);
    serve.kill();
    std::thread::sleep(Duration::from_millis(50));
}
