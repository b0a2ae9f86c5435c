//! The audit log through a real `oq serve`: one line per request in
//! `<data_dir>/logs/audit.log` (0600) with its request id (the `X-Request-Id` the client
//! got), the caller, the route, the status and the remote address; refusals and failed
//! authentications with their code; and never a token or a question's or answer's text,
//! in the audit log or the debug log. Authenticated responses are `no-store`.
#![allow(clippy::unwrap_used)]

#[path = "serve_process/mod.rs"]
mod serve_process;

use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::Value;
use serve_process::{Serve, exchange};

const QUESTION: &str = "AUDIT-Q-7f3a: which ledger do we migrate first?";
const ANSWER: &str = "AUDIT-A-91bd: the billing ledger, on Monday";
const WRONG_TOKEN: &str = "wrong-9c1e0d5be27a4f";

fn header<'a>(reply: &'a str, name: &str) -> Option<&'a str> {
    let head = reply.split("\r\n\r\n").next()?;
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

fn body(reply: &str) -> Value {
    serde_json::from_str(reply.split_once("\r\n\r\n").unwrap().1).unwrap()
}

fn post(token: &str, path: &str, json: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{json}",
        json.len()
    )
}

#[test]
fn every_request_is_audited_by_id_caller_route_status_and_address_without_secrets() {
    let mut s = Serve::new();
    s.seed(0);
    s.start_with(&[("OQ_LOG", "trace")]);
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();

    let declare = format!(r#"{{"pergunta":"{QUESTION}","sessionId":"s1"}}"#);
    let declared = exchange(
        &mut c,
        &post(&s.agent_token, "/projects/loja/open-questions", &declare),
    );
    assert!(declared.starts_with("HTTP/1.1 201"), "{declared}");
    let qid = body(&declared)["questionId"].as_str().unwrap().to_string();
    let answer = format!(r#"{{"resposta":"{ANSWER}"}}"#);
    let path = format!("/projects/loja/open-questions/{qid}/answer");
    let answered = exchange(&mut c, &post(&s.token, &path, &answer));
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    assert_eq!(
        header(&answered, "cache-control"),
        Some("no-store"),
        "{answered}"
    );
    let again = exchange(&mut c, &post(&s.token, &path, &answer));
    assert!(again.starts_with("HTTP/1.1 409"), "{again}");
    let denied = exchange(
        &mut c,
        &format!("GET /me HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {WRONG_TOKEN}\r\n\r\n"),
    );
    assert!(denied.starts_with("HTTP/1.1 401"), "{denied}");
    let health = exchange(&mut c, "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(
        header(&health, "cache-control"),
        None,
        "a public route is cacheable"
    );
    s.stop();

    let audit_path = s.store_dir().join("logs/audit.log");
    let mode = std::fs::metadata(&audit_path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "audit.log mode {mode:o}");
    let audit = std::fs::read_to_string(&audit_path).unwrap();
    let lines: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by_id = |reply: &str| {
        let id = header(reply, "x-request-id").expect("X-Request-Id");
        lines
            .iter()
            .find(|l| l["requestId"] == id)
            .unwrap_or_else(|| panic!("no audit line for {id}:\n{audit}"))
            .clone()
    };
    let d = by_id(&declared);
    assert_eq!(d["caller"], serve_process::PO_BOT);
    assert_eq!(d["route"], "/projects/{projectId}/open-questions");
    assert_eq!(d["method"], "POST");
    assert_eq!(d["status"], 201);
    assert!(
        d["remote"].as_str().unwrap().starts_with("127.0.0.1:"),
        "{d}"
    );
    let a = by_id(&answered);
    assert_eq!(a["caller"], serve_process::DEV);
    assert_eq!(
        a["route"],
        "/projects/{projectId}/open-questions/{questionId}/answer"
    );
    let refused = by_id(&again);
    assert_eq!(
        (refused["status"].clone(), refused["code"].clone()),
        (409.into(), "pergunta_ja_respondida".into())
    );
    let failed = by_id(&denied);
    assert_eq!(failed["code"], "unauthorized");
    assert!(failed.get("caller").is_none(), "{failed}");

    let debug = std::fs::read_to_string(s.store_dir().join("logs/serve.log")).unwrap();
    for (log, text) in [("audit.log", &audit), ("serve.log", &debug)] {
        for secret in [
            s.token.as_str(),
            s.agent_token.as_str(),
            WRONG_TOKEN,
            QUESTION,
            ANSWER,
        ] {
            assert!(!text.contains(secret), "{log} holds {secret:?}");
        }
        // Nor a part of a text: the distinctive markers alone.
        for marker in ["AUDIT-Q-7f3a", "AUDIT-A-91bd"] {
            assert!(!text.contains(marker), "{log} holds {marker}");
        }
    }
}
