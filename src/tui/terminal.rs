//! The one terminal guard: raw mode, the alternate screen, bracketed paste, the hidden
//! cursor — and their undoing.
//!
//! [`restore`] is idempotent (a process-wide flag says whether anything is to undo) and
//! never panics or unwraps: it is called on normal quit, from `Drop`, from the panic
//! hook, after a signal (the driver turns SIGTERM/SIGHUP/SIGQUIT into a quit), and
//! around `$EDITOR`. It writes, in order, bracketed paste off, leave the alternate
//! screen, show the cursor, then turns raw mode off.

use std::io::{self, Write};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::cursor::{Hide, Show};
use crossterm::event::{DisableBracketedPaste, EnableBracketedPaste};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};

/// True while the terminal is in the TUI's state and must be given back.
static ACTIVE: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// Owns the terminal's TUI state; dropping it restores the terminal.
#[derive(Debug)]
pub struct TerminalGuard {
    _private: (),
}

impl TerminalGuard {
    /// Enters raw mode and the alternate screen; installs the restoring panic hook once.
    pub fn enter() -> io::Result<TerminalGuard> {
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                restore();
                previous(info);
            }));
        });
        let guard = TerminalGuard { _private: () };
        guard.resume()?;
        Ok(guard)
    }

    /// Gives the terminal back for a while (to run `$EDITOR`).
    pub fn suspend(&self) {
        restore();
    }

    /// Takes the terminal again after [`TerminalGuard::suspend`].
    pub fn resume(&self) -> io::Result<()> {
        ACTIVE.store(true, Ordering::SeqCst);
        let entered = enable_raw_mode().and_then(|()| {
            let mut out = io::stdout();
            execute!(out, EnterAlternateScreen, EnableBracketedPaste, Hide)?;
            out.flush()
        });
        if entered.is_err() {
            restore();
        }
        entered
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Undoes everything `enter` did, once; later calls do nothing. Errors are ignored: the
/// terminal may already be gone, and there is nothing better to do on the way out.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    let _ = execute!(out, DisableBracketedPaste, LeaveAlternateScreen, Show);
    let _ = out.flush();
    let _ = disable_raw_mode();
}

/// Whether the terminal is currently held (for tests and the driver).
pub fn is_active() -> bool {
    ACTIVE.load(Ordering::SeqCst)
}
