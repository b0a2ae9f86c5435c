//! The terminal UI (`oq` with no subcommand), in the shape of STYLE.md:
//!
//! - `model` — the state; `update` — pure `update(&mut Model, Msg) -> Vec<Effect>`;
//!   `keys` — its key handling by focus; `paging` — the queue as pages of the source's
//!   list (search, sort, `G`, PgDn over the whole filter); `effect` — effects and messages as data; `choices` — the options form's state;
//!   `auto` — the auto-delegate countdown of bridged OpenCode questions; `writes` — the
//!   actions that record in the person's name, behind `confirm` (what they would record,
//!   and the confirming key); `modal` — the layer that takes every key while it is up;
//!   `snooze` — "not now": the snooze prompt, the snoozed list, the ring on return;
//! - `app` — the driver's loop (tokio, a [`tty::Tty`]'s events, the ticks); `runner` —
//!   runs the effects on the source, drafts and outbox;
//! - `view/` — one file per pane, a function of the model;
//! - `keymap`, `theme`, `config`, `drafts`, `terminal` (the one guard), `tty` (what the
//!   loop needs of a terminal: the real one, or a test's `TestBackend`).
//!
//! The TUI is generic over [`crate::source::Source`]: it never names the local engine
//! except in [`open_local`]; [`open`] takes any source.

pub mod app;
mod app_io;
pub mod auto;
pub mod choices;
pub mod cleanup;
pub mod config;
pub mod confirm;
pub mod decisions;
pub mod drafts;
pub mod effect;
pub mod exit;
pub mod help;
mod input;
mod interaction;
mod interrupt;
pub mod keymap;
mod keys;
pub mod link;
mod memory;
pub mod modal;
pub mod model;
mod notice;
mod notify;
pub mod outbox;
mod paging;
mod reload;
mod runner;
pub mod screens;
mod snooze;
mod submit;
pub mod terminal;
pub mod theme;
pub mod triage;
pub mod tty;
pub mod update;
pub mod view;
pub mod watch;
mod words;
mod writes;

use std::io::{IsTerminal, Write as _};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::LocalEngine;
use crate::source::{LocalSource, Source};

/// `oq` with no subcommand on the embedded engine.
pub fn open_local(
    engine: Arc<LocalEngine>,
    user: String,
    data_dir: PathBuf,
    project: Option<String>,
) -> i32 {
    let source = LocalSource::new(engine, user.clone());
    open(source, user, data_dir, project)
}

/// The TUI on any source. Returns the exit code.
pub fn open<S: Source + Clone + 'static>(
    source: S,
    user: String,
    data_dir: PathBuf,
    project: Option<String>,
) -> i32 {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        eprintln!(
            "oq: the terminal UI needs a terminal; for scripts use `oq list` (see `oq --help`)"
        );
        return crate::domain::error::exit::USAGE;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("oq: cannot start: {e}");
            return 1;
        }
    };
    // Who the source says we are (a server knows us by the token); the given user else.
    let user = runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(2), source.identity()).await })
        .ok()
        .and_then(Result::ok)
        .map_or(user, |i| i.user);
    let opts = app::Options {
        user,
        project,
        data_dir,
        config_dir: None,
    };
    let result = runtime.block_on(app::run(source, opts));
    runtime.shutdown_timeout(Duration::from_millis(200));
    match result {
        Ok(()) => 0,
        Err(e) => {
            terminal::restore();
            // Not `eprintln!`: on a terminal that is gone it would panic (EIO).
            let _ = writeln!(std::io::stderr(), "oq: {e:#}");
            1
        }
    }
}
