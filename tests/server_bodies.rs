//! Strict bodies through a real `oq serve`: every route with a body takes a JSON object
//! and nothing else (an array is not read by position), `afeta` only as an object, and
//! text that could mislead a reader — bidirectional overrides, or nothing but invisible
//! characters — is refused with its own code. Each refusal changes nothing.
#![allow(clippy::unwrap_used)]

mod common_server;

use common_server::*;
use serde_json::json;

/// Every route that reads a body, with the caller allowed to use it.
fn body_routes(w: &World) -> Vec<(&'static str, String)> {
    vec![
        (
            ANA,
            format!("/projects/loja/open-questions/{}/answer", w.question),
        ),
        (CRIATIVO, "/projects/loja/open-questions".into()),
        (ANA, "/projects/loja/sessions".into()),
        (PO, "/projects/loja/stories".into()),
        (PO, format!("/projects/loja/stories/{}/state", w.story)),
        (
            PO,
            format!("/projects/loja/stories/{}/corrections", w.story),
        ),
        (DEV_LEAD, "/projects/loja/tasks".into()),
        (DEV_LEAD, format!("/projects/loja/tasks/{}/state", w.task)),
        (QA, format!("/projects/loja/tasks/{}/qa-verdicts", w.task)),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_is_a_json_object_or_it_is_refused() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let before = s.revision();
    for (who, path) in body_routes(&w) {
        for body in [
            r#"["an answer"]"#,
            r#"[{"resposta": "x"}]"#,
            r#""an answer""#,
            "42",
            "null",
            "true",
            r#"  ["conversation"]"#,
        ] {
            let r = s
                .post_raw(who, &path, Some("application/json"), body.to_string())
                .await;
            assert_eq!(r.status, 422, "{path} {body}: {r:?}");
            assert_eq!(r.body["code"], "invalid_body", "{path} {body}: {r:?}");
            assert!(
                r.body["message"].as_str().unwrap().contains("JSON object"),
                "{r:?}"
            );
        }
    }
    // Nested: `afeta` by position is refused too.
    let r = s
        .post(
            CRIATIVO,
            "/projects/loja/open-questions",
            json!({"pergunta": "Positional?", "sessionId": w.conversation, "afeta": [["RN-1"], [], []]}),
        )
        .await;
    assert_eq!(must(&r, 422)["code"], "invalid_body", "{r:?}");
    assert_eq!(s.revision(), before, "a refused body changed nothing");
    // The question is still open: `["an answer"]` did not answer it.
    let r = s
        .get(
            ANA,
            &format!("/projects/loja/open-questions/{}", w.question),
        )
        .await;
    assert_eq!(must(&r, 200)["status"], "open");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn misleading_text_is_refused_with_its_own_code() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let before = s.revision();
    let declare = |pergunta: &str, sugestao: Option<&str>| {
        let mut body = json!({"pergunta": pergunta, "sessionId": w.conversation});
        if let Some(sg) = sugestao {
            body["sugestao"] = json!(sg);
        }
        body
    };
    let cases = [
        // Right-to-left override: shows "txt.exe" as "exe.txt".
        (declare("Open \u{202E}txt.exe?", None), "bidi_control"),
        (declare("Isolate \u{2067}x\u{2069}?", None), "bidi_control"),
        (declare("Fine?", Some("yes \u{202A}no")), "bidi_control"),
        (declare("\u{200B}\u{200B}", None), "empty_text"),
        (declare(" \u{200D}\u{FEFF}\u{2060} ", None), "empty_text"),
        (declare("Fine?", Some("\u{200C}")), "empty_text"),
    ];
    for (body, code) in cases {
        let r = s
            .post(CRIATIVO, "/projects/loja/open-questions", body.clone())
            .await;
        assert_eq!(must(&r, 422)["code"], code, "{body}: {r:?}");
    }
    let answer = format!("/projects/loja/open-questions/{}/answer", w.question);
    for (resposta, code) in [
        ("\u{202E}oN", "bidi_control"),
        ("\u{200B}", "empty_text"),
        ("\u{00AD}\u{034F}", "empty_text"),
    ] {
        let r = s.post(ANA, &answer, json!({"resposta": resposta})).await;
        let body = must(&r, 422);
        assert_eq!(body["code"], code, "{resposta:?}: {r:?}");
        assert!(
            body["message"].as_str().unwrap().contains("resposta"),
            "{r:?}"
        );
    }
    let r = s
        .post(
            PO,
            "/projects/loja/stories",
            json!({"title": "\u{2066}Checkout"}),
        )
        .await;
    assert_eq!(must(&r, 422)["code"], "bidi_control");
    assert_eq!(s.revision(), before, "nothing refused was recorded");
    // Right-to-left text with its implicit marks (RLM) stays welcome.
    let r = s
        .post(
            CRIATIVO,
            "/projects/loja/open-questions",
            declare("\u{05E9}\u{05DC}\u{05D5}\u{05DD}\u{200F}?", None),
        )
        .await;
    must(&r, 201);
    s.stop().await;
}
