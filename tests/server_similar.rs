//! The memory of answers on `GET /projects/{projectId}/open-questions/{questionId}` of a
//! real `oq serve` (SQLite, or PostgreSQL with `OQ_TEST_STORE=postgres`): the same text
//! after normalisation is `same`, a near one `similar`, a far one and another project's
//! answer nothing; a dismissed question is no memory; the read records nothing. Every
//! reply is checked against the OpenAPI document on arrival (`common_openapi::conform`).
#![allow(clippy::unwrap_used)]

mod common_server;

use common_server::*;
use serde_json::{Value, json};

const LIST: &str = "/projects/loja/open-questions";

async fn declare(
    s: &TestServer,
    session: &str,
    project: &str,
    agent: &str,
    pergunta: &str,
) -> String {
    id_of(
        &s.post(
            agent,
            &format!("/projects/{project}/open-questions"),
            json!({"pergunta": pergunta, "sessionId": session}),
        )
        .await,
        "questionId",
    )
}

async fn read(s: &TestServer, who: &str, project: &str, id: &str) -> Value {
    must(
        &s.get(who, &format!("/projects/{project}/open-questions/{id}"))
            .await,
        200,
    )
    .clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_open_question_carries_the_answer_of_one_it_resembles_in_its_project() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let c = w.conversation.clone();
    let before = declare(&s, &c, "loja", CRIATIVO, "Which carrier ships the returns?").await;
    must(
        &s.post(
            ANA,
            &format!("{LIST}/{before}/answer"),
            json!({"resposta": "Correios, by PAC"}),
        )
        .await,
        200,
    );
    // Another project's answer to the very same words is never offered in loja.
    let outro = declare(
        &s,
        &w.outro_session,
        "outro",
        OUTRO_AGENT,
        "Which carrier ships the refunds?",
    )
    .await;
    must(
        &s.post(
            CAIO,
            &format!("/projects/outro/open-questions/{outro}/answer"),
            json!({"resposta": "SEGREDO-OUTRO carrier"}),
        )
        .await,
        200,
    );
    let dismissed = declare(&s, &c, "loja", CRIATIVO, "Which carrier ships the refunds?").await;
    must(
        &s.post(ANA, &format!("{LIST}/{dismissed}/dismiss"), json!({}))
            .await,
        200,
    );

    let same = declare(
        &s,
        &c,
        "loja",
        CRIATIVO,
        "  which CARRIER ships the returns ",
    )
    .await;
    let near = declare(&s, &c, "loja", CRIATIVO, "Which carrier ships our returns?").await;
    let far = declare(
        &s,
        &c,
        "loja",
        CRIATIVO,
        "Which carrier do we use for outbound orders?",
    )
    .await;
    let refunds = declare(&s, &c, "loja", CRIATIVO, "Which carrier ships the refunds?").await;
    let revision = must(&s.get(ANA, "/projects/loja/revision").await, 200).clone();

    let hint = read(&s, ANA, "loja", &same).await["similarAnswer"].clone();
    assert_eq!(hint["questionId"], before.as_str(), "{hint}");
    assert_eq!(hint["pergunta"], "Which carrier ships the returns?");
    assert_eq!(hint["resposta"], "Correios, by PAC");
    assert_eq!(hint["respondidaPor"], ANA);
    assert_eq!(
        (hint["match"].as_str(), hint["similarity"].as_u64()),
        (Some("same"), Some(100))
    );

    let hint = read(&s, ANA, "loja", &near).await["similarAnswer"].clone();
    assert_eq!(hint["match"], "similar", "{hint}");
    assert!(hint["similarity"].as_u64().unwrap() >= 70, "{hint}");
    assert_eq!(hint["resposta"], "Correios, by PAC");

    for id in [&far, &refunds] {
        let q = read(&s, ANA, "loja", id).await;
        assert!(q.get("similarAnswer").is_none(), "{q}");
    }
    // The hint answers nothing, and reading it writes nothing.
    assert_eq!(read(&s, ANA, "loja", &same).await["status"], "open");
    assert_eq!(
        must(&s.get(ANA, "/projects/loja/revision").await, 200),
        &revision
    );
    // The list never carries it (one question's read only).
    let list = must(&s.get(ANA, LIST).await, 200).clone();
    assert!(
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|q| q.get("similarAnswer").is_none())
    );
}
