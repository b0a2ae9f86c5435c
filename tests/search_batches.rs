//! The search index kept in batches (schema v12, issue 15's engine target): the writer
//! indexes the log 64 events or more at a time, and every search covers what it has not
//! indexed yet exactly. The same questions are found, counted and recalled (the memory
//! of answers) with the tail unindexed, partly indexed, and after the store was closed
//! between an append and its indexing — a word beyond ASCII too, which a `LIKE` would
//! not fold; `oq store check` finds a deleted or altered index row; and a store of v11
//! (indexed whole by its triggers) keeps every result through its migration.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use oq::domain::similar::Resemblance;
use oq::domain::{Actor, Afeta, AnswerInput, DeclareInput, Question, Role, SessionKind};
use oq::engine::sqlite::{Depth, LATEST_VERSION, MIGRATIONS, STORE_FILE};
use oq::engine::{EngineConfig, ListQuery, LocalEngine, SqliteStore, StatusFilter};
use rusqlite::Connection;
use tempfile::TempDir;

fn engine(dir: &Path) -> LocalEngine {
    LocalEngine::new(SqliteStore::open_in(dir).unwrap(), EngineConfig::default())
}

/// A new store with alice's session `s-p` in project `p`, where every test asks.
fn store_with_session() -> (TempDir, LocalEngine) {
    let d = TempDir::new().unwrap();
    let e = engine(d.path());
    e.start_session(
        &Actor::person("alice"),
        "p",
        SessionKind::Conversation,
        Some("s-p"),
    )
    .unwrap();
    (d, e)
}

fn ask(e: &LocalEngine, text: &str) -> Question {
    ask_with(e, text, Some("Talvez, a equipe"))
}

fn ask_with(e: &LocalEngine, text: &str, sugestao: Option<&str>) -> Question {
    let input = DeclareInput {
        pergunta: text.into(),
        sugestao: sugestao.map(Into::into),
        afeta: Afeta::default(),
        session_id: "s-p".into(),
        idempotency_key: None,
    };
    e.declare(&Actor::agent(Role::Po), "p", &input).unwrap()
}

fn answer(e: &LocalEngine, q: &Question, text: &str) {
    e.answer(
        &Actor::person("alice"),
        Some("p"),
        &q.question_id,
        &AnswerInput::text(text),
    )
    .unwrap();
}

/// `(upto, max(seq))`, read beside the engine.
fn bounds(dir: &Path) -> (i64, i64) {
    let conn = Connection::open(dir.join(STORE_FILE)).unwrap();
    conn.query_row(
        "SELECT (SELECT upto FROM search_indexed), (SELECT max(seq) FROM events)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
}

/// What the searches give: per query and status, the ids found and the total.
type Results = Vec<(String, Vec<String>, u64)>;

const QUERIES: &[&str] = &[
    "AÇÃO",
    "ação botão",
    "équipe",
    "zeppelin",
    "hangar",
    "talvez",
    "equipe",
    "de",
];

fn results(e: &LocalEngine) -> Results {
    let mut out = Vec::new();
    for status in [StatusFilter::Open, StatusFilter::All] {
        for text in QUERIES {
            let q = ListQuery::new(status).search(text).unwrap();
            let page = e.list(Some("p"), &q).unwrap();
            let mut ids: Vec<String> = page.items.iter().map(|q| q.question_id.clone()).collect();
            ids.sort();
            out.push((format!("{status:?} {text}"), ids, page.total));
        }
    }
    out
}

/// The answer the memory of answers offers `open`, by the answered question's id.
fn recalled(e: &LocalEngine, open: &Question) -> Option<(String, Resemblance)> {
    e.similar_answer(open)
        .unwrap()
        .map(|s| (s.question_id, s.resemblance))
}

fn fillers(e: &LocalEngine, n: usize) {
    for i in 0..n {
        ask_with(e, &format!("Filler number {i}?"), None);
    }
}

fn check_clean(dir: &Path) {
    let report = SqliteStore::open_in(dir)
        .unwrap()
        .check(Depth::Full)
        .unwrap();
    assert!(report.is_clean(), "{:?}", report.findings());
}

#[test]
fn searches_are_the_same_whatever_the_index_has_caught_up_with() {
    let (d, e) = store_with_session();
    let dir = d.path();
    let acao = ask(&e, "Quem decide a AÇÃO do botão?");
    answer(&e, &acao, "A ÉQUIPE de produto");
    let hangar = ask(&e, "Where does the hangar go?");
    let open = ask(&e, "quem decide a ação do botão");
    let zep = ask(&e, "Which Zeppelin dock?");

    // Nothing indexed yet: every match comes from the tail, folded as the index folds.
    assert_eq!(bounds(dir).0, 0);
    let before = results(&e);
    let found = |r: &Results, key: &str| r.iter().find(|(k, ..)| k == key).unwrap().1.clone();
    let both = |a: &Question, b: &Question| {
        let mut ids = vec![a.question_id.clone(), b.question_id.clone()];
        ids.sort();
        ids
    };
    assert_eq!(found(&before, "All AÇÃO"), both(&open, &acao));
    assert_eq!(
        found(&before, "Open ação botão"),
        [open.question_id.as_str()]
    );
    assert_eq!(found(&before, "All équipe"), [acao.question_id.as_str()]);
    assert_eq!(found(&before, "Open équipe"), Vec::<String>::new());
    assert_eq!(found(&before, "Open hangar"), [hangar.question_id.as_str()]);
    let memory = recalled(&e, &open);
    assert_eq!(memory, Some((acao.question_id.clone(), Resemblance::Same)));
    check_clean(dir);

    // Closed between the appends and their indexing: a new connection covers the tail.
    drop(e);
    let e = engine(dir);
    assert_eq!(bounds(dir).0, 0);
    assert_eq!(results(&e), before);
    assert_eq!(recalled(&e, &open), memory);

    // Indexed once 64 events are past `upto`, in the batch that got there.
    fillers(&e, 70);
    let (upto, end) = bounds(dir);
    assert!(upto > 0 && upto < end, "partly indexed: {upto} of {end}");
    assert_eq!(results(&e), before);
    assert_eq!(recalled(&e, &open), memory);
    check_clean(dir);

    // An answer in the tail to a question in the index is found by its words.
    answer(&e, &zep, "Beside the hangar");
    let after = results(&e);
    assert_eq!(found(&after, "All hangar"), both(&zep, &hangar));
    assert_eq!(found(&after, "Open zeppelin"), Vec::<String>::new());
    drop(e);
    let e = engine(dir);
    assert_eq!(results(&e), after);
    // Everything of before indexed at last: still the same.
    let (_, was_end) = bounds(dir);
    fillers(&e, 64);
    let (upto, end) = bounds(dir);
    assert!(upto >= was_end, "{upto} {was_end} {end}");
    assert_eq!(results(&e), after);
    assert_eq!(recalled(&e, &open), memory);
    check_clean(dir);
}

#[test]
fn a_deleted_or_altered_index_row_is_found_by_check() {
    let (d, e) = store_with_session();
    let dir = d.path();
    fillers(&e, 70);
    drop(e);
    let (upto, _) = bounds(dir);
    assert!(upto >= 64);
    check_clean(dir);
    let conn = Connection::open(dir.join(STORE_FILE)).unwrap();
    let findings = |sql: &str| {
        conn.execute_batch(sql).unwrap();
        let store = SqliteStore::open_in(dir).unwrap();
        store.check(Depth::Quick).unwrap().findings().join("\n")
    };
    let missing = "search: indexed in the log, missing from question_search or altered (event seq)";
    let extra = "search: in question_search, not in the log up to search_indexed (event seq)";
    let found = findings("DELETE FROM question_search WHERE rowid = 10");
    assert!(found.contains(&format!("{missing}: 10")), "{found}");
    assert!(!found.contains(extra), "{found}");
    let found = findings("UPDATE question_search SET body = 'Filler number 99?' WHERE rowid = 20");
    assert!(found.contains(&format!("{missing}: 10, 20")), "{found}");
    assert!(found.contains(&format!("{extra}: 20")), "{found}");
}

#[test]
fn a_version_11_store_keeps_every_search_result_through_its_migration() {
    let (d, e) = store_with_session();
    let dir = d.path();
    let acao = ask(&e, "Quem decide a AÇÃO do botão?");
    answer(&e, &acao, "A ÉQUIPE de produto");
    fillers(&e, 70);
    let zep = ask(&e, "Which Zeppelin hangar?");
    answer(&e, &zep, "Beside the hangar");
    let open = ask(&e, "quem decide a ação do botão");
    let before = results(&e);
    let memory = recalled(&e, &open);
    drop(e);
    let (upto, end) = bounds(dir);
    assert!(upto < end);
    // The store as v11 left it: every event indexed by the triggers of v8, no
    // `search_indexed`.
    let v8 = MIGRATIONS[7];
    let triggers = &v8[v8.find("CREATE TRIGGER").unwrap()..];
    let conn = Connection::open(dir.join(STORE_FILE)).unwrap();
    conn.execute_batch(&format!(
        "INSERT INTO question_search (rowid, qseq, body)
         SELECT seq, seq, json_extract(payload, '$.pergunta') || char(10) || coalesce(json_extract(payload, '$.sugestao'), '')
           FROM events WHERE seq > {upto} AND type = 'artifact.open_question';
         INSERT INTO question_search (rowid, qseq, body)
         SELECT a.seq, d.seq, json_extract(a.payload, '$.resposta')
           FROM events a JOIN events d ON d.type = 'artifact.open_question' AND d.question_id = a.question_id
          WHERE a.seq > {upto} AND a.type = 'open_question.answered';
         DROP TABLE search_indexed; {triggers} PRAGMA user_version = 11;"
    ))
    .unwrap();
    drop(conn);
    let store = SqliteStore::open_in(dir).unwrap();
    assert_eq!(store.migrated(), Some((11, LATEST_VERSION)));
    let e = LocalEngine::new(store, EngineConfig::default());
    assert_eq!(
        bounds(dir),
        (end, end),
        "indexed to the end by the triggers"
    );
    assert_eq!(results(&e), before);
    assert_eq!(recalled(&e, &open), memory);
    drop(e);
    check_clean(dir);
}
