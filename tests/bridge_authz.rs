//! Who may steer a bridged question (issue 12's first item): the authorization matrix of
//! the bridge routes × {answerer, member, admin, non-member, agents, no token}, through
//! a real `oq serve` on loopback with a scripted upstream.
//!
//! Pause, resume and delegate are the session author's (the upstream's answerer) alone,
//! like answering; the settings are the admins' (`admins = ["dora"]` here, so the
//! answerer is not one); reading is for the project's members and agents; anyone else
//! gets 404, no token 401. A refusal changes nothing: no state, no note in the log, no
//! POST upstream; every allowed act is a note in the log with its actor.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bridge_server;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use oq::server::config::UpstreamTiming;
use reqwest::Method;
use serde_json::{Value, json};

use bridge_server::scripted::{DIR, Script, Shared, request, start_upstream};
use bridge_server::{BridgeServer, Upstreamed, until};

const DEADLINE: Duration = Duration::from_secs(20);

/// Everyone, and what they are.
const WHO: [&str; 7] = ["ana", "bia", "dora", "caio", "po-bot", "qa-bot", "none"];

#[derive(Clone, Copy)]
enum Route {
    Snapshot,
    Pause,
    Resume,
    Delegate,
    Settings,
    Blocking,
}

impl Route {
    fn call(self, s: &BridgeServer, token: &str) -> (u16, Value) {
        let id = "que_m";
        let (method, path, body) = match self {
            Route::Snapshot => (Method::GET, "/api/question-auto-delegate".to_string(), None),
            Route::Pause => (
                Method::POST,
                format!("/api/question-auto-delegate/requests/{id}/pause"),
                Some(json!({"reason": "user"})),
            ),
            Route::Resume => (
                Method::POST,
                format!("/api/question-auto-delegate/requests/{id}/resume"),
                Some(json!({})),
            ),
            Route::Delegate => (
                Method::POST,
                format!("/api/question-auto-delegate/requests/{id}/delegate"),
                Some(json!({})),
            ),
            Route::Settings => (
                Method::PUT,
                "/api/question-auto-delegate/settings".to_string(),
                Some(json!({"enabled": true})),
            ),
            Route::Blocking => (
                Method::GET,
                "/api/question-auto-delegate/sessions/ses_1/blocking".to_string(),
                None,
            ),
        };
        s.call(token, method, &path, body)
    }

    /// The status each identity gets.
    fn expected(self, who: &str) -> u16 {
        match (self, who) {
            (_, "none") => 401,
            (_, "caio") => 404,
            (Route::Snapshot | Route::Blocking, _) => 200,
            (Route::Pause | Route::Resume | Route::Delegate, "ana") => 200,
            (Route::Pause | Route::Resume | Route::Delegate, _) => 403,
            (Route::Settings, "dora") => 200,
            (Route::Settings, _) => 403,
        }
    }
}

fn server() -> (BridgeServer, bridge_server::scripted::Upstream) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let script: Shared = Arc::new(Mutex::new(Script {
        pending: vec![request("que_m")],
        ..Script::default()
    }));
    let up = start_upstream(&rt, script, 0);
    let url = format!("http://127.0.0.1:{}", up.port);
    let s = BridgeServer::start(
        &Upstreamed {
            timing: UpstreamTiming {
                backoff_min: Duration::from_millis(20),
                backoff_max: Duration::from_millis(100),
                ..UpstreamTiming::default()
            },
            admins: Some(&["dora"]),
            ..Upstreamed::at(&url, &[DIR], false)
        },
        None,
    );
    std::mem::forget(rt);
    until(DEADLINE, || {
        s.state_of("que_m").filter(|r| r["state"] == "disabled")
    })
    .expect("imported and known to the machine");
    (s, up)
}

/// The notes of the log (pauses, resumes, submissions, settings) as (type, actor).
fn notes(s: &BridgeServer) -> Vec<(String, String)> {
    s.events()
        .into_iter()
        .filter(|e| {
            matches!(
                e.event.type_name(),
                "open_question.paused"
                    | "open_question.resumed"
                    | "open_question.submitted"
                    | "bridge.settings_changed"
            )
        })
        .map(|e| (e.event.type_name().to_string(), e.actor))
        .collect()
}

#[test]
fn only_the_author_steers_a_bridged_question_and_only_admins_change_its_settings() {
    let (s, up) = server();
    let mut wrong = Vec::new();
    // Every refused identity first: nothing may change.
    for route in [
        Route::Snapshot,
        Route::Blocking,
        Route::Pause,
        Route::Resume,
        Route::Delegate,
        Route::Settings,
    ] {
        for who in WHO {
            let expected = route.expected(who);
            if expected == 200
                && matches!(
                    route,
                    Route::Pause | Route::Resume | Route::Delegate | Route::Settings
                )
            {
                continue;
            }
            let token = if who == "none" {
                String::new()
            } else {
                s.token(who)
            };
            let before = (s.state_of("que_m"), notes(&s));
            let (st, b) = route.call(&s, &token);
            if st != expected {
                wrong.push(format!(
                    "{who} {}: {st} (expected {expected}) {b}",
                    name(route)
                ));
            }
            if expected != 200 {
                assert!(b["code"].is_string(), "{who}: an error body: {b}");
                assert_eq!(
                    (s.state_of("que_m"), notes(&s)),
                    before,
                    "{who} {}: a refusal changed something",
                    name(route)
                );
            }
            if expected == 403 {
                let code = if matches!(route, Route::Settings) {
                    "not_an_admin"
                } else {
                    "so_o_autor_da_sessao"
                };
                assert_eq!(b["code"], code, "{who} {}: {b}", name(route));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "authorization matrix:\n{}",
        wrong.join("\n")
    );
    assert_eq!(up.posts(), 0, "no refused identity reached upstream");
    assert!(notes(&s).is_empty(), "no refusal was noted as an act");

    // The allowed acts, each a note in the log with its actor.
    let (st, b) = Route::Settings.call(&s, &s.token("dora"));
    assert_eq!(st, 200, "{b}");
    let (st, b) = Route::Pause.call(&s, &s.ana);
    assert_eq!(st, 200, "{b}");
    assert_eq!(b["request"]["pausedBy"], "ana");
    let (st, b) = Route::Resume.call(&s, &s.ana);
    assert_eq!(st, 200, "{b}");
    let (st, b) = Route::Delegate.call(&s, &s.ana);
    assert_eq!(st, 200, "{b}");
    until(DEADLINE, || (up.posts() == 1).then_some(())).expect("the delegate posted");
    let n = notes(&s);
    for (kind, actor) in [
        ("bridge.settings_changed", "dora"),
        ("open_question.paused", "ana"),
        ("open_question.resumed", "ana"),
        ("open_question.submitted", "bridge:oc"),
    ] {
        assert!(
            n.iter().any(|(k, a)| k == kind && a == actor),
            "{kind} by {actor} in {n:?}"
        );
    }
    // dora changed the settings for ana, the upstream's answerer: her audit line says so.
    let audit = std::fs::read_to_string(s.dir.path().join("data/logs/audit.log")).unwrap();
    let changed: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["route"] == "/api/question-auto-delegate/settings" && l["status"] == 200)
        .collect();
    assert_eq!(changed.len(), 1, "{audit}");
    assert_eq!(
        (&changed[0]["caller"], &changed[0]["onBehalfOf"]),
        (&"dora".into(), &"ana".into()),
        "{audit}"
    );
    let own = audit.lines().filter(|l| l.contains("onBehalfOf")).count();
    assert_eq!(own, 1, "only dora's act was for another: {audit}");
    // The delegation names ana as the one who sent it.
    let sub = s
        .events()
        .into_iter()
        .find(|e| e.event.type_name() == "open_question.submitted")
        .unwrap();
    let sub = serde_json::to_value(&sub.event).unwrap();
    assert_eq!(sub["by"], "ana");
    assert_eq!(sub["claimant"], "delegate");
    s.stop();
}

fn name(r: Route) -> &'static str {
    match r {
        Route::Snapshot => "GET snapshot",
        Route::Pause => "POST pause",
        Route::Resume => "POST resume",
        Route::Delegate => "POST delegate",
        Route::Settings => "PUT settings",
        Route::Blocking => "GET blocking",
    }
}
