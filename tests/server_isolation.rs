//! No project sees or writes into another, through a real `oq serve`: session ids made by
//! the server and named only inside the caller's project (no squatting, no probing, the
//! bridge's ids unclaimable), `afeta` references that must exist in the question's
//! project, and the task's dev-context fed only by its own project's decisions.
#![allow(clippy::unwrap_used)]

mod common_server;

use common_server::*;
use serde_json::json;

async fn start_session(s: &TestServer, user: &str, project: &str, name: Option<&str>) -> Reply {
    let mut body = json!({"kind": "conversation"});
    if let Some(n) = name {
        body["sessionId"] = json!(n);
    }
    s.post(user, &format!("/projects/{project}/sessions"), body)
        .await
}

/// The server makes the ids: unique, long, never the same twice.
#[tokio::test(flavor = "multi_thread")]
async fn the_server_makes_session_ids() {
    let s = TestServer::start().await;
    let mut seen = std::collections::HashSet::new();
    for _ in 0..20 {
        let id = id_of(&start_session(&s, ANA, "loja", None).await, "sessionId");
        assert!(id.starts_with("s-") && id.len() >= 18, "{id}");
        assert!(seen.insert(id));
    }
    s.stop().await;
}

/// A name is placed in the caller's project; a name in another project's namespace, or
/// the bridge's, is refused with a code that says so and changes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn names_stay_inside_the_callers_project() {
    let s = TestServer::start().await;
    let r = start_session(&s, ANA, "loja", Some("sprint")).await;
    assert_eq!(must(&r, 201)["sessionId"], "loja.sprint");
    let r = start_session(&s, ANA, "loja", Some("loja.review")).await;
    assert_eq!(must(&r, 201)["sessionId"], "loja.review");

    let before = s.revision();
    for (name, code) in [
        ("outro.sprint", "session_id_outside_project"),
        ("lo.ja.x", "session_id_outside_project"),
        ("loja.a.b", "session_id_outside_project"),
        ("oc-laptop-ses_abc123", "session_id_reserved"),
        ("oc-x", "session_id_reserved"),
        ("has space", "invalid_id"),
    ] {
        let r = start_session(&s, ANA, "loja", Some(name)).await;
        assert_eq!(must(&r, 422)["code"], code, "{name}: {r:?}");
        assert!(r.body["message"].as_str().unwrap().contains(name), "{r:?}");
    }
    assert_eq!(s.revision(), before, "a refused name started nothing");
    s.stop().await;
}

/// The same name in two projects is two sessions; a collision can only be with the
/// caller's own project, so `session_exists` says nothing about another.
#[tokio::test(flavor = "multi_thread")]
async fn no_response_reveals_another_projects_session() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let mine = id_of(
        &start_session(&s, ANA, "loja", Some("shared")).await,
        "sessionId",
    );
    let theirs = id_of(
        &start_session(&s, CAIO, "outro", Some("shared")).await,
        "sessionId",
    );
    assert_eq!(
        (mine.as_str(), theirs.as_str()),
        ("loja.shared", "outro.shared")
    );
    // caio probes loja's ids from outro: every attempt is refused the same way, whether
    // the id exists there or not.
    for probe in [w.conversation.as_str(), "loja.shared", "loja.nothing-here"] {
        let r = start_session(&s, CAIO, "outro", Some(probe)).await;
        let status = r.status.as_u16();
        assert!(status == 422 || status == 201, "{probe}: {r:?}");
        assert_ne!(r.body["code"], "session_exists", "{probe} leaked: {r:?}");
        if status == 201 {
            assert!(id_of(&r, "sessionId").starts_with("outro."), "{r:?}");
        }
    }
    // Squatting the same project's name is the only collision.
    let r = start_session(&s, BIA, "loja", Some("shared")).await;
    assert_eq!(must(&r, 409)["code"], "session_exists");
    s.stop().await;
}

/// `afeta` names stories and tasks of the question's own project only: another
/// project's task and a dangling id are refused alike (422 `unknown_reference`, naming the
/// id), and nothing is recorded.
#[tokio::test(flavor = "multi_thread")]
async fn references_stay_inside_their_project() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let before = s.revision();
    for (field, id) in [
        ("tarefas", w.task.as_str()),
        ("historias", w.story.as_str()),
        ("tarefas", "t-nope"),
        ("historias", "st-nope"),
    ] {
        let r = s
            .post(
                OUTRO_AGENT,
                "/projects/outro/open-questions",
                json!({"pergunta": "Cross?", "sessionId": w.outro_session, "afeta": {field: [id]}}),
            )
            .await;
        assert_eq!(must(&r, 422)["code"], "unknown_reference", "{field} {id}");
        let message = r.body["message"].as_str().unwrap();
        assert!(message.contains(id) && message.contains(field), "{message}");
    }
    // In loja, the same ids are fine; a dangling one is not.
    let r = s
        .post(
            CRIATIVO,
            "/projects/loja/open-questions",
            json!({"pergunta": "Own work?", "sessionId": w.conversation,
                   "afeta": {"tarefas": [w.task], "historias": [w.story], "regras": ["RN-free"]}}),
        )
        .await;
    must(&r, 201);
    let r = s
        .post(
            QA,
            &format!("/projects/loja/tasks/{}/qa-verdicts", w.task),
            json!({"verdict": "needs_user_decision", "pergunta": "Parked on?"}),
        )
        .await;
    must(&r, 200);
    assert_eq!(
        s.revision(),
        before + 1 + 3,
        "only loja's two writes landed"
    );
    s.stop().await;
}

/// A store written before references were checked may hold a question of another
/// project naming this project's task: the task's dev-context still reads only its own
/// project's decisions.
#[tokio::test(flavor = "multi_thread")]
async fn dev_context_reads_only_the_projects_own_decisions() {
    use oq::domain::{Afeta, Event};
    use oq::engine::{NewEvent, Store};
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let (task, story, outro_session) = (w.task.clone(), w.story.clone(), w.outro_session.clone());
    let ev = |event: Event| NewEvent {
        project_id: "outro".into(),
        actor: CAIO.into(),
        event,
    };
    let events = vec![
        ev(Event::OpenQuestion {
            question_id: "q-old-cross".into(),
            pergunta: OUTRO_SECRET.into(),
            sugestao: None,
            afeta: Afeta {
                tarefas: vec![task],
                historias: vec![story],
                ..Afeta::default()
            },
            autor: "criativo".into(),
            session_id: outro_session,
            source: "oq".into(),
            prompts: Vec::new(),
            upstream: None,
        }),
        ev(Event::QuestionAnswered {
            question_id: "q-old-cross".into(),
            resposta: "SEGREDO-OUTRO answer".into(),
            aceitou_sugestao: false,
            decision_event_id: "d-old-cross".into(),
            respondida_por: CAIO.into(),
            answers: Vec::new(),
            idempotency_key: None,
            decision_source: Some(oq::domain::DecisionSource::Person),
        }),
    ];
    s.engine()
        .store()
        .transact(move |_| Ok((events, ())))
        .unwrap();
    let r = s
        .get(
            DEV_LEAD,
            &format!("/projects/loja/tasks/{}/dev-context", w.task),
        )
        .await;
    let body = must(&r, 200);
    assert_eq!(body["decisoes"], json!([]), "{r:?}");
    assert!(!r.text.contains("SEGREDO-OUTRO"), "{r:?}");
    // loja's own decision does reach it.
    let r = s
        .post(
            CRIATIVO,
            "/projects/loja/open-questions",
            json!({"pergunta": "Own decision?", "sessionId": w.conversation, "afeta": {"tarefas": [w.task]}}),
        )
        .await;
    let q = id_of(&r, "questionId");
    let r = s
        .post(
            ANA,
            &format!("/projects/loja/open-questions/{q}/answer"),
            json!({"resposta": "Ours"}),
        )
        .await;
    must(&r, 200);
    let r = s
        .get(
            DEV_LEAD,
            &format!("/projects/loja/tasks/{}/dev-context", w.task),
        )
        .await;
    let decisoes = must(&r, 200)["decisoes"].as_array().unwrap().clone();
    assert_eq!(decisoes.len(), 1, "{r:?}");
    assert_eq!(decisoes[0]["resposta"], "Ours");
    s.stop().await;
}
