//! Files at rest are private whatever the umask: the built `oq serve` and `oq` client,
//! started under umask 000 and 022, leave every directory they create 0700 and every
//! file 0600 — the store with its WAL and SHM, the log, the bridge's settings, the
//! client's outbox and offline mirror — and the writers a terminal session uses (drafts,
//! the editor's file) do the same. An existing data dir that others can read is warned
//! about at start.
#![cfg(unix)]
#![allow(clippy::unwrap_used)]

mod serve_process;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serve_process::{OQ, Serve};

/// An upstream nobody listens on: the bridge exists (so its settings can be written)
/// without any OpenCode running.
const OPENCODE: &str = "\n\n[[opencode]]\nname = \"laptop\"\nurl = \"http://127.0.0.1:9\"\ndirectories = [\"/srv/nowhere\"]\nproject = \"loja\"\nanswerer = \"dev-a\"\n";

/// Every directory and file under `root` with its permission bits.
fn modes(root: &Path) -> Vec<(PathBuf, bool, u32)> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        out.push((dir.clone(), true, mode(&dir)));
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else {
                out.push((path.clone(), false, mode(&path)));
            }
        }
    }
    out
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn assert_private(root: &Path, umask: &str, must_hold: &[&str]) {
    let all = modes(root);
    for (path, is_dir, m) in &all {
        let want = if *is_dir { 0o700 } else { 0o600 };
        assert_eq!(*m, want, "umask {umask}: {} is {m:o}", path.display());
    }
    for name in must_hold {
        assert!(
            all.iter().any(|(p, _, _)| p.ends_with(name)),
            "umask {umask}: no {name} in {all:?}"
        );
    }
}

/// `oq` as a client of `s` with its own data dir, under `umask`.
fn client(s: &Serve, umask: &str, data: &Path, args: &[&str]) -> std::process::Output {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
        .arg(OQ)
        .arg("--data-dir")
        .arg(data)
        .args(["--source", &s.base, "--token", &s.token, "-p", "loja"])
        .args(args)
        .env_remove("OQ_SOURCE")
        .env_remove("OQ_TOKEN");
    c.output().unwrap()
}

#[test]
fn server_and_client_files_are_private_under_any_umask() {
    for umask in ["000", "022"] {
        let mut s = Serve::with_config(OPENCODE);
        s.start_under(Some(umask));
        let question = s.seed(1).remove(0);
        let client_dir = s.dir.path().join("client");
        // A list (the mirror), an answer (the outbox), a setting (the bridge's file).
        let out = client(&s, umask, &client_dir, &["list", "--json"]);
        assert!(out.status.success(), "{out:?}");
        let out = client(
            &s,
            umask,
            &client_dir,
            &["answer", &question, "--text", "Yes"],
        );
        assert!(out.status.success(), "{out:?}");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let status = rt.block_on(async {
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::Client::new()
                .put(format!("{}/api/question-auto-delegate/settings", s.base))
                .bearer_auth(&s.token)
                .json(&serde_json::json!({"enabled": false}))
                .send()
                .await
                .unwrap()
                .status()
        });
        assert_eq!(status, 200);
        // While it runs: the WAL and SHM beside the store.
        assert_private(
            &s.store_dir(),
            umask,
            &[
                "oq.sqlite3",
                "oq.sqlite3-wal",
                "oq.sqlite3-shm",
                "logs/serve.log",
            ],
        );
        assert_eq!(s.stop(), Some(0), "{}", s.stderr());
        assert_private(
            &s.store_dir(),
            umask,
            &[
                "oq.sqlite3",
                "logs/serve.log",
                "opencode-laptop.settings.json",
            ],
        );
        assert_private(&client_dir, umask, &["outbox.sqlite3", "mirror"]);
        assert!(!s.stderr().contains("readable by others"), "{}", s.stderr());
    }
}

#[test]
fn an_existing_data_dir_readable_by_others_is_warned_about() {
    let mut s = Serve::new();
    std::fs::create_dir(s.store_dir()).unwrap();
    std::fs::set_permissions(s.store_dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
    s.start();
    assert_eq!(s.stop(), Some(0));
    let err = s.stderr();
    assert!(
        err.contains("WARNING") && err.contains("readable by others") && err.contains("755"),
        "{err}"
    );
    // Its mode is the owner's choice: warned about, not changed; what oq made in it is
    // private all the same.
    assert_eq!(mode(&s.store_dir()), 0o755);
    assert_eq!(mode(&s.store_dir().join("oq.sqlite3")), 0o600);
    let log = std::fs::read_to_string(s.store_dir().join("logs/serve.log")).unwrap();
    assert!(log.contains("data dir readable by others"), "{log}");
}

/// The writers of a terminal session, in a child of this test started under umask 000
/// (the umask is the process's: the parent's other tests keep theirs).
#[test]
fn drafts_and_the_editors_file_are_private_under_umask_000() {
    const CHILD: &str = "OQ_FILE_MODES_CHILD";
    if let Ok(dir) = std::env::var(CHILD) {
        let dir = PathBuf::from(dir);
        let drafts = oq::tui::drafts::Drafts::new(&dir);
        drafts.save("q-1", "a draft").unwrap();
        drafts.save("q-1", "a second draft").unwrap();
        oq::private_fs::create_dir(&dir.join("edit")).unwrap();
        oq::private_fs::create(&dir.join("edit/.edit-q-1.md")).unwrap();
        oq::private_fs::write_atomically(&dir.join("nested/deeper/file.json"), b"{}").unwrap();
        assert_private(
            &dir,
            "000",
            &["drafts/q-1.txt", "edit/.edit-q-1.md", "file.json"],
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = Command::new("sh")
        .arg("-c")
        .arg("umask 000 && exec \"$0\" --exact drafts_and_the_editors_file_are_private_under_umask_000 --nocapture")
        .arg(std::env::current_exe().unwrap())
        .env(CHILD, &data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(data.join("drafts/q-1.txt").exists(), "the child ran");
}
