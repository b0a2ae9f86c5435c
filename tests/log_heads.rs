//! The event feed's read of the log without payloads (`StoreView::heads_after`) on a
//! real SQLite store: the same positions, projects, project sequences and kinds as the
//! whole events read, in the same order, from any position and with any limit.
#![allow(clippy::unwrap_used)]

use oq::domain::{Actor, AnswerInput, DeclareInput, Role, SessionKind};
use oq::engine::{EngineConfig, LocalEngine, LogHead, SqliteStore};

#[test]
fn heads_are_the_events_without_their_payloads() {
    let dir = tempfile::tempdir().unwrap();
    let e = LocalEngine::new(
        SqliteStore::open_in(dir.path()).unwrap(),
        EngineConfig::default(),
    );
    for (who, project) in [("ana", "loja"), ("bia", "blog")] {
        e.start_session(
            &Actor::person(who),
            project,
            SessionKind::Conversation,
            Some(who),
        )
        .unwrap();
        for i in 0..3 {
            let input = DeclareInput {
                pergunta: format!("{project} {i}?"),
                session_id: who.into(),
                ..Default::default()
            };
            let q = e.declare(&Actor::agent(Role::Po), project, &input).unwrap();
            e.answer(
                &Actor::person(who),
                Some(project),
                &q.question_id,
                &AnswerInput::text("ok"),
            )
            .unwrap();
        }
    }
    let whole = |after, limit| -> Vec<LogHead> {
        e.events_after(None, after, limit)
            .unwrap()
            .into_iter()
            .map(|s| LogHead {
                seq: s.seq,
                kind: s.event.type_name().to_string(),
                project_id: s.project_id,
                project_seq: s.project_seq,
            })
            .collect()
    };
    let all = whole(0, 1000);
    assert_eq!(all.len(), 2 + 2 * 3 * 3, "{all:?}");
    assert!(
        all.iter()
            .any(|h| h.project_id == "blog" && h.kind == "open_question.answered")
    );
    for (after, limit) in [(0, 1000), (0, 5), (7, 4), (19, 10), (20, 10)] {
        assert_eq!(
            e.heads_after(after, limit).unwrap(),
            whole(after, limit),
            "{after} {limit}"
        );
    }
}
