//! The accept loop: every connection under [`Limits`], served by hyper's HTTP/1 with the
//! router as its service.
//!
//! Why our own loop rather than `axum::serve`: axum's serve gives no hold on a
//! connection — no cap, no clock on a slow head, an idle keep-alive or a client that
//! stopped reading. tower-http's timeout layers see requests, not connections, so they
//! cannot cut a client that never finishes its head or never reads its response. Here a
//! semaphore caps the connections and each connection's byte stream carries its clocks
//! ([`timed_io`]); the router stays the same `Router` the tests drive.
//!
//! Invariant: every connection holds one permit until it is gone, so "stopped" means
//! every permit is back.

pub mod timed_io;
pub mod tls;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tower_service::Service;

use super::audit::AuditLog;
use super::config::Limits;
use timed_io::{Activity, Clock, Clocks, TimedIo};

/// Each connection's kernel send buffer (the kernel doubles it for its bookkeeping):
/// ample for our responses, which are a few KiB of JSON.
const SEND_BUFFER: usize = 64 * 1024;

/// How long the body of a request may take to arrive, for the extractor that reads it.
#[derive(Debug, Clone, Copy)]
pub struct BodyReadTimeout(pub Duration);

/// Accepts on `listener` until `stopping` turns true, then waits for every connection
/// to end (event streams end on their own when the server stops).
pub async fn accept_loop(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    audit: Arc<AuditLog>,
    tls: Option<Arc<tls::Tls>>,
    mut stopping: watch::Receiver<bool>,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stopped(&mut stopping) => break,
        };
        let (stream, remote) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of file descriptors and the like: wait rather than spin.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            // A TLS client would read our plain 503 as garbage: it is only closed.
            if tls.is_none() {
                refuse(&stream, limits.max_connections);
            }
            audit.connection_refused(remote);
            continue;
        };
        let _ = stream.set_nodelay(true);
        // A fixed kernel send buffer: autotuned, a client that does not read could pin
        // megabytes per connection before the write clock even starts.
        let _ = socket2::SockRef::from(&stream).set_send_buffer_size(SEND_BUFFER);
        let (router, stopping) = (router.clone(), stopping.clone());
        let ends = Ends {
            remote,
            audit: audit.clone(),
            stopping,
            _permit: permit,
        };
        match &tls {
            None => {
                tokio::spawn(connection(stream, router, limits, ends));
            }
            Some(tls) => {
                let acceptor = tls.acceptor();
                tokio::spawn(async move {
                    // The handshake is part of the head: on the same clock.
                    let shake = tokio::time::timeout(limits.header_read, acceptor.accept(stream));
                    match shake.await {
                        Ok(Ok(io)) => connection(io, router, limits, ends).await,
                        Ok(Err(e)) => tracing::debug!(%remote, error = %e, "TLS handshake failed"),
                        Err(_) => {
                            // The handshake is on the head's clock.
                            tracing::debug!(%remote, "TLS handshake timed out");
                            ends.audit
                                .connection_cut(remote, Clock::HeaderRead.as_str());
                        }
                    }
                });
            }
        }
    }
    drop(listener);
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let _ = slots.acquire_many(all).await;
}

/// Beyond the cap: one 503 written without waiting (the socket's buffer is empty), then
/// the connection is closed.
fn refuse(stream: &TcpStream, max: usize) {
    tracing::warn!(max, "connection refused: at max_connections");
    let body = format!(
        r#"{{"code":"too_many_connections","message":"the server holds {max} connections already (limits.max_connections)"}}"#
    );
    let reply = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.try_write(reply.as_bytes());
}

/// What a connection holds besides its stream: where it came from, the audit log for a
/// clock that cuts it, the stop signal, and its slot under the cap.
struct Ends {
    remote: SocketAddr,
    audit: Arc<AuditLog>,
    stopping: watch::Receiver<bool>,
    _permit: OwnedSemaphorePermit,
}

async fn connection<I>(stream: I, router: Router, limits: Limits, mut ends: Ends)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let remote = ends.remote;
    let activity = Activity::new();
    let watched = activity.clone();
    let clocks = Clocks {
        header_read: limits.header_read,
        idle: limits.idle,
        write: limits.write,
    };
    let io = TokioIo::new(TimedIo::new(stream, activity.clone(), clocks));
    let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        let in_flight = activity.begin();
        req.extensions_mut().insert(ConnectInfo(remote));
        req.extensions_mut()
            .insert(BodyReadTimeout(limits.body_read));
        let mut router = router.clone();
        async move {
            let response = router.call(req.map(axum::body::Body::new)).await?;
            // The request is in flight until its response's last byte went out.
            Ok::<_, std::convert::Infallible>(response.map(move |body| {
                axum::body::Body::new(body.map_frame(move |frame| {
                    let _ = &in_flight;
                    frame
                }))
            }))
        }
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .header_read_timeout(None)
        .serve_connection(io, service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        () = stopped(&mut ends.stopping) => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
    // A clock cut it: a stalled head, a client that stopped reading, or a connection
    // that never sent a request. An idle keep-alive after its requests ends as it should.
    match watched.cut() {
        Some((Clock::Idle, requests)) if requests > 0 => {}
        Some((clock, _)) => ends.audit.connection_cut(remote, clock.as_str()),
        None => {}
    }
}

/// Resolves once the server is stopping (the borrow of the flag is not held).
async fn stopped(stopping: &mut watch::Receiver<bool>) {
    let _ = stopping.wait_for(|s| *s).await;
}
