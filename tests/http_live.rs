//! The HTTP source follows a project's event stream for the TUI: a change is returned as
//! soon as it is announced, and after the stream drops it reconnects with
//! `Last-Event-ID` so the server can replay what was missed.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::routing::get;
use oq::source::{HttpSource, Source};

/// A scripted server: the first stream announces revision 5 and drops; every later one
/// records the Last-Event-ID it was sent and announces 6, then stays open.
async fn scripted() -> (String, Arc<Mutex<Vec<Option<String>>>>) {
    let seen: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let record = Arc::clone(&seen);
    let app = Router::new()
        .route(
            "/projects/p/revision",
            get(|| async { axum::Json(serde_json::json!({"revision": 4})) }),
        )
        .route(
            "/projects/p/events",
            get(move |headers: HeaderMap| {
                let record = Arc::clone(&record);
                async move {
                    let last = headers
                        .get("last-event-id")
                        .map(|v| v.to_str().unwrap().to_string());
                    let first = {
                        let mut r = record.lock().unwrap();
                        r.push(last);
                        r.len() == 1
                    };
                    let body = if first {
                        "id: 5\ndata: {\"type\":\"artifact.open_question\",\"revision\":5}\n\n"
                            .to_string()
                    } else {
                        "id: 6\ndata: {\"type\":\"open_question.answered\",\"revision\":6}\n\n"
                            .to_string()
                    };
                    let stream =
                        futures_util::stream::once(async move { Ok::<_, std::io::Error>(body) });
                    let stream: std::pin::Pin<
                        Box<dyn futures_util::Stream<Item = Result<String, std::io::Error>> + Send>,
                    > = if first {
                        Box::pin(stream)
                    } else {
                        // Keep the later stream open, as a live server does.
                        Box::pin(futures_util::StreamExt::chain(
                            stream,
                            futures_util::stream::pending(),
                        ))
                    };
                    (
                        [("content-type", "text/event-stream")],
                        axum::body::Body::from_stream(stream),
                    )
                        .into_response()
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, seen)
}

#[tokio::test(flavor = "multi_thread")]
async fn revisions_come_from_the_event_stream_and_resume_after_a_drop() {
    let (base, seen) = scripted().await;
    let source = HttpSource::new(&base, "token").unwrap();
    let start = Instant::now();
    let mut got = Vec::new();
    while got.last() != Some(&6) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "revisions so far: {got:?}"
        );
        got.push(source.revision(Some("p")).await.unwrap());
    }
    // 4 may come first from GET …/revision while the stream connects; then the stream's.
    assert!(got.contains(&5) || got.first() == Some(&4), "{got:?}");
    let headers = seen.lock().unwrap().clone();
    assert_eq!(
        headers.first(),
        Some(&None),
        "the first connection resumes nothing"
    );
    assert!(
        headers.iter().skip(1).all(|h| h.as_deref() == Some("5")),
        "every reconnection resumes after revision 5: {headers:?}"
    );
    assert!(headers.len() >= 2);
}
