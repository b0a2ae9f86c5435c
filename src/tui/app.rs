//! The driver: owns the terminal, the event stream and the source; feeds messages to
//! `update`, runs the effects it returns, and draws when the model says it changed.
//! Generic over the terminal ([`Tty`]): [`run`] is the real one, [`run_on`] any, so a
//! whole-app test runs this very loop on ratatui's `TestBackend`.
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

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use crossterm::event::Event;
use crossterm::event::{KeyCode, KeyEventKind};
use futures_util::FutureExt;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::unbounded_channel;

use super::cleanup::{ExitReason, Teardown};
use super::config::{Config, config_dir};
use super::drafts::Drafts;
use super::effect::Msg;
use super::keymap::Keymap;
use super::model::Model;
use super::runner::Runner;
use super::theme::Theme;
use super::tty::{CrosstermTty, Input, Tty};
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
    model.behaviour.confirm = config.tui.confirm;
    model.drafts = Drafts::new(&opts.data_dir).load_all();
    Ok((
        model,
        theme,
        Duration::from_millis(config.tui.poll_ms.max(50)),
    ))
}

/// Runs the TUI on the real terminal until the user quits or a signal arrives.
pub async fn run<S: Source + Clone + 'static>(source: S, opts: Options) -> anyhow::Result<()> {
    let mut term = signal(SignalKind::terminate()).context("SIGTERM handler")?;
    let mut hup = signal(SignalKind::hangup()).context("SIGHUP handler")?;
    let mut quit = signal(SignalKind::quit()).context("SIGQUIT handler")?;
    let signalled = async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = hup.recv() => {}
            _ = quit.recv() => {}
        }
    };
    let tty = CrosstermTty::enter().context("cannot take the terminal")?;
    run_on(source, opts, tty, signalled).await
}

/// The whole app on any terminal: the real one ([`run`]) or a test's `TestBackend`
/// with scripted events. `signalled` completing is a signal's teardown (SIGTERM, …).
pub async fn run_on<S, T>(
    source: S,
    opts: Options,
    mut tty: T,
    signalled: impl Future<Output = ()>,
) -> anyhow::Result<()>
where
    S: Source + Clone + 'static,
    T: Tty,
{
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
    let (tx, rx) = unbounded_channel::<Msg>();
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
        &runner, &mut model, &theme, poll, &mut tty, rx, signalled,
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
    runner.run_final(fx).await;
    drop(tty);
    match looped {
        Ok(r) => r,
        Err(_) => Err(anyhow::anyhow!(
            "the terminal UI panicked; the draft is saved"
        )),
    }
}

/// A key that panics the loop, for the pseudo-terminal test of the panic path only.
fn panic_key() -> Option<char> {
    std::env::var("OQ_TEST_PANIC_KEY")
        .ok()
        .and_then(|v| v.chars().next())
}

async fn drive<S: Source + Clone + 'static, T: Tty>(
    runner: &Runner<S>,
    model: &mut Model,
    theme: &Theme,
    poll: Duration,
    tty: &mut T,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Msg>,
    signalled: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let signalled = std::pin::pin!(signalled.fuse());
    let mut signalled = signalled;
    let mut ticker = tokio::time::interval(poll);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The countdown's second: polled only while one is on screen (no idle ticks).
    let mut second = tokio::time::interval(Duration::from_secs(1));
    second.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let backstop = backstop();
    let panic_on = panic_key();
    let teardown = |t| Some(Msg::End(ExitReason::Teardown(t)));

    let first = update::init(model);
    runner.run_all(first, model, tty);
    draw(tty, model, theme)?;

    while !model.quit {
        // The second also wakes the open view when a snooze ends.
        let counting = model.countdown_on_screen() || model.queue.snoozed_next_return.is_some();
        let msg = tokio::select! {
            ev = tty.next_event() => event_msg(ev),
            Some(m) = rx.recv() => Some(m),
            _ = ticker.tick() => {
                runner.watcher.poll(&runner.source, runner.project.clone(), backstop, &runner.tx);
                None
            }
            _ = second.tick(), if counting => Some(Msg::Tick { now: now_ms() }),
            () = &mut signalled => teardown(Teardown::Signal),
        };
        let mut batch: Vec<Msg> = msg.into_iter().collect();
        // Coalesce: everything already waiting is handled before one draw.
        while batch.len() < 512 {
            if let Ok(m) = rx.try_recv() {
                batch.push(m);
            } else if let Some(ev) = tty.ready_event() {
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
            runner.run_all(fx, model, tty);
            if model.quit {
                break;
            }
        }
        if !model.quit && model.dirty {
            draw(tty, model, theme)?;
        }
    }
    Ok(())
}

fn event_msg(ev: Input) -> Option<Msg> {
    match ev {
        Some(Ok(Event::Key(k))) => Some(Msg::Key(k)),
        Some(Ok(Event::Paste(s))) => Some(Msg::Paste(s)),
        Some(Ok(Event::Resize(..))) => Some(Msg::Resize),
        Some(Ok(_)) => None,
        // The tty is gone or unreadable: quit rather than spin.
        Some(Err(_)) | None => Some(Msg::End(ExitReason::Teardown(Teardown::TtyGone))),
    }
}

/// One frame, inside the terminal's frame brackets (a synchronized update).
pub fn draw<T: Tty>(tty: &mut T, model: &mut Model, theme: &Theme) -> anyhow::Result<()> {
    tty.begin_frame();
    let area = tty
        .terminal()
        .draw(|f| view::draw(f, model, theme))
        .map_err(|e| anyhow::anyhow!("drawing: {e}"))?
        .area;
    // What a screenful is for PgDn/PgUp (`paging.rs`): the size just drawn.
    model.screen = (area.width, area.height);
    tty.end_frame().context("drawing")?;
    model.dirty = false;
    Ok(())
}
