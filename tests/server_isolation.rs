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
