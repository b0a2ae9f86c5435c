//! `oq store backup FILE` while the store is written (issue 15): each copy is the store
//! at one moment — it checks clean and its chains verify — and it is restored by putting
//! it in place as `oq.sqlite3`. A backup never overwrites a file.
#![allow(clippy::unwrap_used)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::{engine, oq, run, store_file};
use oq::domain::{Actor, DeclareInput, Role, SessionKind};

const DEV: &str = "dev-a";

#[test]
fn backups_taken_while_a_writer_writes_are_whole_and_verify() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().to_path_buf();
    let e = engine(&dir);
    e.start_session(
        &Actor::person(DEV),
        "loja",
        SessionKind::Conversation,
        Some("s1"),
    )
    .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                e.declare(
                    &Actor::agent(Role::Po),
                    "loja",
                    &DeclareInput {
                        pergunta: format!("Question {n}?"),
                        session_id: "s1".into(),
                        ..Default::default()
                    },
                )
                .unwrap();
                n += 1;
            }
            n
        })
    };
    let copies = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    for i in 0..3 {
        std::thread::sleep(std::time::Duration::from_millis(150));
        let restored = copies.path().join(format!("restored-{i}"));
        std::fs::create_dir(&restored).unwrap();
        let file = store_file(&restored);
        let out = run(oq(&dir, DEV)
            .arg("store")
            .arg("backup")
            .arg(&file)
            .arg("--json"));
        assert_eq!(out.code, 0, "{out:?}");
        let events = out.json()["events"].as_u64().unwrap();
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
        // Restored as a data dir's store: whole, and every chain holds.
        let verified = run(oq(&restored, DEV).args(["store", "verify", "--json"]));
        assert_eq!(verified.code, 0, "{verified:?}");
        assert_eq!(verified.json()["events"].as_u64().unwrap(), events);
        let checked = run(oq(&restored, DEV).args(["store", "check"]));
        assert_eq!(checked.code, 0, "{checked:?}");
        seen.push(events);
    }
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();
    assert!(written > 0);
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    // Never over an existing file.
    let taken = store_file(&copies.path().join("restored-0"));
    let before = std::fs::read(&taken).unwrap();
    let again = run(oq(&dir, DEV).arg("store").arg("backup").arg(&taken));
    assert_ne!(again.code, 0, "{again:?}");
    assert!(again.stderr.contains("already exists"), "{again:?}");
    assert_eq!(std::fs::read(&taken).unwrap(), before);
}
