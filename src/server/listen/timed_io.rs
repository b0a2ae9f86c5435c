//! A connection's clocks, kept in its byte stream so that no state of the HTTP machine
//! can wait forever:
//!
//! - idle: no request in flight and no byte arriving for `idle` closes it;
//! - head: once a request's first byte arrived, its head must be complete within
//!   `header_read` (the request reaching the router ends that clock);
//! - write: a write that makes no progress for `write` fails, so a client that stopped
//!   reading (an event subscriber among them) is dropped.
//!
//! The body has its own clock where it is read (`extract::ApiJson`), since only the
//! router knows a body is being waited for.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// The clock that cut a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// A head begun and not finished within `header_read` (a slow or stalled client).
    HeaderRead,
    /// Nothing to do and nothing arriving within `idle`.
    Idle,
    /// A write that made no progress within `write` (a client that stopped reading).
    Write,
}

impl Clock {
    pub fn as_str(self) -> &'static str {
        match self {
            Clock::HeaderRead => "header_read",
            Clock::Idle => "idle",
            Clock::Write => "write",
        }
    }
}

/// Where a connection stands, shared by its stream and its requests.
#[derive(Debug)]
pub struct Activity(Mutex<Phase>);

#[derive(Debug)]
struct Phase {
    in_flight: usize,
    /// When the connection last had nothing to do (opened, or a response finished).
    idle_since: Instant,
    /// When the first byte of the next request's head arrived.
    head_since: Option<Instant>,
    /// The read that waited while a request was in flight (no clock then): woken when
    /// the request ends, so the idle clock starts.
    reader: Option<Waker>,
    /// How many requests reached the router on this connection.
    requests: usize,
    /// The clock that cut it, once one did.
    cut: Option<Clock>,
}

/// The clocks' lengths.
#[derive(Debug, Clone, Copy)]
pub struct Clocks {
    pub header_read: Duration,
    pub idle: Duration,
    pub write: Duration,
}

impl Activity {
    pub fn new() -> Arc<Self> {
        Arc::new(Activity(Mutex::new(Phase {
            in_flight: 0,
            idle_since: Instant::now(),
            head_since: None,
            reader: None,
            requests: 0,
            cut: None,
        })))
    }

    fn phase(&self) -> std::sync::MutexGuard<'_, Phase> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A request reached the router; dropping the guard (its response ended) makes the
    /// connection idle again.
    pub fn begin(self: &Arc<Self>) -> InFlight {
        let mut p = self.phase();
        p.in_flight += 1;
        p.requests += 1;
        p.head_since = None;
        InFlight(self.clone())
    }

    fn bytes_arrived(&self) {
        let mut p = self.phase();
        if p.in_flight == 0 && p.head_since.is_none() {
            p.head_since = Some(Instant::now());
        }
    }

    /// When a read still waiting must give up, and by which clock; `None` while a
    /// request is in flight (then `waker` is woken when it ends).
    fn read_deadline(&self, clocks: Clocks, waker: &Waker) -> Option<(Instant, Clock)> {
        let mut p = self.phase();
        if p.in_flight > 0 {
            p.reader = Some(waker.clone());
            return None;
        }
        Some(match p.head_since {
            Some(t) => (t + clocks.header_read, Clock::HeaderRead),
            None => (p.idle_since + clocks.idle, Clock::Idle),
        })
    }

    fn cut_by(&self, clock: Clock) {
        self.phase().cut.get_or_insert(clock);
    }

    /// The clock that cut the connection, if one did, and how many requests it had made.
    pub fn cut(&self) -> Option<(Clock, usize)> {
        let p = self.phase();
        p.cut.map(|c| (c, p.requests))
    }
}

/// A request in flight (see [`Activity::begin`]).
#[derive(Debug)]
pub struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut p = self.0.phase();
        p.in_flight = p.in_flight.saturating_sub(1);
        if p.in_flight == 0 {
            p.idle_since = Instant::now();
            if let Some(reader) = p.reader.take() {
                reader.wake();
            }
        }
    }
}

/// `inner` with the clocks of [`Activity`] and [`Clocks`].
pub struct TimedIo<T> {
    inner: T,
    activity: Arc<Activity>,
    clocks: Clocks,
    read_timer: Pin<Box<Sleep>>,
    write_timer: Option<Pin<Box<Sleep>>>,
}

impl<T> TimedIo<T> {
    pub fn new(inner: T, activity: Arc<Activity>, clocks: Clocks) -> Self {
        TimedIo {
            inner,
            activity,
            clocks,
            read_timer: Box::pin(tokio::time::sleep(clocks.idle)),
            write_timer: None,
        }
    }

    /// A pending write's verdict: still waiting, or given up after [`Clocks::write`].
    fn write_pending<R>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        let write = self.clocks.write;
        let timer = self
            .write_timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(write)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => {
                self.activity.cut_by(Clock::Write);
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the client stopped reading",
                )))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn wrote<R>(&mut self, r: Poll<io::Result<R>>, cx: &mut Context<'_>) -> Poll<io::Result<R>> {
        match r {
            Poll::Pending => self.write_pending(cx),
            done => {
                self.write_timer = None;
                done
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for TimedIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    self.activity.bytes_arrived();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                let Some((deadline, clock)) = self.activity.read_deadline(self.clocks, cx.waker())
                else {
                    return Poll::Pending;
                };
                let timer = self.read_timer.as_mut();
                if timer.deadline() != deadline {
                    timer.reset(deadline);
                }
                match self.read_timer.as_mut().poll(cx) {
                    Poll::Ready(()) => {
                        self.activity.cut_by(clock);
                        Poll::Ready(Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "the client sent no request in time",
                        )))
                    }
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for TimedIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.wrote(r, cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.wrote(r, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_flush(cx);
        self.wrote(r, cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
