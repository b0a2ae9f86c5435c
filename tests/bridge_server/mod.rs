//! An `oq serve` with `[[opencode]]` upstreams on a runtime of its own, for the bridge
//! tests, spoken to over HTTP. People of `loja`: `ana` (the answerer), `bia` (a member),
//! `dora` (a member, and the admin when a test names admins); `caio` of another project;
//! agents of `loja`: `po-bot` (po) and `qa-bot` (qa-agent). Each has a token
//! (`token(name)`). The server's state is reachable (`state`) so a test can read an
//! upstream's counters and force its cleanup.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

#[path = "../common_openapi/mod.rs"]
pub mod common_openapi;
pub mod scripted;

use std::sync::Arc;
use std::time::{Duration, Instant};

use oq::bridge::Upstream;
use oq::server::config::{Config, UpstreamTiming, token_hash};
use oq::server::{AppState, ServerOptions};
use reqwest::Method;
use serde_json::Value;
use tokio::sync::oneshot;

pub const PROJECT: &str = "loja";
pub const UPSTREAM: &str = "oc";

pub struct BridgeServer {
    pub rt: tokio::runtime::Runtime,
    pub base: String,
    pub ana: String,
    pub caio: String,
    pub tokens: std::collections::HashMap<&'static str, String>,
    pub state: AppState,
    pub dir: tempfile::TempDir,
    stop: Option<oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    http: reqwest::Client,
}

/// How the `[[opencode]]` table is written.
pub struct Upstreamed<'a> {
    pub url: &'a str,
    pub directories: &'a [&'a str],
    pub auto_delegate: bool,
    pub window_seconds: u64,
    pub timing: UpstreamTiming,
    /// `admins = […]` when given.
    pub admins: Option<&'a [&'a str]>,
}

impl<'a> Upstreamed<'a> {
    /// An upstream at `url` watching `directories`, auto-delegate as given, 30 s window.
    pub fn at(url: &'a str, directories: &'a [&'a str], auto_delegate: bool) -> Self {
        Upstreamed {
            url,
            directories,
            auto_delegate,
            window_seconds: 30,
            timing: UpstreamTiming::default(),
            admins: None,
        }
    }
}

/// Everyone the server knows: (name, kind, role).
pub const PEOPLE: [&str; 4] = ["ana", "bia", "dora", "caio"];
pub const AGENTS: [(&str, &str); 2] = [("po-bot", "po"), ("qa-bot", "qa-agent")];

impl BridgeServer {
    /// Starts on 127.0.0.1:0 with `data_dir` (a fresh temp dir unless given: a restart
    /// test passes the previous one's).
    pub fn start(up: &Upstreamed<'_>, data_dir: Option<&std::path::Path>) -> BridgeServer {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let dir = tempfile::tempdir().unwrap();
        let data = data_dir
            .map(|d| d.to_path_buf())
            .unwrap_or_else(|| dir.path().join("data"));
        let mut tokens = std::collections::HashMap::new();
        let mut users = String::new();
        for p in PEOPLE {
            let t = oq::engine::ids::token();
            users.push_str(&format!(
                "[[users]]\nid = \"{p}\"\nkind = \"person\"\ntoken_sha256 = \"{}\"\n",
                hex::encode(token_hash(&t))
            ));
            tokens.insert(p, t);
        }
        for (a, role) in AGENTS {
            let t = oq::engine::ids::token();
            users.push_str(&format!(
                "[[users]]\nid = \"{a}\"\nkind = \"agent\"\nrole = \"{role}\"\ntoken_sha256 = \"{}\"\n",
                hex::encode(token_hash(&t))
            ));
            tokens.insert(a, t);
        }
        let (ana, caio) = (tokens["ana"].clone(), tokens["caio"].clone());
        let dirs = up
            .directories
            .iter()
            .map(|d| format!("{d:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        let admins = up
            .admins
            .map(|a| format!("admins = {a:?}\n"))
            .unwrap_or_default();
        let text = format!(
            "listen = \"127.0.0.1:0\"\ndata_dir = {data:?}\n{users}\
             [[projects]]\nid = \"{PROJECT}\"\nmembers = [\"ana\", \"bia\", \"dora\"]\nagents = [\"po-bot\", \"qa-bot\"]\n\
             [[projects]]\nid = \"outro\"\nmembers = [\"caio\"]\n\
             [[opencode]]\nname = \"{UPSTREAM}\"\nurl = \"{}\"\ndirectories = [{dirs}]\n\
             project = \"{PROJECT}\"\nanswerer = \"ana\"\n{admins}auto_delegate = {}\nwindow_seconds = {}\n",
            up.url, up.auto_delegate, up.window_seconds,
        );
        let path = dir.path().join("serve.toml");
        std::fs::write(&path, &text).unwrap();
        let mut config = Config::parse(&path, &text).expect("config");
        config.opencode[0].timing = up.timing;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .enable_all()
            .build()
            .unwrap();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let (state_tx, state_rx) = oneshot::channel();
        let (base, handle) = rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            let handle = tokio::spawn(async move {
                oq::server::run_observed(
                    listener,
                    &config,
                    ServerOptions {
                        heartbeat: Duration::from_millis(200),
                        poll: Duration::from_millis(100),
                        ..ServerOptions::default()
                    },
                    async {
                        let _ = stop_rx.await;
                    },
                    Some(state_tx),
                )
                .await
            });
            (base, handle)
        });
        let state = rt.block_on(state_rx).expect("server state");
        BridgeServer {
            rt,
            base,
            ana,
            caio,
            tokens,
            state,
            dir,
            stop: Some(stop_tx),
            handle: Some(handle),
            http: reqwest::Client::new(),
        }
    }

    pub fn upstream(&self) -> Arc<Upstream> {
        self.state.bridges().get(UPSTREAM).expect("upstream")
    }

    /// The token of a person or agent this server knows.
    pub fn token(&self, who: &str) -> String {
        self.tokens[who].clone()
    }

    /// Forces the cleanup of the upstream's live connection (as if it ended by `end`).
    pub fn end_connection(&self, end: oq::bridge::connection::End) -> bool {
        let u = self.upstream();
        self.rt.block_on(u.end_connection(end))
    }

    /// Every event of the project's log, oldest first (read from the store directly).
    pub fn events(&self) -> Vec<oq::domain::StoredEvent> {
        self.state
            .engine()
            .events_after(Some(PROJECT), 0, 100_000)
            .unwrap()
    }

    /// (status, body) of one call with `token`.
    pub fn call(
        &self,
        token: &str,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let method_name = method.clone();
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let method_name = method_name.to_string();
        self.rt.block_on(async {
            let resp = req.send().await.expect("request");
            let status = resp.status().as_u16();
            let text = resp.text().await.unwrap_or_default();
            common_openapi::conform(&method_name, path, status, &text);
            (
                status,
                serde_json::from_str(&text).unwrap_or(Value::String(text)),
            )
        })
    }

    /// Ana's open questions of the project.
    pub fn open_questions(&self) -> Vec<Value> {
        let (s, b) = self.call(
            &self.ana,
            Method::GET,
            &format!("/projects/{PROJECT}/open-questions?status=open"),
            None,
        );
        assert_eq!(s, 200, "{b}");
        b["items"].as_array().cloned().unwrap_or_default()
    }

    pub fn question(&self, id: &str) -> Value {
        let (s, b) = self.call(
            &self.ana,
            Method::GET,
            &format!("/projects/{PROJECT}/open-questions/{id}"),
            None,
        );
        assert_eq!(s, 200, "{b}");
        b
    }

    pub fn answer(&self, id: &str, body: Value) -> (u16, Value) {
        self.call(
            &self.ana,
            Method::POST,
            &format!("/projects/{PROJECT}/open-questions/{id}/answer"),
            Some(body),
        )
    }

    pub fn dismiss(&self, id: &str) -> (u16, Value) {
        self.call(
            &self.ana,
            Method::POST,
            &format!("/projects/{PROJECT}/open-questions/{id}/dismiss"),
            Some(serde_json::json!({})),
        )
    }

    /// The snapshot of our upstream (GET /api/question-auto-delegate).
    pub fn snapshot(&self) -> Value {
        let (s, b) = self.call(&self.ana, Method::GET, "/api/question-auto-delegate", None);
        assert_eq!(s, 200, "{b}");
        b["upstreams"][0].clone()
    }

    /// The request's state in the snapshot (`None` when the machine does not know it).
    pub fn state_of(&self, id: &str) -> Option<Value> {
        self.snapshot()["requests"]
            .as_array()?
            .iter()
            .find(|r| r["requestID"] == id)
            .cloned()
    }

    /// Stops the server; it must stop cleanly.
    pub fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.handle.take() {
            self.rt
                .block_on(async { tokio::time::timeout(Duration::from_secs(30), h).await })
                .expect("the server stops")
                .expect("server task")
                .expect("server ran cleanly");
        }
    }
}

/// Polls `f` every 50 ms until it gives a value, or `deadline` passes.
pub fn until<T>(deadline: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let end = Instant::now() + deadline;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
