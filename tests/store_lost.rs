//! Lost files are refused (issue 15): an empty `oq.sqlite3`, or a `-wal` whose store is
//! gone, is never silently made into a new, empty store; `oq store init` makes one
//! deliberately, moving the leftovers aside. The first run, with nothing there at all,
//! still just works.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};

use common::{Out, oq, run, store_file};

const DEV: &str = "dev-a";

fn door(dir: &Path, args: &[&str]) -> Out {
    run(oq(dir, DEV).args(args))
}

fn ask(dir: &Path, pergunta: &str) -> Out {
    door(dir, &["ask", pergunta, "--agent", "po"])
}

fn sidecar(dir: &Path, suffix: &str) -> PathBuf {
    let mut name = store_file(dir).into_os_string();
    name.push(suffix);
    name.into()
}

fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    n.sort();
    n
}

#[test]
fn the_first_run_makes_the_data_dir_and_the_store() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("not-yet");
    let asked = ask(&dir, "First?");
    assert_eq!(asked.code, 0, "{asked:?}");
    let listed = door(&dir, &["list", "--json"]);
    assert_eq!(listed.code, 0, "{listed:?}");
    assert_eq!(listed.json()["total"], 1);
}

#[test]
fn an_empty_store_file_is_refused_by_every_door_and_left_as_it_is() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    std::fs::write(store_file(dir), b"").unwrap();
    for out in [door(dir, &["list"]), ask(dir, "Lost?"), door(dir, &[])] {
        assert_eq!(out.code, 9, "{out:?}");
        assert!(out.stderr.contains("store_file_empty"), "{out:?}");
        assert!(out.stderr.contains("oq store init"), "{out:?}");
    }
    assert_eq!(std::fs::metadata(store_file(dir)).unwrap().len(), 0);
    assert_eq!(names(dir), ["oq.sqlite3"], "nothing made beside it");
}

#[test]
fn a_wal_without_its_store_is_refused_and_its_store_not_remade() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    assert_eq!(ask(dir, "Kept in the log?").code, 0);
    assert!(sidecar(dir, "-wal").exists(), "{:?}", names(dir));
    std::fs::remove_file(store_file(dir)).unwrap();
    for out in [door(dir, &["list"]), ask(dir, "Again?")] {
        assert_eq!(out.code, 9, "{out:?}");
        assert!(out.stderr.contains("store_file_missing"), "{out:?}");
        assert!(out.stderr.contains("oq.sqlite3-wal"), "{out:?}");
    }
    assert!(!store_file(dir).exists(), "no new store in its place");
}

#[test]
fn store_init_replaces_a_lost_store_moving_its_leftovers_aside() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    assert_eq!(ask(dir, "Kept in the log?").code, 0);
    let wal = std::fs::read(sidecar(dir, "-wal")).unwrap();
    std::fs::remove_file(store_file(dir)).unwrap();
    let init = door(dir, &["store", "init", "--json"]);
    assert_eq!(init.code, 0, "{init:?}");
    let v = init.json();
    assert_eq!(v["created"], true);
    let moved: Vec<PathBuf> = v["movedAside"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| PathBuf::from(p.as_str().unwrap()))
        .collect();
    let wal_aside = moved
        .iter()
        .find(|p| p.to_string_lossy().contains("-wal.lost-"))
        .unwrap_or_else(|| panic!("the -wal moved aside: {moved:?}"));
    assert_eq!(std::fs::read(wal_aside).unwrap(), wal, "kept byte for byte");
    let listed = door(dir, &["list", "--json"]);
    assert_eq!(listed.code, 0, "{listed:?}");
    assert_eq!(listed.json()["total"], 0, "a new, empty store");
}

#[test]
fn store_init_after_an_empty_file_and_over_a_store_already_there() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    std::fs::write(store_file(dir), b"").unwrap();
    let init = door(dir, &["store", "init"]);
    assert_eq!(init.code, 0, "{init:?}");
    assert!(init.stdout.contains("a new, empty oq store"), "{init:?}");
    assert!(names(dir).iter().any(|n| n.starts_with("oq.sqlite3.lost-")));
    assert_eq!(ask(dir, "Now?").code, 0);
    let again = door(dir, &["store", "init"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(again.stdout.contains("already an oq store"), "{again:?}");
    assert_eq!(
        door(dir, &["list", "--json"]).json()["total"],
        1,
        "left as it was"
    );
}

#[test]
fn store_init_refuses_a_file_that_is_not_an_oq_store() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    std::fs::write(store_file(dir), b"my notes, not a database").unwrap();
    let init = door(dir, &["store", "init"]);
    assert_eq!(init.code, 9, "{init:?}");
    assert!(init.stderr.contains("not_an_oq_store"), "{init:?}");
    assert_eq!(
        std::fs::read(store_file(dir)).unwrap(),
        b"my notes, not a database"
    );
}
