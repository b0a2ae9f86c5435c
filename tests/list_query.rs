//! The whole queue over a real `oq serve` (SQLite, or PostgreSQL with
//! `OQ_TEST_STORE=postgres`): the list route's `q` and `sort` act on every question of
//! the filter, its total counts the filter, bad values are 422s named by their code, and
//! the HTTP source carries the same query through the `Source` trait.
#![allow(clippy::unwrap_used)]

mod common_server;

use std::collections::HashSet;

use common_server::*;
use oq::engine::{ListQuery, Sort, StatusFilter};
use oq::source::{HttpSource, Source};
use serde_json::{Value, json};

const LIST: &str = "/projects/loja/open-questions";

/// 53 questions in `loja` beside the seeded one, from three roles; the 51st alone
/// speaks of a zeppelin.
async fn fifty_three(s: &TestServer, w: &World) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..53 {
        let pergunta = if i == 50 {
            "Where does the Zeppelin hangar go?".to_string()
        } else {
            format!("Routine question number {i}?")
        };
        let agent = [CRIATIVO, PO, ARQUITETO][i % 3];
        let r = s
            .post(
                agent,
                LIST,
                json!({"pergunta": pergunta, "sessionId": w.conversation}),
            )
            .await;
        ids.push(id_of(&r, "questionId"));
    }
    ids
}

fn ids(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["questionId"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn search_sort_and_totals_act_on_the_whole_filter() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let asked = fifty_three(&s, &w).await;

    let first = s.get(ANA, LIST).await;
    let first = must(&first, 200);
    assert_eq!(first["total"], 54);
    assert_eq!(ids(first).len(), 50);
    assert!(!ids(first).contains(&asked[50]));

    let found = s.get(ANA, &format!("{LIST}?q=zeppelin%20HANG")).await;
    let found = must(&found, 200);
    assert_eq!(
        (ids(found), &found["total"]),
        (vec![asked[50].clone()], &json!(1))
    );
    // A short word, and the seeded question's suggestion.
    let r = s.get(ANA, &format!("{LIST}?q=number+52")).await;
    assert_eq!(ids(must(&r, 200)), vec![asked[52].clone()]);
    let r = s.get(ANA, &format!("{LIST}?q=one+page")).await;
    assert_eq!(ids(must(&r, 200)), vec![w.question.clone()]);
    // Another project's text is never found.
    let r = s.get(ANA, &format!("{LIST}?q=SEGREDO&status=all")).await;
    assert_eq!(must(&r, 200)["total"], 0);

    let newest = s.get(ANA, &format!("{LIST}?sort=newest&limit=3")).await;
    let newest = must(&newest, 200);
    assert_eq!(ids(newest)[0], asked[52]);
    assert_eq!(newest["total"], 54);

    // Every page of the asker order: each question once, grouped by role.
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut cursor = String::new();
    loop {
        let r = s
            .get(ANA, &format!("{LIST}?sort=asker&limit=7&cursor={cursor}"))
            .await;
        let body = must(&r, 200).clone();
        for q in body["items"].as_array().unwrap() {
            seen.push((
                q["autor"].as_str().unwrap().into(),
                q["questionId"].as_str().unwrap().into(),
            ));
        }
        match body["cursor"].as_str() {
            Some(c) => cursor = c.to_string(),
            None => break,
        }
    }
    assert_eq!(seen.len(), 54);
    assert_eq!(
        seen.iter().map(|(_, id)| id).collect::<HashSet<_>>().len(),
        54
    );
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "{seen:?}");

    // An answer is searched once there is one.
    let r = s
        .post(
            ANA,
            &format!("{LIST}/{}/answer", asked[3]),
            json!({"resposta": "Use the blimp dock"}),
        )
        .await;
    must(&r, 200);
    let r = s.get(ANA, &format!("{LIST}?q=blimp&status=answered")).await;
    assert_eq!(ids(must(&r, 200)), vec![asked[3].clone()]);
    let r = s.get(ANA, &format!("{LIST}?q=blimp")).await;
    assert_eq!(must(&r, 200)["total"], 0);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_search_sort_or_cursor_is_a_named_422() {
    let s = TestServer::start().await;
    let _w = seed(&s).await;
    let long = "x".repeat(10_000);
    for (query, code) in [
        (format!("q={long}"), "invalid_search"),
        // What schemathesis sent: a NUL ended SQLite's FTS5 phrase ("unterminated string", 500).
        (
            "q=9%C3%A4s%10%0E%C3%BF%00%F3%A6%B3%85+&sort=oldest".to_string(),
            "invalid_search",
        ),
        ("q=ab%00cd".to_string(), "invalid_search"),
        ("sort=shuffled".to_string(), "invalid_sort"),
        ("sort=project&cursor=12".to_string(), "invalid_cursor"),
        ("limit=0".to_string(), "invalid_limit"),
        ("status=maybe".to_string(), "invalid_status"),
    ] {
        let r = s.get(ANA, &format!("{LIST}?{query}")).await;
        let body = must(&r, 422);
        assert_eq!(body["code"], code, "{}", &query[..query.len().min(40)]);
        assert!(!body["message"].as_str().unwrap().is_empty());
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_http_source_carries_the_query() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let asked = fifty_three(&s, &w).await;
    let source = HttpSource::new(&s.base, s.token(ANA)).unwrap();
    let q = ListQuery::new(StatusFilter::Open)
        .search("zeppelin")
        .unwrap();
    let found = source.list(Some("loja"), &q).await.unwrap();
    assert_eq!(found.total, 1);
    assert_eq!(found.items[0].question_id, asked[50]);
    let q = ListQuery::new(StatusFilter::Open)
        .sorted(Sort::Newest)
        .limit(2);
    let page = source.list(Some("loja"), &q).await.unwrap();
    assert_eq!(page.items[0].question_id, asked[52]);
    assert_eq!(page.total, 54);
    let next = source
        .list(Some("loja"), &q.clone().after(page.cursor.as_deref()))
        .await
        .unwrap();
    assert_eq!(next.items[0].question_id, asked[50]);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openapi_document_names_search_and_sort() {
    let s = TestServer::start().await;
    let r = s.get(ANA, "/openapi.json").await;
    let doc = must(&r, 200);
    let params = doc["paths"]["/projects/{projectId}/open-questions"]["get"]["parameters"]
        .as_array()
        .unwrap();
    let named = |n: &str| params.iter().find(|p| p["name"] == n).cloned().unwrap();
    let sorts: Vec<&str> = Sort::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(named("sort")["schema"]["enum"], json!(sorts));
    assert_eq!(
        named("q")["schema"]["maxLength"],
        json!(oq::domain::search::SEARCH_MAX_CHARS)
    );
    s.stop().await;
}

/// A search most questions match is counted up to `SEARCH_TOTAL_CAP` and says so
/// (`totalIsLowerBound`), on every page and through the HTTP source; a rare word and a
/// filter without search keep their exact totals, without the flag.
#[tokio::test(flavor = "multi_thread")]
async fn a_common_search_says_its_total_is_a_lower_bound() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let many = oq::engine::SEARCH_TOTAL_CAP as usize + 1;
    for chunk in (0..many).collect::<Vec<_>>().chunks(25) {
        let posts = chunk.iter().map(|i| {
            let body = json!({"pergunta": format!("Routine question number {i}?"), "sessionId": w.conversation});
            s.post(PO, LIST, body)
        });
        for r in futures_util::future::join_all(posts).await {
            must(&r, 201);
        }
    }
    let cap = json!(oq::engine::SEARCH_TOTAL_CAP);
    let r = s.get(ANA, &format!("{LIST}?q=routine")).await;
    let body = must(&r, 200).clone();
    assert_eq!(
        (&body["total"], &body["totalIsLowerBound"]),
        (&cap, &json!(true))
    );
    assert_eq!(ids(&body).len(), 50);
    let cursor = body["cursor"].as_str().unwrap();
    let r = s.get(ANA, &format!("{LIST}?q=routine&sort=newest")).await;
    assert_eq!(must(&r, 200)["totalIsLowerBound"], true);
    let r = s
        .get(ANA, &format!("{LIST}?q=routine&cursor={cursor}"))
        .await;
    let next = must(&r, 200);
    assert_eq!(
        (&next["total"], &next["totalIsLowerBound"]),
        (&cap, &json!(true))
    );
    assert!(ids(next).iter().all(|id| !ids(&body).contains(id)));
    // A rare word among the common one: exact, no flag.
    let r = s.get(ANA, &format!("{LIST}?q=routine+1000")).await;
    let rare = must(&r, 200);
    assert_eq!(rare["total"], 1);
    assert!(rare.get("totalIsLowerBound").is_none(), "{rare}");
    // No search: the exact count of the open set.
    let r = s.get(ANA, LIST).await;
    let all = must(&r, 200);
    assert_eq!(all["total"], many + 1);
    assert!(all.get("totalIsLowerBound").is_none(), "{all}");
    // The HTTP source carries the flag.
    let source = HttpSource::new(&s.base, s.token(ANA)).unwrap();
    let q = ListQuery::new(StatusFilter::Open)
        .search("routine")
        .unwrap();
    let page = source.list(Some("loja"), &q).await.unwrap();
    assert!(page.total_is_lower_bound);
    assert_eq!(page.total, oq::engine::SEARCH_TOTAL_CAP);
    s.stop().await;
}
