//! A real `oq serve` on a loopback port for the server tests: two projects, people and
//! one agent per role, each with its own token; spoken to over HTTP with reqwest.
//!
//! The store is a parameter: `OQ_TEST_STORE=postgres` runs every scenario of the suite on
//! a real PostgreSQL (a fresh database per server, in the test binary's own cluster:
//! `common_pg`), the default on the SQLite file in the server's data dir. `.ci/run` runs
//! the server suite both ways.
#![allow(dead_code, clippy::unwrap_used)]

#[path = "../common_pg/mod.rs"]
pub mod common_pg;

#[path = "../common_openapi/mod.rs"]
pub mod common_openapi;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use oq::engine::{AnyStore, EngineConfig, PgStore, ServerEngine, SqliteStore};
use oq::server::config::{Config, token_hash};
use oq::server::{self, ServerOptions};
use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// People of `loja`.
pub const ANA: &str = "ana";
pub const BIA: &str = "bia";
/// A person of `outro` only.
pub const CAIO: &str = "caio";
/// The agents of `loja`, one per role.
pub const CRIATIVO: &str = "criativo-bot";
pub const PO: &str = "po-bot";
pub const ARQUITETO: &str = "arq-bot";
pub const DEV_LEAD: &str = "lead-bot";
pub const QA: &str = "qa-bot";
/// The agent of `outro`.
pub const OUTRO_AGENT: &str = "outro-bot";
pub const AGENTS: [&str; 5] = [CRIATIVO, PO, ARQUITETO, DEV_LEAD, QA];

/// The secret text of `outro`'s question: must never appear in `loja`'s answers.
pub const OUTRO_SECRET: &str = "SEGREDO-OUTRO: migrate the billing ledger?";

/// Which store the suite runs on (`OQ_TEST_STORE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreUnderTest {
    Sqlite,
    Postgres,
}

impl StoreUnderTest {
    pub fn from_env() -> StoreUnderTest {
        match std::env::var("OQ_TEST_STORE").as_deref() {
            Ok("postgres") => StoreUnderTest::Postgres,
            Ok("sqlite") | Err(_) => StoreUnderTest::Sqlite,
            Ok(other) => panic!("OQ_TEST_STORE={other:?}: expected sqlite or postgres"),
        }
    }
}

/// The `store` lines of a configuration on `db` (password in a file beside it).
pub fn store_lines(db: &common_pg::PgDb, dir: &std::path::Path) -> String {
    db.write_password_file(&dir.join("pgpass"));
    format!(
        "store = \"{}\"\nstore_password_file = \"pgpass\"\n",
        db.app_url()
    )
}

pub struct TestServer {
    pub base: String,
    pub data_dir: PathBuf,
    /// The database, when the suite runs on PostgreSQL.
    pub pg: Option<std::sync::Arc<common_pg::PgDb>>,
    pub tokens: HashMap<String, String>,
    pub client: Client,
    _dir: tempfile::TempDir,
    stop: Option<oneshot::Sender<()>>,
    handle: Option<JoinHandle<anyhow::Result<()>>>,
}

pub struct Reply {
    pub status: StatusCode,
    pub body: Value,
    pub text: String,
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status, self.text)
    }
}

/// The configuration text for `tokens`, with data_dir `data`.
pub fn config_text(tokens: &HashMap<String, String>, listen: &str) -> String {
    let hash = |u: &str| hex::encode(token_hash(&tokens[u]));
    let mut s = format!("listen = \"{listen}\"\ndata_dir = \"data\"\n");
    for p in [ANA, BIA, CAIO] {
        s.push_str(&format!(
            "\n[[users]]\nid = \"{p}\"\nkind = \"person\"\ntoken_sha256 = \"{}\"\n",
            hash(p)
        ));
    }
    for (a, role) in [
        (CRIATIVO, "criativo"),
        (PO, "po"),
        (ARQUITETO, "arquiteto"),
        (DEV_LEAD, "dev-lead"),
        (QA, "qa-agent"),
        (OUTRO_AGENT, "criativo"),
    ] {
        s.push_str(&format!(
            "\n[[users]]\nid = \"{a}\"\nkind = \"agent\"\nrole = \"{role}\"\ntoken_sha256 = \"{}\"\n",
            hash(a)
        ));
    }
    s.push_str(&format!(
        "\n[[projects]]\nid = \"loja\"\nmembers = [\"{ANA}\", \"{BIA}\"]\nagents = [{}]\n",
        AGENTS.map(|a| format!("\"{a}\"")).join(", ")
    ));
    s.push_str(&format!(
        "\n[[projects]]\nid = \"outro\"\nmembers = [\"{CAIO}\"]\nagents = [\"{OUTRO_AGENT}\"]\n"
    ));
    // The authorization matrices send hundreds of requests without a right token from one
    // address; the limit itself is tested on its own (tests/serve_limits.rs).
    s.push_str("\n[limits]\nauth_failures_per_minute = 1000000\n");
    s
}

pub fn new_tokens() -> HashMap<String, String> {
    [ANA, BIA, CAIO, OUTRO_AGENT]
        .into_iter()
        .chain(AGENTS)
        .map(|u| (u.to_string(), oq::engine::ids::token()))
        .collect()
}

pub fn client() -> Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    Client::builder().build().expect("http client")
}

impl TestServer {
    pub async fn start() -> TestServer {
        Self::start_with(ServerOptions {
            heartbeat: Duration::from_millis(100),
            poll: Duration::from_millis(50),
            ..ServerOptions::default()
        })
        .await
    }

    /// Binds 127.0.0.1:0 and runs `oq::server::run` on this test's runtime.
    pub async fn start_with(options: ServerOptions) -> TestServer {
        let pg = match StoreUnderTest::from_env() {
            StoreUnderTest::Sqlite => None,
            StoreUnderTest::Postgres => {
                if let Err(why) = common_pg::available() {
                    panic!("OQ_TEST_STORE=postgres, but {why}");
                }
                Some(std::sync::Arc::new(
                    tokio::task::spawn_blocking(|| common_pg::shared().database())
                        .await
                        .unwrap(),
                ))
            }
        };
        Self::start_on(options, pg, new_tokens()).await
    }

    /// A server on `pg` (None: SQLite) with `tokens`: several servers on one database
    /// share both.
    pub async fn start_on(
        options: ServerOptions,
        pg: Option<std::sync::Arc<common_pg::PgDb>>,
        tokens: HashMap<String, String>,
    ) -> TestServer {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("serve.toml");
        let mut text = config_text(&tokens, "127.0.0.1:0");
        if let Some(db) = &pg {
            text = format!("{}{text}", store_lines(db, dir.path()));
        }
        std::fs::write(&path, &text).expect("write config");
        let config = Config::parse(&path, &text).expect("config");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let (tx, rx) = oneshot::channel::<()>();
        let data_dir = config.data_dir.clone();
        let handle = tokio::spawn(async move {
            server::run(listener, &config, options, async {
                let _ = rx.await;
            })
            .await
        });
        let server = TestServer {
            base,
            data_dir,
            pg,
            tokens,
            client: client(),
            _dir: dir,
            stop: Some(tx),
            handle: Some(handle),
        };
        // Ready when it answers.
        for _ in 0..200 {
            if let Ok(r) = server.client.get(server.url("/healthz")).send().await
                && r.status() == StatusCode::OK
            {
                return server;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the server did not come up");
    }

    /// Graceful stop; fails the test if the server does not stop or stopped with an error.
    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.handle.take() {
            tokio::time::timeout(Duration::from_secs(30), h)
                .await
                .expect("the server stops")
                .expect("server task")
                .expect("server ran cleanly");
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn token(&self, user: &str) -> &str {
        &self.tokens[user]
    }

    /// A second engine on the same store: what another process (the local CLI, or
    /// another server on the same database) sees.
    pub fn engine(&self) -> ServerEngine {
        let store = match &self.pg {
            None => AnyStore::Sqlite(SqliteStore::open_in(&self.data_dir).expect("store")),
            Some(db) => AnyStore::Postgres(PgStore::open(&db.app_target()).expect("store")),
        };
        ServerEngine::new(store, EngineConfig::default())
    }

    /// The whole store's log position: "nothing changed anywhere" when it stays put.
    pub fn revision(&self) -> i64 {
        self.engine().revision().expect("revision")
    }

    /// The project's own revision (its `project_seq`): what its event stream counts.
    pub fn project_revision(&self, project: &str) -> i64 {
        self.engine()
            .project_revision(Some(project))
            .expect("revision")
    }

    /// `user`: Some(id) sends that user's token, None sends none; `Auth::Raw` sends a given header.
    pub async fn call(
        &self,
        auth: Auth<'_>,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Reply {
        let method_name = method.clone();
        let mut req = self.client.request(method, self.url(path));
        req = match auth {
            Auth::User(u) => req.bearer_auth(self.token(u)),
            Auth::Raw(h) => req.header("authorization", h),
            Auth::None => req,
        };
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = reply(req.send().await.expect("request")).await;
        common_openapi::conform(method_name.as_str(), path, r.status.as_u16(), &r.text);
        r
    }

    pub async fn get(&self, user: &str, path: &str) -> Reply {
        self.call(Auth::User(user), Method::GET, path, None).await
    }

    pub async fn post(&self, user: &str, path: &str, body: Value) -> Reply {
        self.call(Auth::User(user), Method::POST, path, Some(body))
            .await
    }

    /// POST with a raw body and content type.
    pub async fn post_raw(
        &self,
        user: &str,
        path: &str,
        content_type: Option<&str>,
        body: impl Into<reqwest::Body>,
    ) -> Reply {
        let mut req = self
            .client
            .post(self.url(path))
            .bearer_auth(self.token(user))
            .body(body);
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        let r = reply(req.send().await.expect("request")).await;
        common_openapi::conform("POST", path, r.status.as_u16(), &r.text);
        r
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // A test that panicked before `stop` still stops its server.
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

#[derive(Clone, Copy)]
pub enum Auth<'a> {
    User(&'a str),
    Raw(&'a str),
    None,
}

pub async fn reply(r: reqwest::Response) -> Reply {
    let status = r.status();
    let text = r.text().await.expect("body");
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Reply { status, body, text }
}

/// Ids of a seeded pair of projects.
#[derive(Debug, Clone)]
pub struct World {
    /// ana's conversation session in loja.
    pub conversation: String,
    /// ana's execution session in loja.
    pub execution: String,
    /// An open question of ana's session, with a suggestion.
    pub question: String,
    pub story: String,
    pub task: String,
    /// outro's session, question and their texts.
    pub outro_session: String,
    pub outro_question: String,
}

impl World {
    /// What must never show in a `loja` body.
    pub fn outro_markers(&self) -> Vec<String> {
        vec![
            self.outro_session.clone(),
            self.outro_question.clone(),
            OUTRO_SECRET.to_string(),
        ]
    }
}

pub fn must(r: &Reply, status: u16) -> &Value {
    assert_eq!(r.status.as_u16(), status, "{r:?}");
    &r.body
}

pub fn id_of(r: &Reply, field: &str) -> String {
    r.body[field]
        .as_str()
        .unwrap_or_else(|| panic!("no {field} in {r:?}"))
        .to_string()
}

/// Seeds both projects through the API itself.
pub async fn seed(s: &TestServer) -> World {
    let conversation = id_of(
        &s.post(
            ANA,
            "/projects/loja/sessions",
            json!({"kind": "conversation"}),
        )
        .await,
        "sessionId",
    );
    let execution = id_of(
        &s.post(ANA, "/projects/loja/sessions", json!({"kind": "execution"}))
            .await,
        "sessionId",
    );
    let question = id_of(
        &s.post(
            CRIATIVO,
            "/projects/loja/open-questions",
            json!({"pergunta": "Which checkout flow?", "sugestao": "One page", "afeta": {"regras": ["RN-1"]}, "sessionId": conversation}),
        )
        .await,
        "questionId",
    );
    let story = id_of(
        &s.post(PO, "/projects/loja/stories", json!({"title": "Checkout"}))
            .await,
        "storyId",
    );
    let task = id_of(
        &s.post(
            DEV_LEAD,
            "/projects/loja/tasks",
            json!({"storyId": story, "sessionId": execution, "title": "Build checkout"}),
        )
        .await,
        "taskId",
    );
    let outro_session = id_of(
        &s.post(
            CAIO,
            "/projects/outro/sessions",
            json!({"kind": "conversation"}),
        )
        .await,
        "sessionId",
    );
    let outro_question = id_of(
        &s.post(
            OUTRO_AGENT,
            "/projects/outro/open-questions",
            json!({"pergunta": OUTRO_SECRET, "sessionId": outro_session}),
        )
        .await,
        "questionId",
    );
    World {
        conversation,
        execution,
        question,
        story,
        task,
        outro_session,
        outro_question,
    }
}
