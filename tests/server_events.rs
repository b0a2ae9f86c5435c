//! The event stream: a tip per change of the project with the project's own revision as
//! its id (nothing of another project's pace shows), every change delivered once across a
//! forced reconnect with Last-Event-ID, a Last-Event-ID beyond the project refused,
//! heartbeats, writes by another process on the same store, and a clean stop with
//! streams open.
#![allow(clippy::unwrap_used)]

mod common_server;

use std::time::Duration;

use common_server::*;
use futures_util::StreamExt;
use oq::domain::{Actor, DeclareInput, Role};
use serde_json::{Value, json};

/// One parsed SSE frame.
#[derive(Debug, Default)]
struct Frame {
    id: Option<i64>,
    data: Option<Value>,
    comment: Option<String>,
}

struct Sse {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buf: String,
}

impl Sse {
    async fn open(s: &TestServer, user: &str, last_event_id: Option<i64>) -> Sse {
        let mut req = s
            .client
            .get(s.url("/projects/loja/events"))
            .bearer_auth(s.token(user));
        if let Some(id) = last_event_id {
            req = req.header("last-event-id", id.to_string());
        }
        let r = req.send().await.expect("events");
        assert_eq!(r.status(), 200);
        assert!(
            r.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream"),
            "{:?}",
            r.headers()
        );
        let body = r.bytes_stream().map(|c| c.map(|b| b.to_vec())).boxed();
        Sse {
            body,
            buf: String::new(),
        }
    }

    /// The next frame; panics if none comes within a generous bound (a hang, not a timing check).
    async fn next(&mut self) -> Frame {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let raw: String = self.buf.drain(..end + 2).collect();
                let mut f = Frame::default();
                for line in raw.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        f.id = Some(v.trim().parse().expect("numeric id"));
                    } else if let Some(v) = line.strip_prefix("data:") {
                        f.data = Some(serde_json::from_str(v.trim()).expect("json data"));
                    } else if let Some(v) = line.strip_prefix(':') {
                        f.comment = Some(v.trim().to_string());
                    }
                }
                return f;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), self.body.next())
                .await
                .expect("the stream went silent")
                .expect("the stream ended")
                .expect("chunk");
            self.buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// Tips until (and including) `revision`, skipping heartbeats.
    async fn tips_until(&mut self, revision: i64) -> Vec<(i64, Value)> {
        let mut out = Vec::new();
        loop {
            let f = self.next().await;
            let (Some(id), Some(data)) = (f.id, f.data) else {
                continue;
            };
            assert_eq!(data["revision"], id, "the id is the revision");
            assert!(data["type"].is_string());
            out.push((id, data));
            if id >= revision {
                return out;
            }
        }
    }
}

async fn declare(s: &TestServer, w: &World, text: &str) {
    let r = s
        .post(
            CRIATIVO,
            "/projects/loja/open-questions",
            json!({"pergunta": text, "sessionId": w.conversation}),
        )
        .await;
    must(&r, 201);
}

async fn outro_write(s: &TestServer, w: &World, text: &str) {
    let r = s
        .post(
            OUTRO_AGENT,
            "/projects/outro/open-questions",
            json!({"pergunta": text, "sessionId": w.outro_session}),
        )
        .await;
    must(&r, 201);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_change_once_across_a_forced_reconnect() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let start = s.project_revision("loja");

    let mut sse = Sse::open(&s, BIA, None).await;
    for i in 0..5 {
        declare(&s, &w, &format!("First batch {i}?")).await;
        outro_write(&s, &w, &format!("Other project {i}?")).await;
    }
    s.post(
        ANA,
        &format!("/projects/loja/open-questions/{}/answer", w.question),
        json!({"resposta": "ok"}),
    )
    .await;
    let mut seen = sse.tips_until(s.project_revision("loja")).await;
    let last_seen = seen.last().unwrap().0;
    drop(sse); // the connection breaks

    // Changes while the client is away, some by another process on the same store.
    for i in 0..5 {
        declare(&s, &w, &format!("While away {i}?")).await;
        outro_write(&s, &w, &format!("Other while away {i}?")).await;
    }
    let cli = s.engine();
    cli.declare(
        &Actor::agent(Role::Po),
        "loja",
        &DeclareInput {
            pergunta: "From the local CLI?".into(),
            sugestao: None,
            afeta: Default::default(),
            session_id: w.conversation.clone(),
            idempotency_key: None,
        },
    )
    .expect("cli declare");

    let mut sse = Sse::open(&s, BIA, Some(last_seen)).await;
    seen.extend(sse.tips_until(s.project_revision("loja")).await);
    drop(sse);

    // Exactly the project's events after `start`, in order, each once.
    let expected: Vec<(i64, String)> = s
        .engine()
        .events_after(Some("loja"), start, 10_000)
        .expect("events")
        .into_iter()
        .map(|e| (e.project_seq, e.event.type_name().to_string()))
        .collect();
    let got: Vec<(i64, String)> = seen
        .iter()
        .map(|(id, d)| (*id, d["type"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(got, expected);
    assert!(got.iter().any(|(_, t)| t == "open_question.answered"));
    // No gap: outro's writes in between took none of loja's numbers.
    let ids: Vec<i64> = got.iter().map(|(id, _)| *id).collect();
    assert_eq!(
        ids,
        (start + 1..=start + ids.len() as i64).collect::<Vec<_>>()
    );
    s.stop().await;
}

/// A member of loja learns nothing of outro's pace: the ids and `GET …/revision` count
/// loja's changes only, however much outro writes in between.
#[tokio::test(flavor = "multi_thread")]
async fn ids_count_the_projects_own_changes_only() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let loja = s.project_revision("loja");
    assert_eq!(loja, 5, "two sessions, a question, a story, a task");
    let mut sse = Sse::open(&s, BIA, None).await;
    for i in 0..20 {
        outro_write(&s, &w, &format!("Busy elsewhere {i}?")).await;
    }
    let r = s.get(BIA, "/projects/loja/revision").await;
    assert_eq!(must(&r, 200)["revision"], loja, "outro's writes moved loja");
    declare(&s, &w, "The next loja change?").await;
    let tips = sse.tips_until(loja + 1).await;
    assert_eq!(tips.len(), 1);
    assert_eq!(tips[0].0, loja + 1);
    let r = s.get(BIA, "/projects/loja/revision").await;
    assert_eq!(must(&r, 200)["revision"], loja + 1);
    // outro counts from 1 too, on its own.
    let r = s.get(CAIO, "/projects/outro/revision").await;
    assert_eq!(must(&r, 200)["revision"], 22);
    drop(sse);
    s.stop().await;
}

/// A Last-Event-ID this server never sent for the project (beyond its revision) is a
/// 422, not a stream that stays silent forever; the revision itself resumes.
#[tokio::test(flavor = "multi_thread")]
async fn a_last_event_id_beyond_the_project_is_refused() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    for i in 0..10 {
        outro_write(&s, &w, &format!("Outro {i}?")).await;
    }
    let loja = s.project_revision("loja");
    // outro's revision is a number loja never reached: refused in loja.
    for beyond in [loja + 1, s.project_revision("outro"), 99_999] {
        let r = s
            .client
            .get(s.url("/projects/loja/events"))
            .bearer_auth(s.token(ANA))
            .header("last-event-id", beyond.to_string())
            .send()
            .await
            .expect("events");
        let r = reply(r).await;
        assert_eq!(must(&r, 422)["code"], "invalid_last_event_id", "{beyond}");
        assert!(
            r.body["message"].as_str().unwrap().contains("beyond"),
            "{r:?}"
        );
    }
    let mut sse = Sse::open(&s, ANA, Some(loja)).await;
    declare(&s, &w, "Resumed at the edge?").await;
    assert_eq!(sse.tips_until(loja + 1).await[0].0, loja + 1);
    drop(sse);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn heartbeats_keep_an_idle_stream_alive() {
    let s = TestServer::start().await;
    let mut sse = Sse::open(&s, QA, None).await;
    loop {
        let f = sse.next().await;
        if f.comment.as_deref() == Some("heartbeat") {
            break;
        }
        assert!(f.id.is_none(), "no change happened: {f:?}");
    }
    drop(sse);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resume_from_the_beginning_replays_the_whole_project() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let mut sse = Sse::open(&s, CRIATIVO, Some(0)).await;
    let tips = sse.tips_until(s.project_revision("loja")).await;
    let types: Vec<&str> = tips
        .iter()
        .map(|(_, d)| d["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "session.started",
            "session.started",
            "artifact.open_question",
            "story.created",
            "task.created"
        ]
    );
    let ids: Vec<i64> = tips.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5]);
    assert!(!w.question.is_empty());
    drop(sse);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_last_event_ids_are_refused() {
    let s = TestServer::start().await;
    for bad in ["-1", "abc", "99999999999999999999999"] {
        let r = s
            .client
            .get(s.url("/projects/loja/events"))
            .bearer_auth(s.token(ANA))
            .header("last-event-id", bad)
            .send()
            .await
            .expect("events");
        let r = reply(r).await;
        assert_eq!(must(&r, 422)["code"], "invalid_last_event_id", "{bad}");
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_server_stops_cleanly_with_streams_open() {
    let s = TestServer::start().await;
    let w = seed(&s).await;
    let mut streams = Vec::new();
    for user in [ANA, BIA, QA] {
        streams.push(Sse::open(&s, user, None).await);
    }
    declare(&s, &w, "Seen by all?").await;
    let rev = s.project_revision("loja");
    for sse in &mut streams {
        sse.tips_until(rev).await;
    }
    s.stop().await;
    for mut sse in streams {
        // The stream ends rather than hanging.
        loop {
            match tokio::time::timeout(Duration::from_secs(30), sse.body.next())
                .await
                .expect("the stream ends")
            {
                None | Some(Err(_)) => break,
                Some(Ok(_)) => continue,
            }
        }
    }
}

/// A stream that falls behind the server's window of the log's tail (`feed.rs`; made 4
/// events small here) reads the log itself and comes back: every change of its project
/// once, in order, with no gap. Each round, another process writes a burst the server
/// learns of only with its own next write (the poller is asleep), so one read of the
/// tail brings more than the window holds and every open stream is left behind it — and
/// the burst's last events are another project's, so only the window's own bounds can
/// tell loja's streams that they missed something.
#[tokio::test(flavor = "multi_thread")]
async fn a_stream_behind_the_window_gets_every_change_once_in_order() {
    let s = TestServer::start_with(oq::server::ServerOptions {
        heartbeat: Duration::from_millis(100),
        poll: Duration::from_secs(3600),
        window: 4,
    })
    .await;
    let w = seed(&s).await;
    let start = s.project_revision("loja");
    let mut reading = Sse::open(&s, BIA, None).await;
    // A client that reads nothing until the end.
    let mut idle = Sse::open(&s, ANA, None).await;
    let cli = s.engine();
    let other = |session: &str, text: String| DeclareInput {
        pergunta: text,
        sugestao: None,
        afeta: Default::default(),
        session_id: session.to_string(),
        idempotency_key: None,
    };
    let mut seen = Vec::new();
    for round in 0..4 {
        // loja's burst, then outro's (the window keeps only outro's), then the server's
        // own write in outro: nothing after the burst tells loja's streams of a gap.
        let po = Actor::agent(Role::Po);
        for (project, session) in [("loja", &w.conversation), ("outro", &w.outro_session)] {
            for i in 0..6 {
                let text = format!("Burst {project} {round}.{i}?");
                cli.declare(&po, project, &other(session, text))
                    .expect("cli declare");
            }
        }
        outro_write(&s, &w, &format!("Through the server {round}?")).await;
        seen.extend(all_of(&mut reading, s.project_revision("loja")).await);
        if round == 1 {
            // Resumed from the start, behind the window from its first look.
            let mut resumed = Sse::open(&s, QA, Some(start)).await;
            let tips = all_of(&mut resumed, s.project_revision("loja")).await;
            assert_eq!(ids(&tips), ids(&seen), "the resumed stream");
        }
    }
    let expected: Vec<(i64, String)> = s
        .engine()
        .events_after(Some("loja"), start, 10_000)
        .expect("events")
        .into_iter()
        .map(|e| (e.project_seq, e.event.type_name().to_string()))
        .collect();
    let end = s.project_revision("loja");
    assert_eq!(expected.len(), 4 * 6, "{expected:?}");
    for (name, tips) in [("reading", seen), ("idle", all_of(&mut idle, end).await)] {
        let got: Vec<(i64, String)> = tips
            .iter()
            .map(|(id, d)| (*id, d["type"].as_str().unwrap().to_string()))
            .collect();
        assert_eq!(got, expected, "the {name} stream");
    }
    drop((reading, idle));
    s.stop().await;
}

/// The stream's tips up to `revision`; a stream that missed one waits forever between
/// heartbeats, so a generous bound turns that hang into a failure.
async fn all_of(sse: &mut Sse, revision: i64) -> Vec<(i64, Value)> {
    tokio::time::timeout(Duration::from_secs(60), sse.tips_until(revision))
        .await
        .unwrap_or_else(|_| panic!("no tip up to revision {revision}: a change was missed"))
}

fn ids(tips: &[(i64, Value)]) -> Vec<i64> {
    tips.iter().map(|(id, _)| *id).collect()
}
