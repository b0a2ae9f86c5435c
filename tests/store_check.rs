//! Damage is detected and stopped (issue 15): `oq store check` recomputes from the log
//! alone what the indexes claim and finds where they disagree (exit 14); `oq serve` runs
//! its quick form at start and serves reads, not writes, from a damaged store, saying
//! why in `/healthz`; and a sweep flipping 4 bytes inside a live cell of every page of a
//! small store finds each one — by `check`, or by the store being refused.
#![allow(clippy::unwrap_used)]

mod common;
mod serve_process;

use std::path::Path;

use common::{Out, oq, run, store_file};
use serde_json::{Value, json};
use serve_process::Serve;

const DEV: &str = "dev-a";

fn door(dir: &Path, args: &[&str]) -> Out {
    run(oq(dir, DEV).args(args))
}

fn seeded(dir: &Path, n: usize) {
    assert_eq!(door(dir, &["session", "start", "--id", "s1"]).code, 0);
    for i in 0..n {
        let affects = format!("rule:RN-{i}");
        let out = door(
            dir,
            &[
                "ask",
                &format!("Question {i}?"),
                "--agent",
                "po",
                "--session",
                "s1",
                "--affects",
                &affects,
                "--suggest",
                "yes",
            ],
        );
        assert_eq!(out.code, 0, "{out:?}");
    }
}

/// Rows removed from the open set as a damaged page would lose them: the guard
/// stepped aside and put back exactly as it was, so the schema itself looks untouched.
fn lose_open_rows(dir: &Path, n: usize) {
    let conn = rusqlite::Connection::open(store_file(dir)).unwrap();
    let guard: String = conn
        .query_row(
            "SELECT sql FROM sqlite_schema WHERE name = 'open_questions_guard_delete'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute_batch(&format!(
        "DROP TRIGGER open_questions_guard_delete;
         DELETE FROM open_questions WHERE question_id IN
             (SELECT question_id FROM open_questions ORDER BY declared_seq LIMIT {n});
         {guard};"
    ))
    .unwrap();
}

#[test]
fn a_sound_store_checks_clean() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    seeded(dir, 4);
    let out = door(dir, &["store", "check", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["clean"], true);
    assert_eq!(out.json()["events"], 5);
    let words = door(dir, &["store", "check"]);
    assert!(words.stdout.contains("sound"), "{words:?}");
}

#[test]
fn an_open_set_that_lost_rows_is_found_and_writes_stop() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    seeded(dir, 6);
    lose_open_rows(dir, 2);
    // What list would have shown silently: 4 of 6.
    let out = door(dir, &["store", "check", "--json"]);
    assert_eq!(out.code, 14, "{out:?}");
    let v = out.json();
    assert_eq!(v["clean"], false);
    let indexes = v["indexes"].to_string();
    assert!(
        indexes.contains("open in the log, missing from open_questions"),
        "{v}"
    );
    let words = door(dir, &["store", "check"]);
    assert!(words.stdout.contains("DAMAGED"), "{words:?}");
    assert!(door(dir, &["store", "check", "--quick"]).code == 14);
}

#[test]
fn links_that_disagree_with_the_log_are_found() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    seeded(dir, 3);
    let conn = rusqlite::Connection::open(store_file(dir)).unwrap();
    let guard: String = conn
        .query_row(
            "SELECT sql FROM sqlite_schema WHERE name = 'question_links_refuse_delete'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    conn.execute_batch(&format!(
        "DROP TRIGGER question_links_refuse_delete;
         DELETE FROM question_links WHERE target = 'RN-1'; {guard};"
    ))
    .unwrap();
    let out = door(dir, &["store", "check", "--json"]);
    assert_eq!(out.code, 14, "{out:?}");
    assert!(
        out.json()["indexes"]
            .to_string()
            .contains("declared, missing from question_links"),
        "{out:?}"
    );
}

#[test]
fn oq_serve_serves_reads_but_not_writes_from_a_damaged_store() {
    let mut serve = Serve::new();
    let q = serve.seed(3);
    lose_open_rows(&serve.store_dir(), 1);
    serve.start();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let client = reqwest::Client::new();
    let send = |req: reqwest::RequestBuilder| {
        rt.block_on(async {
            let r = req.send().await.unwrap();
            let status = r.status().as_u16();
            (status, r.json::<Value>().await.unwrap_or(Value::Null))
        })
    };
    let (status, listed) = send(
        client
            .get(format!("{}/projects/loja/open-questions", serve.base))
            .bearer_auth(&serve.token),
    );
    assert_eq!(status, 200, "reads are served: {listed}");
    let (status, refused) = send(
        client
            .post(format!(
                "{}/projects/loja/open-questions/{}/answer",
                serve.base, q[2]
            ))
            .bearer_auth(&serve.token)
            .json(&json!({ "resposta": "yes" })),
    );
    assert_eq!(status, 503, "{refused}");
    assert_eq!(refused["code"], "store_damaged");
    let (_, health) = send(client.get(format!("{}/healthz", serve.base)));
    assert_eq!(health["status"], "damaged", "{health}");
    assert!(health.to_string().contains("open_questions"), "{health}");
    assert!(serve.stderr().contains("damaged"), "{}", serve.stderr());
    assert_eq!(serve.answered(&q[2]).0, 0, "nothing written");
}

/// SQLite's b-tree page types (interior/leaf, index/table).
const BTREE_PAGES: [u8; 4] = [2, 5, 10, 13];

/// SQLite's varint at `at`: (value, length).
fn varint(page: &[u8], at: usize) -> (u64, usize) {
    let mut v = 0u64;
    for i in 0..9 {
        let b = page[at + i];
        if i == 8 {
            return ((v << 8) | u64::from(b), 9);
        }
        v = (v << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            return (v, i + 1);
        }
    }
    (v, 9)
}

/// Where to flip 4 bytes of `page` so a live value changes: the last 4 bytes of its
/// first cell's record (a row's last column, an index key's end), or an interior table
/// page's child pointer; `None` for a page that holds no cell (a free page, an empty
/// table's root).
fn live_bytes(page: &[u8], first_page: bool) -> Option<usize> {
    let h = if first_page { 100 } else { 0 };
    let kind = page[h];
    if !BTREE_PAGES.contains(&kind) {
        return None;
    }
    let be16 = |at: usize| usize::from(u16::from_be_bytes([page[at], page[at + 1]]));
    if be16(h + 3) == 0 {
        return None;
    }
    let cell = be16(h + if kind == 2 || kind == 5 { 12 } else { 8 });
    let at = match kind {
        5 => return Some(cell),
        2 => cell + 4,
        _ => cell,
    };
    let (size, len) = varint(page, at);
    let mut start = at + len;
    if kind == 13 {
        start += varint(page, start).1;
    }
    // Small records only (no overflow page): the record ends within the page. One of
    // under 4 bytes (`search_indexed`'s row while `upto` is 0 or 1) takes the bytes of
    // its cell before it too, and never more than the page.
    let end = (start + size as usize).min(page.len());
    Some(end.saturating_sub(4).max(start).min(page.len() - 4))
}

#[test]
fn a_bit_flip_in_any_page_is_found_by_check_or_refused() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path();
    seeded(dir, 8);
    let answer = door(dir, &["list", "--json"]).json()["items"][0]["questionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(door(dir, &["answer", &answer, "--accept"]).code, 0);
    let conn = rusqlite::Connection::open(store_file(dir)).unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        .unwrap();
    let page_size: usize = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .unwrap();
    drop(conn);
    let original = std::fs::read(store_file(dir)).unwrap();
    let pages = original.len() / page_size;
    let (mut flipped, mut found, mut refused) = (0, 0, 0);
    for page in 0..pages {
        let at = page * page_size;
        let Some(offset) = live_bytes(&original[at..at + page_size], page == 0) else {
            continue;
        };
        let copy = tempfile::tempdir().unwrap();
        let mut bytes = original.clone();
        for b in &mut bytes[at + offset..at + offset + 4] {
            *b ^= 0x5a;
        }
        std::fs::write(store_file(copy.path()), &bytes).unwrap();
        flipped += 1;
        let out = door(copy.path(), &["store", "check", "--json"]);
        match out.code {
            14 => found += 1,
            9 => refused += 1,
            _ => panic!(
                "page {} (offset {offset}): a flipped live value went unnoticed: {out:?}",
                page + 1
            ),
        }
    }
    eprintln!(
        "{pages} pages, {flipped} with live cells flipped: {found} found by check, {refused} refused"
    );
    assert!(
        flipped >= pages / 2,
        "{flipped} of {pages} pages had a live cell"
    );
}
