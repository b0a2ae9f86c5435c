//! End to end in a real pseudo-terminal: the built `oq` binary on a real local store
//! filled by `oq demo`. The screen is rebuilt from the output stream by a small VT
//! interpreter (cursor moves, clears, text), and every wait is for screen content with
//! a generous deadline — no durations are asserted. Every child is killed on drop.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common_pty;

use std::path::Path;
use std::process::Command;

use common_pty::{BIN, Tui, demo_store};

fn oq(dir: &Path, user: &str, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .arg("--data-dir")
        .arg(dir)
        .arg("--as")
        .arg(user)
        .args(args)
        .output()
        .expect("run oq")
}

fn open_items(dir: &Path, user: &str) -> Vec<serde_json::Value> {
    let out = oq(dir, user, &["list", "--json", "--status", "open"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("list json");
    v["items"].as_array().cloned().unwrap_or_default()
}

#[test]
fn the_author_accepts_types_a_multi_line_answer_and_sees_live_changes() {
    let data = demo_store();
    let mut tui = Tui::spawn(data.path(), "dev-a");
    tui.wait_text("Open questions (6)");
    tui.wait_text("6 questions are still open — answer (o)");
    // Move through the queue and back.
    tui.send(b"j");
    tui.send(b"j");
    tui.send(b"k");
    tui.send(b"g");
    tui.wait_text("Which payment provider should checkout offer first?");
    tui.send(b"a");
    // What will be recorded, then the same key again records it.
    tui.wait_text("Record this in your name?");
    tui.send(b"a");
    tui.wait_text("Open questions (5)");
    tui.wait_text("suggestion accepted");
    // The top row is now the guest-checkout question (dev-a's, no suggestion).
    tui.send(b"g");
    tui.wait_text("Should guest checkout be supported");
    tui.send(b"i");
    tui.typed("Accounts optional");
    tui.send(b"\n"); // Ctrl-J: a new line
    tui.typed("guests get an order link");
    tui.send(b"\r"); // Enter: send
    tui.wait_text("Open questions (4)");
    tui.wait_text("answer recorded");
    let answered = oq(
        data.path(),
        "dev-a",
        &["list", "--json", "--status", "answered"],
    );
    let text = String::from_utf8_lossy(&answered.stdout);
    assert!(
        text.contains("Accounts optional\\nguests get an order link"),
        "{text}"
    );

    // Another process answers a question: it leaves the screen without a key press.
    let other = open_items(data.path(), "dev-a")
        .into_iter()
        .rev()
        .find(|q| q["canAnswer"] == true)
        .expect("an answerable question");
    let id = other["questionId"].as_str().unwrap().to_string();
    let pergunta = other["pergunta"]
        .as_str()
        .unwrap()
        .chars()
        .take(12)
        .collect::<String>();
    let out = oq(
        data.path(),
        "dev-a",
        &["answer", &id, "--text", "decided from the CLI"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    tui.wait_for("the CLI's answer to show", |s| {
        s.contains("Open questions (3)") && !s.contains(&pergunta)
    });

    tui.send(b"q");
    tui.wait_exit();
    tui.assert_restored();
}

#[test]
fn a_non_author_cannot_answer_by_any_key() {
    let data = demo_store();
    let before = open_items(data.path(), "dev-a").len();
    let mut tui = Tui::spawn(data.path(), "ana");
    tui.wait_text("Which payment provider should checkout offer first?");
    tui.send(b"a");
    tui.wait_text("only the person who started this session");
    for keys in [
        &b"a"[..],
        b"i",
        b"e",
        b"\r",
        b"\x1b\r",
        b"\n",
        b"y",
        b"\x05",
        b"\x1b",
    ] {
        tui.send(keys);
    }
    tui.typed("yes please");
    tui.send(b"\r");
    tui.wait_text("only the person who started this session");
    assert_eq!(
        open_items(data.path(), "dev-a").len(),
        before,
        "nothing was answered"
    );
    // A notice may stand (it takes every key but Ctrl-C).
    tui.send(b"\x03");
    tui.wait_exit();
    tui.assert_restored();
}

/// Opens the answer field on dev-a's guest-checkout question and types `text`.
fn type_a_draft(tui: &mut Tui, text: &str) {
    tui.wait_text("Open questions (6)");
    tui.send(b"g");
    tui.send(b"j");
    tui.wait_text("Should guest checkout be supported");
    tui.send(b"i");
    tui.typed(text);
    tui.wait_text(text);
}

/// The texts of the drafts saved in the data dir.
fn drafts_on_disk(data: &Path) -> Vec<String> {
    std::fs::read_dir(data.join("drafts"))
        .expect("drafts dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".txt"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect()
}

#[test]
fn sigterm_restores_the_terminal_and_keeps_the_draft() {
    let data = demo_store();
    let mut tui = Tui::spawn(data.path(), "dev-a");
    type_a_draft(&mut tui, "half a thought");
    tui.signal("TERM");
    tui.wait_exit();
    tui.assert_restored();
    let drafts = drafts_on_disk(data.path());
    assert_eq!(drafts, vec!["half a thought".to_string()]);

    // The draft comes back when the question is reopened.
    let mut again = Tui::spawn(data.path(), "dev-a");
    again.wait_text("Open questions (6)");
    again.send(b"j");
    again.wait_text("half a thought");
    again.send(b"q");
    again.wait_exit();
}

#[test]
fn sighup_restores_the_terminal() {
    let data = demo_store();
    let mut tui = Tui::spawn(data.path(), "dev-a");
    tui.wait_text("Open questions (6)");
    tui.signal("HUP");
    tui.wait_exit();
    tui.assert_restored();
}

#[test]
fn a_panic_restores_the_terminal_and_keeps_the_draft() {
    let data = demo_store();
    let mut tui = Tui::spawn_with(data.path(), "dev-a", &[("OQ_TEST_PANIC_KEY", "~")]);
    type_a_draft(&mut tui, "kept across a panic");
    tui.send(b"~");
    tui.wait_exit();
    tui.assert_restored_then_text();
    let drafts = drafts_on_disk(data.path());
    assert_eq!(drafts, vec!["kept across a panic".to_string()]);
}

#[test]
fn sighup_keeps_the_draft() {
    let data = demo_store();
    let mut tui = Tui::spawn(data.path(), "dev-a");
    type_a_draft(&mut tui, "kept across a hangup");
    tui.signal("HUP");
    tui.wait_exit();
    tui.assert_restored();
    let drafts = drafts_on_disk(data.path());
    assert_eq!(drafts, vec!["kept across a hangup".to_string()]);
}

/// A real `oq serve` from the built binary on a loopback port the OS picks, with people
/// dev-a and ana and the agent po-bot in `loja`; killed on drop.
struct Served {
    child: std::process::Child,
    base: String,
    tokens: Vec<(String, String)>,
    _dir: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    fn start() -> Served {
        use std::io::BufRead;
        let dir = tempfile::tempdir().expect("server dir");
        let mut config = String::from("listen = \"127.0.0.1:0\"\ndata_dir = \"data\"\n");
        let mut tokens = Vec::new();
        for (name, kind) in [
            ("dev-a", "kind = \"person\""),
            ("ana", "kind = \"person\""),
            ("po-bot", "kind = \"agent\"\nrole = \"po\""),
        ] {
            let out = Command::new(BIN)
                .args(["token", "--json"])
                .output()
                .expect("token");
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("token json");
            config.push_str(&format!(
                "\n[[users]]\nid = \"{name}\"\n{kind}\ntoken_sha256 = \"{}\"\n",
                v["tokenSha256"].as_str().unwrap()
            ));
            tokens.push((name.to_string(), v["token"].as_str().unwrap().to_string()));
        }
        config.push_str("\n[[projects]]\nid = \"loja\"\nmembers = [\"dev-a\", \"ana\"]\nagents = [\"po-bot\"]\n");
        let path = dir.path().join("serve.toml");
        std::fs::write(&path, config).expect("config");
        let mut child = Command::new(BIN)
            .args(["serve", "--config"])
            .arg(&path)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("oq serve");
        let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let base = loop {
            let line = lines
                .next()
                .expect("the server says where it listens")
                .unwrap();
            if let Some(rest) = line.split("listening on ").nth(1) {
                break rest.trim().to_string();
            }
        };
        std::thread::spawn(move || for _ in lines {});
        Served {
            child,
            base,
            tokens,
            _dir: dir,
        }
    }

    fn token(&self, who: &str) -> &str {
        &self.tokens.iter().find(|(n, _)| n == who).unwrap().1
    }

    /// A door against the server as `who`, with its own data dir for the outbox.
    fn oq(&self, who: &str, data: &Path, args: &[&str]) -> std::process::Output {
        Command::new(BIN)
            .args([
                "--source",
                &self.base,
                "--token",
                self.token(who),
                "-p",
                "loja",
                "--data-dir",
            ])
            .arg(data)
            .args(args)
            .output()
            .expect("run oq")
    }

    fn tui(&self, who: &str, data: &Path) -> Tui {
        Tui::spawn_args(
            &[
                "--source",
                &self.base,
                "--token",
                self.token(who),
                "-p",
                "loja",
                "--data-dir",
                data.to_str().unwrap(),
            ],
            &[],
        )
    }
}

#[test]
fn the_tui_on_a_real_oq_serve_answers_and_sees_another_client() {
    let served = Served::start();
    let data = tempfile::tempdir().expect("client dir");
    let session = served.oq("dev-a", data.path(), &["session", "start"]);
    let session = String::from_utf8_lossy(&session.stdout).trim().to_string();
    assert!(session.starts_with("s-"), "session {session:?}");
    for (q, suggest) in [
        ("Ship on Fridays?", Some("No, Thursdays")),
        ("Which logo colour?", None),
    ] {
        let mut args = vec!["ask", q, "--session", &session];
        if let Some(s) = suggest {
            args.extend(["--suggest", s]);
        }
        let out = served.oq("po-bot", data.path(), &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut tui = served.tui("dev-a", data.path());
    tui.wait_text("Open questions (2)");
    tui.send(b"g");
    tui.wait_text("Ship on Fridays?");
    tui.send(b"a");
    tui.wait_text("Record this in your name?");
    tui.send(b"a");
    tui.wait_text("Open questions (1)");
    // Another client answers the other one: it leaves without a key press.
    let list = served.oq("dev-a", data.path(), &["list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&list.stdout).expect("list");
    let id = v["items"][0]["questionId"]
        .as_str()
        .expect("one left")
        .to_string();
    let out = served.oq("dev-a", data.path(), &["answer", &id, "--text", "Teal"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    tui.wait_text("Open questions (0)");
    tui.send(b"q");
    tui.wait_exit();
    tui.assert_restored();
    // The server holds both answers, the TUI's with the suggestion accepted.
    let answered = served.oq(
        "dev-a",
        data.path(),
        &["list", "--status", "answered", "--json"],
    );
    let v: serde_json::Value = serde_json::from_slice(&answered.stdout).expect("answered");
    assert_eq!(v["total"], 2);
    assert!(
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|q| q["answer"]["aceitouSugestao"] == true)
    );
}

#[test]
fn on_a_real_oq_serve_a_non_author_cannot_answer() {
    let served = Served::start();
    let data = tempfile::tempdir().expect("client dir");
    let session = served.oq("dev-a", data.path(), &["session", "start"]);
    let session = String::from_utf8_lossy(&session.stdout).trim().to_string();
    let out = served.oq(
        "po-bot",
        data.path(),
        &[
            "ask",
            "Ship on Fridays?",
            "--suggest",
            "No",
            "--session",
            &session,
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut tui = served.tui("ana", data.path());
    tui.wait_text("Ship on Fridays?");
    for keys in [&b"a"[..], b"i", b"\r"] {
        tui.send(keys);
    }
    tui.typed("yes");
    tui.send(b"\r");
    tui.wait_text("only the person who started this session");
    // A notice may stand (it takes every key but Ctrl-C).
    tui.send(b"\x03");
    tui.wait_exit();
    tui.assert_restored();
    let open = served.oq("dev-a", data.path(), &["list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&open.stdout).expect("list");
    assert_eq!(v["total"], 1, "nothing was answered");
}

#[test]
fn oq_demo_on_a_terminal_fills_the_store_and_opens_the_tui() {
    let data = tempfile::tempdir().expect("data dir");
    let dir = data.path().to_str().unwrap();
    let mut tui = Tui::spawn_args(&["--data-dir", dir, "--as", "dev-a", "demo"], &[]);
    tui.wait_text("Open questions (6)");
    tui.wait_text("Waiting for you (1)");
    tui.send(b"q");
    tui.wait_exit();
    tui.assert_restored();
    assert_eq!(open_items(data.path(), "dev-a").len(), 6);
    // The TUI logs to a file, never to the screen.
    let log = std::fs::read_to_string(data.path().join("logs/tui.log")).expect("tui.log");
    assert!(log.contains("terminal UI opened"), "{log}");
    assert!(!tui.screen().contains("terminal UI opened"));
}
