//! The terminal's input, read by oq itself (not by crossterm's reader, which on a dead
//! tty spins in `read(0) = 0` holding a lock the loop then waits on, and which cannot
//! be stopped before `$EDITOR`, so the editor's first key went to the TUI).
//!
//! One thread polls stdin and a wake pipe, reads what the tty sends, parses it
//! (`parse.rs`) and sends the events, in order, on a channel. Invariants:
//! - The end of the input — `read` returning 0 (EOF, a hung-up tty), an error such as
//!   EIO, or poll reporting the tty gone — closes the channel after every event read
//!   before it: the loop sees the last keystrokes, then the end, and nothing spins.
//! - [`TtyInput::pause`] returns only once the thread has stopped reading, so a child
//!   given the terminal (`$EDITOR`) gets every key typed after it; [`TtyInput::resume`]
//!   takes the tty back. Dropping the reader stops and joins its thread.

pub mod parse;

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use crossterm::event::Event;
use rustix::event::{PollFd, PollFlags, poll};
use tokio::sync::mpsc::{
    UnboundedReceiver, UnboundedSender, error::TryRecvError, unbounded_channel,
};

use parse::Parser;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Reading,
    PauseAsked,
    Paused,
    Stop,
    /// The input ended; the thread is gone.
    Ended,
}

struct Control {
    state: Mutex<State>,
    changed: Condvar,
}

impl Control {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn set(&self, s: State) {
        *self.lock() = s;
        self.changed.notify_all();
    }
}

/// The tty's events; `None` from [`TtyInput::next`] once the input has ended.
pub struct TtyInput {
    events: UnboundedReceiver<Event>,
    control: Arc<Control>,
    wake: OwnedFd,
    thread: Option<JoinHandle<()>>,
}

impl TtyInput {
    /// Starts reading stdin (the terminal).
    pub fn start() -> io::Result<TtyInput> {
        let (wake_rx, wake) = rustix::pipe::pipe()?;
        let control = Arc::new(Control {
            state: Mutex::new(State::Reading),
            changed: Condvar::new(),
        });
        let (tx, events) = unbounded_channel();
        let thread = std::thread::Builder::new()
            .name("oq-tty-input".into())
            .spawn({
                let control = Arc::clone(&control);
                move || read_loop(&control, &wake_rx, &tx)
            })?;
        Ok(TtyInput {
            events,
            control,
            wake,
            thread: Some(thread),
        })
    }

    /// The next event, `None` once the input has ended. Cancel-safe.
    pub async fn next(&mut self) -> Option<Event> {
        self.events.recv().await
    }

    /// An event already read, `Some(None)` once the input has ended, `None` if nothing
    /// is waiting.
    pub fn ready(&mut self) -> Option<Option<Event>> {
        match self.events.try_recv() {
            Ok(ev) => Some(Some(ev)),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => Some(None),
        }
    }

    fn wake(&self) {
        let _ = rustix::io::write(&self.wake, &[1]);
    }

    /// Stops reading the tty; returns once the thread no longer reads it.
    pub fn pause(&self) {
        let mut st = self.control.lock();
        if *st != State::Reading {
            return;
        }
        *st = State::PauseAsked;
        self.wake();
        while *st == State::PauseAsked {
            st = self
                .control
                .changed
                .wait(st)
                .unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Reads the tty again after [`TtyInput::pause`].
    pub fn resume(&self) {
        let mut st = self.control.lock();
        if *st == State::Paused {
            *st = State::Reading;
            self.control.changed.notify_all();
        }
    }
}

impl Drop for TtyInput {
    fn drop(&mut self) {
        {
            let mut st = self.control.lock();
            if *st != State::Ended {
                *st = State::Stop;
            }
            self.control.changed.notify_all();
        }
        self.wake();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Until the input ends or the reader is dropped. Dropping `tx` on return is the end.
fn read_loop(control: &Control, wake: &OwnedFd, tx: &UnboundedSender<Event>) {
    let stdin = io::stdin();
    let tty = stdin.as_fd();
    let mut parser = Parser::default();
    let mut buf = [0u8; 1024];
    loop {
        // Honour a pause or a stop before touching the tty.
        {
            let mut st = control.lock();
            if *st == State::PauseAsked {
                *st = State::Paused;
                control.changed.notify_all();
            }
            while *st == State::Paused {
                st = control.changed.wait(st).unwrap_or_else(|p| p.into_inner());
            }
            if *st == State::Stop {
                return;
            }
        }
        let mut fds = [
            PollFd::new(&tty, PollFlags::IN),
            PollFd::new(wake, PollFlags::IN),
        ];
        match poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        }
        let (tty_ready, woken) = (fds[0].revents(), fds[1].revents());
        if !woken.is_empty() {
            let _ = rustix::io::read(wake, &mut [0u8; 64]);
            continue;
        }
        if tty_ready.contains(PollFlags::IN) {
            match rustix::io::read(tty, &mut buf) {
                // EOF: a tty reads 0 only once it is hung up.
                Ok(0) => break,
                Ok(n) => {
                    for ev in parser.advance(&buf[..n], n == buf.len()) {
                        let _ = tx.send(ev);
                    }
                }
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                // EIO and the like: the terminal is gone.
                Err(_) => break,
            }
        } else if !tty_ready.is_empty() {
            // HUP, ERR or NVAL without data: gone.
            break;
        }
    }
    control.set(State::Ended);
}
