//! The direct OpenCode source against a REAL OpenCode server (1.18.34, installed from npm
//! by the harness in `tests/opencode/`), with our scripted model on loopback.
//!
//! Every test waits on conditions with a deadline (polling or the event stream); none
//! sleeps a fixed time. Without `npm` they print why and return.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod opencode;

use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use oq::opencode::{Client, Event, Scope, Settled, events};
use serde_json::{Value, json};

use common::{Out, run};
use opencode::{Peer, block_on, wait_for};

/// `oq --source opencode+BASE --directory DIR --json …`, with no password in its env.
fn oq(peer: &Peer, dir: &str, args: &[&str]) -> Out {
    oq_with(peer, dir, args, None)
}

fn oq_with(peer: &Peer, dir: &str, args: &[&str], password: Option<&str>) -> Out {
    let mut c = oq_command(peer, dir, password);
    c.arg("--json").args(args);
    run(&mut c)
}

/// `oq --source opencode+BASE --directory DIR`, its env cleared of every password but
/// the one given.
fn oq_command(peer: &Peer, dir: &str, password: Option<&str>) -> std::process::Command {
    let data = peer.state.path().join("oq-data");
    let mut c = common::oq(&data, "ana");
    for v in [
        "OPENCODE_SERVER_PASSWORD",
        "OPENCODE_SERVER_USERNAME",
        "OC_PASSWORD",
        "OQ_PROFILE",
    ] {
        c.env_remove(v);
    }
    if let Some(p) = password {
        c.env("OC_PASSWORD", p);
    }
    c.arg("--source")
        .arg(format!("opencode+{}", peer.base))
        .arg("--directory")
        .arg(dir);
    c
}

/// Polls `oq list` until the session's question is there (and `pred` holds for it).
fn wait_listed(peer: &Peer, dir: &str, session: &str, pred: impl Fn(&Value) -> bool) -> Value {
    wait_for(|| {
        let out = oq(peer, dir, &["list"]);
        assert_eq!(out.code, 0, "oq list: {out:?}");
        out.json()["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["upstream"]["sessionID"] == session && pred(q))
            .cloned()
    })
    .unwrap_or_else(|| panic!("session {session}'s question never listed by oq in {dir}"))
}

/// The events of one directory, collected in the background from before the prompt.
struct Follower {
    seen: Arc<Mutex<Vec<Event>>>,
    _rt: tokio::runtime::Runtime,
}

impl Follower {
    fn start(client: Client, dir: &str) -> Follower {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let dir = dir.to_string();
        rt.spawn(async move {
            let mut stream = events::subscribe(&client, Scope::Directory(&dir))
                .await
                .expect("subscribe");
            while let Some(Ok(env)) = stream.next().await {
                sink.lock().unwrap().push(env.event);
            }
        });
        let f = Follower { seen, _rt: rt };
        f.wait(|e| matches!(e, Event::Connected));
        f
    }

    fn wait(&self, pred: impl Fn(&Event) -> bool) -> Event {
        wait_for(|| self.seen.lock().unwrap().iter().find(|e| pred(e)).cloned())
            .expect("the awaited event never came")
    }
}

fn ask_json(questions: Value) -> Value {
    json!({ "questions": questions })
}

#[test]
fn a_question_the_agent_asks_is_answered_from_oq_and_the_agent_continues() {
    let Some(peer) = opencode::shared() else {
        return;
    };
    let dir = peer.directory("lone");
    let follower = Follower::start(peer.client(), &dir);
    let question = json!([{
        "question": "Which cache should the lone service use?",
        "header": "Cache",
        "options": [
            {"label": "Redis", "description": "a server"},
            {"label": "InProcess", "description": "a map"}
        ],
        "multiple": false
    }]);
    let session = peer.prompt(&dir, Some(&ask_json(question)));

    let item = wait_listed(&peer, &dir, &session, |_| true);
    assert_eq!(item["source"], "opencode");
    assert_eq!(item["status"], "open");
    assert_eq!(item["pergunta"], "Which cache should the lone service use?");
    assert_eq!(item["sessionAuthor"], "ana");
    assert_eq!(item["canAnswer"], true);
    assert_eq!(item["projectId"], dir.as_str());
    assert_eq!(item["upstream"]["kind"], "opencode");
    assert_eq!(item["upstream"]["directory"], dir.as_str());
    assert_eq!(item["prompts"][0]["header"], "Cache");
    assert_eq!(item["prompts"][0]["options"][1]["label"], "InProcess");
    assert!(item.get("orphaned").is_none(), "a live question: {item}");
    let id = item["questionId"].as_str().unwrap().to_string();
    assert!(id.starts_with("que_"));

    // `oq show` finds it by id too.
    let shown = oq(&peer, &dir, &["show", &id]);
    assert_eq!(shown.code, 0, "{shown:?}");
    assert_eq!(shown.json()["questionId"], id.as_str());

    // A lone question with free text takes --text.
    let answered = oq(&peer, &dir, &["answer", &id, "--text", "InProcess"]);
    assert_eq!(answered.code, 0, "{answered:?}");
    let a = answered.json();
    assert_eq!(a["status"], "answered");
    assert_eq!(a["answer"]["answers"], json!([["InProcess"]]));
    assert_eq!(a["answer"]["respondidaPor"], "ana");

    // The agent continues: replied upstream, the session goes idle, the model got it.
    let replied = follower
        .wait(|e| matches!(e, Event::QuestionReplied { request_id, .. } if *request_id == id));
    assert_eq!(
        replied,
        Event::QuestionReplied {
            session_id: session.clone(),
            request_id: id.clone(),
            answers: vec![vec!["InProcess".into()]],
        }
    );
    follower.wait(|e| matches!(e, Event::SessionIdle { session_id } if *session_id == session));
    let got = peer.tool_results(0);
    assert!(
        got.iter()
            .any(|t| t.contains("Which cache should the lone service use?")
                && t.contains("InProcess")),
        "the model never received the answer: {got:?}"
    );

    // Gone upstream: oq no longer lists it, and answering again is refused.
    let listed = oq(&peer, &dir, &["list"]);
    assert_eq!(listed.json()["total"], 0, "{listed:?}");
    let again = oq(&peer, &dir, &["answer", &id, "--text", "Redis"]);
    assert_eq!(again.code, 8, "{again:?}");
    assert_eq!(again.json()["code"], "question_closed");
    // An id OpenCode never made is unknown, not closed.
    let unknown = oq(&peer, &dir, &["answer", "q-nope", "--text", "Redis"]);
    assert_eq!(unknown.code, 5, "{unknown:?}");
    assert_eq!(unknown.json()["code"], "not_found");
    // A second reply straight to OpenCode is 404: settled elsewhere, not an error.
    let second = block_on(peer.client().reply(&id, &dir, &[vec!["Redis".into()]])).unwrap();
    assert_eq!(second, Settled::Elsewhere);
}

#[test]
fn two_questions_one_multi_select_are_checked_locally_then_answered() {
    let Some(peer) = opencode::shared() else {
        return;
    };
    let dir = peer.directory("pair");
    let follower = Follower::start(peer.client(), &dir);
    let questions = json!([
        {
            "question": "Which database should the pair project use?",
            "header": "Database",
            "options": [
                {"label": "Postgres", "description": "Relational"},
                {"label": "SQLite", "description": "Embedded"}
            ],
            "multiple": false
        },
        {
            "question": "Pick the colours",
            "header": "Colours",
            "options": [
                {"label": "Red", "description": "warm"},
                {"label": "Blue", "description": "cool"},
                {"label": "Green", "description": "calm"}
            ],
            "multiple": true,
            "custom": false
        }
    ]);
    let session = peer.prompt(&dir, Some(&ask_json(questions)));
    let item = wait_listed(&peer, &dir, &session, |_| true);
    let id = item["questionId"].as_str().unwrap().to_string();
    assert_eq!(item["prompts"].as_array().unwrap().len(), 2);
    assert_eq!(item["prompts"][0]["multiple"], false);
    assert_eq!(item["prompts"][1]["multiple"], true);
    assert_eq!(
        item["pergunta"],
        "Which database should the pair project use?"
    );
    // OpenCode 1.18.34 drops a question's `custom` flag, so every part takes typed
    // text besides its options (an unknown label is free text, as upstream reads it).
    assert_eq!(item["prompts"][1]["custom"], true);

    let requests_before = peer.model_requests().len();
    // Refused here, nothing posted: two choices for a single-choice part…
    let bad = oq(
        &peer,
        &dir,
        &[
            "answer",
            &id,
            "--answers-json",
            r#"[["Postgres","SQLite"],["Red"]]"#,
        ],
    );
    assert_eq!(bad.code, 6, "{bad:?}");
    assert_eq!(bad.json()["code"], "invalid_answers");
    // …one part missing…
    let short = oq(
        &peer,
        &dir,
        &["answer", &id, "--answers-json", r#"[["SQLite"]]"#],
    );
    assert_eq!(short.code, 6, "{short:?}");
    // …a label chosen twice, or a part left empty…
    for wrong in [r#"[["SQLite"],["Red","Red"]]"#, r#"[["SQLite"],[]]"#] {
        let out = oq(&peer, &dir, &["answer", &id, "--answers-json", wrong]);
        assert_eq!(out.code, 6, "{wrong}: {out:?}");
        assert_eq!(out.json()["code"], "invalid_answers");
    }
    // …JSON that is not an array of arrays of strings…
    let garbled = oq(
        &peer,
        &dir,
        &["answer", &id, "--answers-json", r#"["SQLite"]"#],
    );
    assert_eq!(garbled.code, 6, "{garbled:?}");
    // …and --text for a request of two parts.
    let text = oq(&peer, &dir, &["answer", &id, "--text", "SQLite"]);
    assert_eq!(text.code, 6, "{text:?}");
    // Still pending upstream, and the agent has not moved.
    let pending = block_on(peer.client().list(&dir)).unwrap();
    assert!(pending.iter().any(|r| r.id == id), "{pending:?}");
    assert!(
        !follower
            .seen
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, Event::QuestionReplied { .. })),
        "something was posted"
    );
    assert_eq!(
        peer.model_requests()
            .iter()
            .skip(requests_before)
            .filter(|r| r["texts"].to_string().contains("pair project"))
            .count(),
        0
    );

    let good = oq(
        &peer,
        &dir,
        &[
            "answer",
            &id,
            "--answers-json",
            r#"[["SQLite"],["Red","Blue"]]"#,
        ],
    );
    assert_eq!(good.code, 0, "{good:?}");
    let a = good.json();
    assert_eq!(a["answer"]["answers"], json!([["SQLite"], ["Red", "Blue"]]));
    assert_eq!(
        a["answer"]["resposta"],
        "Database: SQLite; Colours: Red, Blue"
    );
    let replied = follower
        .wait(|e| matches!(e, Event::QuestionReplied { request_id, .. } if *request_id == id));
    assert!(matches!(replied, Event::QuestionReplied { ref answers, .. }
        if *answers == vec![vec!["SQLite".to_string()], vec!["Red".into(), "Blue".into()]]));
    follower.wait(|e| matches!(e, Event::SessionIdle { session_id } if *session_id == session));
    let got = peer.tool_results(0);
    assert!(
        got.iter().any(|t| t.contains("pair project")
            && t.contains("SQLite")
            && t.contains("Red")
            && t.contains("Blue")),
        "the model never received both answers: {got:?}"
    );
}

/// `oq show` (text) prints a request whole: every part with its header, options,
/// `multiple` and free text, and the answer command that fits it (`--answers-json`,
/// never `--text`, which such a request refuses). Its age is from when the agent asked
/// (the tool part's start), not from the list call.
#[test]
fn a_request_is_shown_whole_and_aged_from_when_the_agent_asked() {
    let Some(peer) = opencode::shared() else {
        return;
    };
    let dir = peer.directory("whole");
    let questions = json!([
        {
            "question": "Which queue should the whole service use?",
            "header": "Queue",
            "options": [
                {"label": "Kafka", "description": "a log"},
                {"label": "Nats", "description": "a bus"}
            ],
            "multiple": false
        },
        {
            "question": "Which regions?",
            "header": "Regions",
            "options": [
                {"label": "eu-west", "description": ""},
                {"label": "us-east", "description": "the default"}
            ],
            "multiple": true
        }
    ]);
    let session = peer.prompt(&dir, Some(&ask_json(questions)));
    let item = wait_listed(&peer, &dir, &session, |_| true);
    let id = item["questionId"].as_str().unwrap().to_string();

    let request = block_on(peer.client().list(&dir))
        .unwrap()
        .into_iter()
        .find(|r| r.id == id)
        .unwrap();
    let call = request.tool.expect("OpenCode names the tool call").call_id;
    let part = block_on(peer.client().tool_part(&session, &dir, &call))
        .unwrap()
        .expect("the question's tool part");
    let started = part.state.and_then(|s| s.time).map(|t| t.start).unwrap();
    assert_eq!(item["createdAt"], started, "{item}");

    let shown = run(oq_command(&peer, &dir, None).args(["show", &id]));
    assert_eq!(shown.code, 0, "{shown:?}");
    let text = &shown.stdout;
    for expected in [
        "part 1/2 · Queue (one option, or your own text)",
        "Which queue should the whole service use?",
        "1. Kafka — a log",
        "2. Nats — a bus",
        "part 2/2 · Regions (any of the options, and your own text)",
        "Which regions?",
        "1. eu-west\n",
        "2. us-east — the default",
        &format!("oq answer {id} --answers-json '[[\"Kafka\"],[\"eu-west\"]]'"),
    ] {
        assert!(text.contains(expected), "{expected:?} not in:\n{text}");
    }
    assert!(
        !text.contains("--text"),
        "a request refuses --text:\n{text}"
    );
    let example = oq(
        &peer,
        &dir,
        &[
            "answer",
            &id,
            "--answers-json",
            r#"[["Kafka"],["eu-west"]]"#,
        ],
    );
    assert_eq!(example.code, 0, "the hint's own command works: {example:?}");
}

#[test]
fn dismissing_from_oq_rejects_upstream() {
    let Some(peer) = opencode::shared() else {
        return;
    };
    let dir = peer.directory("reject");
    let follower = Follower::start(peer.client(), &dir);
    let session = peer.prompt(&dir, None);
    let item = wait_listed(&peer, &dir, &session, |_| true);
    let id = item["questionId"].as_str().unwrap().to_string();

    let out = oq(&peer, &dir, &["dismiss", &id]);
    assert_eq!(out.code, 0, "{out:?}");
    let d = out.json();
    assert_eq!(d["status"], "closed");
    assert_eq!(d["closed"]["reason"], "rejected");
    assert_eq!(d["closed"]["by"], "ana");
    follower.wait(|e| matches!(e, Event::QuestionRejected { request_id, .. } if *request_id == id));
    follower.wait(|e| matches!(e, Event::SessionIdle { session_id } if *session_id == session));
    assert!(
        peer.tool_results(0).iter().all(|t| !t.contains(&session)),
        "the agent does not resume with an answer"
    );
    assert!(block_on(peer.client().list(&dir)).unwrap().is_empty());
    // Gone: dismissing again is refused as settled; straight to OpenCode it is 404 =
    // elsewhere.
    assert_eq!(oq(&peer, &dir, &["dismiss", &id]).code, 8);
    assert_eq!(
        block_on(peer.client().reject(&id, &dir)).unwrap(),
        Settled::Elsewhere
    );
}

#[test]
fn an_aborted_sessions_question_shows_as_orphaned_and_can_be_dismissed() {
    let Some(peer) = opencode::shared() else {
        return;
    };
    let dir = peer.directory("orphan");
    let follower = Follower::start(peer.client(), &dir);
    let session = peer.prompt(&dir, None);
    let live = wait_listed(&peer, &dir, &session, |_| true);
    assert!(live.get("orphaned").is_none(), "{live}");
    let id = live["questionId"].as_str().unwrap().to_string();

    assert!(block_on(peer.client().abort(&session, &dir)).unwrap());
    follower.wait(|e| e.aborted_session() == Some(session.as_str()));
    // Still listed upstream (OpenCode keeps it), shown as an orphan by oq.
    let orphan = wait_listed(&peer, &dir, &session, |q| q["orphaned"] == true);
    assert_eq!(orphan["questionId"], id.as_str());
    assert!(
        block_on(peer.client().list(&dir))
            .unwrap()
            .iter()
            .any(|r| r.id == id)
    );

    let out = oq(&peer, &dir, &["dismiss", &id]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["closed"]["reason"], "rejected");
    follower.wait(|e| matches!(e, Event::QuestionRejected { request_id, .. } if *request_id == id));
    assert_eq!(oq(&peer, &dir, &["list"]).json()["total"], 0);
}

#[test]
fn the_source_moves_its_revision_and_forgets_what_was_settled_elsewhere() {
    use oq::source::{OpencodeSource, Source};
    let Some(peer) = opencode::shared() else {
        return;
    };
    let dir = peer.directory("revision");
    let source = OpencodeSource::new(
        &format!("opencode+{}", peer.base),
        vec![dir.clone()],
        "ana",
        None,
    )
    .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let r0 = rt.block_on(source.revision(None)).unwrap();
    let session = peer.prompt(&dir, None);
    let r1 = wait_for(|| {
        let r = rt.block_on(source.revision(None)).unwrap();
        (r > r0).then_some(r)
    })
    .expect("the revision moves when a question is asked");
    let id = peer.wait_question(&dir, &session).id;
    // Someone else answers first, straight at OpenCode: oq's answer is a conflict.
    let q = rt.block_on(source.question(None, &id)).unwrap();
    assert_eq!(q.status, "open");
    assert_eq!(
        rt.block_on(peer.client().reply(&id, &dir, &[vec!["SQLite".into()]]))
            .unwrap(),
        Settled::Now
    );
    let err = rt
        .block_on(source.answer(
            None,
            &id,
            &oq::domain::AnswerInput::text("Postgres".to_string()),
        ))
        .unwrap_err();
    // Settled elsewhere first: `question_closed` (exit 8), as the README promises, not
    // an unknown id.
    assert_eq!(err.code(), "question_closed", "{err:?}");
    assert_eq!(err.exit_code(), 8, "{err:?}");
    let r2 = wait_for(|| {
        let r = rt.block_on(source.revision(None)).unwrap();
        (r > r1).then_some(r)
    })
    .expect("the revision moves when a question is settled");
    assert!(r2 > r1);
    // Unsupported doors say so.
    let e = rt
        .block_on(source.readiness(&dir, None))
        .expect_err("not supported");
    assert_eq!(e.code(), "not_supported");
}

#[test]
fn basic_auth_right_and_wrong_credentials() {
    let password = "oq-test-s3cret";
    let Some(peer) = Peer::start(Some(password)) else {
        return;
    };
    let dir = peer.directory("auth");
    let session = peer.prompt(&dir, None);
    peer.wait_question(&dir, &session);

    let right = oq_with(&peer, &dir, &["list"], Some(password));
    assert_eq!(right.code, 0, "{right:?}");
    assert!(
        right.json()["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|q| q["upstream"]["sessionID"] == session.as_str())
    );

    let wrong = oq_with(&peer, &dir, &["list"], Some("not-it"));
    assert_eq!(wrong.code, 10, "{wrong:?}");
    assert_eq!(wrong.json()["code"], "unauthorized");
    assert!(!wrong.stderr.contains("not-it") && !wrong.stdout.contains("not-it"));

    let none = oq_with(&peer, &dir, &["list"], None);
    assert_eq!(none.code, 10, "{none:?}");
    assert_eq!(none.json()["code"], "unauthorized");

    // The event stream needs the credentials too.
    let anon = Client::new(&peer.base, None).unwrap();
    let refused = block_on(async { events::subscribe(&anon, Scope::Directory(&dir)).await.err() });
    assert_eq!(refused.map(|e| e.code().as_str()), Some("unauthorized"));

    // Right credentials also answer.
    let id = right.json()["items"][0]["questionId"]
        .as_str()
        .unwrap()
        .to_string();
    let answered = oq_with(
        &peer,
        &dir,
        &["answer", &id, "--text", "SQLite"],
        Some(password),
    );
    assert_eq!(answered.code, 0, "{answered:?}");
}
