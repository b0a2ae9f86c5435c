//! What the driver's loop needs from a terminal, as a trait: a ratatui [`Backend`] to
//! draw on, the input events, and the few things that leave the frame (the bell and
//! OSC notifications, `$EDITOR`). The loop (`app.rs`) is generic over it, as gitui's is
//! over its backend, so a whole-app test runs the real loop on ratatui's `TestBackend`
//! with scripted events; [`CrosstermTty`] is the real terminal.
//!
//! Invariant: the loop touches the terminal only through a [`Tty`]; no code path of the
//! driver writes to stdout or reads stdin by itself.

use std::io::{self, Stdout, Write};
use std::path::Path;

use crossterm::event::Event;
use crossterm::terminal::{BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate};
use ratatui::Terminal;
use ratatui::backend::{Backend, CrosstermBackend};
use tokio::signal::unix::{Signal, SignalKind, signal};

use super::app_io::edit;
use super::input::TtyInput;
use super::terminal::TerminalGuard;

/// An input event, or `None` when the input has ended (the terminal is gone).
pub type Input = Option<io::Result<Event>>;

/// The terminal as the driver's loop sees it.
#[allow(async_fn_in_trait)]
pub trait Tty {
    type Backend: Backend;

    /// Where frames are drawn.
    fn terminal(&mut self) -> &mut Terminal<Self::Backend>;

    /// The next input event; cancel-safe (the loop selects on it).
    async fn next_event(&mut self) -> Input;

    /// An event already waiting, without waiting (the loop coalesces before a draw).
    fn ready_event(&mut self) -> Option<Input>;

    /// Before a frame (a synchronized update begins, so slow links see no tearing).
    fn begin_frame(&mut self) {}

    /// After a frame: the frame reaches the terminal.
    fn end_frame(&mut self) -> io::Result<()>;

    /// Bytes outside the frame: the bell, OSC 9/777 notifications.
    fn raw(&mut self, bytes: &[u8]);

    /// `text` in the person's editor, the terminal handed over meanwhile; the edited
    /// text, or why not.
    fn edit(&mut self, dir: &Path, question_id: &str, text: &str) -> Result<String, String>;
}

/// The real terminal: the guard's modes, crossterm's backend on stdout, oq's own
/// reader of stdin (`input/`), SIGWINCH as resizes.
pub struct CrosstermTty {
    // Always `Some` but in `Drop`, which retires it before the guard's restore.
    terminal: Option<Terminal<CrosstermBackend<Stdout>>>,
    guard: TerminalGuard,
    input: TtyInput,
    winch: Signal,
}

impl CrosstermTty {
    /// Takes the terminal (raw mode, alternate screen, …) and clears it.
    pub fn enter() -> io::Result<CrosstermTty> {
        let winch = signal(SignalKind::window_change())?;
        let guard = TerminalGuard::enter()?;
        Ok(CrosstermTty {
            terminal: Some(fresh_terminal()?),
            guard,
            input: TtyInput::start()?,
            winch,
        })
    }
}

/// Drops a terminal, unless its cursor cannot be shown: ratatui's `Drop` would then
/// `eprintln!` the error, which panics on a terminal that is gone (EIO on stderr).
fn retire(mut terminal: Terminal<CrosstermBackend<Stdout>>) {
    if terminal.show_cursor().is_ok() {
        drop(terminal);
    } else {
        std::mem::forget(terminal);
    }
}

impl CrosstermTty {
    fn live(&mut self) -> &mut Terminal<CrosstermBackend<Stdout>> {
        #[allow(clippy::expect_used)]
        self.terminal.as_mut().expect("held until the drop")
    }
}

impl Drop for CrosstermTty {
    fn drop(&mut self) {
        // Before the guard (a field, dropped after this): its restore comes last.
        if let Some(t) = self.terminal.take() {
            retire(t);
        }
    }
}

fn resized() -> Input {
    let (w, h) = crossterm::terminal::size().unwrap_or((0, 0));
    Some(Ok(Event::Resize(w, h)))
}

/// A cleared screen and a terminal whose buffers match it. (`Terminal::clear` would
/// ask the terminal for the cursor position, which not every terminal answers.)
fn fresh_terminal() -> io::Result<Terminal<CrosstermBackend<Stdout>>> {
    let mut out = io::stdout();
    crossterm::execute!(out, Clear(ClearType::All))?;
    Terminal::new(CrosstermBackend::new(out))
}

impl Tty for CrosstermTty {
    type Backend = CrosstermBackend<Stdout>;

    fn terminal(&mut self) -> &mut Terminal<Self::Backend> {
        self.live()
    }

    async fn next_event(&mut self) -> Input {
        tokio::select! {
            ev = self.input.next() => ev.map(Ok),
            Some(()) = self.winch.recv() => resized(),
        }
    }

    fn ready_event(&mut self) -> Option<Input> {
        self.input.ready().map(|ev| ev.map(Ok))
    }

    fn begin_frame(&mut self) {
        let _ = crossterm::queue!(self.live().backend_mut(), BeginSynchronizedUpdate);
    }

    fn end_frame(&mut self) -> io::Result<()> {
        let _ = crossterm::queue!(self.live().backend_mut(), EndSynchronizedUpdate);
        Write::flush(self.live().backend_mut())
    }

    fn raw(&mut self, bytes: &[u8]) {
        let mut o = io::stdout();
        let _ = o.write_all(bytes);
        let _ = o.flush();
    }

    fn edit(&mut self, dir: &Path, question_id: &str, text: &str) -> Result<String, String> {
        // The reader would steal the editor's keys: it stops before the editor starts
        // and reads again only once the terminal is ours again.
        self.input.pause();
        let result = edit(&self.guard, dir, question_id, text);
        if let Ok(t) = fresh_terminal()
            && let Some(old) = self.terminal.replace(t)
        {
            retire(old);
        }
        self.input.resume();
        result
    }
}
