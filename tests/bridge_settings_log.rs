//! A damaged auto-delegate settings file: the bridge says so in the log, naming the file
//! and the upstream, and keeps the feature off (`unavailable`) rather than guessing —
//! nothing goes upstream on its own. Its own test binary: it sets the process's tracing
//! subscriber to read what the server logs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bridge_server;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bridge_server::scripted::{DIR, Script, Shared, request, start_upstream};
use bridge_server::{BridgeServer, Upstreamed, until};

/// What the process logs, kept for the test to read.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn an_unreadable_settings_file_is_logged_and_keeps_auto_delegate_off() {
    let log = Captured::default();
    let writer = log.clone();
    tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .init();

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let script: Shared = Arc::new(Mutex::new(Script {
        pending: vec![request("que_1")],
        ..Script::default()
    }));
    let up = start_upstream(&rt, script, 0);
    let url = format!("http://127.0.0.1:{}", up.port);
    let keep = tempfile::tempdir().unwrap();
    let data = keep.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let file = data.join("opencode-oc.settings.json");
    std::fs::write(&file, b"{\"enabled\": tru").unwrap();

    // auto_delegate = true in the config: the damaged file must not fall back to it.
    let s = BridgeServer::start(
        &Upstreamed {
            window_seconds: 1,
            ..Upstreamed::at(&url, &[DIR], true)
        },
        Some(&data),
    );
    let snap = until(Duration::from_secs(20), || {
        let snap = s.snapshot();
        (snap["settings"]["state"] != "loading" && snap["connected"] == true).then_some(snap)
    })
    .expect("settings read and upstream listed");
    assert_eq!(snap["settings"]["state"], "unavailable", "{snap}");
    assert_eq!(snap["enabled"], false, "{snap}");

    let text = String::from_utf8_lossy(&log.0.lock().unwrap()).to_string();
    let line = text
        .lines()
        .find(|l| l.contains("auto-delegate settings file cannot be read"))
        .unwrap_or_else(|| panic!("no log line names the damaged file:\n{text}"));
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains("upstream=oc"), "{line}");
    assert!(line.contains(&file.display().to_string()), "{line}");
    // The file is left as it was for a person to look at; nothing replaced it.
    assert_eq!(std::fs::read(&file).unwrap(), b"{\"enabled\": tru");
    // Past the 1 s window the config asked for, nothing went upstream on its own.
    std::thread::sleep(Duration::from_millis(2_500));
    assert_eq!(up.posts(), 0, "{}", s.snapshot());
    s.stop();
}
