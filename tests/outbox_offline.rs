//! Offline for real: the server stopped, the last-known queue read from the mirror,
//! three answers queued in the outbox (exit 12), one of them answered elsewhere
//! meanwhile; the server back, `oq outbox --deliver`: two land once, the third is a
//! conflict with its text kept.
#![allow(clippy::unwrap_used)]

mod serve_process;

use serde_json::Value;
use serve_process::{Serve, outbox_items};

const QUEUED: i32 = 12;

#[test]
fn answers_given_offline_land_once_and_a_conflict_keeps_its_text() {
    let mut s = Serve::new();
    let qs = s.seed(3);
    s.start();
    let client = tempfile::tempdir().unwrap();
    let c = client.path();

    // Online once: the mirror keeps the queue.
    let out = s.run(c, &["list", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    s.kill();

    // Offline: the last-known queue is still readable, and says so.
    let out = s.run(c, &["list", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list["items"].as_array().unwrap().len(), 3);
    assert!(String::from_utf8_lossy(&out.stderr).contains("offline"));
    // A write that is not an answer cannot be queued: refused, in its own words, without
    // the note of a queue read from the mirror.
    let out = s.run(c, &["session", "start"]);
    assert_eq!(out.status.code(), Some(10));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!said.contains("last-known queue"), "{said}");
    let out = s.run(c, &["show", &qs[0], "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Three answers, each queued with its own exit code.
    for (i, q) in qs.iter().enumerate() {
        let out = s.run(c, &["answer", q, "--text", &format!("offline answer {i}")]);
        assert_eq!(
            out.status.code(),
            Some(QUEUED),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("queued"));
    }
    let out = s.run(c, &["outbox", "--json"]);
    let items = outbox_items(&out);
    assert_eq!(items.len(), 3);
    assert!(items.iter().all(|e| e["state"] == "pending"));

    // Meanwhile the third is answered elsewhere.
    s.answer_elsewhere(&qs[2], "answered on another machine");

    // Still unreachable: delivery keeps everything pending.
    let out = s.run(c, &["outbox", "--deliver", "--json"]);
    assert_eq!(out.status.code(), Some(QUEUED));

    s.start();
    let out = s.run(c, &["outbox", "--deliver", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let items = outbox_items(&out);
    let state = |q: &str| {
        items
            .iter()
            .find(|e| e["questionId"] == q)
            .cloned()
            .unwrap()
    };
    assert_eq!(state(&qs[0])["state"], "delivered");
    assert_eq!(state(&qs[1])["state"], "delivered");
    let conflict = state(&qs[2]);
    assert_eq!(conflict["state"], "conflict", "{conflict}");
    assert_eq!(conflict["body"]["resposta"], "offline answer 2");
    assert!(conflict["detail"].as_str().unwrap().contains("elsewhere"));

    for (i, q) in qs.iter().enumerate().take(2) {
        assert_eq!(s.answered(q), (1, Some(format!("offline answer {i}"))));
    }
    assert_eq!(
        s.answered(&qs[2]),
        (1, Some("answered on another machine".into()))
    );

    // Delivering again changes nothing; the conflict's text is still listed.
    let out = s.run(c, &["outbox", "--deliver"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("offline answer 2"));
    for q in &qs {
        assert_eq!(s.answered(q).0, 1);
    }
    s.kill();
}

#[test]
fn an_online_answer_is_delivered_at_once_and_a_refusal_is_not_queued() {
    let mut s = Serve::new();
    let qs = s.seed(1);
    s.start();
    let client = tempfile::tempdir().unwrap();
    let c = client.path();
    let out = s.run(c, &["answer", &qs[0], "--text", "now", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A second answer is refused at once (exit 4) and leaves nothing pending.
    let out = s.run(c, &["answer", &qs[0], "--text", "again"]);
    assert_eq!(out.status.code(), Some(4));
    let items = outbox_items(&s.run(c, &["outbox", "--json"]));
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["state"], "delivered");
    assert_eq!(s.answered(&qs[0]).0, 1);
    s.kill();
}
