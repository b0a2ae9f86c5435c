//! The screen names why the link is down (issue 11, "the screen tells the truth"): the
//! whole TUI (`tests/common/tui_app.rs`) on a real `oq serve` (`tests/serve_process`).
//! A refused token says "unauthorized", never "offline" (nothing would queue); a
//! gateway's bare 502 in front of the server is named "bad gateway (502)" on the status
//! line, in the field and in the queued notice, while answers still queue and are
//! delivered once the gateway relays again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod serve_process;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use common::tui_app::{App, Start};
use crossterm::event::KeyCode;
use oq::source::{HttpSource, ResilientSource, Source};
use serve_process::{DEV, Serve};

fn app(base: &str, token: &str, client: &Path) -> App {
    let source = ResilientSource::new(HttpSource::new(base, token).unwrap(), client).unwrap();
    let mut start = Start::new(client, DEV);
    start.project = Some("loja".into());
    App::start_on(source, start)
}

#[test]
fn a_refused_token_says_unauthorized_not_offline() {
    let mut s = Serve::new();
    s.seed(1);
    s.start();
    let client = tempfile::tempdir().unwrap();
    let app = app(&s.base, "not-the-token", client.path());
    let screen = app.wait_text("unauthorized since");
    assert!(screen.contains("refused the token"), "{screen}");
    for wrong in ["offline", "reconnecting", "queues"] {
        assert!(!screen.contains(wrong), "{wrong:?} on screen:\n{screen}");
    }
}

#[test]
fn a_gateways_502_is_named_and_an_answer_behind_it_is_delivered_once() {
    let mut s = Serve::new();
    let q = s.seed(1).remove(0);
    s.start();
    let gateway = Gateway::new(s.port);
    let client = tempfile::tempdir().unwrap();
    let app = app(&gateway.base, &s.token, client.path());
    app.wait_text("live");
    app.wait_text("Question 0?");
    gateway.fail();
    let screen = app.wait_text("bad gateway (502) since");
    assert!(
        screen.contains("502 Bad Gateway"),
        "the notice names it:\n{screen}"
    );
    assert!(!screen.contains("offline"), "{screen}");
    // The server behind it cannot be reached: the answer queues, and the screen says why.
    app.wait_text("bad gateway (502) — Enter queues your answer");
    app.ch('i');
    app.typed("Sent through the gateway");
    app.key(KeyCode::Enter);
    let screen = app.wait_text("bad gateway (502) — your answer to");
    assert!(!screen.contains("offline"), "{screen}");
    app.wait_text("outbox 1");
    gateway.relay();
    app.wait_text("1 queued answer delivered");
    assert_eq!(
        s.answered(&q),
        (1, Some("Sent through the gateway".to_string()))
    );
    let screen = app.wait_text("live");
    assert!(
        !screen.contains("bad gateway"),
        "the cause went with it:\n{screen}"
    );
}

#[test]
fn a_token_refused_while_typing_names_the_cause_and_queues_nothing() {
    let mut s = Serve::new();
    let q = s.seed(1).remove(0);
    s.start();
    let gateway = Gateway::new(s.port);
    let client = tempfile::tempdir().unwrap();
    let app = app(&gateway.base, &s.token, client.path());
    app.wait_text("live");
    app.wait_text("Question 0?");
    app.ch('i');
    app.typed("Half an answ");
    app.wait_text("Half an answ");
    // The token is revoked while the person types.
    gateway.refuse();
    let screen = app.wait_text("The answer field closed");
    let flat = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    for said in [
        "unauthorized",
        "nothing was sent or queued",
        "kept as a draft",
    ] {
        assert!(flat.contains(said), "{said:?} not said:\n{screen}");
    }
    for wrong in ["Offline", "offline", "Enter queues"] {
        assert!(!flat.contains(wrong), "{wrong:?} on screen:\n{screen}");
    }
    // The keys that keep coming are the notice's; Enter closes it and queues nothing.
    app.typed("er q");
    app.key(KeyCode::Enter);
    let screen = app.wait_for("the notice closed", |s| {
        !s.contains("The answer field closed")
    });
    assert!(!screen.contains("outbox 1"), "{screen}");
    app.ch('i');
    app.key(KeyCode::Enter);
    let screen = app.wait_text("unauthorized");
    assert!(!screen.contains("outbox 1"), "{screen}");
    assert_eq!(s.answered(&q), (0, None));
}

#[test]
fn a_gateways_502_while_typing_names_it_and_enter_still_queues() {
    let mut s = Serve::new();
    let q = s.seed(1).remove(0);
    s.start();
    let gateway = Gateway::new(s.port);
    let client = tempfile::tempdir().unwrap();
    let app = app(&gateway.base, &s.token, client.path());
    app.wait_text("live");
    app.wait_text("Question 0?");
    app.ch('i');
    app.typed("Through the gate");
    app.wait_text("Through the gate");
    gateway.fail();
    // The cut connection comes first and reads as offline; the poll's cause follows.
    let flat_of = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let screen = app.wait_for("the notice under the gateway's cause", |s| {
        s.contains("The answer field closed") && flat_of(s).contains("bad gateway (502): the")
    });
    let flat = screen.split_whitespace().collect::<Vec<_>>().join(" ");
    for said in ["bad gateway (502)", "Enter queues", "kept as a draft"] {
        assert!(flat.contains(said), "{said:?} not said:\n{screen}");
    }
    for wrong in ["Offline", "unauthorized", "nothing was sent"] {
        assert!(!flat.contains(wrong), "{wrong:?} on screen:\n{screen}");
    }
    // As it says: the field opens again on the draft, and Enter queues it.
    app.key(KeyCode::Esc);
    app.ch('i');
    app.wait_text("Through the gate");
    app.key(KeyCode::Enter);
    app.wait_text("outbox 1");
    gateway.relay();
    app.wait_text("1 queued answer delivered");
    assert_eq!(s.answered(&q), (1, Some("Through the gate".to_string())));
}

#[test]
fn a_call_the_backoff_holds_back_still_names_the_gateway() {
    let mut s = Serve::new();
    s.start();
    let gateway = Gateway::new(s.port);
    gateway.fail();
    let client = tempfile::tempdir().unwrap();
    let source = ResilientSource::new(
        HttpSource::new(&gateway.base, &s.token).unwrap(),
        client.path(),
    )
    .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    // The first call reaches the gateway; the next ones, at once, fall inside the backoff
    // (at least 250 ms) and are answered from the last cause, which stays named.
    for call in 0..3 {
        let e = rt.block_on(source.revision(Some("loja"))).unwrap_err();
        assert_eq!(
            oq::source::gateway_status(&e),
            Some(502),
            "call {call}: {e}"
        );
    }
}

/// A gateway in front of the real server — a scripted fault, as `oq serve` itself never
/// answers a bare 502: it relays every connection to the server while relaying; while
/// failing it answers `502 Bad Gateway` without oq's body; while refusing it relays each
/// request with its token swapped for one the server does not know, so the server's own
/// 401 comes back (a token revoked under a running TUI). Changing mode cuts the relayed
/// connections, so the client's pooled ones cannot slip past it.
struct Gateway {
    base: String,
    mode: Arc<AtomicU8>,
    stop: Arc<AtomicBool>,
    relayed: Arc<Mutex<Vec<TcpStream>>>,
    port: u16,
    thread: Option<JoinHandle<()>>,
}

const RELAY: u8 = 0;
const FAIL: u8 = 1;
const REFUSE: u8 = 2;

impl Gateway {
    fn new(server_port: u16) -> Gateway {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let mode = Arc::new(AtomicU8::new(RELAY));
        let stop = Arc::new(AtomicBool::new(false));
        let relayed = Arc::new(Mutex::new(Vec::new()));
        let (m, st, r) = (Arc::clone(&mode), Arc::clone(&stop), Arc::clone(&relayed));
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let mode = m.load(Ordering::SeqCst);
                if mode == FAIL {
                    std::thread::spawn(move || bad_gateway(conn));
                } else if let Ok(up) = TcpStream::connect(("127.0.0.1", server_port)) {
                    let mut held = r.lock().unwrap();
                    held.push(conn.try_clone().unwrap());
                    held.push(up.try_clone().unwrap());
                    let (conn, up) = (conn.try_clone().unwrap(), up.try_clone().unwrap());
                    if mode == REFUSE {
                        std::thread::spawn(move || revoked(conn, up));
                    } else {
                        pipe(conn.try_clone().unwrap(), up.try_clone().unwrap());
                        pipe(up, conn);
                    }
                }
            }
        });
        Gateway {
            base: format!("http://127.0.0.1:{port}"),
            mode,
            stop,
            relayed,
            port,
            thread: Some(thread),
        }
    }

    fn set(&self, mode: u8) {
        self.mode.store(mode, Ordering::SeqCst);
        for c in self.relayed.lock().unwrap().drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
    }

    fn fail(&self) {
        self.set(FAIL);
    }

    /// The token is revoked from now on: every request reaches the server with a token
    /// it does not know.
    fn refuse(&self) {
        self.set(REFUSE);
    }

    fn relay(&self) {
        self.mode.store(RELAY, Ordering::SeqCst);
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.fail();
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One request relayed with its bearer token swapped and `Connection: close`, so the
/// next request comes on a new connection and is swapped too; then both ways as is.
fn revoked(mut conn: TcpStream, mut up: TcpStream) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).is_ok_and(|n| n == 1) {
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head).to_string();
    let mut lines: Vec<String> = text
        .trim_end()
        .lines()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            !l.starts_with("connection:") && !l.starts_with("authorization:")
        })
        .map(str::to_string)
        .collect();
    lines.push("Authorization: Bearer revoked-token".into());
    lines.push("Connection: close".into());
    let head = format!("{}\r\n\r\n", lines.join("\r\n"));
    if up.write_all(head.as_bytes()).is_ok() {
        pipe(conn.try_clone().unwrap(), up.try_clone().unwrap());
        let _ = std::io::copy(&mut up, &mut conn);
        let _ = conn.shutdown(Shutdown::Both);
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = to.shutdown(Shutdown::Write);
    });
}

/// Reads the request's head, answers 502 without oq's body, closes.
fn bad_gateway(mut conn: TcpStream) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).is_ok_and(|n| n == 1) {
        head.push(byte[0]);
    }
    let body = "<html><body>502 Bad Gateway</body></html>";
    let _ = write!(
        conn,
        "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = conn.shutdown(Shutdown::Both);
}
