//! The driver: owns the terminal, the event stream and the source; feeds messages to
//! `update`, runs the effects it returns, and draws when the model says it changed.
//!
//! - Replies carry the id they were requested with; `update` drops stale ones.
//! - The source's revision is polled every `poll_ms` (the local store is shared with
//!   other processes), one poll in flight at a time; a change reloads the list.
//! - Draws are coalesced: every message already waiting is handled first, then one draw,
//!   wrapped in a synchronized update so slow links see no tearing. No idle redraws.
//! - SIGTERM, SIGHUP and SIGQUIT become a quit; so does the event stream ending or
//!   failing (a tty gone without SIGHUP must not spin). Every exit goes through the
//!   terminal guard's one restore.
//! - Every end — a quit, a signal, the tty gone, an error or a panic of the loop — is
//!   an [`ExitReason`] fed to `update`, which calls the one cleanup
//!   (`cleanup::abort_open_work`); the driver only runs the effects it returns, and
//!   once more after the loop (a no-op after a clean quit, the whole release after a
//!   panic). The watcher (`watch.rs`) feeds stalls and dead peers the same way.
//! - A 1 s tick runs only while a bridged question's countdown is on screen
//!   ([`Model::countdown_on_screen`]); `update` redraws only when the shown second changes.
//! - The effects themselves are run by [`Runner`] (`runner.rs`).

use std::io::{self, Stdout, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use crossterm::event::{Event, EventStream};
use crossterm::event::{KeyCode, KeyEventKind};
use crossterm::terminal::{BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate};
use futures_util::{FutureExt, StreamExt};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::unbounded_channel;

use super::cleanup::{ExitReason, Teardown};
use super::config::{Config, config_dir};
use super::drafts::Drafts;
use super::effect::Msg;
use super::keymap::Keymap;
use super::model::Model;
use super::runner::Runner;
use super::terminal::TerminalGuard;
use super::theme::Theme;
use super::watch::{Watcher, backstop};
use super::{update, view};
use crate::engine::sqlite::now_ms;
use crate::source::Source;
use crate::source::outbox::{self, Outbox};

/// What the driver needs besides the source.
#[derive(Debug, Clone)]
pub struct Options {
    pub user: String,
    pub project: Option<String>,
    /// Drafts live in `<data_dir>/drafts/`.
    pub data_dir: PathBuf,
    /// `None`: `OQ_CONFIG_DIR`, else the platform's config dir for oq.
    pub config_dir: Option<PathBuf>,
}

pub(super) type Term = Terminal<CrosstermBackend<Stdout>>;

/// Builds the model from the config, as the driver and the benchmark do.
pub fn prepare(source_name: &str, opts: &Options) -> anyhow::Result<(Model, Theme, Duration)> {
    let dir = opts.config_dir.clone().or_else(config_dir);
    let config = Config::load(dir.as_deref()).map_err(anyhow::Error::msg)?;
    let keymap = Keymap::with_config(&config.keys).map_err(|e| anyhow::anyhow!("[keys]: {e}"))?;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let theme =
        Theme::load(&config.tui.theme, dir.as_deref(), no_color).map_err(anyhow::Error::msg)?;
    let mut model = Model::new(
        &opts.user,
        source_name,
        opts.project.clone(),
        now_ms(),
        keymap,
    );
    model.behaviour.bell = config.tui.bell;
    model.behaviour.notify = config.tui.notify;
    model.drafts = Drafts::new(&opts.data_dir).load_all();
    Ok((
        model,
        theme,
        Duration::from_millis(config.tui.poll_ms.max(50)),
    ))
}

/// Runs the TUI until the user quits or a signal arrives.
pub async fn run<S: Source + Clone + 'static>(source: S, opts: Options) -> anyhow::Result<()> {
    let (mut model, theme, poll) = prepare(&source.describe(), &opts)?;
    model.client_nonce = outbox::new_key().map_err(anyhow::Error::msg)?;
    let outbox = match Outbox::open(&opts.data_dir) {
        Ok(outbox) => outbox,
        // The local engine never queues: on a full disk its TUI still opens (issue 15).
        Err(e) if source.describe() == "local" => {
            tracing::warn!(error = %e, "outbox unavailable; the local source needs none");
            Outbox::in_memory().map_err(anyhow::Error::msg)?
        }
        Err(e) => return Err(anyhow::Error::msg(e)),
    };
    let drafts = Drafts::new(&opts.data_dir);
    let signals = Signals {
        term: signal(SignalKind::terminate()).context("SIGTERM handler")?,
        hup: signal(SignalKind::hangup()).context("SIGHUP handler")?,
        quit: signal(SignalKind::quit()).context("SIGQUIT handler")?,
    };
    let guard = TerminalGuard::enter().context("cannot take the terminal")?;
    let mut terminal = fresh_terminal().context("terminal")?;
    let (tx, rx) = unbounded_channel::<Msg>();
    let mut events = EventStream::new();
    let runner = Runner {
        name: source.describe(),
        source,
        tx: tx.clone(),
        project: opts.project.clone(),
        drafts,
        outbox,
        watcher: Watcher::default(),
    };
    let looped = std::panic::AssertUnwindSafe(drive(
        &runner,
        &mut model,
        &theme,
        poll,
        &guard,
        &mut terminal,
        &mut events,
        rx,
        signals,
    ))
    .catch_unwind()
    .await;
    // The one cleanup once more, whatever ended the loop: after a clean quit it finds
    // nothing held; after an error or a panic it releases everything.
    let how = match &looped {
        Ok(Ok(())) => Teardown::Quit,
        Ok(Err(_)) => Teardown::TtyGone,
        Err(_) => Teardown::Panic,
    };
    let fx = update::update(&mut model, Msg::End(ExitReason::Teardown(how)));
    runner.run_final(fx);
    drop(terminal);
    drop(guard);
    match looped {
        Ok(r) => r,
        Err(_) => Err(anyhow::anyhow!(
            "the terminal UI panicked; the draft is saved"
        )),
    }
}

struct Signals {
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
    quit: tokio::signal::unix::Signal,
}

/// A key that panics the loop, for the pseudo-terminal test of the panic path only.
fn panic_key() -> Option<char> {
    std::env::var("OQ_TEST_PANIC_KEY")
        .ok()
        .and_then(|v| v.chars().next())
}

#[allow(clippy::too_many_arguments)]
async fn drive<S: Source + Clone + 'static>(
    runner: &Runner<S>,
    model: &mut Model,
    theme: &Theme,
    poll: Duration,
    guard: &TerminalGuard,
    terminal: &mut Term,
    events: &mut EventStream,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Msg>,
    mut signals: Signals,
) -> anyhow::Result<()> {
    let mut ticker = tokio::time::interval(poll);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The countdown's second: polled only while one is on screen (no idle ticks).
    let mut second = tokio::time::interval(Duration::from_secs(1));
    second.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let backstop = backstop();
    let panic_on = panic_key();
    let teardown = |t| Some(Msg::End(ExitReason::Teardown(t)));

    let first = update::init(model);
    runner.run_all(first, model, guard, terminal, events);
    draw(terminal, model, theme)?;

    while !model.quit {
        let counting = model.countdown_on_screen();
        let msg = tokio::select! {
            ev = events.next() => event_msg(ev),
            Some(m) = rx.recv() => Some(m),
            _ = ticker.tick() => {
                runner.watcher.poll(&runner.source, runner.project.clone(), backstop, &runner.tx);
                None
            }
            _ = second.tick(), if counting => Some(Msg::Tick { now: now_ms() }),
            _ = signals.term.recv() => teardown(Teardown::Signal),
            _ = signals.hup.recv() => teardown(Teardown::Signal),
            _ = signals.quit.recv() => teardown(Teardown::Signal),
        };
        let mut batch: Vec<Msg> = msg.into_iter().collect();
        // Coalesce: everything already waiting is handled before one draw.
        while batch.len() < 512 {
            if let Ok(m) = rx.try_recv() {
                batch.push(m);
            } else if let Some(ev) = events.next().now_or_never() {
                batch.extend(event_msg(ev));
            } else {
                break;
            }
        }
        for m in batch {
            if let (Some(c), Msg::Key(k)) = (panic_on, &m)
                && k.kind == KeyEventKind::Press
                && k.code == KeyCode::Char(c)
            {
                panic!("OQ_TEST_PANIC_KEY pressed");
            }
            if let Msg::End(reason) = &m {
                // Every non-clean end is worth a line in the log (never on screen).
                tracing::info!(?reason, "connection ended");
            }
            let fx = update::update(model, m);
            runner.run_all(fx, model, guard, terminal, events);
            if model.quit {
                break;
            }
        }
        if !model.quit && model.dirty {
            draw(terminal, model, theme)?;
        }
    }
    Ok(())
}

/// A cleared screen and a terminal whose buffers match it. (`Terminal::clear` would
/// ask the terminal for the cursor position, which not every terminal answers.)
pub(super) fn fresh_terminal() -> io::Result<Term> {
    let mut out = io::stdout();
    crossterm::execute!(out, Clear(ClearType::All))?;
    Terminal::new(CrosstermBackend::new(out))
}

fn event_msg(ev: Option<io::Result<Event>>) -> Option<Msg> {
    match ev {
        Some(Ok(Event::Key(k))) => Some(Msg::Key(k)),
        Some(Ok(Event::Paste(s))) => Some(Msg::Paste(s)),
        Some(Ok(Event::Resize(..))) => Some(Msg::Resize),
        Some(Ok(_)) => None,
        // The tty is gone or unreadable: quit rather than spin.
        Some(Err(_)) | None => Some(Msg::End(ExitReason::Teardown(Teardown::TtyGone))),
    }
}

/// One frame, inside a synchronized update.
pub fn draw(terminal: &mut Term, model: &mut Model, theme: &Theme) -> anyhow::Result<()> {
    let _ = crossterm::queue!(terminal.backend_mut(), BeginSynchronizedUpdate);
    terminal
        .draw(|f| view::draw(f, model, theme))
        .context("drawing")?;
    let _ = crossterm::queue!(terminal.backend_mut(), EndSynchronizedUpdate);
    terminal.backend_mut().flush().context("drawing")?;
    model.dirty = false;
    Ok(())
}
