//! `[[notify]]` on a real `oq serve` (the built binary) with real HTTP receivers on
//! loopback started here: a webhook's JSON POST carries an HMAC-SHA256 signature of its
//! body; a receiver that is down while questions arrive blocks no write and loses
//! nothing — each question is delivered once, in order, when it comes back; an ntfy topic
//! with `include_text = false` is told of a question without its text; neither the key
//! nor the text reaches the server's logs.
#![allow(clippy::unwrap_used)]

mod serve_process;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use oq::domain::{Actor, SessionKind};
use oq::server::notify::hmac::signature;
use serde_json::{Value, json};

const SECRET: &str = "test-hmac-key-0123456789";

/// One request as the receiver read it: lower-cased headers and the body.
#[derive(Debug, Clone)]
struct Received {
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

/// A tiny HTTP/1.1 receiver on `listener`: each request read whole (Content-Length),
/// recorded, answered 200, the connection closed. Its thread ends with the test process.
fn receive(listener: TcpListener) -> Arc<Mutex<Vec<Received>>> {
    let got: Arc<Mutex<Vec<Received>>> = Arc::default();
    let sink = got.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut headers = HashMap::new();
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            loop {
                line.clear();
                reader.read_line(&mut line).unwrap();
                match line.trim_end().split_once(':') {
                    Some((k, v)) => headers.insert(k.to_ascii_lowercase(), v.trim().to_string()),
                    None => break,
                };
            }
            let len = headers
                .get("content-length")
                .map_or(0, |l| l.parse().unwrap());
            let mut body = vec![0u8; len];
            reader.read_exact(&mut body).unwrap();
            sink.lock().unwrap().push(Received { headers, body });
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        }
    });
    got
}

fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dead_webhook_loses_nothing_and_blocks_no_write_and_ntfy_can_omit_the_text() {
    // The webhook's port, with nobody listening on it yet.
    let hook_port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let topic = TcpListener::bind("127.0.0.1:0").unwrap();
    let topic_port = topic.local_addr().unwrap().port();
    let topic_got = receive(topic);
    let mut serve = serve_process::Serve::with_config(&format!(
        "\n\n[[notify]]\nproject = \"loja\"\nkind = \"webhook\"\nurl = \"http://127.0.0.1:{hook_port}/hook\"\nsecret = \"{SECRET}\"\nretry_base_ms = 20\nmax_attempts = 40\n\n[[notify]]\nproject = \"loja\"\nkind = \"ntfy\"\nurl = \"http://127.0.0.1:{topic_port}/oq-team\"\ninclude_text = false\n"
    ));
    serve
        .engine()
        .start_session(
            &Actor::person(serve_process::DEV),
            "loja",
            SessionKind::Conversation,
            Some("s1"),
        )
        .unwrap();
    serve.start();

    // Three writes while the webhook is down: each is answered (nothing waits on it).
    let client = oq::source::http::client_builder(None)
        .unwrap()
        .build()
        .unwrap();
    let mut declared = Vec::new();
    for i in 0..3 {
        let r = client
            .post(format!("{}/projects/loja/open-questions", serve.base))
            .bearer_auth(&serve.agent_token)
            .json(&json!({"pergunta": format!("Secret plan number {i}?"), "sessionId": "s1"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 201);
        let v: Value = r.json().await.unwrap();
        declared.push(v["questionId"].as_str().unwrap().to_string());
    }
    let log = serve.store_dir().join("logs").join("serve.log");
    let log_text = || std::fs::read_to_string(&log).unwrap_or_default();
    eventually("two webhook attempts failed", || {
        log_text().matches("notify: attempt failed").count() >= 2
    });

    // The receiver comes back: every question arrives, once, in order, signed.
    let hook_got = receive(TcpListener::bind(("127.0.0.1", hook_port)).unwrap());
    eventually("the three questions delivered", || {
        hook_got.lock().unwrap().len() >= 3
    });
    std::thread::sleep(Duration::from_millis(200));
    let hooks = hook_got.lock().unwrap().clone();
    assert_eq!(hooks.len(), 3, "{hooks:?}");
    for (r, id) in hooks.iter().zip(&declared) {
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(v["questionId"], id.as_str());
        assert_eq!(v["event"], "question.declared");
        assert_eq!(v["projectId"], "loja");
        assert!(v["pergunta"].as_str().unwrap().starts_with("Secret plan"));
        assert_eq!(
            r.headers["x-oq-signature"],
            signature(SECRET.as_bytes(), &r.body)
        );
        let mut tampered = r.body.clone();
        tampered[0] ^= 1;
        assert_ne!(
            r.headers["x-oq-signature"],
            signature(SECRET.as_bytes(), &tampered)
        );
        assert_eq!(
            r.headers["x-oq-delivery"],
            v["deliveryId"].as_str().unwrap()
        );
    }

    // The ntfy topic: told of each, without the question's text.
    eventually("the topic told of all three", || {
        topic_got.lock().unwrap().len() >= 3
    });
    for r in topic_got.lock().unwrap().iter() {
        let body = String::from_utf8(r.body.clone()).unwrap();
        assert!(body.starts_with("A new question in loja"), "{body}");
        assert!(!body.contains("Secret plan"), "{body}");
        assert_eq!(r.headers["title"], "oq: loja");
    }

    serve.stop();
    let logged = log_text() + &serve.stderr();
    assert!(logged.contains("notify: delivered"), "{logged}");
    assert!(!logged.contains(SECRET), "the key was logged");
    assert!(
        !logged.contains("Secret plan"),
        "a question's text was logged"
    );
}
