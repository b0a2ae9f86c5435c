//! `oq serve` over HTTP: every route, every error code, bodies the server must refuse,
//! the answer race, the OpenAPI document against the router, and the binary's config
//! errors and SIGTERM.
#![allow(clippy::unwrap_used)]

mod common_server;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common_server::*;
use reqwest::Method;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread")]
async fn healthz_needs_no_token_and_everything_else_does() {
    let s = TestServer::start().await;
    let r = s.call(Auth::None, Method::GET, "/healthz", None).await;
    assert_eq!(must(&r, 200)["status"], "ok");
    let r = s
        .call(
            Auth::None,
            Method::GET,
            "/projects/loja/open-questions",
            None,
        )
        .await;
    assert_eq!(must(&r, 401)["code"], "unauthorized");
    let r = s
        .call(Auth::Raw("Bearer nope"), Method::GET, "/me", None)
        .await;
    assert_eq!(must(&r, 401)["code"], "unauthorized");
    let r = s
        .call(Auth::Raw("Basic abc"), Method::GET, "/me", None)
        .await;
    assert_eq!(must(&r, 401)["code"], "unauthorized");
    let r = s.get(ANA, "/me").await;
    let me = must(&r, 200);
    assert_eq!(me["user"], ANA);
    assert_eq!(me["kind"], "person");
    assert_eq!(me["projects"], json!(["loja"]));
    let r = s.get(QA, "/me").await;
    assert_eq!(must(&r, 200)["role"], "qa-agent");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn openapi_names_exactly_the_served_routes() {
    let s = TestServer::start().await;
    let r = s.call(Auth::None, Method::GET, "/openapi.json", None).await;
    let doc = must(&r, 200);
    assert_eq!(doc["openapi"], "3.1.0");
    let mut documented = BTreeSet::new();
    for (path, ops) in doc["paths"].as_object().expect("paths") {
        for method in ops.as_object().expect("ops").keys() {
            documented.insert((method.to_uppercase(), path.clone()));
        }
    }
    let served: BTreeSet<(String, String)> = oq::server::served_routes()
        .into_iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    assert_eq!(documented, served, "the document and the router differ");
    // The declare route carries ADR 0214's central instruction, word for word.
    let declare = &doc["paths"]["/projects/{projectId}/open-questions"]["post"]["description"];
    assert!(
        declare
            .as_str()
            .expect("description")
            .contains(oq::domain::CENTRAL_INSTRUCTION),
        "{declare}"
    );
    // Every route really answers on the live server (not the no-route or 405 fallback).
    for (method, path) in &served {
        let concrete = path
            .split('/')
            .map(|seg| if seg.starts_with('{') { "x" } else { seg })
            .collect::<Vec<_>>()
            .join("/");
        let method = Method::from_bytes(method.as_bytes()).unwrap();
        let r = s.call(Auth::None, method.clone(), &concrete, None).await;
        assert!(
            r.status != 404 && r.status != 405,
            "{method} {concrete} is documented but not served: {r:?}"
        );
    }
    // And what is not documented is not served, in our error format.
    let r = s
        .call(Auth::None, Method::GET, "/projects/loja/nothing", None)
        .await;
    assert_eq!(must(&r, 404)["code"], "not_found");
    let r = s.call(Auth::None, Method::DELETE, "/healthz", None).await;
    assert_eq!(must(&r, 405)["code"], "method_not_allowed");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_question_lifecycle_over_http() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let list = "/projects/loja/open-questions";

    // The author sees it answerable; another member sees why not; an agent too.
    let r = s.get(ANA, list).await;
    let page = must(&r, 200);
    assert_eq!(page["total"], 1);
    let item = &page["items"][0];
    assert_eq!(item["questionId"], w.question.as_str());
    assert_eq!(item["status"], "open");
    assert_eq!(item["pergunta"], "Which checkout flow?");
    assert_eq!(item["sugestao"], "One page");
    assert_eq!(item["afeta"]["regras"], json!(["RN-1"]));
    assert_eq!(item["autor"], "criativo");
    assert_eq!(item["sessionId"], w.conversation.as_str());
    assert_eq!(item["canAnswer"], true);
    let r = s.get(BIA, list).await;
    let item = &must(&r, 200)["items"][0];
    assert_eq!(item["canAnswer"], false);
    assert!(item["reason"].as_str().unwrap().contains(ANA), "{item}");
    let r = s.get(QA, list).await;
    assert_eq!(must(&r, 200)["items"][0]["canAnswer"], false);

    // One question of the list, and one of another project is not found.
    let r = s.get(BIA, &format!("{list}/{}", w.question)).await;
    assert_eq!(must(&r, 200)["questionId"], w.question.as_str());
    let r = s.get(ANA, &format!("{list}/{}", w.outro_question)).await;
    assert_eq!(must(&r, 404)["code"], "not_found");
    assert!(!r.text.contains(OUTRO_SECRET));

    let answer = format!("{list}/{}/answer", w.question);
    let r = s.post(BIA, &answer, json!({"resposta": "Two pages"})).await;
    assert_eq!(must(&r, 403)["code"], "so_o_autor_da_sessao");
    let r = s
        .post(CRIATIVO, &answer, json!({"resposta": "Two pages"}))
        .await;
    assert_eq!(must(&r, 403)["code"], "so_o_autor_da_sessao");
    let r = s
        .post(
            ANA,
            &format!("{list}/{}/answer", w.outro_question),
            json!({"resposta": "x"}),
        )
        .await;
    assert_eq!(must(&r, 404)["code"], "not_found");

    let r = s.post(ANA, &answer, json!({"aceitarSugestao": true})).await;
    let body = must(&r, 200);
    assert_eq!(body["status"], "answered");
    assert_eq!(body["answer"]["resposta"], "One page");
    assert_eq!(body["answer"]["aceitouSugestao"], true);
    assert_eq!(body["answer"]["respondidaPor"], ANA);
    let decision = body["decisionEventId"].as_str().unwrap();
    assert!(decision.starts_with("d-"));
    assert_eq!(body["answer"]["decisionEventId"], decision);

    let r = s.post(ANA, &answer, json!({"resposta": "again"})).await;
    assert_eq!(must(&r, 409)["code"], "pergunta_ja_respondida");

    let r = s.get(ANA, list).await;
    assert_eq!(must(&r, 200)["total"], 0);
    let r = s.get(ANA, &format!("{list}?status=answered")).await;
    let page = must(&r, 200);
    assert_eq!(page["total"], 1);
    assert_eq!(page["items"][0]["canAnswer"], false);
    let r = s.get(ANA, &format!("{list}?status=all")).await;
    assert_eq!(must(&r, 200)["total"], 1);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn answer_bodies_that_are_refused() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    // A question without a suggestion.
    let bare = id_of(
        &s.post(
            PO,
            "/projects/loja/open-questions",
            json!({"pergunta": "No suggestion here?", "sessionId": w.conversation}),
        )
        .await,
        "questionId",
    );
    let answer = format!("/projects/loja/open-questions/{}/answer", w.question);
    let before = s.revision();
    for (body, code) in [
        (json!({}), "invalid_body"),
        (
            json!({"resposta": "a", "aceitarSugestao": true}),
            "invalid_body",
        ),
        (json!({"aceitarSugestao": false}), "invalid_body"),
        (json!({"resposta": "   "}), "empty_text"),
        (json!({"resposta": "x".repeat(2001)}), "text_too_long"),
        (json!({"resposta": 42}), "invalid_body"),
        (json!({"resposta": "a", "extra": 1}), "invalid_body"),
        (json!([1, 2]), "invalid_body"),
    ] {
        let r = s.post(ANA, &answer, body.clone()).await;
        assert_eq!(must(&r, 422)["code"], code, "{body}");
        assert!(!r.body["message"].as_str().unwrap().is_empty());
    }
    let r = s
        .post(
            ANA,
            &format!("/projects/loja/open-questions/{bare}/answer"),
            json!({"aceitarSugestao": true}),
        )
        .await;
    assert_eq!(must(&r, 422)["code"], "sugestao_inexistente");
    // Unknown field named in the message.
    let r = s
        .post(ANA, &answer, json!({"resposta": "a", "surprise": true}))
        .await;
    assert!(
        r.body["message"].as_str().unwrap().contains("surprise"),
        "{r:?}"
    );

    // Malformed JSON, wrong content type, an oversized body.
    let r = s
        .post_raw(ANA, &answer, Some("application/json"), "{\"resposta\": ")
        .await;
    assert_eq!(must(&r, 422)["code"], "invalid_body");
    let r = s.post_raw(ANA, &answer, Some("application/json"), "").await;
    assert_eq!(must(&r, 422)["code"], "invalid_body");
    let r = s
        .post_raw(ANA, &answer, Some("text/plain"), "{\"resposta\": \"a\"}")
        .await;
    assert_eq!(must(&r, 415)["code"], "unsupported_media_type");
    let r = s
        .post_raw(ANA, &answer, None, "{\"resposta\": \"a\"}")
        .await;
    assert_eq!(must(&r, 415)["code"], "unsupported_media_type");
    let huge = format!("{{\"resposta\": \"{}\"}}", "x".repeat(200 * 1024));
    let r = s
        .post_raw(ANA, &answer, Some("application/json"), huge)
        .await;
    assert_eq!(must(&r, 413)["code"], "body_too_large");
    assert_eq!(s.revision(), before, "a refused body changed nothing");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn declare_limits_and_who_declares() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let path = "/projects/loja/open-questions";
    for agent in [CRIATIVO, PO, ARQUITETO, DEV_LEAD] {
        let r = s
            .post(
                agent,
                path,
                json!({"pergunta": format!("From {agent}?"), "sessionId": w.conversation}),
            )
            .await;
        let q = must(&r, 201);
        assert!(q["questionId"].as_str().unwrap().starts_with("q-"));
        assert_eq!(q["sessionAuthor"], ANA);
    }
    let before = s.revision();
    let r = s
        .post(
            QA,
            path,
            json!({"pergunta": "Me?", "sessionId": w.conversation}),
        )
        .await;
    assert_eq!(must(&r, 403)["code"], "role_not_allowed");
    let r = s
        .post(
            ANA,
            path,
            json!({"pergunta": "Me?", "sessionId": w.conversation}),
        )
        .await;
    assert_eq!(must(&r, 403)["code"], "role_not_allowed");
    let r = s
        .post(
            CRIATIVO,
            path,
            json!({"pergunta": "x".repeat(501), "sessionId": w.conversation}),
        )
        .await;
    assert_eq!(must(&r, 422)["code"], "text_too_long");
    let r = s
        .post(
            CRIATIVO,
            path,
            json!({"pergunta": "ok?", "sugestao": "y".repeat(301), "sessionId": w.conversation}),
        )
        .await;
    assert_eq!(must(&r, 422)["code"], "text_too_long");
    let r = s
        .post(
            CRIATIVO,
            path,
            json!({"pergunta": "ok?", "afeta": {"outros": []}, "sessionId": w.conversation}),
        )
        .await;
    assert_eq!(must(&r, 422)["code"], "invalid_body");
    let r = s
        .post(CRIATIVO, path, json!({"pergunta": "ok?", "afeta": {"regras": ["bad id"]}, "sessionId": w.conversation}))
        .await;
    assert_eq!(must(&r, 422)["code"], "invalid_id");
    let r = s.post(CRIATIVO, path, json!({"pergunta": "ok?"})).await;
    assert_eq!(must(&r, 422)["code"], "invalid_body");
    // A session of another project is not found, and says nothing about it.
    let r = s
        .post(
            CRIATIVO,
            path,
            json!({"pergunta": "ok?", "sessionId": w.outro_session}),
        )
        .await;
    assert_eq!(must(&r, 404)["code"], "not_found");
    assert_eq!(s.revision(), before);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn list_pages_and_absurd_queries() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    for i in 0..54 {
        let r = s
            .post(
                PO,
                "/projects/loja/open-questions",
                json!({"pergunta": format!("Question {i}?"), "sessionId": w.conversation}),
            )
            .await;
        must(&r, 201);
    }
    let list = "/projects/loja/open-questions";
    let r = s.get(BIA, list).await;
    let page = must(&r, 200);
    assert_eq!(page["total"], 55);
    assert_eq!(page["items"].as_array().unwrap().len(), 50);
    let cursor = page["cursor"].as_str().unwrap().to_string();
    let r = s.get(BIA, &format!("{list}?cursor={cursor}")).await;
    let next = must(&r, 200);
    assert_eq!(next["items"].as_array().unwrap().len(), 5);
    assert!(next.get("cursor").is_none());
    assert_eq!(next["items"][4]["pergunta"], "Question 53?");
    let r = s.get(BIA, &format!("{list}?limit=2")).await;
    assert_eq!(must(&r, 200)["items"][0]["questionId"], w.question.as_str());

    for (query, code) in [
        ("limit=0", "invalid_limit"),
        ("limit=51", "invalid_limit"),
        ("limit=-1", "invalid_limit"),
        ("limit=many", "invalid_limit"),
        ("cursor=-5", "invalid_cursor"),
        ("cursor=abc", "invalid_cursor"),
        ("cursor=999999999999999999999999", "invalid_cursor"),
        ("status=maybe", "invalid_status"),
        ("unknown=1", "invalid_query"),
    ] {
        let r = s.get(BIA, &format!("{list}?{query}")).await;
        assert_eq!(must(&r, 422)["code"], code, "{query}");
    }
    // A cursor past the end is an empty last page.
    let r = s
        .get(BIA, &format!("{list}?cursor=9223372036854775807"))
        .await;
    assert_eq!(must(&r, 200)["items"], json!([]));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_and_readiness() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let r = s
        .post(
            BIA,
            "/projects/loja/sessions",
            json!({"kind": "execution", "sessionId": "bia-exec"}),
        )
        .await;
    let session = must(&r, 201);
    assert_eq!(session["sessionId"], "loja.bia-exec");
    assert_eq!(session["kind"], "execution");
    assert_eq!(session["author"], BIA);
    let r = s
        .post(
            BIA,
            "/projects/loja/sessions",
            json!({"kind": "execution", "sessionId": "bia-exec"}),
        )
        .await;
    assert_eq!(must(&r, 409)["code"], "session_exists");
    let r = s
        .post(BIA, "/projects/loja/sessions", json!({"kind": "meeting"}))
        .await;
    assert_eq!(must(&r, 422)["code"], "invalid_body");
    let r = s
        .post(
            PO,
            "/projects/loja/sessions",
            json!({"kind": "conversation"}),
        )
        .await;
    assert_eq!(must(&r, 403)["code"], "role_not_allowed");

    let r = s.get(BIA, "/projects/loja/readiness").await;
    let ready = must(&r, 200);
    assert_eq!(ready["openQuestions"], 1);
    assert_eq!(ready["notice"], "1 question is still open — answer");
    let r = s
        .post(ANA, "/projects/loja/readiness/im-ready", json!({}))
        .await;
    assert_eq!(must(&r, 200)["openQuestions"], 1);
    let r = s
        .post(
            ANA,
            "/projects/loja/readiness/architecture-ready",
            json!({}),
        )
        .await;
    assert_eq!(must(&r, 200)["notice"], "1 question is still open — answer");
    let r = s
        .post(ANA, "/projects/loja/readiness/whenever", json!({}))
        .await;
    assert_eq!(must(&r, 422)["code"], "invalid_gate");
    let r = s.get(CRIATIVO, "/projects/loja/readiness").await;
    assert_eq!(must(&r, 403)["code"], "role_not_allowed");
    s.post(
        ANA,
        &format!("/projects/loja/open-questions/{}/answer", w.question),
        json!({"resposta": "Two"}),
    )
    .await;
    let r = s.get(BIA, "/projects/loja/readiness").await;
    let ready = must(&r, 200);
    assert_eq!(ready["openQuestions"], 0);
    assert_eq!(ready["notice"], Value::Null);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn stories_tasks_verdicts_and_the_answer_back_to_the_work() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let story = format!("/projects/loja/stories/{}", w.story);
    let task = format!("/projects/loja/tasks/{}", w.task);

    let r = s
        .post(PO, "/projects/loja/stories", json!({"title": "Returns"}))
        .await;
    let created = must(&r, 201);
    assert_eq!(created["state"], "draft");
    let r = s
        .post(DEV_LEAD, "/projects/loja/stories", json!({"title": "x"}))
        .await;
    assert_eq!(must(&r, 403)["code"], "role_not_allowed");
    let r = s
        .post(PO, "/projects/loja/stories", json!({"title": ""}))
        .await;
    assert_eq!(must(&r, 422)["code"], "empty_text");

    // Correction: a draft story accepts; a ready one only with an answered question.
    let r = s.post(PO, &format!("{story}/corrections"), json!({})).await;
    assert_eq!(must(&r, 200)["accepted"], true);
    let r = s
        .post(PO, &format!("{story}/state"), json!({"state": "ready"}))
        .await;
    assert_eq!(must(&r, 200)["state"], "ready");
    let r = s.post(PO, &format!("{story}/corrections"), json!({})).await;
    assert_eq!(must(&r, 409)["code"], "historia_pronta_sem_resposta");
    let r = s
        .post(
            PO,
            &format!("{story}/corrections"),
            json!({"questionId": w.question}),
        )
        .await;
    assert_eq!(must(&r, 409)["code"], "pergunta_nao_respondida");
    let r = s
        .post(
            PO,
            &format!("{story}/corrections"),
            json!({"questionId": w.outro_question}),
        )
        .await;
    assert_eq!(must(&r, 404)["code"], "not_found");
    let r = s
        .post(PO, &format!("{story}/state"), json!({"state": "archived"}))
        .await;
    assert_eq!(must(&r, 409)["code"], "invalid_transition");
    let r = s
        .post(PO, &format!("{story}/state"), json!({"state": "flying"}))
        .await;
    assert_eq!(must(&r, 422)["code"], "invalid_body");
    let r = s
        .post(
            PO,
            "/projects/loja/stories/st-nothing/state",
            json!({"state": "ready"}),
        )
        .await;
    assert_eq!(must(&r, 404)["code"], "not_found");

    // Tasks.
    let r = s.get(QA, &task).await;
    let t = must(&r, 200);
    assert_eq!(t["taskId"], w.task.as_str());
    assert_eq!(t["storyId"], w.story.as_str());
    assert_eq!(t["sessionId"], w.execution.as_str());
    assert_eq!(t["gate"]["state"], "active");
    assert_eq!(t["gate"]["corrections"], 0);
    let r = s
        .post(
            PO,
            "/projects/loja/tasks",
            json!({"storyId": w.story, "sessionId": w.conversation, "title": "t"}),
        )
        .await;
    assert_eq!(must(&r, 422)["code"], "not_an_execution_session");
    let r = s
        .post(
            CRIATIVO,
            "/projects/loja/tasks",
            json!({"storyId": w.story, "sessionId": w.execution, "title": "t"}),
        )
        .await;
    assert_eq!(must(&r, 403)["code"], "role_not_allowed");
    let r = s
        .post(
            DEV_LEAD,
            &format!("{task}/state"),
            json!({"state": "in_review"}),
        )
        .await;
    assert_eq!(must(&r, 200)["state"], "in_review");
    let r = s.post(PO, &format!("{story}/corrections"), json!({})).await;
    assert_eq!(must(&r, 409)["code"], "tarefa_em_andamento");

    // QA: changes_requested counts; needs_user_decision parks without counting.
    let verdicts = format!("{task}/qa-verdicts");
    let r = s
        .post(
            QA,
            &verdicts,
            json!({"verdict": "changes_requested", "subspecialty": "security"}),
        )
        .await;
    assert_eq!(must(&r, 200)["task"]["gate"]["corrections"], 1);
    let r = s
        .post(DEV_LEAD, &verdicts, json!({"verdict": "approved"}))
        .await;
    assert_eq!(must(&r, 403)["code"], "role_not_allowed");
    let r = s
        .post(
            QA,
            &verdicts,
            json!({"verdict": "approved", "pergunta": "?"}),
        )
        .await;
    assert_eq!(must(&r, 422)["code"], "invalid_body");
    let r = s.post(QA, &verdicts, json!({"verdict": "maybe"})).await;
    assert_eq!(must(&r, 422)["code"], "invalid_body");
    let r = s
        .post(QA, &verdicts, json!({"verdict": "needs_user_decision", "pergunta": "Is GET /:codigo confirmed?", "sugestao": "Yes"}))
        .await;
    let v = must(&r, 200);
    assert_eq!(v["verdict"], "needs_user_decision");
    assert_eq!(v["task"]["gate"]["state"], "parked");
    assert_eq!(v["task"]["gate"]["corrections"], 1);
    let parked_on = v["openQuestionId"].as_str().unwrap().to_string();
    assert_eq!(v["task"]["gate"]["parkedOn"], parked_on.as_str());
    let r = s.post(QA, &verdicts, json!({"verdict": "approved"})).await;
    assert_eq!(must(&r, 409)["code"], "gate_parked");

    // Waiting for ana (the execution session's author), not for bia.
    let r = s.get(ANA, "/projects/loja/tasks?waiting=me").await;
    let waiting = must(&r, 200);
    assert_eq!(waiting["total"], 1);
    assert_eq!(waiting["items"][0]["questionId"], parked_on.as_str());
    assert_eq!(waiting["items"][0]["task"]["taskId"], w.task.as_str());
    let r = s.get(BIA, "/projects/loja/tasks?waiting=me").await;
    assert_eq!(must(&r, 200)["total"], 0);
    let r = s.get(ANA, "/projects/loja/tasks").await;
    assert_eq!(must(&r, 422)["code"], "invalid_query");
    let r = s.get(QA, "/projects/loja/tasks?waiting=me").await;
    assert_eq!(must(&r, 403)["code"], "role_not_allowed");

    // The answer resumes the gate and reaches the dev-context.
    let r = s
        .post(
            ANA,
            &format!("/projects/loja/open-questions/{parked_on}/answer"),
            json!({"resposta": "Confirmed: keep GET /:codigo"}),
        )
        .await;
    must(&r, 200);
    let r = s.get(QA, &task).await;
    assert_eq!(must(&r, 200)["gate"]["state"], "active");
    let r = s.get(DEV_LEAD, &format!("{task}/dev-context")).await;
    let dc = must(&r, 200);
    assert_eq!(
        dc["header"],
        "User decisions — they win over FR/DoR when they conflict"
    );
    assert_eq!(
        dc["decisoes"][0]["resposta"],
        "Confirmed: keep GET /:codigo"
    );
    let r = s
        .get(ANA, "/projects/loja/tasks/t-nothing/dev-context")
        .await;
    assert_eq!(must(&r, 404)["code"], "not_found");

    // A ready story accepts a correction citing the answered question (once no task is in review).
    s.post(DEV_LEAD, &format!("{task}/state"), json!({"state": "done"}))
        .await;
    let r = s
        .post(
            PO,
            &format!("{story}/corrections"),
            json!({"questionId": parked_on}),
        )
        .await;
    let c = must(&r, 200);
    assert_eq!(c["accepted"], true);
    assert_eq!(c["questionId"], parked_on.as_str());

    let r = s.post(QA, &verdicts, json!({"verdict": "approved"})).await;
    assert_eq!(must(&r, 200)["task"]["gate"]["state"], "approved");
    let r = s.post(QA, &verdicts, json!({"verdict": "approved"})).await;
    assert_eq!(must(&r, 409)["code"], "gate_closed");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn thirty_two_clients_race_to_answer_one_question() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let url = s.url(&format!(
        "/projects/loja/open-questions/{}/answer",
        w.question
    ));
    let token = s.token(ANA).to_string();
    let mut handles = Vec::new();
    for i in 0..32 {
        let (client, url, token) = (client(), url.clone(), token.clone());
        handles.push(tokio::spawn(async move {
            let r = client
                .post(&url)
                .bearer_auth(token)
                .json(&json!({"resposta": format!("answer {i}")}))
                .send()
                .await
                .expect("send");
            reply(r).await
        }));
    }
    let mut ok = 0;
    for h in handles {
        let r = h.await.expect("task");
        match r.status.as_u16() {
            200 => ok += 1,
            409 => assert_eq!(r.body["code"], "pergunta_ja_respondida"),
            other => panic!("unexpected {other}: {r:?}"),
        }
    }
    assert_eq!(ok, 1, "exactly one answer wins");
    let answered = s
        .engine()
        .question(Some("loja"), &w.question)
        .expect("question");
    assert!(answered.answer.is_some());
    s.stop().await;
}

// ---- the binary ----------------------------------------------------------------------

fn write_config(dir: &std::path::Path, text: &str) -> std::path::PathBuf {
    let path = dir.join("bad.toml");
    std::fs::write(&path, text).expect("write");
    path
}

fn serve_fails(text: &str) -> (i32, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write_config(dir.path(), text);
    let out = Command::new(env!("CARGO_BIN_EXE_oq"))
        .args(["serve", "--config"])
        .arg(&path)
        .output()
        .expect("run oq");
    assert!(!dir.path().join("data").exists(), "nothing started");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn config_errors_name_the_file_the_line_and_the_problem() {
    let hash = "ab".repeat(32);
    let cases: Vec<(String, usize, &str)> = vec![
        ("data_dir = \"data\"\nlisten = = 3\n".into(), 2, ""),
        (format!("data_dir = \"data\"\n[[users]]\nid = \"a\"\nkind = \"person\"\ntoken_sha256 = \"{hash}\"\ncolour = \"red\"\n"), 6, "colour"),
        (format!("data_dir = \"data\"\n[[users]]\nid = \"a\"\nkind = \"agent\"\nrole = \"boss\"\ntoken_sha256 = \"{hash}\"\n"), 5, "boss"),
        ("data_dir = \"data\"\n[[users]]\nid = \"a\"\nkind = \"person\"\ntoken_sha256 = \"abc\"\n".into(), 5, "64 hex"),
        (format!("data_dir = \"data\"\n[[users]]\nid = \"a\"\nkind = \"person\"\ntoken_sha256 = \"{hash}\"\n[[projects]]\nid = \"p\"\nmembers = [\"a\", \"ghost\"]\n"), 8, "ghost"),
        (format!("data_dir = \"data\"\n[[users]]\nid = \"bot\"\nkind = \"agent\"\nrole = \"po\"\ntoken_sha256 = \"{hash}\"\n[[projects]]\nid = \"p\"\nmembers = [\"bot\"]\n"), 9, "agent"),
        (format!("data_dir = \"data\"\n[[users]]\nid = \"a\"\nkind = \"person\"\ntoken_sha256 = \"{hash}\"\n[[users]]\nid = \"a\"\nkind = \"person\"\ntoken_sha256 = \"{}\"\n", "cd".repeat(32)), 7, "twice"),
        ("data_dir = \"data\"\nlisten = \"everywhere\"\n".into(), 2, "listen"),
    ];
    for (text, line, word) in cases {
        let (code, stderr) = serve_fails(&text);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(&format!("bad.toml:{line}:")),
            "line {line} in {stderr:?}"
        );
        assert!(stderr.contains(word), "{word:?} in {stderr:?}");
    }
}

#[test]
fn token_prints_a_token_and_its_hash() {
    let out = Command::new(env!("CARGO_BIN_EXE_oq"))
        .args(["token", "--json"])
        .output()
        .expect("run oq");
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let token = v["token"].as_str().unwrap();
    assert_eq!(
        v["tokenSha256"].as_str().unwrap(),
        hex::encode(oq::server::config::token_hash(token))
    );
}

#[test]
fn sigterm_stops_the_server_cleanly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tokens = new_tokens();
    let path = dir.path().join("serve.toml");
    std::fs::write(&path, config_text(&tokens, "127.0.0.1:0")).expect("write");
    let mut child = Command::new(env!("CARGO_BIN_EXE_oq"))
        .args(["serve", "--config"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn oq serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read");
    let base = line
        .trim()
        .strip_prefix("oq serve: listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let c = client();
        let r = c
            .get(format!("{base}/healthz"))
            .send()
            .await
            .expect("healthz");
        assert_eq!(r.status(), 200);
        let r = c
            .get(format!("{base}/projects/loja/readiness"))
            .bearer_auth(&tokens[ANA])
            .send()
            .await
            .expect("readiness");
        assert_eq!(r.status(), 200);
    });
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let exit = child.wait().expect("wait");
    assert_eq!(exit.code(), Some(0), "clean exit on SIGTERM");
}
