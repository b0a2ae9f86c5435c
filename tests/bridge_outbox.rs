//! The script doors (the built `oq`) over HTTP against a bridge whose upstream is
//! scripted: a server that answers 502 about its OpenCode is not offline; only an
//! unreachable server queues; outbox states and `--deliver`'s counts are exact.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bridge_server;

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oq::domain::AnswerInput;
use oq::server::config::UpstreamTiming;
use oq::source::outbox::Outbox;
use serde_json::{Value, json};

use bridge_server::scripted::{DIR, Mode, Script, Shared, Upstream, request, start_upstream};
use bridge_server::{BridgeServer, Upstreamed, until};

const OQ: &str = env!("CARGO_BIN_EXE_oq");
const DEADLINE: Duration = Duration::from_secs(20);

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {} / {}", self.stdout, self.stderr))
    }
}

/// `oq --source BASE` as ana, with her own data dir (mirror and outbox).
fn oq(s: &BridgeServer, data: &Path, args: &[&str]) -> Run {
    let out = Command::new(OQ)
        .env_remove("OQ_SOURCE")
        .env("OQ_TOKEN", &s.ana)
        .arg("--data-dir")
        .arg(data)
        .args(["--source", &s.base, "-p", "loja"])
        .args(args)
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
    }
}

fn setup(pending: &[&str]) -> (BridgeServer, Upstream) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let script: Shared = Arc::new(Mutex::new(Script {
        pending: pending.iter().map(|id| request(id)).collect(),
        ..Script::default()
    }));
    let up = start_upstream(&rt, script, 0);
    let url = format!("http://127.0.0.1:{}", up.port);
    let s = BridgeServer::start(
        &Upstreamed {
            timing: UpstreamTiming {
                post_timeout: Duration::from_millis(500),
                backoff_min: Duration::from_millis(20),
                backoff_max: Duration::from_millis(100),
                ..UpstreamTiming::default()
            },
            ..Upstreamed::at(&url, &[DIR], false)
        },
        None,
    );
    std::mem::forget(rt);
    for id in pending {
        until(DEADLINE, || {
            s.open_questions()
                .iter()
                .any(|q| q["questionId"] == *id)
                .then_some(())
        })
        .expect("imported");
    }
    (s, up)
}

fn outbox_items(s: &BridgeServer, data: &Path) -> Vec<Value> {
    let r = oq(s, data, &["outbox", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.json()["items"].as_array().cloned().unwrap()
}

#[test]
fn an_uncertain_answer_is_no_outage_stays_uncertain_and_is_delivered_once_it_is_hers() {
    let (s, up) = setup(&["que_u"]);
    let data = s.dir.path().join("client");
    up.set_mode(Mode::Status(500));
    let r = oq(
        &s,
        &data,
        &["answer", "que_u", "--answers-json", r#"[["A"]]"#],
    );
    assert_eq!(r.code, 13, "exit 13, the upstream's: {}", r.stderr);
    assert!(r.stderr.contains("upstream_uncertain"), "{}", r.stderr);
    assert!(!r.stderr.contains("offline"), "{}", r.stderr);
    assert!(!r.stderr.contains("queued"), "{}", r.stderr);
    let items = outbox_items(&s, &data);
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["state"], "uncertain", "{items:?}");
    // Delivering now asks the server: still unknown, so still uncertain; nothing re-sent.
    let d = oq(&s, &data, &["outbox", "--deliver", "--json"]);
    assert_eq!(d.code, 12, "{}", d.stdout);
    assert_eq!(
        d.json()["delivery"]["uncertain"].as_array().unwrap().len(),
        1
    );
    assert_eq!(up.posts(), 1);
    // OpenCode shows it took ana's answer: recorded as hers; the next delivery finds it.
    up.emit(json!({"type": "question.replied", "properties": {"sessionID": "ses_1", "requestID": "que_u", "answers": [["A"]]}}));
    until(DEADLINE, || {
        (s.question("que_u")["status"] == "answered").then_some(())
    })
    .expect("answered");
    let d = oq(&s, &data, &["outbox", "--deliver", "--json"]);
    assert_eq!(d.code, 0, "{} {}", d.stdout, d.stderr);
    let delivery = &d.json()["delivery"];
    assert_eq!(
        delivery["delivered"].as_array().unwrap().len(),
        1,
        "{delivery}"
    );
    assert_eq!(outbox_items(&s, &data)[0]["state"], "delivered");
    let q = s.question("que_u");
    assert_eq!(q["answer"]["respondidaPor"], "ana");
    assert_eq!(q["answer"]["decisionSource"], "person");
    assert_eq!(up.posts(), 1, "one POST upstream, ever");
    s.stop();
}

#[test]
fn an_unreachable_opencode_behind_a_reachable_server_refuses_and_queues_nothing() {
    let (s, up) = setup(&["que_n"]);
    let data = s.dir.path().join("client");
    up.task.abort();
    up.script.lock().unwrap().streams.clear();
    until(DEADLINE, || {
        (s.snapshot()["connected"] == false).then_some(())
    })
    .expect("disconnected");
    let r = oq(
        &s,
        &data,
        &["answer", "que_n", "--answers-json", r#"[["A"]]"#],
    );
    assert_eq!(r.code, 13, "{}", r.stderr);
    assert!(r.stderr.contains("upstream_unreachable"), "{}", r.stderr);
    assert!(!r.stderr.contains("offline"), "{}", r.stderr);
    assert!(outbox_items(&s, &data).is_empty(), "nothing queued");
    // The server itself is fine: the list still answers, and says its OpenCode is away.
    let l = oq(&s, &data, &["list", "--json"]);
    assert_eq!(l.code, 0, "{}", l.stderr);
    assert!(!l.stderr.contains("offline"), "{}", l.stderr);
    assert_eq!(up.posts(), 0);
    s.stop();
}

#[test]
fn deliver_counts_what_this_run_settled_and_a_question_settled_elsewhere_is_a_conflict() {
    let (s, up) = setup(&["que_c", "que_ok"]);
    let data = s.dir.path().join("client");
    // Two answers queued while the server could not be reached (written by hand, as the
    // outbox would have: the same file, the same source name).
    let outbox = Outbox::open(&data).unwrap();
    let body = AnswerInput {
        answers: Some(vec![vec!["B".into()]]),
        ..AnswerInput::default()
    };
    outbox
        .enqueue("ob-c", &s.base, Some("loja"), "que_c", &body)
        .unwrap();
    outbox
        .enqueue("ob-ok", &s.base, Some("loja"), "que_ok", &body)
        .unwrap();
    drop(outbox);
    // Meanwhile que_c was answered in OpenCode itself.
    up.emit(json!({"type": "question.replied", "properties": {"sessionID": "ses_1", "requestID": "que_c", "answers": [["A"]]}}));
    until(DEADLINE, || {
        (s.question("que_c")["status"] == "answered").then_some(())
    })
    .expect("answered upstream");
    let d = oq(&s, &data, &["outbox", "--deliver", "--json"]);
    assert_eq!(d.code, 0, "{} {}", d.stdout, d.stderr);
    let v = d.json();
    let delivery = &v["delivery"];
    assert_eq!(delivery["delivered"], json!(["ob-ok"]), "{v}");
    assert_eq!(delivery["conflicts"], json!(["ob-c"]), "{v}");
    assert_eq!(delivery["refused"], json!([]), "{v}");
    let state = |key: &str| {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["key"] == key)
            .unwrap()["state"]
            .clone()
    };
    assert_eq!(state("ob-c"), "conflict");
    assert_eq!(state("ob-ok"), "delivered");
    // The text of the conflict is kept.
    let human = oq(&s, &data, &["outbox"]);
    assert!(human.stdout.contains("conflict"), "{}", human.stdout);
    assert!(human.stdout.contains("que_c"), "{}", human.stdout);
    assert_eq!(up.posts(), 1);
    s.stop();
}
