//! The OpenAPI document says everything the server does: every status each route
//! documents is made to happen on a real server (the requests below), and every reply is
//! checked against the document as it arrives (`common_openapi::conform`, which every
//! server harness runs, so the whole server suite checks it too): an undocumented status,
//! an error code its status does not name, or a body off its schema fails the test.
//!
//! The few documented statuses not made here are listed with the test that makes them
//! (a clock, a limiter, a broken store or a bridged OpenCode); an entry that is no longer
//! documented fails too, so the list only shrinks.
#![allow(clippy::unwrap_used)]

mod common_server;

use std::collections::BTreeSet;

use common_server::common_openapi::{self, conform, documented, seen};
use common_server::*;
use reqwest::Method;
use serde_json::{Value, json};

/// (METHOD, template or `*` for every route that documents it, status, where it is made).
const ELSEWHERE: &[Entry] = &[
    (
        "*",
        "*",
        408,
        "the body clock in front of every route (serve_limits: a body that never arrives)",
    ),
    (
        "*",
        "*",
        429,
        "the failed-authentication limiter in front of every route (serve_limits); this server's limit is lifted for the matrices",
    ),
    (
        "*",
        "*",
        503,
        "a store that cannot serve now (store_busy, store_flush_failure, team_store), or a connection beyond max_connections (serve_limits)",
    ),
    (
        "POST",
        "/projects/{projectId}/open-questions/{questionId}/answer",
        502,
        "a bridged question whose OpenCode does not take the answer (bridge_scripted)",
    ),
    (
        "POST",
        "/projects/{projectId}/open-questions/{questionId}/dismiss",
        502,
        "a bridged question whose OpenCode does not take the rejection (bridge_scripted)",
    ),
    (
        "*",
        "/api/question-auto-delegate*",
        200,
        "a server with an OpenCode bridge (bridge_authz, bridge_scripted: their replies are checked too)",
    ),
    (
        "*",
        "/api/question-auto-delegate*",
        403,
        "a server with an OpenCode bridge (bridge_authz)",
    ),
    (
        "*",
        "/api/question-auto-delegate*",
        409,
        "a server with an OpenCode bridge (bridge_scripted)",
    ),
    (
        "*",
        "/api/question-auto-delegate*",
        502,
        "a server with an OpenCode bridge (bridge_scripted, bridge_failover)",
    ),
    (
        "*",
        "/api/question-auto-delegate*",
        413,
        "the body limits are the server's, the same for every route (made on the project routes here)",
    ),
    (
        "*",
        "/api/question-auto-delegate*",
        415,
        "the body limits are the server's, the same for every route (made on the project routes here)",
    ),
    (
        "*",
        "/api/question-auto-delegate*",
        422,
        "a server with an OpenCode bridge (bridge_authz: a malformed body, a setting that is not a boolean)",
    ),
    (
        "POST",
        "/projects/{projectId}/claude-code/*",
        200,
        "the Claude Code hook's routes (claude_code_routes: each status and code, on both stores)",
    ),
    (
        "POST",
        "/projects/{projectId}/claude-code/*",
        201,
        "the Claude Code hook's routes (claude_code_routes: each status and code, on both stores)",
    ),
    (
        "POST",
        "/projects/{projectId}/claude-code/*",
        403,
        "the Claude Code hook's routes (claude_code_routes: each status and code, on both stores)",
    ),
    (
        "POST",
        "/projects/{projectId}/claude-code/*",
        409,
        "the Claude Code hook's routes (claude_code_routes: each status and code, on both stores)",
    ),
    (
        "POST",
        "/mcp",
        408,
        "the body clock and cap on /mcp (serve_limits: a trickled body, an oversize one, on a real oq serve)",
    ),
    (
        "POST",
        "/mcp",
        413,
        "the body clock and cap on /mcp (serve_limits: a trickled body, an oversize one, on a real oq serve)",
    ),
    (
        "*",
        "/mcp",
        200,
        "MCP's own handshake and session (mcp_serve: the Python MCP client, and a real Claude Code)",
    ),
];

type Entry = (&'static str, &'static str, u16, &'static str);

fn fits((m, t, st, _): &Entry, method: &str, template: &str, status: u16) -> bool {
    let t_fits =
        *t == "*" || *t == template || t.strip_suffix('*').is_some_and(|p| template.starts_with(p));
    (*m == "*" || *m == method) && t_fits && *st == status
}

fn elsewhere(method: &str, template: &str, status: u16) -> Option<&'static str> {
    ELSEWHERE
        .iter()
        .find(|e| fits(e, method, template, status))
        .map(|e| e.3)
}

/// A request with headers, checked against the document like every other.
async fn with_headers(
    s: &TestServer,
    user: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, String) {
    let mut req = s.client.get(s.url(path)).bearer_auth(s.token(user));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    let ct = r.headers()["content-type"].to_str().unwrap().to_string();
    // An event stream never ends: its head is what is checked.
    let text = if ct.starts_with("text/event-stream") {
        String::new()
    } else {
        r.text().await.unwrap()
    };
    conform("GET", path, status, &text);
    (status, ct)
}

/// A new open question in ana's conversation.
async fn question(s: &TestServer, w: &World) -> String {
    let r = s
        .post(
            CRIATIVO,
            "/projects/loja/open-questions",
            json!({"pergunta": "Which carrier?", "sugestao": "Correios", "sessionId": w.conversation}),
        )
        .await;
    id_of(&r, "questionId")
}

async fn body_limits(s: &TestServer, user: &str, path: &str) {
    let big = format!("{{\"x\": \"{}\"}}", "a".repeat(70_000));
    assert_eq!(
        s.post_raw(user, path, Some("application/json"), big)
            .await
            .status,
        413
    );
    let r = s.post_raw(user, path, Some("text/plain"), "{}").await;
    assert_eq!(r.status, 415, "{path}: {r:?}");
    let r = s.post(user, path, json!([])).await;
    assert_eq!(r.status, 422, "{path}: {r:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_documented_status_of_every_route_is_made_and_conforms() {
    let s = TestServer::start().await;
    let w = seed(&s).await;

    // Every documented route without a token, with another project's person, and the
    // body limits on every route that takes one.
    for (method, template, _) in documented() {
        let concrete = template
            .replace("{projectId}", "loja")
            .replace("{questionId}", &w.question)
            .replace("{taskId}", &w.task)
            .replace("{storyId}", &w.story)
            .replace("{gate}", "im-ready")
            .replace("{requestId}", "que_1")
            .replace("{sessionId}", &w.conversation);
        let m = Method::from_bytes(method.as_bytes()).unwrap();
        if template.starts_with("/projects/") {
            s.call(Auth::None, m.clone(), &concrete, None).await;
            s.call(Auth::User(CAIO), m.clone(), &concrete, None).await;
            let op = &common_openapi::document()["paths"][template.as_str()]["post"];
            if method == "POST" && op.get("requestBody").is_some() {
                body_limits(&s, ANA, &concrete).await;
            }
        } else if template.starts_with("/api/") {
            s.call(Auth::None, m.clone(), &concrete, None).await;
            let body = match template.rsplit('/').next() {
                Some("settings") => Some(json!({"enabled": true})),
                Some("pause") => Some(json!({"reason": "user"})),
                _ => None,
            };
            s.call(Auth::User(ANA), m, &concrete, body).await;
        }
    }

    let list = "/projects/loja/open-questions";
    must(&s.get(ANA, list).await, 200);
    must(&s.get(ANA, &format!("{list}?limit=0")).await, 422);
    let decisions = "/projects/loja/decisions";
    must(&s.get(ANA, decisions).await, 200);
    must(
        &s.get(ANA, &format!("{decisions}?since=yesterday")).await,
        422,
    );
    must(&s.get(BIA, &format!("{list}/{}", w.question)).await, 200);
    let declared = |who, body| s.post(who, list, body);
    must(
        &declared(QA, json!({"pergunta": "Why?", "sessionId": w.conversation})).await,
        403,
    );

    // Answers and dismissals: the author, another member, a second time.
    let q = question(&s, &w).await;
    let answer = format!("{list}/{q}/answer");
    must(&s.post(BIA, &answer, json!({"resposta": "x"})).await, 403);
    must(
        &s.post(ANA, &answer, json!({"aceitarSugestao": true})).await,
        200,
    );
    must(&s.post(ANA, &answer, json!({"resposta": "x"})).await, 409);
    // The same question asked again carries the memory of the answer, and it conforms
    // (`SimilarAnswer` is closed: an undocumented field of it fails).
    let again = question(&s, &w).await;
    let read = s.get(ANA, &format!("{list}/{again}")).await;
    assert_eq!(
        must(&read, 200)["similarAnswer"]["match"],
        "same",
        "{read:?}"
    );
    assert!(
        common_openapi::document()["components"]["schemas"]["Question"]["properties"]
            ["similarAnswer"]
            .is_object()
    );
    let q = question(&s, &w).await;
    let dismissed = q.clone();
    let dismiss = format!("{list}/{q}/dismiss");
    must(&s.post(BIA, &dismiss, json!({})).await, 403);
    must(&s.post(ANA, &dismiss, json!({})).await, 200);
    must(&s.post(ANA, &dismiss, json!({})).await, 409);
    // Snoozes: another member, the author, a wake, nothing to wake, a settled one.
    let q = question(&s, &w).await;
    let snooze = format!("{list}/{q}/snooze");
    let unsnooze = format!("{list}/{q}/unsnooze");
    must(&s.post(BIA, &snooze, json!({"forSeconds": 60})).await, 403);
    must(&s.post(ANA, &snooze, json!({"forSeconds": 0})).await, 422);
    must(&s.post(ANA, &snooze, json!({"forSeconds": 60})).await, 200);
    must(&s.get(ANA, &format!("{list}?snoozed=only")).await, 200);
    must(&s.get(ANA, &format!("{list}?snoozed=maybe")).await, 422);
    must(&s.post(BIA, &unsnooze, json!({})).await, 403);
    must(&s.post(ANA, &unsnooze, json!({})).await, 200);
    must(&s.post(ANA, &unsnooze, json!({})).await, 409);
    must(
        &s.post(
            ANA,
            &format!("{list}/{dismissed}/snooze"),
            json!({"forSeconds": 60}),
        )
        .await,
        409,
    );

    let sessions = "/projects/loja/sessions";
    must(
        &s.post(PO, sessions, json!({"kind": "conversation"})).await,
        403,
    );
    let named = json!({"kind": "conversation", "sessionId": "loja.planning"});
    must(&s.post(ANA, sessions, named.clone()).await, 201);
    must(&s.post(ANA, sessions, named).await, 409);

    must(&s.get(ANA, "/projects/loja/readiness").await, 200);
    must(&s.get(PO, "/projects/loja/readiness").await, 403);
    let ready = "/projects/loja/readiness/im-ready";
    must(&s.post(ANA, ready, json!({})).await, 200);
    must(&s.post(PO, ready, json!({})).await, 403);
    must(
        &s.post(ANA, "/projects/loja/readiness/bogus", json!({}))
            .await,
        422,
    );
    must(&s.get(PO, "/projects/loja/revision").await, 200);

    // Stories and tasks, by the roles that may and may not.
    let stories = "/projects/loja/stories";
    must(
        &s.post(ANA, stories, json!({"title": "Returns"})).await,
        403,
    );
    let story = id_of(
        &s.post(PO, stories, json!({"title": "Returns"})).await,
        "storyId",
    );
    let state = format!("{stories}/{story}/state");
    must(&s.post(ANA, &state, json!({"state": "ready"})).await, 403);
    must(&s.post(PO, &state, json!({"state": "ready"})).await, 200);
    must(&s.post(PO, &state, json!({"state": "archived"})).await, 409);
    let corrections = format!("{stories}/{}/corrections", w.story);
    must(&s.post(ANA, &corrections, json!({})).await, 403);
    must(&s.post(PO, &corrections, json!({})).await, 200);
    let tasks = "/projects/loja/tasks";
    let task =
        |session: &str| json!({"storyId": w.story, "sessionId": session, "title": "Refunds"});
    must(&s.post(QA, tasks, task(&w.execution)).await, 403);
    must(&s.post(DEV_LEAD, tasks, task(&w.conversation)).await, 422);
    let t = id_of(&s.post(DEV_LEAD, tasks, task(&w.execution)).await, "taskId");
    must(&s.get(QA, &format!("{tasks}/{t}")).await, 200);
    must(&s.get(ANA, &format!("{tasks}?waiting=me")).await, 200);
    must(&s.get(PO, &format!("{tasks}?waiting=me")).await, 403);
    must(&s.get(ANA, &format!("{tasks}?waiting=you")).await, 422);
    let tstate = format!("{tasks}/{t}/state");
    must(
        &s.post(QA, &tstate, json!({"state": "in_progress"})).await,
        403,
    );
    must(
        &s.post(DEV_LEAD, &tstate, json!({"state": "in_progress"}))
            .await,
        200,
    );
    // A story whose task is in progress is not corrected (ADR 0212).
    must(&s.post(PO, &corrections, json!({})).await, 409);
    let verdicts = format!("{tasks}/{t}/qa-verdicts");
    must(
        &s.post(ANA, &verdicts, json!({"verdict": "approved"})).await,
        403,
    );
    must(
        &s.post(QA, &verdicts, json!({"verdict": "approved"})).await,
        200,
    );
    must(
        &s.post(QA, &verdicts, json!({"verdict": "approved"})).await,
        409,
    );
    must(&s.get(ANA, &format!("{tasks}/{t}/dev-context")).await, 200);

    // The event stream: its head, and a Last-Event-ID beyond the project's revision.
    let events = "/projects/loja/events";
    let (status, ct) = with_headers(&s, ANA, events, &[]).await;
    assert_eq!((status, ct.as_str()), (200, "text/event-stream"));
    let (status, _) = with_headers(&s, ANA, events, &[("last-event-id", "999999")]).await;
    assert_eq!(status, 422);

    // The routes outside a project.
    must(
        &s.call(Auth::None, Method::GET, "/healthz", None).await,
        200,
    );
    must(
        &s.call(Auth::None, Method::GET, "/openapi.json", None).await,
        200,
    );
    // /mcp's refusals, on each of its methods: no token, a person, no session, a session
    // that is not the project's.
    for m in [Method::POST, Method::GET, Method::DELETE] {
        let body = (m == Method::POST).then(|| json!({}));
        let conv = format!("/mcp?session={}", w.conversation);
        for (who, path, status) in [
            (Auth::None, conv.as_str(), 401),
            (Auth::User(ANA), conv.as_str(), 403),
            (Auth::User(CRIATIVO), "/mcp", 422),
            (Auth::User(CRIATIVO), "/mcp?session=nope", 404),
        ] {
            must(&s.call(who, m.clone(), path, body.clone()).await, status);
        }
    }
    must(&s.get(ANA, "/me").await, 200);
    must(&s.call(Auth::None, Method::GET, "/me", None).await, 401);

    let made = seen();
    let missing: Vec<String> = documented()
        .into_iter()
        .filter(|k| !made.contains(k) && elsewhere(&k.0, &k.1, k.2).is_none())
        .map(|(m, t, st)| format!("{m} {t} {st}"))
        .collect();
    assert!(
        missing.is_empty(),
        "documented, never made:\n{}",
        missing.join("\n")
    );
    // An entry for a status no route documents any more is stale; one for a single
    // route must not be made here after all.
    let docs = documented();
    for e in ELSEWHERE {
        let hits: Vec<_> = docs.iter().filter(|k| fits(e, &k.0, &k.1, k.2)).collect();
        assert!(!hits.is_empty(), "stale: {e:?}");
        let made_here: Vec<_> = hits.iter().filter(|k| made.contains(**k)).collect();
        assert!(
            e.1.contains('*') || made_here.is_empty(),
            "{e:?} is made here after all"
        );
    }
    s.stop().await;
}

/// The document's own shapes: the typed vocabulary, the gate, the ids, the answer body.
#[test]
fn the_document_carries_the_enums_patterns_and_one_of() {
    let doc = common_openapi::document();
    let codes: BTreeSet<&str> = doc["components"]["schemas"]["Error"]["properties"]["code"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let all: BTreeSet<&str> = oq::domain::ErrorCode::ALL
        .iter()
        .filter(|c| **c != oq::domain::ErrorCode::RemoteError)
        .map(|c| c.as_str())
        .collect();
    assert_eq!(codes, all);
    // Every refusal of every route names its codes, each of the vocabulary.
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            for (status, r) in op["responses"].as_object().unwrap() {
                // A refusal: 4xx, or 5xx but /healthz's (its body is the health).
                let refusal =
                    status.starts_with('4') || status.starts_with('5') && path != "/healthz";
                if !refusal {
                    continue;
                }
                let schema = &r["content"]["application/json"]["schema"];
                let named = &schema["allOf"][1]["properties"]["code"]["enum"];
                let named = named
                    .as_array()
                    .unwrap_or_else(|| panic!("{method} {path} {status} names no codes: {schema}"));
                assert!(!named.is_empty(), "{method} {path} {status}");
                for c in named {
                    assert!(codes.contains(c.as_str().unwrap()), "{c}");
                }
            }
            for p in op["parameters"].as_array().into_iter().flatten() {
                if p["in"] == "path" {
                    let s = &p["schema"];
                    assert!(
                        s["pattern"].is_string() || s["enum"].is_array(),
                        "{method} {path}: {p}"
                    );
                }
            }
        }
    }
    let gate = &doc["paths"]["/projects/{projectId}/readiness/{gate}"]["post"]["parameters"][1];
    assert_eq!(
        gate["schema"]["enum"],
        json!(["im-ready", "architecture-ready"])
    );
    let answer = &doc["components"]["schemas"]["AnswerInput"];
    let one_of = answer["oneOf"].as_array().unwrap();
    let fits = |v: Value| {
        one_of
            .iter()
            .filter(|s| common_openapi::validate(s, &v, "$").is_ok())
            .count()
    };
    assert_eq!(fits(json!({"resposta": "x"})), 1);
    assert_eq!(fits(json!({"aceitarSugestao": true})), 1);
    assert_eq!(fits(json!({"answers": [["A"]]})), 1);
    assert_eq!(fits(json!({"resposta": "x", "aceitarSugestao": true})), 0);
    assert_eq!(fits(json!({"aceitarSugestao": false})), 0);
    assert_eq!(fits(json!({})), 0);
}

/// The check itself sees a broken rule: an undocumented status, a code its status does
/// not name, a body off its schema.
/// Every link on a 201 leads to a documented operation, supplies exactly its path
/// parameters, and takes the id from a field the created thing has.
#[test]
fn every_link_leads_to_an_operation_with_the_ids_it_needs() {
    let doc = common_openapi::document();
    let mut links = 0;
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            let Some(created) = op["responses"].get("201") else {
                continue;
            };
            let made = &created["content"]["application/json"]["schema"]["$ref"];
            let made = made.as_str().unwrap().rsplit('/').next().unwrap();
            let fields = &doc["components"]["schemas"][made]["properties"];
            for (name, link) in created["links"].as_object().into_iter().flatten() {
                links += 1;
                let pointer = link["operationRef"]
                    .as_str()
                    .unwrap()
                    .strip_prefix('#')
                    .unwrap();
                let target = doc.pointer(pointer).unwrap_or_else(|| {
                    panic!("{method} {path} link {name}: {pointer} is no operation")
                });
                let target_path = pointer.split('/').nth(2).unwrap().replace("~1", "/");
                let needs: BTreeSet<String> = target_path
                    .split('/')
                    .filter_map(|seg| seg.strip_prefix('{')?.strip_suffix('}').map(String::from))
                    .collect();
                let given = link["parameters"].as_object().unwrap();
                let given_names: BTreeSet<String> = given.keys().cloned().collect();
                assert_eq!(given_names, needs, "{method} {path} link {name}");
                assert!(target["responses"].is_object(), "{pointer}");
                for value in given.values() {
                    if let Some(field) = value.as_str().unwrap().strip_prefix("$response.body#/") {
                        assert!(
                            fields.get(field).is_some(),
                            "{made} has no {field} ({name})"
                        );
                    }
                }
            }
        }
    }
    assert!(links >= 9, "{links} links");
}

#[test]
#[should_panic(expected = "documents no 418")]
fn an_undocumented_status_fails() {
    conform("GET", "/projects/loja/revision", 418, "{}");
}

#[test]
#[should_panic(expected = "is not one of")]
fn a_code_its_status_does_not_name_fails() {
    conform(
        "POST",
        "/projects/loja/open-questions/q-1/answer",
        409,
        r#"{"code": "invalid_limit", "message": "m"}"#,
    );
}

#[test]
#[should_panic(expected = "is not [\"integer\"]")]
fn a_body_off_its_schema_fails() {
    conform(
        "GET",
        "/projects/loja/revision",
        200,
        r#"{"revision": "7"}"#,
    );
}
