//! An answer delivered twice (an offline outbox retrying after a lost reply) is applied
//! once: the retry with the same key and body gets the first answer back; the key with
//! another body, or from another person, is `idempotency_key_reused`; anything else is
//! still `pergunta_ja_respondida`.
#![allow(clippy::unwrap_used)]

mod common_server;

use common_server::{ANA, ARQUITETO, BIA, PO, TestServer, seed};
use oq::domain::{Actor, AnswerInput, DeclareInput, Role, SessionKind};
use oq::engine::{EngineConfig, LocalEngine, SqliteStore};
use reqwest::Method;
use serde_json::json;

#[test]
fn the_engine_returns_the_first_answer_for_the_same_key() {
    let dir = tempfile::tempdir().unwrap();
    let e = LocalEngine::new(
        SqliteStore::open_in(dir.path()).unwrap(),
        EngineConfig::default(),
    );
    let dev = Actor::person("dev-a");
    e.start_session(&dev, "p", SessionKind::Conversation, Some("s"))
        .unwrap();
    let q = e
        .declare(
            &Actor::agent(Role::Po),
            "p",
            &DeclareInput {
                pergunta: "Q?".into(),
                session_id: "s".into(),
                ..Default::default()
            },
        )
        .unwrap();
    let first = e
        .answer_once(
            &dev,
            None,
            &q.question_id,
            &AnswerInput::text("yes"),
            Some("k-1"),
        )
        .unwrap();
    let rev = e.revision().unwrap();
    // the same key and body: the first answer, nothing appended
    let again = e
        .answer_once(
            &dev,
            None,
            &q.question_id,
            &AnswerInput::text(" yes "),
            Some("k-1"),
        )
        .unwrap();
    assert_eq!(again.answer, first.answer);
    assert_eq!(e.revision().unwrap(), rev);
    // the same key with another answer, or a body that is no answer: not a retry
    for (other, code) in [
        (AnswerInput::text("other"), "idempotency_key_reused"),
        (AnswerInput::accept(), "sugestao_inexistente"),
        (AnswerInput::default(), "invalid_body"),
        (AnswerInput::text("  "), "empty_text"),
    ] {
        let err = e
            .answer_once(&dev, None, &q.question_id, &other, Some("k-1"))
            .unwrap_err();
        assert_eq!(err.code(), code, "{other:?}");
    }
    assert_eq!(e.revision().unwrap(), rev);
    // another key, or none: refused as ever
    let err = e
        .answer_once(
            &dev,
            None,
            &q.question_id,
            &AnswerInput::text("yes"),
            Some("k-2"),
        )
        .unwrap_err();
    assert_eq!(err.code(), "pergunta_ja_respondida");
    let err = e
        .answer(&dev, None, &q.question_id, &AnswerInput::text("yes"))
        .unwrap_err();
    assert_eq!(err.code(), "pergunta_ja_respondida");
    // the key is no pass for someone else, and says so
    let err = e
        .answer_once(
            &Actor::person("dev-b"),
            None,
            &q.question_id,
            &AnswerInput::text("yes"),
            Some("k-1"),
        )
        .unwrap_err();
    assert_eq!(err.code(), "idempotency_key_reused");
    let err = e
        .answer_once(
            &Actor::person("dev-b"),
            None,
            &q.question_id,
            &AnswerInput::text("yes"),
            Some("k-b"),
        )
        .unwrap_err();
    assert_eq!(err.code(), "so_o_autor_da_sessao");
    // a key that is not an id is refused before anything
    let err = e
        .answer_once(
            &dev,
            None,
            &q.question_id,
            &AnswerInput::text("yes"),
            Some("a b"),
        )
        .unwrap_err();
    assert_eq!(err.code(), "invalid_id");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_server_honours_the_idempotency_key_header() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let declared = s
        .post(
            PO,
            "/projects/loja/open-questions",
            json!({"pergunta": "Retry me?", "sessionId": w.conversation}),
        )
        .await;
    let qid = declared.body["questionId"].as_str().unwrap().to_string();
    let path = format!("/projects/loja/open-questions/{qid}/answer");
    let send_body = |key: &'static str, who: &'static str, body: &str| {
        let req = s
            .client
            .request(Method::POST, s.url(&path))
            .bearer_auth(s.token(who))
            .header("idempotency-key", key)
            .header("content-type", "application/json")
            .body(body.to_string());
        async move { req.send().await.unwrap() }
    };
    let send = |key: &'static str, who: &'static str| send_body(key, who, r#"{"resposta": "Yes"}"#);
    let first = send("outbox-1", ANA).await;
    assert_eq!(first.status(), 200);
    let first: serde_json::Value = first.json().await.unwrap();
    let rev = s.revision();
    let again = send("outbox-1", ANA).await;
    assert_eq!(again.status(), 200);
    let again: serde_json::Value = again.json().await.unwrap();
    assert_eq!(again["decisionEventId"], first["decisionEventId"]);
    assert_eq!(s.revision(), rev, "a retried delivery appended nothing");
    assert_eq!(send("outbox-2", ANA).await.status(), 409);
    assert_eq!(send("outbox-2", BIA).await.status(), 403);
    // The key again with another body, an invalid one, or from another person: 422
    // with a code that says why, and nothing appended.
    for (who, body, code) in [
        (ANA, r#"{"resposta": "No"}"#, "idempotency_key_reused"),
        (ANA, r#"{"aceitarSugestao": true}"#, "sugestao_inexistente"),
        (ANA, r#"{"resposta": ""}"#, "empty_text"),
        (ANA, r#"["Yes"]"#, "invalid_body"),
        (BIA, r#"{"resposta": "Yes"}"#, "idempotency_key_reused"),
    ] {
        let r = common_server::reply(send_body("outbox-1", who, body).await).await;
        assert_eq!(r.status, 422, "{who} {body}: {r:?}");
        assert_eq!(r.body["code"], code, "{who} {body}: {r:?}");
    }
    assert_eq!(s.revision(), rev);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_declaration_retried_with_its_key_is_the_first_question() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let declare = |key: &'static str, who: &'static str, pergunta: &'static str| {
        let req = s
            .client
            .request(Method::POST, s.url("/projects/loja/open-questions"))
            .bearer_auth(s.token(who))
            .header("idempotency-key", key)
            .json(&json!({"pergunta": pergunta, "sessionId": w.conversation}));
        async move { common_server::reply(req.send().await.unwrap()).await }
    };
    let first = declare("agent-run-7", PO, "Ship on Friday?").await;
    assert_eq!(first.status, 201, "{first:?}");
    let qid = first.body["questionId"].as_str().unwrap().to_string();
    let rev = s.revision();
    let again = declare("agent-run-7", PO, "Ship on Friday?").await;
    assert_eq!(again.status, 201, "{again:?}");
    assert_eq!(again.body["questionId"], qid.as_str());
    assert_eq!(s.revision(), rev, "a retried declaration appended nothing");
    // the key with another question: refused, nothing appended
    let other = declare("agent-run-7", PO, "Ship on Monday?").await;
    assert_eq!(other.status, 422, "{other:?}");
    assert_eq!(other.body["code"], "idempotency_key_reused");
    assert_eq!(s.revision(), rev);
    // the same key from another agent is that agent's own question
    let theirs = declare("agent-run-7", ARQUITETO, "Ship on Friday?").await;
    assert_eq!(theirs.status, 201, "{theirs:?}");
    assert_ne!(theirs.body["questionId"], qid.as_str());
    s.stop().await;
}
