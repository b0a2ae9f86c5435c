//! A real `oq serve` process (the built binary) on a loopback port the test picks, so it
//! can be killed and started again at the same address; its store seeded through the
//! library, and read back with rusqlite to count events. Every process is killed on drop.
#![allow(dead_code, clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

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
    port: u16,
    child: Option<Child>,
}

/// A free loopback port: bind to 0, read it, let it go.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

impl Serve {
    /// A server for project `loja` with person `dev-a` and agent `po-bot`; not started yet.
    pub fn new() -> Serve {
        Serve::with_store(None)
    }

    /// [`Serve::new`] with its store in `data_dir` (default: `data` beside its config).
    pub fn with_store(data_dir: Option<&Path>) -> Serve {
        let dir = tempfile::tempdir().unwrap();
        let token = oq::engine::ids::token();
        let agent_token = oq::engine::ids::token();
        let port = free_port();
        let store = data_dir.map_or_else(|| dir.path().join("data"), Path::to_path_buf);
        let cfg = format!(
            "listen = \"127.0.0.1:{port}\"\ndata_dir = {:?}\n\n[[users]]\nid = \"{DEV}\"\nkind = \"person\"\ntoken_sha256 = \"{}\"\n\n[[users]]\nid = \"{PO_BOT}\"\nkind = \"agent\"\nrole = \"po\"\ntoken_sha256 = \"{}\"\n\n[[projects]]\nid = \"loja\"\nmembers = [\"{DEV}\"]\nagents = [\"{PO_BOT}\"]\n",
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
        }
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
        self.start_with(&[]);
    }

    /// [`Serve::start`] with more environment (an `LD_PRELOAD`, a knob).
    pub fn start_with(&mut self, env: &[(&str, &str)]) {
        let mut child = Command::new(OQ)
            .args(["serve", "--config"])
            .arg(self.dir.path().join("serve.toml"))
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        loop {
            let line = lines
                .next()
                .expect("the server says where it listens")
                .unwrap();
            if line.contains("listening on") {
                assert!(line.contains(&self.port.to_string()), "{line}");
                break;
            }
        }
        std::thread::spawn(move || for _ in lines {});
        self.child = Some(child);
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
