//! Nothing waits forever, through a real `oq serve`: a slow head, an idle connection and
//! a body that never arrives (on `/mcp` too, which rmcp would read with no clock) are cut
//! at the configured `[limits]`; connections beyond
//! `max_connections` are refused; a subscriber that does not read is dropped (its stream
//! slot comes back); failed authentication is limited per address while the right token
//! is still served. Waits are bounded; nothing asserts how fast.
#![allow(clippy::unwrap_used)]

#[path = "serve_process/mod.rs"]
mod serve_process;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serve_process::{Serve, conform_raw, exchange};

/// Far longer than any configured limit here: a connection still open after it was not cut.
const BOUND: Duration = Duration::from_secs(20);

fn serve(limits: &str) -> Serve {
    let mut s = Serve::with_config(&format!("\n\n[limits]\n{limits}"));
    s.start();
    s
}

fn connect(s: &Serve) -> TcpStream {
    let c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    c
}

/// Reads until the server closes (true) or [`BOUND`] passes (false), sending `trickle`
/// every 200 ms meanwhile; what was read comes back too.
fn closed_by_server(c: &mut TcpStream, trickle: Option<&[u8]>) -> (bool, String) {
    let started = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while started.elapsed() < BOUND {
        if let Some(bytes) = trickle
            && c.write_all(bytes).is_err()
        {
            return (true, String::from_utf8_lossy(&got).into());
        }
        match c.read(&mut buf) {
            Ok(0) => return (true, String::from_utf8_lossy(&got).into()),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return (true, String::from_utf8_lossy(&got).into()),
        }
    }
    (false, String::from_utf8_lossy(&got).into())
}

const HEALTH: &str = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";

/// The `clock` of the audit log's `connection_cut` line for the connection `c`, waiting
/// up to `wait` for it to be written.
fn cut_by(s: &Serve, c: &TcpStream, wait: Duration) -> Option<String> {
    let local = c.local_addr().unwrap().to_string();
    let path = s.store_dir().join("logs/audit.log");
    let started = Instant::now();
    loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let line = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|l| l["event"] == "connection_cut" && l["remote"] == local.as_str());
        if let Some(l) = line {
            return Some(l["clock"].as_str().unwrap().to_string());
        }
        if started.elapsed() > wait {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_head_sent_slowly_is_cut_at_header_read_seconds() {
    let s = serve("header_read_seconds = 1\nidle_seconds = 3600");
    let mut c = connect(&s);
    c.write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n")
        .unwrap();
    // A header line every 200 ms: always something arriving, never the end of the head.
    let (closed, got) = closed_by_server(&mut c, Some(b"X-Slow: y\r\n"));
    assert!(closed, "a slowloris head was held past {BOUND:?}");
    assert!(!got.contains("200 OK"), "{got}");
    assert_eq!(cut_by(&s, &c, BOUND).as_deref(), Some("header_read"));
}

#[test]
fn an_idle_connection_is_cut_at_idle_seconds_before_and_between_requests() {
    let s = serve("idle_seconds = 1\nheader_read_seconds = 3600");
    let mut silent = connect(&s);
    assert!(
        closed_by_server(&mut silent, None).0,
        "a connection that sent nothing was kept"
    );
    // A connection that never sent a request is an audit line; an idle keep-alive
    // after its requests ends as it should, and is none.
    assert_eq!(cut_by(&s, &silent, BOUND).as_deref(), Some("idle"));
    let mut kept = connect(&s);
    assert!(exchange(&mut kept, HEALTH).starts_with("HTTP/1.1 200"));
    assert!(
        closed_by_server(&mut kept, None).0,
        "an idle keep-alive was kept"
    );
    let mut later = connect(&s);
    assert!(closed_by_server(&mut later, None).0);
    assert_eq!(cut_by(&s, &later, BOUND).as_deref(), Some("idle"));
    assert_eq!(cut_by(&s, &kept, Duration::ZERO), None);
}

#[test]
fn a_body_that_never_arrives_is_cut_at_body_read_seconds() {
    let s = serve("body_read_seconds = 1\nidle_seconds = 3600\nheader_read_seconds = 3600");
    let mut c = connect(&s);
    let head = format!(
        "POST /projects/loja/sessions HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"kind\":",
        s.token
    );
    c.write_all(head.as_bytes()).unwrap();
    let (closed, got) = closed_by_server(&mut c, None);
    assert!(
        closed,
        "a body of 10 bytes out of 1000 was waited on past {BOUND:?}"
    );
    assert!(got.starts_with("HTTP/1.1 408"), "{got}");
    assert!(got.contains("body_timeout"), "{got}");
    conform_raw(&head, &got);
}

#[test]
fn connections_beyond_max_connections_are_refused_until_one_closes() {
    let s = serve("max_connections = 2\nidle_seconds = 3600\nheader_read_seconds = 3600");
    let mut a = connect(&s);
    let mut b = connect(&s);
    assert!(exchange(&mut a, HEALTH).starts_with("HTTP/1.1 200"));
    assert!(exchange(&mut b, HEALTH).starts_with("HTTP/1.1 200"));
    let mut third = connect(&s);
    let _ = third.write_all(HEALTH.as_bytes());
    let (closed, got) = closed_by_server(&mut third, None);
    assert!(closed, "the third connection was kept open");
    assert!(
        !got.contains("200 OK"),
        "the third connection was served: {got}"
    );
    if !got.is_empty() {
        assert!(
            got.starts_with("HTTP/1.1 503") && got.contains("too_many_connections"),
            "{got}"
        );
        conform_raw(HEALTH, &got);
    }
    drop(a);
    let started = Instant::now();
    loop {
        let mut next = connect(&s);
        let reply = exchange(&mut next, HEALTH);
        if reply.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(
            started.elapsed() < BOUND,
            "a closed connection's place never came back: {reply}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A subscriber that sends its request and never reads: after the server's writes stop
/// progressing for `write_seconds` it is dropped, and its token's one stream slot is free.
#[test]
fn a_subscriber_that_does_not_read_is_dropped_and_its_slot_freed() {
    let mut s = Serve::with_config("\n\n[limits]\nwrite_seconds = 3\nmax_streams_per_token = 1");
    // A backlog far larger than the socket buffers, replayed from Last-Event-ID 0.
    s.seed(4000);
    s.start();
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    sock.connect(&std::net::SocketAddr::from(([127, 0, 0, 1], s.port)).into())
        .unwrap();
    let mut stalled: TcpStream = sock.into();
    write!(
        stalled,
        "GET /projects/loja/events HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {}\r\nLast-Event-ID: 0\r\n\r\n",
        s.token
    )
    .unwrap();
    // Its head only (it holds the slot from here on), then no more reading.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(
            stalled.read(&mut byte).unwrap(),
            1,
            "{}",
            String::from_utf8_lossy(&head)
        );
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    conform_raw(
        "GET /projects/loja/events HTTP/1.1",
        &String::from_utf8_lossy(&head),
    );
    // Its reply's head (an event stream has no length), checked against the document.
    let subscribe = || {
        let mut c = connect(&s);
        let head = format!(
            "GET /projects/loja/events HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {}\r\n\r\n",
            s.token
        );
        exchange(&mut c, &head)
    };
    let first = subscribe();
    assert!(
        first.starts_with("HTTP/1.1 429"),
        "a second stream of a one-stream token: {first}"
    );
    assert!(
        first.contains("too_many_streams") || !first.contains("\r\n\r\n{"),
        "{first}"
    );
    let started = Instant::now();
    loop {
        let reply = subscribe();
        if reply.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(
            started.elapsed() < BOUND,
            "the subscriber that does not read still holds its slot: {reply}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(cut_by(&s, &stalled, BOUND).as_deref(), Some("write"));
    drop(stalled);
}

#[test]
fn failed_authentication_is_limited_per_address_and_the_right_token_still_served() {
    let s = serve("auth_failures_per_minute = 3");
    let mut c = connect(&s);
    let mut me = |token: Option<&str>| {
        let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
        exchange(
            &mut c,
            &format!("GET /me HTTP/1.1\r\nHost: t\r\n{auth}\r\n"),
        )
    };
    for _ in 0..3 {
        let r = me(Some("wrong"));
        assert!(r.starts_with("HTTP/1.1 401"), "{r}");
    }
    let limited = me(Some("wrong"));
    assert!(limited.starts_with("HTTP/1.1 429"), "{limited}");
    assert!(limited.contains("too_many_auth_failures"), "{limited}");
    let retry: u64 = limited
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("retry-after: ")
                .map(|v| v.trim().parse().unwrap())
        })
        .expect("Retry-After");
    assert!((1..=60).contains(&retry), "Retry-After {retry}");
    let token = s.token.clone();
    let right = me(Some(&token));
    assert!(
        right.starts_with("HTTP/1.1 200"),
        "the right token is slowed: {right}"
    );
    let none = me(None);
    assert!(
        none.starts_with("HTTP/1.1 429"),
        "no token counts as a failure too: {none}"
    );
}

#[test]
fn an_mcp_body_that_never_arrives_is_cut_at_body_read_seconds_and_an_oversize_one_refused() {
    let s = serve("body_read_seconds = 1\nidle_seconds = 3600\nheader_read_seconds = 3600");
    let client = s.dir.path().join("client");
    let started = s.run(&client, &["session", "start", "--id", "loja.checkout"]);
    assert!(started.status.success(), "{started:?}");
    let head = |length: usize| {
        format!(
            "POST /mcp?session=loja.checkout HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {length}\r\n\r\n",
            s.agent_token
        )
    };
    let mut c = connect(&s);
    c.write_all(format!("{}{{\"jsonrpc\":", head(1000)).as_bytes())
        .unwrap();
    let (closed, got) = closed_by_server(&mut c, None);
    assert!(
        closed,
        "an /mcp body of 11 bytes out of 1000 was waited on past {BOUND:?}"
    );
    assert!(got.starts_with("HTTP/1.1 408"), "{got}");
    assert!(got.contains("body_timeout"), "{got}");
    // Over the cap: refused by oq's own code before rmcp reads it.
    let big = 70 * 1024;
    let mut c = connect(&s);
    c.write_all(head(big).as_bytes()).unwrap();
    let _ = c.write_all(&vec![b' '; big]);
    let (_, got) = closed_by_server(&mut c, None);
    assert!(got.starts_with("HTTP/1.1 413"), "{got}");
    assert!(got.contains("body_too_large"), "{got}");
}
