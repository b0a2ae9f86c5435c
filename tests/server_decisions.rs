//! `GET /projects/{projectId}/decisions` on a real `oq serve` (SQLite, or PostgreSQL with
//! `OQ_TEST_STORE=postgres`): every answered or closed question, newest decision first,
//! with who, when and how; search, date, affects and decision-source filters over the
//! whole history; keyset pages; the list route's auth and project scoping; each bad
//! input refused by its own code.
#![allow(clippy::unwrap_used)]

mod common_server;

use common_server::*;
use reqwest::Method;
use serde_json::{Value, json};

fn ids(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["questionId"].as_str().unwrap().to_string())
        .collect()
}

/// Declares in ana's conversation session of loja, as the criativo agent.
async fn declare(s: &TestServer, w: &World, pergunta: &str, afeta: Value) -> String {
    declare_as(s, w, CRIATIVO, pergunta, afeta).await
}

async fn declare_as(
    s: &TestServer,
    w: &World,
    agent: &str,
    pergunta: &str,
    afeta: Value,
) -> String {
    id_of(
        &s.post(
            agent,
            "/projects/loja/open-questions",
            json!({"pergunta": pergunta, "sugestao": "Redis", "afeta": afeta, "sessionId": w.conversation}),
        )
        .await,
        "questionId",
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn decisions_are_newest_first_filtered_over_the_history_and_paged() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    // The seeded question, accepted: a suggestion.
    let accepted = w.question.clone();
    must(
        &s.post(
            ANA,
            &format!("/projects/loja/open-questions/{accepted}/answer"),
            json!({"aceitarSugestao": true}),
        )
        .await,
        200,
    );
    let cache = declare(
        &s,
        &w,
        "Which database for the cache?",
        json!({"tarefas": [w.task]}),
    )
    .await;
    must(
        &s.post(
            ANA,
            &format!("/projects/loja/open-questions/{cache}/answer"),
            json!({"resposta": "Valkey, not Redis"}),
        )
        .await,
        200,
    );
    let dropped = declare_as(&s, &w, PO, "Drop the legacy table?", json!({})).await;
    must(
        &s.post(
            ANA,
            &format!("/projects/loja/open-questions/{dropped}/dismiss"),
            json!({}),
        )
        .await,
        200,
    );
    let open = declare(&s, &w, "Still open for the cache?", json!({})).await;
    // outro's decision never shows in loja.
    must(
        &s.post(
            CAIO,
            &format!("/projects/outro/open-questions/{}/answer", w.outro_question),
            json!({"resposta": "yes"}),
        )
        .await,
        200,
    );

    let all = s.get(BIA, "/projects/loja/decisions").await;
    let body = must(&all, 200);
    assert_eq!(
        ids(body),
        [dropped.clone(), cache.clone(), accepted.clone()]
    );
    assert_eq!(body["total"], 3);
    assert!(!all.text.contains(&open));
    for marker in w.outro_markers() {
        assert!(!all.text.contains(&marker), "{marker} leaked");
    }
    let items = body["items"].as_array().unwrap();
    assert_eq!(items[0]["closed"]["decisionSource"], "dismissed");
    assert_eq!(items[0]["closed"]["by"], ANA);
    assert_eq!(items[1]["answer"]["decisionSource"], "person");
    assert_eq!(items[1]["answer"]["resposta"], "Valkey, not Redis");
    assert_eq!(items[1]["afeta"]["tarefas"], json!([w.task]));
    assert_eq!(items[2]["answer"]["decisionSource"], "suggestion");

    let get = |query: String| {
        let s = &s;
        async move {
            s.get(ANA, &format!("/projects/loja/decisions?{query}"))
                .await
        }
    };
    // The search reaches answers too ("valkey" is only in one).
    assert_eq!(
        ids(must(&get("q=valkey".into()).await, 200)),
        [cache.as_str()]
    );
    assert_eq!(
        ids(must(&get("q=cache".into()).await, 200)),
        [cache.as_str()]
    );
    assert_eq!(
        ids(must(&get(format!("affects=task:{}", w.task)).await, 200)),
        [cache.as_str()]
    );
    assert_eq!(
        ids(must(&get("source=suggestion".into()).await, 200)),
        [accepted.as_str()]
    );
    assert_eq!(
        ids(must(&get("source=dismissed".into()).await, 200)),
        [dropped.as_str()]
    );
    // Who asked (`autor`, the agent's role): the PO asked only the dropped one.
    assert_eq!(items[0]["autor"], "po");
    assert_eq!(
        ids(must(&get("agent=po".into()).await, 200)),
        [dropped.as_str()]
    );
    assert_eq!(
        ids(must(&get("agent=criativo".into()).await, 200)),
        [cache.as_str(), accepted.as_str()]
    );
    assert_eq!(
        ids(must(&get("agent=criativo&q=valkey".into()).await, 200)),
        [cache.as_str()]
    );
    assert_eq!(must(&get("agent=qa-agent".into()).await, 200)["total"], 0);
    assert_eq!(must(&get("since=9999-12-31".into()).await, 200)["total"], 0);
    assert_eq!(
        must(&get("since=2000-01-01T00:00:00Z".into()).await, 200)["total"],
        3
    );
    // A bound to the millisecond: the decision made at that instant is in, one
    // millisecond later it is out (what the HTTP source sends for an exact `since`).
    let at = items[1]["answer"]["answeredAt"].as_i64().unwrap();
    let since = |ms: i64| get(format!("since={}", oq::domain::date::format_utc_exact(ms)));
    assert!(ids(must(&since(at).await, 200)).contains(&cache));
    assert!(!ids(must(&since(at + 1).await, 200)).contains(&cache));

    // Pages of one: each decision once, in order, whatever is decided meanwhile.
    let first = get("limit=1".into()).await;
    let cursor = must(&first, 200)["cursor"].as_str().unwrap().to_string();
    assert_eq!(ids(&first.body), [dropped.as_str()]);
    must(
        &s.post(
            ANA,
            &format!("/projects/loja/open-questions/{open}/answer"),
            json!({"resposta": "now decided"}),
        )
        .await,
        200,
    );
    let second = get(format!("limit=1&cursor={cursor}")).await;
    assert_eq!(ids(must(&second, 200)), [cache.as_str()]);
    let c2 = second.body["cursor"].as_str().unwrap();
    let third = get(format!("limit=1&cursor={c2}")).await;
    assert_eq!(ids(must(&third, 200)), [accepted]);
    assert!(third.body.get("cursor").is_none(), "{third:?}");
    assert_eq!(third.body["total"], 4);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_filters_are_refused_by_name_and_the_route_is_scoped() {
    let s = TestServer::start().await;
    seed(&s).await;
    let long = "x".repeat(10_000);
    for (query, code) in [
        ("since=yesterday".to_string(), "invalid_date"),
        ("since=2025-02-29".to_string(), "invalid_date"),
        ("source=robot".to_string(), "invalid_decision_source"),
        (format!("q={long}"), "invalid_search"),
        ("affects=epic:E-1".to_string(), "invalid_affects"),
        ("limit=0".to_string(), "invalid_limit"),
        ("cursor=abc".to_string(), "invalid_cursor"),
        (format!("agent={}", "a".repeat(201)), "invalid_id"),
        ("agent=po%07".to_string(), "invalid_id"),
        ("status=open".to_string(), "invalid_query"),
    ] {
        let r = s
            .get(ANA, &format!("/projects/loja/decisions?{query}"))
            .await;
        assert_eq!(must(&r, 422)["code"], code, "{query:.40}");
    }
    let r = s
        .call(Auth::None, Method::GET, "/projects/loja/decisions", None)
        .await;
    assert_eq!(must(&r, 401)["code"], "unauthorized");
    // caio is not of loja: the unknown project's 404, as the list route.
    let r = s.get(CAIO, "/projects/loja/decisions").await;
    assert_eq!(r.status.as_u16(), 404, "{r:?}");
    assert_eq!(
        must(&s.get(CAIO, "/projects/outro/decisions").await, 200)["total"],
        0
    );
    s.stop().await;
}

/// A search every decision matches stops counting at the cap and says so
/// (`totalIsLowerBound`, as the list route does), its pages still walk the history
/// without overlap; a rare word and a date bound count exactly; the HTTP source carries
/// the flag to the CLI and the TUI.
#[tokio::test(flavor = "multi_thread")]
async fn a_common_search_of_the_history_says_its_total_is_a_lower_bound() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let many = oq::engine::SEARCH_TOTAL_CAP as usize + 1;
    for chunk in (0..many).collect::<Vec<_>>().chunks(25) {
        let posts = chunk.iter().map(|i| {
            let body = json!({"pergunta": format!("Routine question number {i}?"), "sessionId": w.conversation});
            s.post(CRIATIVO, "/projects/loja/open-questions", body)
        });
        let declared: Vec<String> = futures_util::future::join_all(posts)
            .await
            .iter()
            .map(|r| id_of(r, "questionId"))
            .collect();
        let answers = declared.iter().map(|id| {
            let (s, path) = (&s, format!("/projects/loja/open-questions/{id}/answer"));
            async move { s.post(ANA, &path, json!({"resposta": "as usual"})).await }
        });
        for r in futures_util::future::join_all(answers).await {
            must(&r, 200);
        }
    }
    let get = |query: &str| {
        let (s, path) = (&s, format!("/projects/loja/decisions?{query}"));
        async move { s.get(ANA, &path).await }
    };
    let cap = json!(oq::engine::SEARCH_TOTAL_CAP);
    let r = get("q=routine").await;
    let first = must(&r, 200).clone();
    assert_eq!(
        (&first["total"], &first["totalIsLowerBound"]),
        (&cap, &json!(true))
    );
    assert_eq!(ids(&first).len(), 50);
    let cursor = first["cursor"].as_str().unwrap();
    let r = get(&format!("q=routine&cursor={cursor}")).await;
    let next = must(&r, 200);
    assert_eq!(next["totalIsLowerBound"], true);
    assert_eq!(ids(next).len(), 50);
    assert!(ids(next).iter().all(|id| !ids(&first).contains(id)));
    // A rare word among the common one: exact, no flag.
    let r = get("q=routine+1000").await;
    let rare = must(&r, 200);
    assert_eq!(rare["total"], 1);
    assert!(rare.get("totalIsLowerBound").is_none(), "{rare}");
    // No search, or only a date: the exact count of the history.
    for query in ["", "since=2000-01-01"] {
        let r = get(query).await;
        let all = must(&r, 200);
        assert_eq!(all["total"], many, "{query}");
        assert!(all.get("totalIsLowerBound").is_none(), "{query}: {all}");
    }
    let source = oq::source::HttpSource::new(&s.base, s.token(ANA)).unwrap();
    let q = oq::engine::DecisionQuery::parse(Some("routine"), None, None, None).unwrap();
    let page = oq::source::Source::decisions(&source, Some("loja"), &q)
        .await
        .unwrap();
    assert!(page.total_is_lower_bound);
    assert_eq!(page.total, oq::engine::SEARCH_TOTAL_CAP);
    assert_eq!(page.total_text(50), "1000+");
    s.stop().await;
}
