//! Why a session's connection ended ([`ExitReason`]) and what each end releases
//! ([`ClearFlags`]): plain data, below the effects that carry it ([`Msg::End`]) and the
//! one cleanup that acts on it (`cleanup.rs`).
//!
//! [`Msg::End`]: super::effect::Msg::End

/// Why the session's connection ended. Every terminal path is one of these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExitReason {
    /// The source was silent past the watcher's backstop.
    Stalled,
    /// A poll or a request failed (an HTTP or stream error).
    Errored(String),
    /// The peer is gone (connection refused: the server process died).
    PeerDied(String),
    /// The session ends: the quit key, a signal, the tty gone, a panic.
    Teardown(Teardown),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Teardown {
    Quit,
    /// SIGTERM, SIGHUP (the SSH link dropped) or SIGQUIT.
    Signal,
    /// The event stream ended or failed without a signal.
    TtyGone,
    Panic,
}

/// What differs between the exits. Everything else is released on every path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClearFlags {
    /// Give the terminal back and end the run.
    /// - `true` — teardown: nothing follows, the terminal must be restored.
    /// - `false` — stall / error / peer died: the TUI stays up, offline, and reattaches;
    ///   ending the session would lose the person's place for a network blip.
    pub release_terminal: bool,
    /// Reset the answer form (after its draft is flushed).
    /// - `true` — stall / error / peer died: the question may be answered elsewhere
    ///   while we were cut off; the next list rebuilds the form from the saved draft, so
    ///   nothing of the dead connection (undo history, a half-sent state) leaks on.
    ///   Only the form of a connection that was attached: one opened while offline
    ///   belongs to none (offline is a mode: the person types, Enter queues), so the
    ///   failed polls that follow never close it.
    /// - `false` — teardown: the form dies with the process; resetting it would only
    ///   cost a redraw on the way out, and the panic path must do as little as possible.
    pub reset_form: bool,
}

impl ExitReason {
    pub fn flags(&self) -> ClearFlags {
        match self {
            ExitReason::Stalled | ExitReason::Errored(_) | ExitReason::PeerDied(_) => ClearFlags {
                release_terminal: false,
                reset_form: true,
            },
            ExitReason::Teardown(_) => ClearFlags {
                release_terminal: true,
                reset_form: false,
            },
        }
    }

    pub fn describe(&self) -> String {
        match self {
            ExitReason::Stalled => "the source went silent".into(),
            ExitReason::Errored(e) => format!("the source failed: {e}"),
            ExitReason::PeerDied(e) => format!("the source is gone: {e}"),
            ExitReason::Teardown(_) => "closing".into(),
        }
    }
}
