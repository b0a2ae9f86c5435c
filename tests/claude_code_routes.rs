//! The Claude Code routes of `oq serve` (what `oq hook claude-code --source http://…`
//! calls), at the HTTP level on the store `OQ_TEST_STORE` names: a declaration with its
//! parts and call, its retry, and every refusal by status and code, each changing
//! nothing; the settlement and the hand-off to Claude's dialog only by the declaring agent,
//! only for a Claude Code question; a handed question refuses the author's answer by name.
//! Every reply is checked against the OpenAPI document (`common_server`).
#![allow(clippy::unwrap_used)]

mod common_server;

use common_server::*;
use reqwest::Method;
use serde_json::{Value, json};

const DECLARE: &str = "/projects/loja/claude-code/questions";

fn settle_path(id: &str) -> String {
    format!("/projects/loja/claude-code/questions/{id}/settlement")
}

fn body(session: &str, tool_use_id: &str) -> Value {
    json!({
        "sessionId": session,
        "pergunta": "Which database should we use?",
        "prompts": [{"header": "Database", "question": "Which database should we use?",
            "options": [{"label": "Postgres"}, {"label": "SQLite"}], "multiple": false}],
        "call": {"sessionId": "cc-1", "toolUseId": tool_use_id, "directory": "/work/app"}
    })
}

/// `r` is `status` with `code`, and the project's revision did not move.
fn refused(s: &TestServer, before: i64, r: &Reply, status: u16, code: &str) {
    assert_eq!(r.status.as_u16(), status, "{r:?}");
    assert_eq!(r.body["code"], code, "{r:?}");
    assert_eq!(s.project_revision("loja"), before, "a refusal wrote: {r:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_declares_claude_codes_question_once_and_bad_declarations_change_nothing() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let ok = s.post(PO, DECLARE, body(&w.conversation, "toolu_1")).await;
    let q = must(&ok, 201).clone();
    assert_eq!(q["source"], "claude-code");
    assert_eq!(q["autor"], "po");
    assert_eq!(q["sessionAuthor"], ANA);
    assert_eq!(q["prompts"][0]["options"][1]["label"], "SQLite");
    assert_eq!(q["upstream"]["kind"], "claude-code");
    assert_eq!(q["upstream"]["requestID"], "toolu_1");
    assert_eq!(q["upstream"]["directory"], "/work/app");
    // The same call again: the same question, nothing new.
    let before = s.project_revision("loja");
    let again = s.post(PO, DECLARE, body(&w.conversation, "toolu_1")).await;
    assert_eq!(must(&again, 201)["questionId"], q["questionId"]);
    assert_eq!(s.project_revision("loja"), before);

    let cases: Vec<(&str, Value, u16, &str)> = vec![
        (
            ANA,
            body(&w.conversation, "toolu_2"),
            403,
            "role_not_allowed",
        ),
        (
            QA,
            body(&w.conversation, "toolu_2"),
            403,
            "role_not_allowed",
        ),
        (
            OUTRO_AGENT,
            body(&w.conversation, "toolu_2"),
            404,
            "not_found",
        ),
        (PO, body(&w.outro_session, "toolu_2"), 404, "not_found"),
        (PO, body("loja.nobody", "toolu_2"), 404, "not_found"),
        (
            PO,
            {
                let mut b = body(&w.conversation, "toolu_1");
                b["pergunta"] = json!("Another text under the same call?");
                b
            },
            422,
            "idempotency_key_reused",
        ),
        (
            PO,
            {
                let mut b = body(&w.conversation, "toolu_2");
                b["extra"] = json!(1);
                b
            },
            422,
            "invalid_body",
        ),
        (
            PO,
            {
                let mut b = body(&w.conversation, "toolu_2");
                b["prompts"] = json!([]);
                b
            },
            422,
            "invalid_options",
        ),
        (
            PO,
            {
                let mut b = body(&w.conversation, "toolu_2");
                b["prompts"][0]["options"] = json!([{"label": "a"}, {"label": "a"}]);
                b
            },
            422,
            "invalid_options",
        ),
        (
            PO,
            {
                let mut b = body(&w.conversation, "toolu_2");
                b["pergunta"] = json!("x".repeat(501));
                b
            },
            422,
            "text_too_long",
        ),
        (
            PO,
            {
                let mut b = body(&w.conversation, "toolu_2");
                b["call"] = json!({"sessionId": "cc-1"});
                b
            },
            422,
            "invalid_body",
        ),
    ];
    for (who, b, status, code) in cases {
        let before = s.project_revision("loja");
        let r = s.post(who, DECLARE, b).await;
        refused(&s, before, &r, status, code);
    }
    let before = s.project_revision("loja");
    let r = s
        .call(
            Auth::None,
            Method::POST,
            DECLARE,
            Some(body(&w.conversation, "t3")),
        )
        .await;
    refused(&s, before, &r, 401, "unauthorized");
    let r = s
        .post_raw(PO, DECLARE, Some("application/json"), "not json")
        .await;
    refused(&s, before, &r, 422, "invalid_body");
}

#[tokio::test(flavor = "multi_thread")]
async fn only_the_declaring_agent_settles_a_claude_code_question_and_only_once() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let q = must(
        &s.post(PO, DECLARE, body(&w.conversation, "toolu_1")).await,
        201,
    )
    .clone();
    let id = q["questionId"].as_str().unwrap();
    let answered = json!({"outcome": "answered", "answers": [["SQLite"]]});
    let cases: Vec<(&str, String, Value, u16, &str)> = vec![
        (
            ANA,
            settle_path(id),
            answered.clone(),
            403,
            "role_not_allowed",
        ),
        (
            ARQUITETO,
            settle_path(id),
            answered.clone(),
            403,
            "not_declarer",
        ),
        (
            OUTRO_AGENT,
            settle_path(id),
            answered.clone(),
            404,
            "not_found",
        ),
        (
            PO,
            settle_path("q-none"),
            answered.clone(),
            404,
            "not_found",
        ),
        // An ADR question of the same session (declared by criativo, through the
        // question routes) is not Claude Code's.
        (
            CRIATIVO,
            settle_path(&w.question),
            answered.clone(),
            409,
            "not_claude_code",
        ),
        (
            PO,
            settle_path(id),
            json!({"outcome": "answered", "answers": [["SQLite"], ["two parts?"]]}),
            422,
            "invalid_answers",
        ),
        (
            PO,
            settle_path(id),
            json!({"outcome": "forgotten"}),
            422,
            "invalid_body",
        ),
        (
            PO,
            settle_path(id),
            json!({"outcome": "declined", "answers": []}),
            422,
            "invalid_body",
        ),
    ];
    for (who, path, b, status, code) in cases {
        let before = s.project_revision("loja");
        let r = s.post(who, &path, b).await;
        refused(&s, before, &r, status, code);
    }
    let done = s.post(PO, &settle_path(id), answered).await;
    let done = must(&done, 200);
    assert_eq!(done["status"], "answered");
    assert_eq!(done["answer"]["decisionSource"], "upstream");
    assert_eq!(done["answer"]["respondidaPor"], "claude-code");
    assert_eq!(done["answer"]["answers"], json!([["SQLite"]]));
    // Claude's word again (or another one) leaves the first settlement as it was.
    let before = s.project_revision("loja");
    let late = s
        .post(PO, &settle_path(id), json!({"outcome": "declined"}))
        .await;
    assert_eq!(must(&late, 200)["answer"]["answers"], json!([["SQLite"]]));
    assert_eq!(s.project_revision("loja"), before);

    // Declined in Claude's dialog (Esc): closed, nobody answered, said how.
    let q2 = must(
        &s.post(PO, DECLARE, body(&w.conversation, "toolu_2")).await,
        201,
    )
    .clone();
    let id2 = q2["questionId"].as_str().unwrap();
    let declined = s
        .post(PO, &settle_path(id2), json!({"outcome": "declined"}))
        .await;
    let declined = must(&declined, 200);
    assert_eq!(declined["status"], "closed", "{declined}");
    assert!(declined["answer"].is_null());
    assert_eq!(
        declined["closed"]["decisionSource"], "upstream",
        "{declined}"
    );
    // The author can no longer answer what the agent will never receive.
    let late = s
        .post(
            ANA,
            &format!("/projects/loja/open-questions/{id2}/answer"),
            json!({"answers": [["SQLite"]]}),
        )
        .await;
    assert_eq!(late.status.as_u16(), 409, "{late:?}");
}

fn hand_off_path(id: &str) -> String {
    format!("/projects/loja/claude-code/questions/{id}/handoff")
}

fn answer_path(id: &str) -> String {
    format!("/projects/loja/open-questions/{id}/answer")
}

/// Past the hook's wait, the question is handed to Claude Code's own dialog: every
/// client sees it so, an answer in oq (which would reach nobody) is refused by name and
/// changes nothing, and the dialog's settlement or the author's dismissal still close it.
#[tokio::test(flavor = "multi_thread")]
async fn a_question_handed_to_claude_codes_dialog_refuses_an_answer_in_oq_and_settles_upstream() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let declared = s.post(PO, DECLARE, body(&w.conversation, "toolu_1")).await;
    let id = must(&declared, 201)["questionId"]
        .as_str()
        .unwrap()
        .to_string();
    let cases: Vec<(&str, String, u16, &str)> = vec![
        (ANA, hand_off_path(&id), 403, "role_not_allowed"),
        (ARQUITETO, hand_off_path(&id), 403, "not_declarer"),
        (OUTRO_AGENT, hand_off_path(&id), 404, "not_found"),
        (PO, hand_off_path("q-none"), 404, "not_found"),
        (CRIATIVO, hand_off_path(&w.question), 409, "not_claude_code"),
    ];
    for (who, path, status, code) in cases {
        let before = s.project_revision("loja");
        let r = s.post(who, &path, json!({})).await;
        refused(&s, before, &r, status, code);
    }
    let handed = s.post(PO, &hand_off_path(&id), json!({})).await;
    let handed = must(&handed, 200);
    assert_eq!(handed["status"], "open", "{handed}");
    assert_eq!(handed["handedOff"], true, "{handed}");
    // Said twice (a hook run again), recorded once.
    let before = s.project_revision("loja");
    must(&s.post(PO, &hand_off_path(&id), json!({})).await, 200);
    assert_eq!(s.project_revision("loja"), before);
    // The author's list says where to answer, and that oq cannot.
    let list = s.get(ANA, "/projects/loja/open-questions").await;
    let item = must(&list, 200)["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["questionId"] == id.as_str())
        .cloned()
        .unwrap();
    assert_eq!(item["handedOff"], true, "{item}");
    assert_eq!(item["canAnswer"], false, "{item}");
    assert_eq!(
        item["reason"], "waiting in Claude Code's dialog — answer there",
        "{item}"
    );
    let r = s
        .post(ANA, &answer_path(&id), json!({"answers": [["SQLite"]]}))
        .await;
    refused(&s, before, &r, 409, "handed_to_claude_code");
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("Claude Code's dialog")
    );
    let r = s
        .post(ANA, &answer_path(&id), json!({"resposta": "SQLite"}))
        .await;
    refused(&s, before, &r, 409, "handed_to_claude_code");
    // What the dialog answered still settles it, as `upstream`.
    let done = s
        .post(
            PO,
            &settle_path(&id),
            json!({"outcome": "answered", "answers": [["Postgres"]]}),
        )
        .await;
    let done = must(&done, 200);
    assert_eq!(done["status"], "answered", "{done}");
    assert_eq!(done["answer"]["decisionSource"], "upstream");
    assert_eq!(done["answer"]["answers"], json!([["Postgres"]]));

    // A handed question the author dismisses is closed by them.
    let q2 = must(
        &s.post(PO, DECLARE, body(&w.conversation, "toolu_2")).await,
        201,
    )["questionId"]
        .as_str()
        .unwrap()
        .to_string();
    must(&s.post(PO, &hand_off_path(&q2), json!({})).await, 200);
    let dismissed = s
        .post(
            ANA,
            &format!("/projects/loja/open-questions/{q2}/dismiss"),
            json!({}),
        )
        .await;
    let dismissed = must(&dismissed, 200);
    assert_eq!(dismissed["status"], "closed", "{dismissed}");
    assert_eq!(dismissed["closed"]["decisionSource"], "dismissed");

    // An answer that came before the hand-off wins: the hook gets it back, nothing new.
    let q3 = must(
        &s.post(PO, DECLARE, body(&w.conversation, "toolu_3")).await,
        201,
    )["questionId"]
        .as_str()
        .unwrap()
        .to_string();
    let answered = s
        .post(ANA, &answer_path(&q3), json!({"answers": [["SQLite"]]}))
        .await;
    must(&answered, 200);
    let before = s.project_revision("loja");
    let late = s.post(PO, &hand_off_path(&q3), json!({})).await;
    let late = must(&late, 200);
    assert_eq!(late["status"], "answered", "{late}");
    assert!(late.get("handedOff").is_none(), "{late}");
    assert_eq!(s.project_revision("loja"), before);
}
