//! `oq store migrate` and `oq store copy` through the built binary on a real PostgreSQL:
//! a SQLite store into PostgreSQL and back, every event with its positions, verified
//! event by event; a copy into a store that holds events is refused and changes nothing.
#![allow(clippy::unwrap_used)]

mod common_pg;

use std::path::Path;
use std::process::{Command, Output};

use oq::domain::{Actor, Afeta, AnswerInput, DeclareInput, Role, SessionKind};
use oq::engine::copy::{Endpoint, verify};
use oq::engine::{
    Engine, EngineConfig, ListQuery, LocalEngine, PgStore, SqliteStore, StatusFilter,
};

fn oq(args: &[&str], password: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oq"))
        .args(args)
        .env("OQ_STORE_PASSWORD", password)
        .output()
        .expect("oq runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A SQLite store with two projects, answered and open questions.
fn filled(dir: &Path) -> (usize, String) {
    let e = LocalEngine::new(SqliteStore::open_in(dir).unwrap(), EngineConfig::default());
    let ana = Actor::person("ana");
    let mut open = String::new();
    for project in ["loja", "outro"] {
        let s = e
            .start_session(&ana, project, SessionKind::Conversation, None)
            .unwrap();
        for i in 0..5 {
            let q = e
                .declare(
                    &Actor::agent(Role::Criativo),
                    project,
                    &DeclareInput {
                        pergunta: format!("{project} question {i}?"),
                        sugestao: Some("yes".into()),
                        afeta: Afeta {
                            regras: vec![format!("RN-{i}")],
                            ..Afeta::default()
                        },
                        session_id: s.session_id.clone(),
                        idempotency_key: None,
                    },
                )
                .unwrap();
            if i % 2 == 0 {
                e.answer(
                    &ana,
                    Some(project),
                    &q.question_id,
                    &AnswerInput {
                        resposta: Some(format!("answer {i}")),
                        ..Default::default()
                    },
                )
                .unwrap();
            } else {
                open = q.question_id;
            }
        }
    }
    (e.events_after(None, 0, 10_000).unwrap().len(), open)
}

#[test]
fn migrate_then_copy_sqlite_into_postgres_and_back_verified() {
    if !common_pg::or_skip("migrate_then_copy_sqlite_into_postgres_and_back_verified") {
        return;
    }
    let cluster = common_pg::shared();
    let db = cluster.database();
    // A second, empty database set up with the binary, as an operator would.
    let fresh = cluster.database();
    let mut owner = fresh.client(&fresh.owner);
    owner.batch_execute("DROP SCHEMA oq CASCADE").unwrap();
    let owner_url = fresh.url(&fresh.owner);
    let out = oq(
        &[
            "store", "migrate", "--to", &owner_url, "--grant", &fresh.app,
        ],
        &fresh.password,
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("created at schema version"),
        "{}",
        text(&out)
    );
    assert!(
        !text(&out).contains(&fresh.password),
        "the password is never printed"
    );
    let out = oq(
        &[
            "store", "migrate", "--to", &owner_url, "--grant", &fresh.app,
        ],
        &fresh.password,
    );
    assert!(
        text(&out).contains("already at schema version"),
        "{}",
        text(&out)
    );

    let tmp = tempfile::tempdir().unwrap();
    let (src, back) = (tmp.path().join("src"), tmp.path().join("back"));
    let (events, open) = filled(&src);
    let out = oq(
        &[
            "store",
            "copy",
            "--from",
            src.to_str().unwrap(),
            "--to",
            &fresh.app_url(),
            "--json",
        ],
        &fresh.password,
    );
    assert!(out.status.success(), "{}", text(&out));
    let reply: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(reply["events"], events as u64);
    assert_eq!(reply["verified"], events as u64);

    // The copy serves: same queue, same positions, and the log goes on after them.
    let pg = Engine::new(
        PgStore::open(&fresh.app_target()).unwrap(),
        EngineConfig::default(),
    );
    let sqlite = LocalEngine::new(SqliteStore::open_in(&src).unwrap(), EngineConfig::default());
    for status in [
        StatusFilter::Open,
        StatusFilter::Answered,
        StatusFilter::All,
    ] {
        let a = pg.list(Some("loja"), &ListQuery::new(status)).unwrap();
        let b = sqlite.list(Some("loja"), &ListQuery::new(status)).unwrap();
        assert_eq!(a, b, "{status:?}");
    }
    assert_eq!(
        pg.project_revision(Some("outro")).unwrap(),
        sqlite.project_revision(Some("outro")).unwrap()
    );
    let answered = pg
        .answer(
            &Actor::person("ana"),
            None,
            &open,
            &AnswerInput {
                resposta: Some("after the copy".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(answered.answer.unwrap().resposta, "after the copy");
    assert_eq!(pg.revision().unwrap(), events as i64 + 2);

    // Into a store that holds events: refused, nothing changed.
    let out = oq(
        &[
            "store",
            "copy",
            "--from",
            src.to_str().unwrap(),
            "--to",
            &fresh.app_url(),
        ],
        &fresh.password,
    );
    assert_eq!(out.status.code(), Some(9), "{}", text(&out));
    assert!(text(&out).contains("store_not_empty"), "{}", text(&out));
    assert_eq!(pg.revision().unwrap(), events as i64 + 2);

    // And back: PostgreSQL into a new SQLite store, equal event by event.
    let out = oq(
        &[
            "store",
            "copy",
            "--from",
            &fresh.app_url(),
            "--to",
            back.to_str().unwrap(),
        ],
        &fresh.password,
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("verified {} event by event", events + 2)),
        "{}",
        text(&out)
    );
    let n = verify(
        &Endpoint::Postgres(fresh.app_target()),
        &Endpoint::Sqlite(back.clone()),
    )
    .unwrap();
    assert_eq!(n, events as u64 + 2);
    // The source differs from the copy by the answer given after it: verify says where.
    let err = verify(
        &Endpoint::Sqlite(src.clone()),
        &Endpoint::Sqlite(back.clone()),
    )
    .unwrap_err();
    assert_eq!(err.code(), "store_copy_mismatch", "{err}");
    drop(db);
}

#[test]
fn copy_refuses_a_password_in_the_url_and_a_missing_source() {
    let tmp = tempfile::tempdir().unwrap();
    let out = oq(
        &[
            "store",
            "copy",
            "--from",
            tmp.path().join("none").to_str().unwrap(),
            "--to",
            "postgres://oq:hunter2@127.0.0.1:1/oq",
        ],
        "",
    );
    assert!(!out.status.success());
    let t = text(&out);
    assert!(t.contains("password") && !t.contains("hunter2"), "{t}");
    let out = oq(
        &[
            "store",
            "copy",
            "--from",
            tmp.path().join("none").to_str().unwrap(),
            "--to",
            tmp.path().join("b").to_str().unwrap(),
        ],
        "",
    );
    assert!(!out.status.success());
    assert!(text(&out).contains("holds no oq store"), "{}", text(&out));
}
