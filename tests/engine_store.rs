//! The engine on real SQLite files: ADR 0214's flows end to end, the store's own refusals
//! (append-only, derived indexes), schema versions, and several connections on one file.
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Barrier};

use oq::domain::dev_context::DEV_CONTEXT_HEADER;
use oq::domain::gate::GateState;
use oq::domain::readiness::ReadinessGate;
use oq::domain::{
    Actor, Afeta, AnswerInput, DeclareInput, Event, OqError, Question, Role, SessionKind, Verdict,
    WorkState,
};
use oq::engine::sqlite::{APPLICATION_ID, LATEST_VERSION, MIGRATIONS, STORE_FILE};
use oq::engine::{
    EngineConfig, ListQuery, LocalEngine, NewEvent, SqliteStore, StatusFilter, Store, VerdictInput,
};
use rusqlite::Connection;
use tempfile::TempDir;

fn engine_in(dir: &Path) -> LocalEngine {
    LocalEngine::new(
        SqliteStore::open_in(dir).expect("open store"),
        EngineConfig::default(),
    )
}

fn open_err(path: &Path) -> OqError {
    SqliteStore::open(path)
        .err()
        .expect("the store must be refused")
}

fn po() -> Actor {
    Actor::agent(Role::Po)
}

/// A store with project `p` and alice's conversation session `s-alice`.
fn setup() -> (TempDir, LocalEngine) {
    let dir = TempDir::new().unwrap();
    let e = engine_in(dir.path());
    e.start_session(
        &Actor::person("alice"),
        "p",
        SessionKind::Conversation,
        Some("s-alice"),
    )
    .unwrap();
    (dir, e)
}

fn ask(e: &LocalEngine, project: &str, session: &str, pergunta: &str, afeta: Afeta) -> String {
    let input = DeclareInput {
        pergunta: pergunta.into(),
        sugestao: Some("the suggestion".into()),
        afeta,
        session_id: session.into(),
        idempotency_key: None,
    };
    e.declare(&po(), project, &input).unwrap().question_id
}

fn ids(page: &oq::engine::ListPage) -> Vec<String> {
    page.items.iter().map(|q| q.question_id.clone()).collect()
}

/// The ids and total of the first page.
fn listed(e: &LocalEngine, project: &str, status: StatusFilter) -> (Vec<String>, u64) {
    let page = e.list(Some(project), &ListQuery::new(status)).unwrap();
    (ids(&page), page.total)
}

fn reply(
    e: &LocalEngine,
    who: &str,
    project: &str,
    q: &str,
    text: &str,
) -> Result<Question, OqError> {
    e.answer(
        &Actor::person(who),
        Some(project),
        q,
        &AnswerInput::text(text),
    )
}

fn code<T: std::fmt::Debug>(r: Result<T, OqError>) -> &'static str {
    r.expect_err("expected a refusal").code().as_str()
}

#[test]
fn declare_list_answer_list_and_the_decision_record() {
    let (_d, e) = setup();
    let afeta = Afeta {
        regras: vec!["RN-1".into()],
        ..Afeta::default()
    };
    let q = ask(&e, "p", "s-alice", "Free shipping above?", afeta.clone());
    assert_eq!(listed(&e, "p", StatusFilter::Open), (vec![q.clone()], 1));
    assert_eq!(listed(&e, "p", StatusFilter::Answered), (vec![], 0));
    let open = e.question(Some("p"), &q).unwrap();
    assert!(open.is_open() && open.session_author == "alice" && open.autor == "po");

    let rev = e.revision().unwrap();
    let a = reply(&e, "alice", "p", &q, "200")
        .unwrap()
        .answer
        .expect("answered");
    assert_eq!(
        (a.resposta.as_str(), a.respondida_por.as_str()),
        ("200", "alice")
    );
    assert!(!a.aceitou_sugestao);
    assert_eq!(listed(&e, "p", StatusFilter::Open), (vec![], 0));
    assert_eq!(
        listed(&e, "p", StatusFilter::Answered),
        (vec![q.clone()], 1)
    );

    let events: Vec<Event> = e
        .events_after(Some("p"), rev, 100)
        .unwrap()
        .into_iter()
        .map(|s| s.event)
        .collect();
    let record = Event::DecisionRecord {
        decision_event_id: a.decision_event_id.clone(),
        actor: "alice".into(),
        context: "Free shipping above?".into(),
        choice: "200".into(),
        consequences: afeta,
        question_id: q.clone(),
    };
    assert!(
        events.contains(&record),
        "answering records a decision_record: {events:?}"
    );
    let answered = Event::QuestionAnswered {
        question_id: q.clone(),
        resposta: "200".into(),
        aceitou_sugestao: false,
        decision_event_id: a.decision_event_id.clone(),
        respondida_por: "alice".into(),
        answers: Vec::new(),
        idempotency_key: None,
        decision_source: Some(oq::domain::DecisionSource::Person),
    };
    assert!(events.contains(&answered));
    // Accepting the suggestion records it as the answer.
    let q2 = ask(&e, "p", "s-alice", "Second?", Afeta::default());
    let acc = e
        .answer(
            &Actor::person("alice"),
            Some("p"),
            &q2,
            &AnswerInput::accept(),
        )
        .unwrap();
    let acc = acc.answer.unwrap();
    assert_eq!(
        (
            acc.resposta.as_str(),
            acc.aceitou_sugestao,
            acc.decision_source
        ),
        (
            "the suggestion",
            true,
            oq::domain::DecisionSource::Suggestion
        )
    );
}

/// Project `p`: a story, bob's execution session `exec`, a task in it.
fn with_task(e: &LocalEngine) -> (String, String) {
    let story = e.create_story(&po(), "p", "Product page").unwrap().story_id;
    let bob = Actor::person("bob");
    e.start_session(&bob, "p", SessionKind::Execution, Some("exec"))
        .unwrap();
    let dev = Actor::agent(Role::DevLead);
    let task = e
        .create_task(&dev, "p", &story, "exec", "GET /:codigo")
        .unwrap();
    (story, task.task_id)
}

fn needs(pergunta: &str) -> VerdictInput {
    VerdictInput {
        verdict: Some(Verdict::NeedsUserDecision),
        pergunta: Some(pergunta.into()),
        sugestao: Some("upper case".into()),
        ..VerdictInput::default()
    }
}

fn plain(v: Verdict) -> VerdictInput {
    VerdictInput {
        verdict: Some(v),
        ..VerdictInput::default()
    }
}

fn gate(e: &LocalEngine, task: &str) -> (GateState, u32, Option<String>) {
    let g = e.task("p", task).unwrap().gate;
    (g.state, g.corrections, g.parked_on)
}

#[test]
fn needs_user_decision_parks_asks_the_execution_author_and_resumes_on_answer() {
    let (_d, e) = setup();
    let (_story, task) = with_task(&e);
    let qa = Actor::agent(Role::QaAgent);
    e.verdict(&qa, "p", &task, &plain(Verdict::ChangesRequested))
        .unwrap();

    let out = e
        .verdict(&qa, "p", &task, &needs("Case-sensitive code?"))
        .unwrap();
    let qid = out.question_id.clone().expect("a question was recorded");
    assert_eq!(
        (out.task.gate.state, out.task.gate.corrections),
        (GateState::Parked, 1)
    );
    let q = e.question(Some("p"), &qid).unwrap();
    assert_eq!(
        (q.autor.as_str(), q.session_id.as_str()),
        ("qa-agent", "exec")
    );
    assert_eq!(
        q.session_author, "bob",
        "the execution session's author answers"
    );
    assert_eq!(q.afeta.tarefas, vec![task.clone()]);
    assert!(q.is_open());
    assert_eq!(
        gate(&e, &task),
        (GateState::Parked, 1, Some(qid.clone())),
        "no cycle spent"
    );

    let waiting = e.waiting_for(Some("p"), "bob").unwrap();
    assert_eq!(waiting.len(), 1);
    assert_eq!(
        (&waiting[0].task.task_id, &waiting[0].question_id),
        (&task, &qid)
    );
    assert!(e.waiting_for(Some("p"), "alice").unwrap().is_empty());
    assert!(e.dev_context("p", &task).unwrap().decisoes.is_empty());

    assert_eq!(
        code(e.verdict(&qa, "p", &task, &plain(Verdict::Approved))),
        "gate_parked"
    );
    assert_eq!(
        code(reply(&e, "alice", "p", &qid, "x")),
        "so_o_autor_da_sessao"
    );

    let rev = e.revision().unwrap();
    let answered = reply(&e, "bob", "p", &qid, "Not case-sensitive").unwrap();
    let decision = answered.answer.unwrap().decision_event_id;
    let events: Vec<Event> = e
        .events_after(None, rev, 100)
        .unwrap()
        .into_iter()
        .map(|s| s.event)
        .collect();
    let resumed = Event::GateResumed {
        task_id: task.clone(),
        question_id: qid.clone(),
        decision_event_id: decision.clone(),
    };
    assert!(
        events.contains(&resumed),
        "answering resumes the gate: {events:?}"
    );
    assert_eq!(gate(&e, &task), (GateState::Active, 1, None));
    assert!(e.waiting_for(None, "bob").unwrap().is_empty());

    let dc = e.dev_context("p", &task).unwrap();
    assert_eq!(dc.header, DEV_CONTEXT_HEADER);
    assert_eq!(
        dc.header,
        "User decisions — they win over FR/DoR when they conflict"
    );
    assert_eq!(dc.decisoes.len(), 1);
    assert_eq!(
        (
            &dc.decisoes[0].question_id,
            &dc.decisoes[0].decision_event_id
        ),
        (&qid, &decision)
    );
    assert_eq!(dc.decisoes[0].resposta, "Not case-sensitive");

    // The next changes_requested counts from where it was.
    let next = e
        .verdict(&qa, "p", &task, &plain(Verdict::ChangesRequested))
        .unwrap();
    assert_eq!(next.task.gate.corrections, 2);
}

#[test]
fn verdict_on_an_existing_question() {
    let (_d, e) = setup();
    let (story, task) = with_task(&e);
    let qa = Actor::agent(Role::QaAgent);
    let answered = ask(&e, "p", "s-alice", "Done already?", Afeta::default());
    reply(&e, "alice", "p", &answered, "yes").unwrap();
    let rev = e.revision().unwrap();
    let by_id = |id: &str| VerdictInput {
        verdict: Some(Verdict::NeedsUserDecision),
        open_question_id: Some(id.into()),
        ..VerdictInput::default()
    };
    let err = e.verdict(&qa, "p", &task, &by_id(&answered));
    assert_eq!(code(err), "pergunta_ja_respondida");
    assert_eq!(
        e.revision().unwrap(),
        rev,
        "a refused verdict appends nothing"
    );
    assert_eq!(gate(&e, &task).0, GateState::Active);

    // An open one: the gate parks on it, no new question.
    let afeta = Afeta {
        historias: vec![story],
        ..Afeta::default()
    };
    let open = ask(&e, "p", "s-alice", "Still open?", afeta);
    let before = listed(&e, "p", StatusFilter::All).1;
    let out = e.verdict(&qa, "p", &task, &by_id(&open)).unwrap();
    assert_eq!(out.question_id.as_deref(), Some(open.as_str()));
    assert_eq!(listed(&e, "p", StatusFilter::All).1, before);
    assert_eq!(e.waiting_for(Some("p"), "alice").unwrap().len(), 1);
    // Only qa-agent emits verdicts.
    let by_po = e.verdict(&po(), "p", &task, &plain(Verdict::Approved));
    assert_eq!(code(by_po), "role_not_allowed");
}

#[test]
fn story_correction_through_the_engine() {
    let (_d, e) = setup();
    let alice = Actor::person("alice");
    e.start_session(&alice, "other", SessionKind::Conversation, Some("s-other"))
        .unwrap();
    let (story, task) = with_task(&e);
    let correct = |q: Option<&str>| e.correct_story(&po(), "p", &story, q);
    assert!(correct(None).is_ok(), "draft accepts");
    e.move_story(&po(), "p", &story, WorkState::Ready).unwrap();
    assert_eq!(code(correct(None)), "historia_pronta_sem_resposta");
    let open = ask(&e, "p", "s-alice", "Open?", Afeta::default());
    assert_eq!(code(correct(Some(&open))), "pergunta_nao_respondida");
    reply(&e, "alice", "p", &open, "yes").unwrap();
    assert!(correct(Some(&open)).is_ok(), "ready + answered");
    // An answered question of ANOTHER project is not found from this one.
    let foreign = ask(&e, "other", "s-other", "Elsewhere?", Afeta::default());
    reply(&e, "alice", "other", &foreign, "yes").unwrap();
    assert_eq!(code(correct(Some(&foreign))), "not_found");
    assert_eq!(code(correct(Some("q-nonexistent"))), "not_found");
    // A task in review refuses even a cited answer; archiving stays draft-only.
    let dev = Actor::agent(Role::DevLead);
    e.move_task(&dev, "p", &task, WorkState::InReview).unwrap();
    assert_eq!(code(correct(Some(&open))), "tarefa_em_andamento");
    e.move_task(&dev, "p", &task, WorkState::InProgress)
        .unwrap();
    assert_eq!(code(correct(Some(&open))), "tarefa_em_andamento");
    assert_eq!(
        code(e.move_story(&po(), "p", &story, WorkState::Archived)),
        "invalid_transition"
    );
    let criativo = Actor::agent(Role::Criativo);
    assert_eq!(
        code(e.correct_story(&criativo, "p", &story, None)),
        "role_not_allowed"
    );
}

#[test]
fn readiness_counts_and_never_blocks() {
    let (_d, e) = setup();
    assert_eq!(e.readiness("p").unwrap().notice, None);
    let a = ask(&e, "p", "s-alice", "A?", Afeta::default());
    let _b = ask(&e, "p", "s-alice", "B?", Afeta::default());
    let criativo = Actor::agent(Role::Criativo);
    let r = e
        .record_readiness(&criativo, "p", ReadinessGate::ImReady)
        .unwrap();
    assert_eq!(r.open_questions, 2);
    assert_eq!(
        r.notice.as_deref(),
        Some("2 questions are still open — answer")
    );
    reply(&e, "alice", "p", &a, "x").unwrap();
    let arq = Actor::agent(Role::Arquiteto);
    let r = e
        .record_readiness(&arq, "p", ReadinessGate::ArchitectureReady)
        .unwrap();
    assert_eq!(r.open_questions, 1);
    assert_eq!(
        r.notice.as_deref(),
        Some("1 question is still open — answer")
    );
    let events = e.events_after(Some("p"), 0, 1000).unwrap();
    let recorded = events
        .iter()
        .filter(|s| matches!(s.event, Event::ReadinessRecorded { .. }));
    assert_eq!(recorded.count(), 2, "recorded despite open questions");
    assert_eq!(e.readiness("nobody").unwrap().open_questions, 0);
}

#[test]
fn pagination_with_cursor_limits_and_bad_cursors() {
    let (_d, e) = setup();
    let declared: Vec<String> = (0..120)
        .map(|i| ask(&e, "p", "s-alice", &format!("Q{i}?"), Afeta::default()))
        .collect();
    let (mut seen, mut cursor, mut pages) = (Vec::new(), None::<String>, 0);
    loop {
        let page = e
            .list(
                Some("p"),
                &ListQuery::new(StatusFilter::Open).after(cursor.as_deref()),
            )
            .unwrap();
        assert_eq!(page.total, 120);
        assert!(page.items.len() <= 50);
        seen.extend(ids(&page));
        pages += 1;
        assert!(pages < 10, "the cursor must make progress");
        match page.cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, declared, "every question once, oldest first");
    let p1 = e.list(None, &ListQuery::new(StatusFilter::All)).unwrap();
    let p2 = e
        .list(
            None,
            &ListQuery::new(StatusFilter::All).after(p1.cursor.as_deref()),
        )
        .unwrap();
    assert_eq!([ids(&p1), ids(&p2)].concat(), declared[..100].to_vec());
    for limit in [0, 51, 1000] {
        assert_eq!(
            code(e.list(Some("p"), &ListQuery::new(StatusFilter::Open).limit(limit))),
            "invalid_limit"
        );
    }
    for bad in ["abc", "-5", "1.5", "0x10", "99999999999999999999"] {
        let r = e.list(
            Some("p"),
            &ListQuery::new(StatusFilter::Open)
                .after(Some(bad))
                .limit(10),
        );
        assert_eq!(code(r), "invalid_cursor", "{bad:?}");
    }
}

#[test]
fn projects_do_not_leak() {
    let (_d, e) = setup();
    e.start_session(
        &Actor::person("alice"),
        "b",
        SessionKind::Conversation,
        Some("s-b"),
    )
    .unwrap();
    let qa = ask(&e, "p", "s-alice", "In A?", Afeta::default());
    let qb = ask(&e, "b", "s-b", "In B?", Afeta::default());
    assert_eq!(listed(&e, "b", StatusFilter::All), (vec![qb], 1));
    assert_eq!(e.readiness("b").unwrap().open_questions, 1);
    assert_eq!(code(reply(&e, "alice", "b", &qa, "x")), "not_found");
    assert_eq!(code(e.question(Some("b"), &qa)), "not_found");
    assert!(e.question(Some("p"), &qa).unwrap().is_open(), "still open");
    // Declaring into another project's session is not found either.
    let input = DeclareInput {
        pergunta: "x".into(),
        session_id: "s-alice".into(),
        ..DeclareInput::default()
    };
    assert_eq!(code(e.declare(&po(), "b", &input)), "not_found");
}

// ---- the store's own rules, with plain SQL ------------------------------------------

fn snapshot(conn: &Connection) -> Vec<String> {
    let mut out = Vec::new();
    for table in ["events", "open_questions", "question_links"] {
        let mut stmt = conn.prepare(&format!("SELECT * FROM {table}")).unwrap();
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                let cols: Vec<String> = (0..n)
                    .map(|i| format!("{:?}", r.get_ref(i).unwrap()))
                    .collect();
                Ok(format!("{table}: {}", cols.join("|")))
            })
            .unwrap();
        out.extend(rows.map(|r| r.unwrap()));
    }
    out
}

#[test]
fn the_store_refuses_updates_deletes_and_fake_rows() {
    let (d, e) = setup();
    // A rule: links are rows too, and rules need no story or task to exist.
    let rule = Afeta {
        regras: vec!["RN-1".into()],
        ..Afeta::default()
    };
    let open = ask(&e, "p", "s-alice", "Open?", rule);
    let done = ask(&e, "p", "s-alice", "Done?", Afeta::default());
    reply(&e, "alice", "p", &done, "x").unwrap();
    let conn = Connection::open(d.path().join(STORE_FILE)).unwrap();
    let before = snapshot(&conn);
    let seq: i64 = conn
        .query_row("SELECT max(seq) FROM events", [], |r| r.get(0))
        .unwrap();
    let refused = [
        "UPDATE events SET actor = 'mallory'".to_string(),
        format!("UPDATE events SET payload = '{{}}' WHERE question_id = '{open}'"),
        "DELETE FROM events".into(),
        format!("DELETE FROM events WHERE question_id = '{done}'"),
        "INSERT INTO open_questions VALUES ('q-fake', 'p', 999999, 'mallory')".into(),
        format!("INSERT INTO open_questions VALUES ('{done}', 'p', {seq}, 'alice')"),
        "INSERT INTO question_links VALUES ('task', 't-9', 'q-fake')".into(),
        format!("DELETE FROM open_questions WHERE question_id = '{open}'"),
        "DELETE FROM open_questions".into(),
        "UPDATE open_questions SET answerer = 'mallory'".into(),
        "DELETE FROM question_links".into(),
        format!(
            "INSERT INTO events (event_id, type, project_id, question_id, actor, at, payload) \
             VALUES ('e-dup', 'open_question.answered', 'p', '{done}', 'mallory', 0, '{{}}')"
        ),
    ];
    for sql in &refused {
        assert!(conn.execute(sql, []).is_err(), "the store accepted: {sql}");
        assert_eq!(snapshot(&conn), before, "changed by: {sql}");
    }
    drop(conn);
    assert!(e.question(Some("p"), &open).unwrap().is_open());
    assert_eq!(listed(&e, "p", StatusFilter::Open).1, 1);
}

// ---- schema versions and files that are not ours ------------------------------------

fn insert(conn: &Connection, seq_hint: usize, project: &str, event: &Event) {
    conn.execute(
        "INSERT INTO events (event_id, type, project_id, session_id, question_id, task_id, story_id, actor, at, payload)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'seed', ?8, ?9)",
        rusqlite::params![
            format!("e-v1-{seq_hint}"), event.type_name(), project, event.session_id(),
            event.question_id(), event.task_id(), event.story_id(), 1_000 + seq_hint as i64,
            serde_json::to_string(event).unwrap()
        ],
    )
    .unwrap();
}

fn task_afeta(task: &str) -> Afeta {
    Afeta {
        tarefas: vec![task.into()],
        ..Afeta::default()
    }
}

fn v1_question(id: &str, pergunta: &str) -> Event {
    Event::OpenQuestion {
        question_id: id.into(),
        pergunta: pergunta.into(),
        sugestao: None,
        afeta: task_afeta("t-7"),
        autor: "po".into(),
        session_id: "s-v1".into(),
        source: "oq".into(),
        prompts: Vec::new(),
        upstream: None,
    }
}

#[test]
fn a_version_1_store_is_migrated_and_lists_correctly() {
    let d = TempDir::new().unwrap();
    let path = d.path().join(STORE_FILE);
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 1;"
        ))
        .unwrap();
        let session = Event::SessionStarted {
            session_id: "s-v1".into(),
            kind: SessionKind::Conversation,
            author: "carol".into(),
        };
        let answer = Event::QuestionAnswered {
            question_id: "q-b".into(),
            resposta: "yes".into(),
            aceitou_sugestao: false,
            decision_event_id: "d-b".into(),
            respondida_por: "carol".into(),
            answers: Vec::new(),
            idempotency_key: None,
            decision_source: None,
        };
        let (qa, qb, qc) = (
            v1_question("q-a", "1?"),
            v1_question("q-b", "2?"),
            v1_question("q-c", "3?"),
        );
        for (n, event) in [session, qa, qb, qc, answer].iter().enumerate() {
            insert(&conn, n, "old", event);
        }
    }
    let e = LocalEngine::new(
        SqliteStore::open(&path).expect("a v1 store opens"),
        EngineConfig::default(),
    );
    let version: i64 = Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, LATEST_VERSION);
    let open = ["q-a".to_string(), "q-c".to_string()];
    assert_eq!(listed(&e, "old", StatusFilter::Open), (open.to_vec(), 2));
    assert_eq!(e.question(None, "q-a").unwrap().session_author, "carol");
    assert_eq!(listed(&e, "old", StatusFilter::Answered).1, 1);
    assert_eq!(e.readiness("old").unwrap().open_questions, 2);
    // The rebuilt indexes work with new writes: answer, then the open set shrinks.
    reply(&e, "carol", "old", "q-a", "ok").unwrap();
    assert_eq!(listed(&e, "old", StatusFilter::Open).0, open[1..].to_vec());
    assert_eq!(
        code(reply(&e, "carol", "old", "q-b", "again")),
        "pergunta_ja_respondida"
    );
    // The v1 links were rebuilt: q-a's decision reaches task t-7's context.
    let links: i64 = Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT count(*) FROM question_links WHERE target = 't-7'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(links, 3);
}

/// Version 5 rebuilds the log table: every event keeps its position and id, the open set
/// survives, and the store still refuses what it refused before.
#[test]
fn a_version_4_store_is_rebuilt_lean_with_every_position_kept() {
    let d = TempDir::new().unwrap();
    let path = d.path().join(STORE_FILE);
    let before: Vec<(i64, String, String)>;
    {
        let conn = Connection::open(&path).unwrap();
        for step in &MIGRATIONS[..4] {
            conn.execute_batch(step).unwrap();
        }
        conn.execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 4;"
        ))
        .unwrap();
        let session = Event::SessionStarted {
            session_id: "s-v1".into(),
            kind: SessionKind::Conversation,
            author: "carol".into(),
        };
        let events = [
            session,
            v1_question("q-a", "1?"),
            v1_question("q-b", "2?"),
            v1_question("q-c", "3?"),
        ];
        for (n, event) in events.iter().enumerate() {
            insert(&conn, n, "old", event);
        }
        before = event_rows(&conn);
    }
    let e = LocalEngine::new(SqliteStore::open(&path).unwrap(), EngineConfig::default());
    let conn = Connection::open(&path).unwrap();
    assert_eq!(
        event_rows(&conn),
        before,
        "same seq, id and type for every event"
    );
    let leftovers: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name = 'events_v5'
               OR sql LIKE '%AUTOINCREMENT%' OR name = 'events_one_answer'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(leftovers, 0);
    assert_eq!(listed(&e, "old", StatusFilter::Open).1, 3);
    // New positions continue after the old ones.
    reply(&e, "carol", "old", "q-b", "yes").unwrap();
    let newest: i64 = conn
        .query_row("SELECT max(seq) FROM events", [], |r| r.get(0))
        .unwrap();
    assert!(newest > before.last().unwrap().0);
    assert_eq!(listed(&e, "old", StatusFilter::Open).1, 2);
    assert_eq!(listed(&e, "old", StatusFilter::Answered).1, 1);
    assert_eq!(listed(&e, "old", StatusFilter::All).1, 3);
    // Still append-only, still one settlement, still a guarded open set.
    for refused in [
        "UPDATE events SET actor = 'x' WHERE seq = 1",
        "DELETE FROM events WHERE seq = 1",
        "DELETE FROM open_questions WHERE question_id = 'q-a'",
        "INSERT INTO open_questions VALUES ('q-z', 'old', 999)",
        "INSERT INTO events (event_id, type, project_id, question_id, actor, at, payload)
         VALUES ('e-x', 'open_question.closed', 'old', 'q-b', 'carol', 0, '{}')",
    ] {
        assert!(conn.execute(refused, []).is_err(), "{refused} was accepted");
    }
    assert_eq!(event_rows(&conn).len(), before.len() + 2);
}

fn event_rows(conn: &Connection) -> Vec<(i64, String, String)> {
    let mut stmt = conn
        .prepare("SELECT seq, event_id, type FROM events ORDER BY seq")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn answered_event(question_id: &str, decision: &str) -> NewEvent {
    NewEvent {
        project_id: "p".into(),
        actor: "alice".into(),
        event: Event::QuestionAnswered {
            question_id: question_id.into(),
            resposta: "yes".into(),
            aceitou_sugestao: false,
            decision_event_id: decision.into(),
            respondida_por: "alice".into(),
            answers: Vec::new(),
            idempotency_key: None,
            decision_source: None,
        },
    }
}

/// A decision's events go in as one statement: the positions reported are the ones the
/// log holds, and when the schema refuses any of them, none is kept — with or without the
/// chunked path of long appends.
#[test]
fn an_append_reports_its_positions_and_is_all_or_nothing() {
    let (dir, e) = setup();
    let (q1, q2) = (
        ask(&e, "p", "s-alice", "one?", Afeta::default()),
        ask(&e, "p", "s-alice", "two?", Afeta::default()),
    );
    let (stored, ()) = e
        .store()
        .transact({
            let events = vec![answered_event(&q1, "d-1"), answered_event(&q2, "d-2")];
            move |_| Ok((events, ()))
        })
        .unwrap();
    let conn = Connection::open(dir.path().join(STORE_FILE)).unwrap();
    let rows = event_rows(&conn);
    let tail: Vec<(i64, String, String)> = rows[rows.len() - 2..].to_vec();
    let reported: Vec<(i64, String, String)> = stored
        .iter()
        .map(|s| (s.seq, s.event_id.clone(), s.event.type_name().to_string()))
        .collect();
    assert_eq!(reported, tail);

    let q3 = ask(&e, "p", "s-alice", "three?", Afeta::default());
    for filler in [0, 100] {
        let before = event_rows(&conn).len();
        // `filler` more answers to fresh questions first, so 100 takes the chunked path.
        let mut events: Vec<NewEvent> = (0..filler)
            .map(|i| answered_event(&format!("q-free-{filler}-{i}"), "d-x"))
            .collect();
        events.push(answered_event(&q3, "d-3"));
        events.push(answered_event(&q1, "d-again"));
        let err = e.store().transact(|_| Ok((events, ()))).unwrap_err();
        assert_eq!(err.code(), "duplicate_event", "{err}");
        assert_eq!(
            event_rows(&conn).len(),
            before,
            "nothing of a refused append stays"
        );
    }
    assert_eq!(listed(&e, "p", StatusFilter::Open).0, vec![q3]);
}

fn siblings(path: &Path) -> Vec<bool> {
    ["-wal", "-shm", "-journal"]
        .iter()
        .map(|s| Path::new(&format!("{}{s}", path.display())).exists())
        .collect()
}

fn assert_refused_untouched(path: &Path, expected: &str) {
    let bytes = std::fs::read(path).unwrap();
    let had = siblings(path);
    let err = open_err(path);
    assert_eq!(err.code(), expected, "{err}");
    assert_eq!(err.exit_code(), oq::domain::error::exit::STORE);
    assert_eq!(std::fs::read(path).unwrap(), bytes, "the file was modified");
    assert_eq!(siblings(path), had, "a -wal/-shm/-journal file appeared");
}

/// An oq store (WAL mode, as oq writes them) whose schema is one version ahead.
fn too_new_store() -> (TempDir, std::path::PathBuf) {
    let d = TempDir::new().unwrap();
    let path = d.path().join(STORE_FILE);
    {
        let e = engine_in(d.path());
        e.start_session(
            &Actor::person("alice"),
            "p",
            SessionKind::Conversation,
            Some("s"),
        )
        .unwrap();
    }
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&format!("PRAGMA user_version = {};", LATEST_VERSION + 1))
            .unwrap();
    }
    assert_eq!(
        siblings(&path),
        vec![false, false, false],
        "closed cleanly before the check"
    );
    (d, path)
}

#[test]
fn a_store_newer_than_this_build_is_refused_with_its_bytes_unchanged() {
    let (d, path) = too_new_store();
    let bytes = std::fs::read(&path).unwrap();
    let err = open_err(&path);
    assert_eq!(err.code(), "store_too_new", "{err}");
    assert_eq!(err.exit_code(), oq::domain::error::exit::STORE);
    assert_eq!(
        SqliteStore::open_in(d.path())
            .err()
            .map(|e| e.code().as_str()),
        Some("store_too_new")
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the file was modified"
    );
    let version: i64 = Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, LATEST_VERSION + 1);
}

#[test]
fn a_store_newer_than_this_build_is_refused_without_creating_wal_files() {
    let (_d, path) = too_new_store();
    assert_refused_untouched(&path, "store_too_new");
}

#[test]
fn random_bytes_and_other_apps_databases_are_refused_untouched() {
    let d = TempDir::new().unwrap();
    let junk = d.path().join("junk.sqlite3");
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let bytes: Vec<u8> = (0..8192)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(&junk, &bytes).unwrap();
    assert_refused_untouched(&junk, "not_an_oq_store");

    let other = d.path().join("other.sqlite3");
    Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
        .unwrap();
    assert_refused_untouched(&other, "not_an_oq_store");

    let tagged = d.path().join("tagged.sqlite3");
    Connection::open(&tagged)
        .unwrap()
        .execute_batch(
            "PRAGMA application_id = 305419896; PRAGMA user_version = 1; CREATE TABLE t (x);",
        )
        .unwrap();
    assert_refused_untouched(&tagged, "not_an_oq_store");
}

#[test]
fn a_data_dir_that_cannot_be_created() {
    let d = TempDir::new().unwrap();
    let file = d.path().join("plain-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let err = SqliteStore::open_in(&file.join("data"))
        .err()
        .expect("refused");
    assert_eq!(err.code(), "data_dir_not_writable");
    assert_eq!(std::fs::read(&file).unwrap(), b"not a directory");
}

// ---- several connections on one file -----------------------------------------------

#[test]
fn separate_connections_see_each_other() {
    let (d, e1) = setup();
    let e2 = engine_in(d.path());
    let e3 = engine_in(d.path());
    let q = ask(&e1, "p", "s-alice", "Seen elsewhere?", Afeta::default());
    assert_eq!(
        ids(&e2
            .list(Some("p"), &ListQuery::new(StatusFilter::Open))
            .unwrap()),
        vec![q.clone()]
    );
    e3.answer(
        &Actor::person("alice"),
        Some("p"),
        &q,
        &AnswerInput::text("yes"),
    )
    .unwrap();
    assert!(!e1.question(None, &q).unwrap().is_open());
    let again = e2.answer(
        &Actor::person("alice"),
        Some("p"),
        &q,
        &AnswerInput::text("no"),
    );
    assert_eq!(
        again.expect_err("answered through e3").code(),
        "pergunta_ja_respondida"
    );
}

#[test]
fn threads_racing_to_answer_one_question() {
    let (d, e) = setup();
    const RACERS: usize = 8;
    for round in 0..5 {
        let q = ask(
            &e,
            "p",
            "s-alice",
            &format!("Race {round}?"),
            Afeta::default(),
        );
        let barrier = Arc::new(Barrier::new(RACERS));
        let handles: Vec<_> = (0..RACERS)
            .map(|i| {
                let (dir, barrier, q) = (d.path().to_path_buf(), barrier.clone(), q.clone());
                std::thread::spawn(move || {
                    let mine = engine_in(&dir);
                    barrier.wait();
                    mine.answer(
                        &Actor::person("alice"),
                        Some("p"),
                        &q,
                        &AnswerInput::text(format!("answer {i}")),
                    )
                })
            })
            .collect();
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect();
        let ok: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(ok.len(), 1, "round {round}: {results:?}");
        for r in results.iter().filter(|r| r.is_err()) {
            assert!(
                matches!(r, Err(OqError::AlreadyAnswered { .. })),
                "round {round}: {r:?}"
            );
        }
        let conn = Connection::open(d.path().join(STORE_FILE)).unwrap();
        let n: i64 = conn.query_row("SELECT count(*) FROM events WHERE type = 'open_question.answered' AND question_id = ?1", [&q], |r| r.get(0)).unwrap();
        assert_eq!(n, 1);
        let winner = ok[0].answer.as_ref().unwrap();
        assert_eq!(
            e.question(None, &q).unwrap().answer.unwrap().resposta,
            winner.resposta
        );
    }
    let unique: HashSet<String> = e
        .list(None, &ListQuery::new(StatusFilter::Answered))
        .unwrap()
        .items
        .into_iter()
        .map(|q| q.question_id)
        .collect();
    assert_eq!(unique.len(), 5);
}
