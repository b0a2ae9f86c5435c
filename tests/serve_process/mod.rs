//! A real `oq serve` process (the built binary) on a loopback port the test picks, so it
//! can be killed and started again at the same address, signalled, started under a given
//! umask, and read on stderr; its store seeded through the library, and read back with
//! rusqlite to count events. Every process is killed on drop.
#![allow(dead_code, clippy::unwrap_used)]

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "../common_openapi/mod.rs"]
pub mod openapi;

use oq::domain::{Actor, AnswerInput, DeclareInput, Role, SessionKind};
use oq::engine::{EngineConfig, LocalEngine, SqliteStore};
use oq::server::config::token_hash;

pub const OQ: &str = env!("CARGO_BIN_EXE_oq");
pub const DEV: &str = "dev-a";
/// An agent of `loja` that declares (role `po`).
pub const PO_BOT: &str = "po-bot";

pub struct Serve {
    pub dir: tempfile::TempDir,
    pub base: String,
    pub token: String,
    /// [`PO_BOT`]'s token.
    pub agent_token: String,
    /// Where the store lives (`data` beside the config unless given).
    store: PathBuf,
    pub port: u16,
    child: Option<Child>,
    /// Everything the process wrote on stderr so far.
    stderr: Arc<Mutex<String>>,
}

/// A free loopback port: bind to 0, read it, let it go.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

impl Serve {
    /// A server for project `loja` with person `dev-a` and agent `po-bot`; not started yet.
    pub fn new() -> Serve {
        Serve::build(None, "")
    }

    /// [`Serve::new`] with its store in `data_dir` (default: `data` beside its config).
    pub fn with_store(data_dir: Option<&Path>) -> Serve {
        Serve::build(data_dir, "")
    }

    /// [`Serve::new`] with `extra` TOML: top-level keys first (before any table), then
    /// tables (`[[opencode]]`…) after a blank line.
    pub fn with_config(extra: &str) -> Serve {
        Serve::build(None, extra)
    }

    fn build(data_dir: Option<&Path>, extra: &str) -> Serve {
        let dir = tempfile::tempdir().unwrap();
        let token = oq::engine::ids::token();
        let agent_token = oq::engine::ids::token();
        let port = free_port();
        let store = data_dir.map_or_else(|| dir.path().join("data"), Path::to_path_buf);
        let (keys, tables) = extra.split_once("\n\n").unwrap_or((extra, ""));
        let cfg = format!(
            "listen = \"127.0.0.1:{port}\"\ndata_dir = {:?}\n{keys}\n\n[[users]]\nid = \"{DEV}\"\nkind = \"person\"\ntoken_sha256 = \"{}\"\n\n[[users]]\nid = \"{PO_BOT}\"\nkind = \"agent\"\nrole = \"po\"\ntoken_sha256 = \"{}\"\n\n[[projects]]\nid = \"loja\"\nmembers = [\"{DEV}\"]\nagents = [\"{PO_BOT}\"]\n\n{tables}\n",
            store.to_string_lossy(),
            hex::encode(token_hash(&token)),
            hex::encode(token_hash(&agent_token))
        );
        std::fs::write(dir.path().join("serve.toml"), cfg).unwrap();
        Serve {
            dir,
            base: format!("http://127.0.0.1:{port}"),
            token,
            agent_token,
            store,
            port,
            child: None,
            stderr: Arc::default(),
        }
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("serve.toml")
    }

    /// What the process wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub fn store_dir(&self) -> PathBuf {
        self.store.clone()
    }

    /// Declares `n` questions in dev-a's session `s1` (the server need not run).
    pub fn seed(&self, n: usize) -> Vec<String> {
        let e = self.engine();
        let dev = Actor::person(DEV);
        let _ = e.start_session(&dev, "loja", SessionKind::Conversation, Some("s1"));
        (0..n)
            .map(|i| {
                e.declare(
                    &Actor::agent(Role::Po),
                    "loja",
                    &DeclareInput {
                        pergunta: format!("Question {i}?"),
                        session_id: "s1".into(),
                        ..Default::default()
                    },
                )
                .unwrap()
                .question_id
            })
            .collect()
    }

    pub fn engine(&self) -> LocalEngine {
        LocalEngine::new(
            SqliteStore::open_in(&self.store_dir()).unwrap(),
            EngineConfig::default(),
        )
    }

    /// Answers on the server's store directly, as another client would have.
    pub fn answer_elsewhere(&self, question_id: &str, text: &str) {
        self.engine()
            .answer(
                &Actor::person(DEV),
                Some("loja"),
                question_id,
                &AnswerInput::text(text),
            )
            .unwrap();
    }

    pub fn start(&mut self) {
        self.launch(None, &[]);
    }

    /// [`Serve::start`] with more environment (an `LD_PRELOAD`, a knob).
    pub fn start_with(&mut self, env: &[(&str, &str)]) {
        self.launch(None, env);
    }

    /// [`Serve::start`] under `umask` (octal, as `sh`'s `umask` takes it).
    pub fn start_under(&mut self, umask: Option<&str>) {
        self.launch(umask, &[]);
    }

    /// Starts the server and waits until it says where it listens.
    fn launch(&mut self, umask: Option<&str>, env: &[(&str, &str)]) {
        let mut cmd = match umask {
            // `exec`, so the child is the server itself (signals reach it).
            Some(mask) => {
                let mut c = Command::new("sh");
                c.arg("-c")
                    .arg(format!("umask {mask} && exec \"$0\" serve --config \"$1\""))
                    .arg(OQ)
                    .arg(self.config_path());
                c
            }
            None => {
                let mut c = Command::new(OQ);
                c.args(["serve", "--config"]).arg(self.config_path());
                c
            }
        };
        let mut child = cmd
            .current_dir(self.dir.path())
            .env_remove("OQ_LOG")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = child.stderr.take().unwrap();
        let sink = Arc::clone(&self.stderr);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        loop {
            let Some(Ok(line)) = lines.next() else {
                let _ = child.wait();
                panic!("the server did not start: {}", self.stderr());
            };
            if line.contains("listening on") {
                assert!(line.contains(&self.port.to_string()), "{line}");
                break;
            }
        }
        std::thread::spawn(move || for _ in lines {});
        self.child = Some(child);
    }

    /// Sends `signal` (`TERM`, `HUP`…) to the server.
    pub fn signal(&self, signal: &str) {
        let pid = self.child.as_ref().expect("running").id();
        let ok = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(pid.to_string())
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -{signal} {pid}");
    }

    /// SIGTERM, and the exit code once it stopped.
    pub fn stop(&mut self) -> Option<i32> {
        self.signal("TERM");
        let mut c = self.child.take()?;
        c.wait().unwrap().code()
    }

    /// kill -9, and wait for it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// How many `open_question.answered` events each question has, and the answer text.
    pub fn answered(&self, question_id: &str) -> (usize, Option<String>) {
        let conn = rusqlite::Connection::open(self.store_dir().join("oq.sqlite3")).unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT json_extract(payload, '$.resposta') FROM events
                 WHERE type = 'open_question.answered' AND question_id = ?1",
            )
            .unwrap();
        let texts: Vec<Option<String>> = stmt
            .query_map([question_id], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        (texts.len(), texts.into_iter().flatten().next())
    }

    /// `oq` as dev-a on this server, with its own data dir (outbox and mirror).
    pub fn oq(&self, client_dir: &Path) -> Command {
        let mut cmd = Command::new(OQ);
        cmd.env_remove("OQ_SOURCE")
            .env_remove("OQ_TOKEN")
            .env_remove("OQ_PROFILE")
            .arg("--data-dir")
            .arg(client_dir)
            .args(["--source", &self.base, "--token", &self.token, "-p", "loja"]);
        cmd
    }

    pub fn run(&self, client_dir: &Path, args: &[&str]) -> Output {
        self.oq(client_dir).args(args).output().unwrap()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `oq outbox --json`'s entries.
pub fn outbox_items(out: &Output) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    v["items"].as_array().cloned().unwrap_or_default()
}

/// The reply to the raw `request` checked against `/openapi.json`, as the harnesses check
/// theirs: the route documents the status, and a JSON body fits the documented schema.
pub fn conform_raw(request: &str, reply: &str) {
    let mut line = request.split("\r\n").next().unwrap_or_default().split(' ');
    let (method, path) = (
        line.next().unwrap_or_default(),
        line.next().unwrap_or_default(),
    );
    let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((reply, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok())
        .unwrap_or_else(|| {
            panic!("no HTTP status line in the reply to {method} {path}: {reply:?}")
        });
    openapi::conform(method, path, status, body);
}

/// One raw HTTP/1.1 request on `c` and its response (head and a Content-Length body),
/// checked against the document ([`conform_raw`]); the connection stays open. `c` should
/// have a read timeout (the wait is bounded).
pub fn exchange(c: &mut TcpStream, request: &str) -> String {
    let reply = exchange_unchecked(c, request);
    conform_raw(request, &reply);
    reply
}

fn exchange_unchecked(c: &mut TcpStream, request: &str) -> String {
    c.write_all(request.as_bytes()).unwrap();
    let started = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while started.elapsed() < Duration::from_secs(20) {
        let text = String::from_utf8_lossy(&got).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length: ")
                        .map(|v| v.trim().parse::<usize>().unwrap())
                })
                .unwrap_or(0);
            if body.len() >= len {
                return text;
            }
        }
        match c.read(&mut buf) {
            Ok(0) => return String::from_utf8_lossy(&got).into(),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return String::from_utf8_lossy(&got).into(),
        }
    }
    panic!("no response within 20 s: {}", String::from_utf8_lossy(&got));
}
