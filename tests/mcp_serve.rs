//! `/mcp` on a real `oq serve` (the built binary), driven by the official Python MCP
//! client over Streamable HTTP with an agent's bearer token: the same tools, scoped to
//! the token's project and a session a person started; and its refusals, by status and
//! code, before rmcp sees a request; on SQLite and (where it is installed, always in CI)
//! on PostgreSQL.
#![allow(clippy::unwrap_used)]

mod common_mcp;
mod common_pg;
mod serve_process;

use common_mcp::{OQ, code, python, run_plan};
use serde_json::{Value, json};
use serve_process::Serve;

/// `oq ARGS… --json` as dev-a on the server (its own client data dir).
fn remote(s: &Serve, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = s.run(&s.dir.path().join("client"), &all);
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// The same as a command line the Python client runs mid-plan.
fn remote_cmd(s: &Serve, args: &[&str]) -> Value {
    let mut cmd = vec![
        OQ.to_string(),
        "--data-dir".into(),
        s.dir.path().join("client").display().to_string(),
        "--source".into(),
        s.base.clone(),
        "--token".into(),
        s.token.clone(),
        "-p".into(),
        "loja".into(),
    ];
    cmd.extend(args.iter().map(|a| a.to_string()));
    json!(cmd)
}

/// A second agent of `loja` (role `arquiteto`), with its token.
fn second_agent(s: &Serve) -> String {
    let token = oq::engine::ids::token();
    let path = s.config_path();
    let cfg = std::fs::read_to_string(&path).unwrap().replace(
        "agents = [\"po-bot\"]",
        "agents = [\"po-bot\", \"arq-bot\"]",
    );
    let user = format!(
        "\n[[users]]\nid = \"arq-bot\"\nkind = \"agent\"\nrole = \"arquiteto\"\ntoken_sha256 = \"{}\"\n",
        hex::encode(oq::server::config::token_hash(&token))
    );
    std::fs::write(&path, cfg + &user).unwrap();
    token
}

/// The store a scenario's server keeps: its SQLite file, or a PostgreSQL database.
enum Store {
    Sqlite,
    Postgres(common_pg::PgDb),
}

const PASSWORD_ENV: &str = "OQ_TEST_STORE_PASSWORD";

impl Store {
    /// PostgreSQL's database, or `None` (after saying why) where it is missing outside CI.
    fn postgres(test: &str) -> Option<Store> {
        common_pg::or_skip(test).then(|| Store::Postgres(common_pg::shared().database()))
    }

    /// A server on this store with `extra` tables (`[limits]`…), started.
    fn serve(&self, extra: &str, before_start: impl FnOnce(&Serve)) -> Serve {
        let keys = match self {
            Store::Sqlite => String::new(),
            Store::Postgres(db) => format!(
                "store = {:?}\nstore_password_env = {PASSWORD_ENV:?}\n",
                db.app_url()
            ),
        };
        let mut s = Serve::with_config(&format!("{keys}\n\n{extra}"));
        before_start(&s);
        match self {
            Store::Sqlite => s.start(),
            Store::Postgres(db) => s.start_with(&[(PASSWORD_ENV, &db.password)]),
        }
        s
    }
}

fn started() -> (Serve, String, String) {
    let (s, id, other, _) = started_on(Store::Sqlite);
    (s, id, other)
}

/// A server on `store` with the session `loja.checkout` dev-a started, and a second
/// agent's token (the store is kept alive beside it).
fn started_on(store: Store) -> (Serve, String, String, Store) {
    let mut other = String::new();
    let s = store.serve("", |s| other = second_agent(s));
    let session = remote(&s, &["session", "start", "--id", "loja.checkout"]);
    let id = session["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("{session}"));
    let id = id.to_string();
    if let Store::Postgres(_) = store {
        assert!(
            !s.store_dir().join("oq.sqlite3").exists(),
            "served from PostgreSQL, no SQLite file"
        );
    }
    (s, id, other, store)
}

#[test]
fn on_postgresql_an_agent_declares_over_http_mcp_and_the_author_answers_with_oq() {
    let Some(store) = Store::postgres("mcp_serve on PostgreSQL") else {
        return;
    };
    every_tool_over_http(store);
}

/// Every tool through `/mcp` with the agent's token, on a server on `store`.
fn every_tool_over_http(store: Store) {
    let Some(py) = python() else { return };
    let (s, session, _, _store) = started_on(store);
    let url = format!("{}/mcp?session={session}", s.base);
    every_tool(
        &py,
        &s,
        &session,
        json!({"http": url, "token": s.agent_token}),
    );
}

#[test]
fn an_agent_declares_over_http_mcp_and_the_author_answers_with_oq() {
    every_tool_over_http(Store::Sqlite);
}

#[test]
fn oq_mcp_with_a_server_source_relays_stdio_to_its_mcp() {
    let Some(py) = python() else { return };
    let (s, session, _) = started();
    let dir = s.dir.path().join("agent");
    let relay = json!({"stdio": [OQ, "--data-dir", dir, "--source", s.base, "--token", s.agent_token,
        "mcp", "--session", session], "env": {"OQ_LOG": "info"}});
    every_tool(&py, &s, &session, relay);
    // Without a session it says what it needs, before any protocol.
    let out = std::process::Command::new(OQ)
        .args(["--data-dir", dir.to_str().unwrap(), "--source", &s.base])
        .args(["--token", &s.agent_token, "mcp"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("session_required"));
}

/// Every tool through `server`, an agent of `loja` in `session`, the author answering.
fn every_tool(py: &std::path::Path, s: &Serve, session: &str, server: Value) {
    let obs = run_plan(
        py,
        server,
        json!([
            {"list_tools": true},
            {"tool": "declare_open_question", "args": {"pergunta": "Card or invoice first?", "idempotencyKey": "k-1"}},
            {"run": remote_cmd(s, &["list", "--json"])},
            {"tool": "wait_for_answer", "args": {"questionId": "$2.questionId", "timeoutSeconds": 60},
             "cancel_after": 0.5},
            {"tool": "get_question", "args": {"questionId": "$2.questionId"}},
            {"tool": "wait_for_answer", "args": {"questionId": "$2.questionId", "timeoutSeconds": 30},
             "progress": true,
             "during": {"after": 0.5, "run": remote_cmd(s, &["answer", "$2.questionId", "--text", "card"])}},
            {"tool": "declare_open_question", "args": {"pergunta": "Card or invoice first?", "idempotencyKey": "k-1"}},
            {"tool": "list_my_questions", "args": {"status": "all"}},
            {"tool": "wait_for_answer", "args": {"questionId": "q-nope", "timeoutSeconds": 1}},
            {"tool": "withdraw_question", "args": {"questionId": "$2.questionId", "reason": "late"}},
        ]),
    );
    assert!(
        obs[0]["structured"]["instructions"]
            .as_str()
            .unwrap()
            .starts_with(oq::domain::CENTRAL_INSTRUCTION)
    );
    assert_eq!(obs[1]["structured"]["tools"].as_array().unwrap().len(), 5);
    let declared = &obs[2]["structured"];
    assert_eq!(declared["answeredBy"], "dev-a", "{:?}", obs[2]);
    assert_eq!(declared["projectId"], "loja");
    assert_eq!(declared["sessionId"], session);
    // Another oq client sees it at once, from the token's agent.
    let listed = &obs[3]["json"]["items"][0];
    assert_eq!(listed["questionId"], declared["questionId"], "{:?}", obs[3]);
    assert_eq!(listed["source"], "mcp");
    assert_eq!(listed["autor"], "po");
    // A cancelled wait leaves it open.
    assert_eq!(obs[4]["cancelled"], true, "{:?}", obs[4]);
    assert_eq!(obs[5]["structured"]["status"], "open");
    let waited = &obs[6];
    assert_eq!(waited["during"]["rc"], 0, "{:?}", waited["during"]);
    assert_eq!(waited["structured"]["outcome"], "answered", "{waited:?}");
    assert_eq!(waited["structured"]["resposta"], "card");
    assert_eq!(waited["structured"]["respondidaPor"], "dev-a");
    assert!(!waited["progress"].as_array().unwrap().is_empty());
    assert_eq!(obs[7]["structured"]["questionId"], declared["questionId"]);
    assert_eq!(obs[8]["structured"]["total"], 1);
    assert_eq!(code(&obs[9]), Some("not_found"));
    assert_eq!(code(&obs[10]), Some("question_closed"));
}

#[test]
fn mcp_refuses_a_person_a_stranger_a_session_of_nobody_and_another_tokens_session() {
    refusals(Store::Sqlite);
}

#[test]
fn on_postgresql_mcp_refuses_as_on_sqlite() {
    if let Some(store) = Store::postgres("mcp_serve refusals on PostgreSQL") {
        refusals(store);
    }
}

fn refusals(store: Store) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (s, session, other, _store) = started_on(store);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    // (status, code, the MCP session the server opened)
    let post = |token: Option<&str>, query: &str, mcp_session: Option<&str>| {
        let url = format!("{}/mcp{query}", s.base);
        let (body, token) = (init.clone(), token.map(str::to_string));
        let mcp_session = mcp_session.map(str::to_string);
        runtime.block_on(async move {
            let mut req = reqwest::Client::new()
                .post(url)
                .header("accept", "application/json, text/event-stream")
                .json(&body);
            if let Some(t) = token {
                req = req.bearer_auth(t);
            }
            if let Some(m) = mcp_session {
                req = req.header("mcp-session-id", m);
            }
            let r = req.send().await.unwrap();
            let status = r.status().as_u16();
            let opened = r
                .headers()
                .get("mcp-session-id")
                .map(|v| v.to_str().unwrap().to_string());
            let body: Value = r.json().await.unwrap_or(Value::Null);
            (
                status,
                body["code"].as_str().unwrap_or("").to_string(),
                opened,
            )
        })
    };
    let ok = format!("?session={session}");
    let refused = |t: Option<&str>, q: &str| {
        let (status, code, _) = post(t, q, None);
        (status, code)
    };
    assert_eq!(refused(None, &ok), (401, "unauthorized".into()));
    assert_eq!(
        refused(Some("not-a-token"), &ok),
        (401, "unauthorized".into())
    );
    assert_eq!(
        refused(Some(&s.token), &ok),
        (403, "role_not_allowed".into())
    );
    let agent = Some(s.agent_token.as_str());
    assert_eq!(refused(agent, ""), (422, "session_required".into()));
    assert_eq!(
        refused(agent, "?session=loja.nobody"),
        (404, "not_found".into())
    );
    assert_eq!(
        refused(agent, &format!("{ok}&project=other")),
        (404, "not_found".into())
    );
    assert_eq!(refused(agent, "?colour=red"), (422, "invalid_query".into()));
    // A session opened by the agent is not another token's to use.
    let (status, _, opened) = post(agent, &ok, None);
    assert_eq!(status, 200);
    let opened = opened.expect("an MCP session id");
    let (status, code, _) = post(Some("not-a-token"), &ok, Some(&opened));
    assert_eq!((status, code.as_str()), (401, "unauthorized"));
    let (status, code, _) = post(Some(&other), &ok, Some(&opened));
    assert_eq!(
        (status, code.as_str()),
        (404, "not_found"),
        "another agent's"
    );
    let (status, _, _) = post(agent, &ok, Some(&opened));
    assert_ne!(status, 404, "its opener's own");
}

/// A server with `limits` (TOML lines of `[limits]`) and the session `loja.checkout`.
fn started_with(limits: &str) -> (Serve, String) {
    let mut s = Serve::with_config(&format!("\n\n[limits]\n{limits}\n"));
    s.start();
    let session = remote(&s, &["session", "start", "--id", "loja.checkout"]);
    let id = session["sessionId"].as_str().unwrap().to_string();
    (s, id)
}

/// An `initialize` POST to `/mcp?session=…` with the agent's token, in the MCP session
/// `named` when given: the status, and the MCP session the server opened.
fn initialize(s: &Serve, session: &str, named: Option<&str>) -> (u16, Option<String>) {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let _ = rustls::crypto::ring::default_provider().install_default();
    let url = format!("{}/mcp?session={session}", s.base);
    let (token, named) = (s.agent_token.clone(), named.map(str::to_string));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let mut req = reqwest::Client::new()
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .bearer_auth(token)
            .json(&init);
        if let Some(m) = named {
            req = req.header("mcp-session-id", m);
        }
        let r = req.send().await.unwrap();
        let opened = r
            .headers()
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_string());
        (r.status().as_u16(), opened)
    })
}

#[test]
fn a_token_holds_at_most_its_mcp_sessions_and_opening_more_closes_its_least_recently_used() {
    let (s, session) = started_with("max_mcp_sessions_per_token = 2");
    let open = || initialize(&s, &session, None).1.expect("an MCP session id");
    let (first, second) = (open(), open());
    // The first used again: the second is now the least recently used.
    assert_ne!(initialize(&s, &session, Some(&first)).0, 404);
    let third = open();
    assert_eq!(
        initialize(&s, &session, Some(&second)).0,
        404,
        "closed for the third"
    );
    assert_ne!(initialize(&s, &session, Some(&first)).0, 404);
    assert_ne!(initialize(&s, &session, Some(&third)).0, 404);
}

#[test]
fn an_mcp_session_idle_past_the_limit_is_closed() {
    let (s, session) = started_with("mcp_session_idle_seconds = 1");
    let (status, opened) = initialize(&s, &session, None);
    assert_eq!(status, 200);
    let opened = opened.unwrap();
    // Idle well past the limit (the test asserts no speed: only that it is closed after).
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(initialize(&s, &session, Some(&opened)).0, 404);
}
