//! The authorization matrix: every project route × {the session's author, another member,
//! a non-member, each agent role, no token, a wrong token}. Each status is asserted, a
//! refused request must change nothing (the store's revision stays put), and no body may
//! carry another project's ids or texts.
#![allow(clippy::unwrap_used)]

mod common_server;

use common_server::*;
use reqwest::Method;
use serde_json::{Value, json};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Who {
    Author,
    Member,
    NonMember,
    Agent(&'static str),
    NoToken,
    WrongToken,
}

fn callers() -> Vec<Who> {
    // The author last: where only the author succeeds once (the answer), everyone else
    // is refused against the same, unchanged state first.
    let mut v = vec![Who::NoToken, Who::WrongToken, Who::NonMember, Who::Member];
    v.extend(AGENTS.iter().map(|a| Who::Agent(a)));
    v.push(Who::Author);
    v
}

/// Who may use a route.
#[derive(Clone, Copy)]
enum Allowed {
    /// Every member and agent of the project.
    Everyone,
    /// People of the project.
    People,
    /// Only the session's author.
    Author,
    /// These agents.
    Agents(&'static [&'static str]),
}

struct Case {
    method: Method,
    path: String,
    body: Option<Value>,
    allowed: Allowed,
    success: u16,
}

fn expected(case: &Case, who: Who) -> u16 {
    match who {
        Who::NoToken | Who::WrongToken => 401,
        Who::NonMember => 404,
        _ => {
            let ok = match (case.allowed, who) {
                (Allowed::Everyone, _) => true,
                (Allowed::People, Who::Author | Who::Member) => true,
                (Allowed::Author, Who::Author) => true,
                (Allowed::Agents(list), Who::Agent(a)) => list.contains(&a),
                _ => false,
            };
            if ok { case.success } else { 403 }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_route_for_every_caller() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let p = "/projects/loja";
    let declare = json!({"pergunta": "Matrix question?", "sessionId": w.conversation});
    // A second question of ana's session, for the dismissal (the first is answered).
    let to_dismiss = s
        .post(
            PO,
            &format!("{p}/open-questions"),
            json!({"pergunta": "Dismiss me?", "sessionId": w.conversation}),
        )
        .await;
    let to_dismiss = to_dismiss.body["questionId"]
        .as_str()
        .expect("declared")
        .to_string();
    let cases = vec![
        Case {
            method: Method::GET,
            path: format!("{p}/open-questions?status=all"),
            body: None,
            allowed: Allowed::Everyone,
            success: 200,
        },
        Case {
            method: Method::GET,
            path: format!("{p}/open-questions/{}", w.question),
            body: None,
            allowed: Allowed::Everyone,
            success: 200,
        },
        Case {
            method: Method::POST,
            path: format!("{p}/open-questions"),
            body: Some(declare),
            allowed: Allowed::Agents(&[CRIATIVO, PO, ARQUITETO, DEV_LEAD]),
            success: 201,
        },
        Case {
            method: Method::POST,
            path: format!("{p}/open-questions/{}/answer", w.question),
            body: Some(json!({"resposta": "Matrix answer"})),
            allowed: Allowed::Author,
            success: 200,
        },
        Case {
            method: Method::POST,
            path: format!("{p}/open-questions/{to_dismiss}/dismiss"),
            body: None,
            allowed: Allowed::Author,
            success: 200,
        },
        Case {
            method: Method::POST,
            path: format!("{p}/sessions"),
            body: Some(json!({"kind": "conversation"})),
            allowed: Allowed::People,
            success: 201,
        },
        Case {
            method: Method::GET,
            path: format!("{p}/readiness"),
            body: None,
            allowed: Allowed::People,
            success: 200,
        },
        Case {
            method: Method::GET,
            path: format!("{p}/revision"),
            body: None,
            allowed: Allowed::Everyone,
            success: 200,
        },
        Case {
            method: Method::POST,
            path: format!("{p}/readiness/im-ready"),
            body: None,
            allowed: Allowed::People,
            success: 200,
        },
        Case {
            method: Method::POST,
            path: format!("{p}/stories"),
            body: Some(json!({"title": "Matrix story"})),
            allowed: Allowed::Agents(&[PO]),
            success: 201,
        },
        Case {
            method: Method::POST,
            path: format!("{p}/stories/{}/state", w.story),
            body: Some(json!({"state": "draft"})),
            allowed: Allowed::Agents(&[PO]),
            success: 200,
        },
        Case {
            method: Method::POST,
            path: format!("{p}/stories/{}/corrections", w.story),
            body: Some(json!({})),
            allowed: Allowed::Agents(&[PO]),
            success: 200,
        },
        Case {
            method: Method::POST,
            path: format!("{p}/tasks"),
            body: Some(
                json!({"storyId": w.story, "sessionId": w.execution, "title": "Matrix task"}),
            ),
            allowed: Allowed::Agents(&[PO, DEV_LEAD]),
            success: 201,
        },
        Case {
            method: Method::POST,
            path: format!("{p}/tasks/{}/state", w.task),
            body: Some(json!({"state": "draft"})),
            allowed: Allowed::Agents(&[PO, DEV_LEAD]),
            success: 200,
        },
        Case {
            method: Method::GET,
            path: format!("{p}/tasks/{}", w.task),
            body: None,
            allowed: Allowed::Everyone,
            success: 200,
        },
        Case {
            method: Method::GET,
            path: format!("{p}/tasks?waiting=me"),
            body: None,
            allowed: Allowed::People,
            success: 200,
        },
        Case {
            method: Method::POST,
            path: format!("{p}/tasks/{}/qa-verdicts", w.task),
            body: Some(json!({"verdict": "changes_requested"})),
            allowed: Allowed::Agents(&[QA]),
            success: 200,
        },
        Case {
            method: Method::GET,
            path: format!("{p}/tasks/{}/dev-context", w.task),
            body: None,
            allowed: Allowed::Everyone,
            success: 200,
        },
        Case {
            method: Method::GET,
            path: format!("{p}/events"),
            body: None,
            allowed: Allowed::Everyone,
            success: 200,
        },
    ];
    let wrong = "Bearer 0000000000000000000000000000000000000000000000000000000000000000";
    let leaks = w.outro_markers();
    let mut checked = 0;
    for case in &cases {
        for who in callers() {
            let auth = match who {
                Who::Author => Auth::User(ANA),
                Who::Member => Auth::User(BIA),
                Who::NonMember => Auth::User(CAIO),
                Who::Agent(a) => Auth::User(a),
                Who::NoToken => Auth::None,
                Who::WrongToken => Auth::Raw(wrong),
            };
            let want = expected(case, who);
            let before = s.revision();
            let what = format!("{} {} as {who:?}", case.method, case.path);
            if case.path.ends_with("/events") {
                // A stream: check the status and hang up.
                let mut req = s.client.get(s.url(&case.path));
                req = match auth {
                    Auth::User(u) => req.bearer_auth(s.token(u)),
                    Auth::Raw(h) => req.header("authorization", h),
                    Auth::None => req,
                };
                let r = req.send().await.expect("events");
                assert_eq!(r.status().as_u16(), want, "{what}");
                if want != 200 {
                    let r = reply(r).await;
                    assert!(r.body["code"].is_string(), "{what}: {r:?}");
                }
                continue;
            }
            let r = s
                .call(auth, case.method.clone(), &case.path, case.body.clone())
                .await;
            assert_eq!(r.status.as_u16(), want, "{what}: {r:?}");
            for marker in &leaks {
                assert!(
                    !r.text.contains(marker.as_str()),
                    "{what} leaked {marker}: {r:?}"
                );
            }
            if want >= 400 {
                assert!(
                    r.body["code"].is_string() && r.body["message"].is_string(),
                    "{what}: {r:?}"
                );
                assert_eq!(
                    s.revision(),
                    before,
                    "{what} was refused but changed the store"
                );
                // A refusal tells nothing about loja's content either.
                assert!(!r.text.contains("Which checkout flow?"), "{what}: {r:?}");
                if who == Who::NonMember {
                    // Identical to a project that does not exist.
                    let ghost = case.path.replacen("/projects/loja", "/projects/ghost", 1);
                    let g = s
                        .call(auth, case.method.clone(), &ghost, case.body.clone())
                        .await;
                    assert_eq!(g.status, r.status, "{what}");
                    assert_eq!(g.body["code"], r.body["code"], "{what}");
                    assert_eq!(
                        g.body["message"].as_str().unwrap().replace("ghost", "loja"),
                        r.body["message"].as_str().unwrap(),
                        "{what}"
                    );
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 100);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ids_of_another_project_are_not_found_for_every_id_route() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    // outro's own work, which loja's agents and people must not reach through loja's routes.
    let r = s
        .post(
            CAIO,
            "/projects/outro/sessions",
            json!({"kind": "execution"}),
        )
        .await;
    let outro_exec = id_of(&r, "sessionId");
    let before = s.revision();
    let p = "/projects/loja";
    let q = &w.outro_question;
    for (who, method, path, body) in [
        (ANA, Method::GET, format!("{p}/open-questions/{q}"), None),
        (
            ANA,
            Method::POST,
            format!("{p}/open-questions/{q}/answer"),
            Some(json!({"resposta": "x"})),
        ),
        (
            PO,
            Method::POST,
            format!("{p}/stories/{}/corrections", w.story),
            Some(json!({"questionId": q})),
        ),
        (
            QA,
            Method::POST,
            format!("{p}/tasks/{}/qa-verdicts", w.task),
            Some(json!({"verdict": "needs_user_decision", "openQuestionId": q})),
        ),
        (
            DEV_LEAD,
            Method::POST,
            format!("{p}/tasks"),
            Some(json!({"storyId": w.story, "sessionId": outro_exec, "title": "x"})),
        ),
        (
            CRIATIVO,
            Method::POST,
            format!("{p}/open-questions"),
            Some(json!({"pergunta": "x?", "sessionId": w.outro_session})),
        ),
    ] {
        let r = s.call(Auth::User(who), method.clone(), &path, body).await;
        assert_eq!(must(&r, 404)["code"], "not_found", "{method} {path}");
        assert!(!r.text.contains(OUTRO_SECRET), "{r:?}");
    }
    // And outro's people see nothing of loja's.
    let r = s
        .get(CAIO, "/projects/outro/open-questions?status=all")
        .await;
    let page = must(&r, 200);
    assert_eq!(page["total"], 1);
    assert!(!r.text.contains(&w.question));
    let r = s
        .get(CAIO, &format!("/projects/outro/tasks/{}", w.task))
        .await;
    must(&r, 404);
    assert_eq!(s.revision(), before);
    s.stop().await;
}
