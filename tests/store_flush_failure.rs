//! A failed flush stops acknowledging (issue 15): the real `oq serve` with an
//! `LD_PRELOAD` shim that fails one fdatasync of its WAL with EIO. That answer is 503
//! `store_failed`; every retry with the same Idempotency-Key, every other write and every
//! read stays 503 `store_failed` (never a 200 for data whose flush failed), `/healthz`
//! says failed and why, the log says it loudly; after a restart the retry lands once. A
//! local door whose COMMIT cannot flush exits 9 `store_failed`.
#![allow(clippy::unwrap_used)]

mod common;
mod common_fault;
mod serve_process;

use common::{oq, run};
use common_fault::Faults;
use serde_json::{Value, json};
use serve_process::{DEV, Serve};

struct Http {
    rt: tokio::runtime::Runtime,
    client: reqwest::Client,
}

impl Http {
    fn new() -> Http {
        let _ = rustls::crypto::ring::default_provider().install_default();
        Http {
            rt: tokio::runtime::Runtime::new().unwrap(),
            client: reqwest::Client::new(),
        }
    }

    fn send(&self, req: reqwest::RequestBuilder) -> (u16, Value) {
        self.rt.block_on(async {
            let r = req.send().await.unwrap();
            let status = r.status().as_u16();
            (status, r.json().await.unwrap_or(Value::Null))
        })
    }

    fn answer(&self, serve: &Serve, question: &str, key: &str, text: &str) -> (u16, Value) {
        self.send(
            self.client
                .post(format!(
                    "{}/projects/loja/open-questions/{question}/answer",
                    serve.base
                ))
                .bearer_auth(&serve.token)
                .header("Idempotency-Key", key)
                .json(&json!({ "resposta": text })),
        )
    }
}

fn assert_failed(reply: &(u16, Value)) {
    assert_eq!(
        (reply.0, reply.1["code"].as_str()),
        (503, Some("store_failed")),
        "{}",
        reply.1
    );
}

#[test]
fn after_a_failed_flush_nothing_is_acknowledged_until_a_restart() {
    let Some(faults) = Faults::new() else {
        return;
    };
    let http = Http::new();
    let mut serve = Serve::new();
    let q = serve.seed(3);
    let env = faults.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    serve.start_with(&env);
    assert_eq!(http.answer(&serve, &q[0], "k-0", "before").0, 200);

    faults.fail_next_flush();
    let first = http.answer(&serve, &q[1], "k-1", "the flush of this fails");
    assert!(faults.failure_used(), "the shim never failed a flush");
    assert_failed(&first);
    assert!(
        first.1["message"].as_str().unwrap().contains("flush"),
        "{}",
        first.1
    );
    // The retry a client makes with the same key: still refused, however often.
    for _ in 0..3 {
        assert_failed(&http.answer(&serve, &q[1], "k-1", "the flush of this fails"));
    }
    assert_failed(&http.answer(&serve, &q[2], "k-2", "another"));
    let list = format!("{}/projects/loja/open-questions?status=all", serve.base);
    assert_failed(&http.send(http.client.get(&list).bearer_auth(&serve.token)));
    let (status, health) = http.send(http.client.get(format!("{}/healthz", serve.base)));
    assert_eq!(
        (status, health["status"].as_str()),
        (503, Some("failed")),
        "{health}"
    );
    assert!(
        health["reason"].as_str().unwrap().contains("flush"),
        "{health}"
    );
    let log = std::fs::read_to_string(serve.store_dir().join("logs/serve.log")).unwrap();
    assert!(log.contains("STORE FAILED"), "{log}");

    // Restarted (and reopened): the retry lands, once.
    serve.kill();
    serve.start();
    let retried = http.answer(&serve, &q[1], "k-1", "the flush of this fails");
    assert_eq!(retried.0, 200, "{}", retried.1);
    assert_eq!(serve.answered(&q[1]).0, 1);
    assert_eq!(http.answer(&serve, &q[2], "k-2", "another").0, 200);
    let (status, health) = http.send(http.client.get(format!("{}/healthz", serve.base)));
    assert_eq!(
        (status, health["status"].as_str()),
        (200, Some("ok")),
        "{health}"
    );
}

#[test]
fn a_local_door_whose_commit_cannot_flush_exits_store_failed() {
    let Some(faults) = Faults::new() else {
        return;
    };
    let serve = Serve::new();
    let q = serve.seed(1);
    faults.fail_next_flush();
    let mut cmd = oq(&serve.store_dir(), DEV);
    cmd.args(["-p", "loja", "answer", &q[0], "--text", "unflushed"]);
    for (k, v) in faults.env() {
        cmd.env(k, v);
    }
    let out = run(&mut cmd);
    assert!(faults.failure_used(), "the shim never failed a flush");
    assert_eq!(out.code, 9, "{out:?}");
    assert!(out.stderr.contains("store_failed"), "{out:?}");
}
