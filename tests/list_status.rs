//! `status` of the list route (and `--status`, `oq list`) over a real `oq serve` (SQLite,
//! or PostgreSQL with `OQ_TEST_STORE=postgres`): a state, or how the settled questions
//! were settled (their `decisionSource`), each counted over the whole filter, and the
//! HTTP source carrying the same filter.
#![allow(clippy::unwrap_used)]

mod common_server;

use common_server::*;
use oq::domain::DecisionSource;
use oq::engine::{ListQuery, StatusFilter};
use oq::source::{HttpSource, Source};
use serde_json::{Value, json};

const LIST: &str = "/projects/loja/open-questions";

fn ids(body: &Value) -> Vec<String> {
    let mut ids: Vec<String> = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["questionId"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread")]
async fn each_status_names_the_questions_settled_its_way() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let mut asked = Vec::new();
    for text in ["Typed?", "Accepted?", "Dismissed?", "Still open?"] {
        let r = s
            .post(
                CRIATIVO,
                LIST,
                json!({"pergunta": text, "sugestao": "yes", "sessionId": w.conversation}),
            )
            .await;
        asked.push(id_of(&r, "questionId"));
    }
    let (typed, accepted, dismissed, open) = (&asked[0], &asked[1], &asked[2], &asked[3]);
    let r = s
        .post(
            ANA,
            &format!("{LIST}/{typed}/answer"),
            json!({"resposta": "no"}),
        )
        .await;
    must(&r, 200);
    let r = s
        .post(
            ANA,
            &format!("{LIST}/{accepted}/answer"),
            json!({"aceitarSugestao": true}),
        )
        .await;
    must(&r, 200);
    let r = s
        .post(ANA, &format!("{LIST}/{dismissed}/dismiss"), json!({}))
        .await;
    must(&r, 200);

    let mut both = vec![typed.clone(), accepted.clone()];
    both.sort();
    let mut every = vec![
        typed.clone(),
        accepted.clone(),
        dismissed.clone(),
        open.clone(),
        w.question.clone(),
    ];
    every.sort();
    let mut still_open = vec![open.clone(), w.question.clone()];
    still_open.sort();
    let expect: Vec<(&str, Vec<String>)> = vec![
        ("open", still_open),
        ("answered", both),
        ("closed", vec![dismissed.clone()]),
        ("all", every),
        ("person", vec![typed.clone()]),
        ("suggestion", vec![accepted.clone()]),
        ("dismissed", vec![dismissed.clone()]),
        ("auto_delegate", vec![]),
        ("upstream", vec![]),
        ("vanished", vec![]),
        ("delegate", vec![]),
        ("withdrawn", vec![]),
    ];
    assert_eq!(
        expect.len(),
        StatusFilter::every().len(),
        "a filter untested"
    );
    for (status, want) in &expect {
        let r = s.get(ANA, &format!("{LIST}?status={status}")).await;
        let body = must(&r, 200);
        assert_eq!(&ids(body), want, "status={status}");
        assert_eq!(body["total"], want.len(), "status={status}: the total");
    }

    // The HTTP source carries the filter through the `Source` trait.
    let source = HttpSource::new(&s.base, s.token(ANA)).unwrap();
    let list = source
        .list(
            Some("loja"),
            &ListQuery::new(StatusFilter::Decided(DecisionSource::Suggestion)),
        )
        .await
        .unwrap();
    let got: Vec<&str> = list.items.iter().map(|q| q.question_id.as_str()).collect();
    assert_eq!(got, vec![accepted.as_str()]);
    s.stop().await;
}
