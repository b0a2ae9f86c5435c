//! Several real `oq serve` on one real PostgreSQL bridging one scripted OpenCode
//! upstream (`scripted.rs`): starting them, calling them, and finding the one that
//! drives the upstream. Shared by `bridge_failover.rs` and `bridge_forward.rs`; the
//! including test declares `common_pg`, `scripted` and `serve_process`.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::common_pg;
use super::scripted::{DIR, Script, Shared, request, start_upstream};
use super::serve_process::{self, Serve};

pub const PASSWORD_ENV: &str = "OQ_TEST_STORE_PASSWORD";
pub const DEADLINE: Duration = Duration::from_secs(40);

/// `n` servers on `db` bridging the scripted upstream at `port`, auto-delegate on,
/// with this window and a 1 s lease.
pub fn servers(db: &common_pg::PgDb, port: u16, n: usize, window_seconds: u64) -> Vec<Serve> {
    let config = format!(
        "store = {:?}\nstore_password_env = {PASSWORD_ENV:?}\n\n\
         [[opencode]]\nname = \"oc\"\nurl = \"http://127.0.0.1:{port}\"\ndirectories = [{DIR:?}]\n\
         project = \"loja\"\nanswerer = {:?}\nauto_delegate = true\nwindow_seconds = {window_seconds}\n\
         lease_seconds = 1\n",
        db.app_url(),
        serve_process::DEV,
    );
    (0..n)
        .map(|_| {
            let mut s = Serve::with_config(&config);
            s.start_with(&[(PASSWORD_ENV, &db.password)]);
            s
        })
        .collect()
}

/// `method path` on server `s` as dev-a: (status, body).
pub fn call(s: &Serve, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    let rt = RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    });
    let _ = rustls::crypto::ring::default_provider().install_default();
    rt.block_on(async {
        let mut req = reqwest::Client::new()
            .request(method, format!("{}{path}", s.base))
            .timeout(Duration::from_secs(10))
            .bearer_auth(&s.token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json::<Value>().await.unwrap_or(Value::Null))
    })
}

/// The server's snapshot of upstream `oc`.
pub fn snapshot(s: &Serve) -> Value {
    let (status, body) = call(s, reqwest::Method::GET, "/api/question-auto-delegate", None);
    assert_eq!(status, 200, "{body}");
    body["upstreams"][0].clone()
}

/// The request `id` in the snapshot of a server that drives the upstream.
pub fn driven(s: &Serve, id: &str) -> Option<Value> {
    let snap = snapshot(s);
    if snap["drivenElsewhere"] == true {
        return None;
    }
    snap["requests"]
        .as_array()?
        .iter()
        .find(|r| r["requestID"] == id)
        .cloned()
}

pub fn question(s: &Serve, id: &str) -> Value {
    call(
        s,
        reqwest::Method::GET,
        &format!("/projects/loja/open-questions/{id}"),
        None,
    )
    .1
}

pub fn until<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + DEADLINE;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The index of the one server driving `id` (with its snapshot entry), once exactly
/// one does; every other says the upstream is driven elsewhere.
pub fn owner(s: &[Option<Serve>], id: &str) -> (usize, Value) {
    let end = Instant::now() + DEADLINE;
    until("exactly one server driving the upstream", || {
        if Instant::now() + Duration::from_millis(200) > end {
            let seen: Vec<_> = s
                .iter()
                .flatten()
                .map(|s| (snapshot(s), s.stderr()))
                .collect();
            panic!("no single owner: {seen:#?}");
        }
        let driving: Vec<(usize, Value)> = s
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((i, driven(s.as_ref()?, id)?)))
            .collect();
        match driving.as_slice() {
            [(i, r)] if r["deadlineUnixMs"].is_i64() || r["state"] == "uncertain" => {
                Some((*i, r.clone()))
            }
            _ => None,
        }
    })
}

pub fn setup(pending: &str) -> (tokio::runtime::Runtime, Shared, u16) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let script: Shared = Arc::new(Mutex::new(Script {
        pending: vec![request(pending)],
        ..Script::default()
    }));
    let up = start_upstream(&rt, script.clone(), 0);
    (rt, script, up.port)
}
