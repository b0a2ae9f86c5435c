//! The whole queue on the local engine: search (the FTS5 trigram index of schema v7),
//! sorts and totals act on every question of the filter, not the first page; through the
//! engine and through `LocalSource`; and a store written before v7 is searchable after
//! its migration.
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;
use std::sync::Arc;

use oq::domain::{Actor, AnswerInput, DeclareInput, ErrorCode, Event, Role, SessionKind};
use oq::engine::sqlite::{APPLICATION_ID, LATEST_VERSION, MIGRATIONS, STORE_FILE};
use oq::engine::{EngineConfig, ListQuery, LocalEngine, Sort, SqliteStore, StatusFilter};
use oq::source::{LocalSource, Source};
use rusqlite::Connection;
use tempfile::TempDir;

/// 53 questions in `p` from three roles; the 51st (beyond the first page) alone speaks
/// of a zeppelin, the 8th alone suggests a dirigible.
fn fifty_three(e: &LocalEngine) -> Vec<String> {
    e.start_session(
        &Actor::person("alice"),
        "p",
        SessionKind::Conversation,
        Some("s-alice"),
    )
    .unwrap();
    let roles = [Role::Po, Role::Arquiteto, Role::Criativo];
    (0..53)
        .map(|i| {
            let pergunta = if i == 50 {
                "Where does the Zeppelin hangar go?".to_string()
            } else {
                format!("Routine question number {i}?")
            };
            let input = DeclareInput {
                pergunta,
                sugestao: Some(if i == 7 {
                    "Under the dirigible mast".to_string()
                } else {
                    format!("suggestion {i}")
                }),
                afeta: Default::default(),
                session_id: "s-alice".into(),
                idempotency_key: None,
            };
            e.declare(&Actor::agent(roles[i % 3]), "p", &input)
                .unwrap()
                .question_id
        })
        .collect()
}

fn engine(dir: &TempDir) -> LocalEngine {
    LocalEngine::new(
        SqliteStore::open_in(dir.path()).unwrap(),
        EngineConfig::default(),
    )
}

fn ids(page: &oq::engine::ListPage) -> Vec<String> {
    page.items.iter().map(|q| q.question_id.clone()).collect()
}

/// Every page of `query`, in order.
fn every_page(e: &LocalEngine, query: ListQuery) -> Vec<oq::domain::Question> {
    let mut out = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = e
            .list(Some("p"), &query.clone().after(cursor.as_deref()))
            .unwrap();
        out.extend(page.items);
        match page.cursor {
            Some(c) => cursor = Some(c),
            None => return out,
        }
    }
}

#[test]
fn search_finds_a_question_beyond_the_first_page_and_counts_the_filter() {
    let d = TempDir::new().unwrap();
    let e = engine(&d);
    let asked = fifty_three(&e);
    let first = e
        .list(Some("p"), &ListQuery::new(StatusFilter::Open))
        .unwrap();
    assert_eq!((first.items.len(), first.total), (50, 53));
    assert!(!ids(&first).contains(&asked[50]));

    // Case aside, a substring of a word: what a person types in the box.
    let found = e
        .list(
            Some("p"),
            &ListQuery::new(StatusFilter::Open)
                .search("zeppELIN hang")
                .unwrap(),
        )
        .unwrap();
    assert_eq!((ids(&found), found.total), (vec![asked[50].clone()], 1));

    // Every word must appear; a short word (no trigram) still counts.
    let q = ListQuery::new(StatusFilter::Open)
        .search("number 52")
        .unwrap();
    let found = e.list(Some("p"), &q).unwrap();
    assert_eq!((ids(&found), found.total), (vec![asked[52].clone()], 1));
    let q = ListQuery::new(StatusFilter::Open)
        .search("zeppelin 52")
        .unwrap();
    assert_eq!(e.list(Some("p"), &q).unwrap().total, 0);
    // LIKE's own characters are text, not patterns.
    let q = ListQuery::new(StatusFilter::Open).search("%").unwrap();
    assert_eq!(e.list(Some("p"), &q).unwrap().total, 0);

    // The suggestion and, once there is one, the answer are searched too.
    let q = ListQuery::new(StatusFilter::All)
        .search("dirigible")
        .unwrap();
    assert_eq!(ids(&e.list(Some("p"), &q).unwrap()), vec![asked[7].clone()]);
    e.answer(
        &Actor::person("alice"),
        Some("p"),
        &asked[3],
        &AnswerInput::text("Use the blimp dock"),
    )
    .unwrap();
    let blimp = |status| {
        let q = ListQuery::new(status).search("BLIMP").unwrap();
        e.list(Some("p"), &q).unwrap()
    };
    assert_eq!(ids(&blimp(StatusFilter::All)), vec![asked[3].clone()]);
    assert_eq!(ids(&blimp(StatusFilter::Answered)), vec![asked[3].clone()]);
    assert_eq!(blimp(StatusFilter::Open).total, 0);
    let open = e
        .list(Some("p"), &ListQuery::new(StatusFilter::Open))
        .unwrap();
    assert_eq!(open.total, 52);
}

#[test]
fn sorts_order_the_whole_filter_and_pages_cover_it_once() {
    let d = TempDir::new().unwrap();
    let e = engine(&d);
    let asked = fifty_three(&e);
    let newest = e
        .list(
            Some("p"),
            &ListQuery::new(StatusFilter::Open)
                .sorted(Sort::Newest)
                .limit(5),
        )
        .unwrap();
    assert_eq!(ids(&newest)[0], asked[52], "the newest first");
    assert_eq!(newest.total, 53);

    let mut reversed = asked.clone();
    reversed.reverse();
    for (sort, expected) in [(Sort::Oldest, asked.clone()), (Sort::Newest, reversed)] {
        for status in [StatusFilter::Open, StatusFilter::All] {
            let seen: Vec<String> = every_page(&e, ListQuery::new(status).sorted(sort).limit(7))
                .into_iter()
                .map(|q| q.question_id)
                .collect();
            assert_eq!(seen, expected, "{sort:?} {status:?}");
        }
    }
    // The asker order: grouped by role, each group oldest first, every question once.
    let by_asker = every_page(
        &e,
        ListQuery::new(StatusFilter::Open)
            .sorted(Sort::Asker)
            .limit(7),
    );
    assert_eq!(by_asker.len(), 53);
    let unique: HashSet<&str> = by_asker.iter().map(|q| q.question_id.as_str()).collect();
    assert_eq!(unique.len(), 53);
    assert!(
        by_asker
            .windows(2)
            .all(|w| (&w[0].autor, w[0].seq) < (&w[1].autor, w[1].seq)),
        "{:?}",
        by_asker.iter().map(|q| &q.autor).collect::<Vec<_>>()
    );
    assert_eq!(by_asker[0].autor, "arquiteto");
    // A search and a sort together, over everything.
    let q = ListQuery::new(StatusFilter::Open)
        .search("routine")
        .unwrap()
        .sorted(Sort::Newest)
        .limit(1);
    let page = e.list(Some("p"), &q).unwrap();
    assert_eq!((ids(&page), page.total), (vec![asked[52].clone()], 52));
}

#[test]
fn bad_queries_are_refused_by_name() {
    let d = TempDir::new().unwrap();
    let e = engine(&d);
    fifty_three(&e);
    let long = "x".repeat(10_000);
    let err = ListQuery::new(StatusFilter::Open)
        .search(&long)
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidSearch);
    assert!(err.to_string().contains("10000 characters"), "{err}");
    assert_eq!(
        "shuffled".parse::<Sort>().unwrap_err().code(),
        ErrorCode::InvalidSort
    );
    // A cursor of one order is not one of another.
    let page = e
        .list(
            Some("p"),
            &ListQuery::new(StatusFilter::Open).sorted(Sort::Project),
        )
        .unwrap();
    let cursor = page.cursor.unwrap();
    let err = e
        .list(
            Some("p"),
            &ListQuery::new(StatusFilter::Open).after(Some(&cursor)),
        )
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidCursor);
}

#[tokio::test(flavor = "multi_thread")]
async fn local_source_carries_the_query() {
    let d = TempDir::new().unwrap();
    let e = Arc::new(engine(&d));
    let asked = fifty_three(&e);
    let source = LocalSource::new(e, "alice");
    let q = ListQuery::new(StatusFilter::Open)
        .search("zeppelin")
        .unwrap();
    let found = source.list(None, &q).await.unwrap();
    assert_eq!(found.total, 1);
    assert_eq!(found.items[0].question_id, asked[50]);
    let q = ListQuery::new(StatusFilter::Open)
        .sorted(Sort::Newest)
        .limit(1);
    let newest = source.list(None, &q).await.unwrap();
    assert_eq!(
        (newest.items[0].question_id.as_str(), newest.total),
        (asked[52].as_str(), 53)
    );
}

fn raw_insert(conn: &Connection, n: i64, event: &Event) {
    conn.execute(
        "INSERT INTO events (seq, project_seq, event_id, type, project_id, session_id, question_id, actor, at, payload)
         VALUES (?1, ?1, ?2, ?3, 'p', ?4, ?5, 'seed', ?6, ?7)",
        rusqlite::params![
            n, format!("e-{n}"), event.type_name(), event.session_id(), event.question_id(),
            1_000 + n, serde_json::to_string(event).unwrap()
        ],
    )
    .unwrap();
}

fn v6_question(id: &str, pergunta: &str) -> Event {
    Event::OpenQuestion {
        question_id: id.into(),
        pergunta: pergunta.into(),
        sugestao: None,
        afeta: Default::default(),
        autor: "po".into(),
        session_id: "s-v6".into(),
        source: "oq".into(),
        prompts: Vec::new(),
        upstream: None,
    }
}

/// A store of schema v6 (before the search index): the migration builds the index from
/// the log, declarations and answers alike.
#[test]
fn a_version_6_store_is_searchable_after_its_migration() {
    let d = TempDir::new().unwrap();
    let path = d.path().join(STORE_FILE);
    {
        let conn = Connection::open(&path).unwrap();
        for step in &MIGRATIONS[..6] {
            conn.execute_batch(step).unwrap();
        }
        conn.execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 6;"
        ))
        .unwrap();
        let events = [
            Event::SessionStarted {
                session_id: "s-v6".into(),
                kind: SessionKind::Conversation,
                author: "carol".into(),
            },
            v6_question("q-a", "Where does the Zeppelin hangar go?"),
            v6_question("q-b", "Which runway?"),
            Event::QuestionAnswered {
                question_id: "q-b".into(),
                resposta: "the blimp dock".into(),
                aceitou_sugestao: false,
                decision_event_id: "d-1".into(),
                respondida_por: "carol".into(),
                answers: Vec::new(),
                idempotency_key: None,
                decision_source: None,
            },
        ];
        for (n, event) in events.iter().enumerate() {
            raw_insert(&conn, n as i64 + 1, event);
        }
    }
    let e = LocalEngine::new(SqliteStore::open(&path).unwrap(), EngineConfig::default());
    let search = |status, text: &str| {
        let q = ListQuery::new(status).search(text).unwrap();
        ids(&e.list(Some("p"), &q).unwrap())
    };
    assert_eq!(search(StatusFilter::Open, "zeppelin"), ["q-a"]);
    assert_eq!(search(StatusFilter::All, "blimp"), ["q-b"]);
    assert_eq!(search(StatusFilter::All, "runway"), ["q-b"]);
}

/// A store of schema v9 (the open set without its asker): opened by this binary it
/// migrates to the latest schema, every open row takes its asker from its declaration, the queue by
/// asker pages through the new index in (asker, position) order, what is declared
/// afterwards joins it in place, and `oq store check` finds the index true to the log.
#[test]
fn a_version_9_store_sorts_by_asker_after_its_migration() {
    let d = TempDir::new().unwrap();
    let path = d.path().join(STORE_FILE);
    let askers = [
        "po",
        "criativo",
        "arquiteto",
        "po",
        "criativo",
        "arquiteto",
        "po",
    ];
    {
        let conn = Connection::open(&path).unwrap();
        for step in &MIGRATIONS[..9] {
            conn.execute_batch(step).unwrap();
        }
        conn.execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 9;"
        ))
        .unwrap();
        let started = Event::SessionStarted {
            session_id: "s-v6".into(),
            kind: SessionKind::Conversation,
            author: "carol".into(),
        };
        raw_insert(&conn, 1, &started);
        for (n, autor) in askers.iter().enumerate() {
            let mut q = v6_question(&format!("q-{n}"), &format!("Question {n}?"));
            if let Event::OpenQuestion { autor: a, .. } = &mut q {
                *a = (*autor).into();
            }
            raw_insert(&conn, n as i64 + 2, &q);
        }
    }
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.migrated(), Some((9, LATEST_VERSION)));
    let e = LocalEngine::new(store, EngineConfig::default());
    e.start_session(
        &Actor::person("carol"),
        "p",
        SessionKind::Conversation,
        Some("s-new"),
    )
    .unwrap();
    let input = DeclareInput {
        pergunta: "Asked after the migration?".into(),
        sugestao: None,
        afeta: Default::default(),
        session_id: "s-new".into(),
        idempotency_key: None,
    };
    let late = e
        .declare(&Actor::agent(Role::Criativo), "p", &input)
        .unwrap();
    let by_asker: Vec<(String, String)> = every_page(
        &e,
        ListQuery::new(StatusFilter::Open)
            .sorted(Sort::Asker)
            .limit(2),
    )
    .into_iter()
    .map(|q| (q.autor, q.question_id))
    .collect();
    let expected: Vec<(String, String)> = [
        ("arquiteto", "q-2"),
        ("arquiteto", "q-5"),
        ("criativo", "q-1"),
        ("criativo", "q-4"),
        ("criativo", late.question_id.as_str()),
        ("po", "q-0"),
        ("po", "q-3"),
        ("po", "q-6"),
    ]
    .iter()
    .map(|(a, q)| (a.to_string(), q.to_string()))
    .collect();
    assert_eq!(by_asker, expected);
    let report = SqliteStore::open(&path)
        .unwrap()
        .check(oq::engine::sqlite::Depth::Quick)
        .unwrap();
    assert!(report.is_clean(), "{:?}", report.findings());
}
