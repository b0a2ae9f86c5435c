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
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::app_io::{edit, load_pages, out};
use super::cleanup::{ExitReason, Teardown};
use super::config::{Config, config_dir};
use super::drafts::Drafts;
use super::effect::{Effect, Msg};
use super::keymap::Keymap;
use super::model::{Model, PAGE};
use super::terminal::TerminalGuard;
use super::theme::Theme;
use super::watch::{Watcher, backstop};
use super::{update, view};
use crate::domain::OqError;
use crate::engine::StatusFilter;
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

type Term = Terminal<CrosstermBackend<Stdout>>;

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
    let outbox = Outbox::open(&opts.data_dir).map_err(anyhow::Error::msg)?;
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
    let backstop = backstop();
    let panic_on = panic_key();
    let teardown = |t| Some(Msg::End(ExitReason::Teardown(t)));

    let first = update::init(model);
    runner.run_all(first, model, guard, terminal, events);
    draw(terminal, model, theme)?;

    while !model.quit {
        let msg = tokio::select! {
            ev = events.next() => event_msg(ev),
            Some(m) = rx.recv() => Some(m),
            _ = ticker.tick() => {
                runner.watcher.poll(&runner.source, runner.project.clone(), backstop, &runner.tx);
                None
            }
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
fn fresh_terminal() -> io::Result<Term> {
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

struct Runner<S> {
    source: S,
    /// `source.describe()`: the outbox's name for it.
    name: String,
    tx: UnboundedSender<Msg>,
    project: Option<String>,
    drafts: Drafts,
    outbox: Outbox,
    watcher: Watcher,
}

fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl<S: Source + Clone + 'static> Runner<S> {
    /// The effects of the last cleanup, after the loop: only what must reach the disk
    /// (drafts, the outbox) and the watcher; nothing is spawned on the way out.
    fn run_final(&self, fx: Vec<Effect>) {
        for effect in fx {
            match effect {
                Effect::SaveDraft { .. }
                | Effect::RemoveDraft { .. }
                | Effect::Reconcile { .. }
                | Effect::StopWatcher => self.run(effect),
                _ => {}
            }
        }
    }

    fn send_outbox_count(&self, delivered: usize, conflicts: Vec<String>) {
        let pending = self.outbox.count_pending(Some(&self.name)).unwrap_or(0);
        let _ = self.tx.send(Msg::Outbox {
            pending,
            delivered,
            conflicts,
        });
    }

    fn run_all(
        &self,
        fx: Vec<Effect>,
        model: &mut Model,
        guard: &TerminalGuard,
        terminal: &mut Term,
        events: &mut EventStream,
    ) {
        for effect in fx {
            if let Effect::OpenEditor { question_id, text } = effect {
                // The event stream's reader would steal the editor's keys: stop it first.
                *events = EventStream::new();
                let result = edit(guard, self.drafts.dir(), &question_id, &text);
                if let Ok(t) = fresh_terminal() {
                    *terminal = t;
                }
                model.dirty = true;
                let _ = self.tx.send(Msg::EditorDone {
                    question_id,
                    result,
                });
            } else {
                self.run(effect);
            }
        }
    }

    fn run(&self, effect: Effect) {
        let (source, tx, project) = (self.source.clone(), self.tx.clone(), self.project.clone());
        match effect {
            Effect::Load { id, filter, pages } => {
                tokio::spawn(async move {
                    let page = load_pages(&source, project.as_deref(), filter, pages).await;
                    let _ = tx.send(Msg::Loaded {
                        id,
                        append: false,
                        page,
                    });
                });
            }
            Effect::LoadMore { id, filter, cursor } => {
                tokio::spawn(async move {
                    let page = source
                        .list(project.as_deref(), filter, Some(&cursor), PAGE)
                        .await
                        .map_err(text);
                    let _ = tx.send(Msg::Loaded {
                        id,
                        append: true,
                        page,
                    });
                });
            }
            Effect::LoadCounts { id } => {
                tokio::spawn(async move {
                    let open = source
                        .list(project.as_deref(), StatusFilter::Open, None, 1)
                        .await
                        .map(|l| l.total)
                        .map_err(text);
                    let waiting = source.waiting(project.as_deref()).await.map_err(text);
                    let _ = tx.send(Msg::Counts { id, open, waiting });
                });
            }
            Effect::Submit {
                id,
                key,
                question_id,
                project,
                input,
            } => {
                tokio::spawn(async move {
                    let sent = source
                        .answer_once(Some(&project), &question_id, &input, &key)
                        .await;
                    let msg = match sent {
                        Err(OqError::Queued { .. }) => Msg::Queued { question_id },
                        other => Msg::Answered {
                            id,
                            question_id,
                            result: other.map(Box::new).map_err(text),
                        },
                    };
                    let _ = tx.send(msg);
                });
            }
            Effect::StopWatcher => self.watcher.stop(),
            Effect::Reconcile {
                key,
                question_id,
                project,
                input,
            } => {
                // Synchronous on purpose: on disk before the process may end.
                let _ = self
                    .outbox
                    .enqueue(&key, &self.name, Some(&project), &question_id, &input);
                self.send_outbox_count(0, Vec::new());
            }
            Effect::FlushOutbox => {
                let (outbox, name) = (self.outbox.clone(), self.name.clone());
                tokio::spawn(async move {
                    let report = outbox.deliver_all(&source, &name).await;
                    let (delivered, conflicts) = match report {
                        Ok(r) => {
                            let qs = r
                                .conflicts
                                .iter()
                                .filter_map(|k| outbox.get(k).ok().flatten())
                                .map(|e| e.question_id)
                                .collect();
                            (r.delivered.len(), qs)
                        }
                        Err(_) => (0, Vec::new()),
                    };
                    let pending = outbox.count_pending(Some(&name)).unwrap_or(0);
                    let _ = tx.send(Msg::Outbox {
                        pending,
                        delivered,
                        conflicts,
                    });
                });
            }
            Effect::SubmitChoices {
                question_id,
                project,
                answers,
            } => {
                tokio::spawn(async move {
                    let input = crate::domain::AnswerInput {
                        answers: Some(answers),
                        ..crate::domain::AnswerInput::default()
                    };
                    let result = source
                        .answer(Some(&project), &question_id, &input)
                        .await
                        .map(drop)
                        .map_err(text);
                    let _ = tx.send(Msg::ChoicesSent {
                        question_id,
                        result,
                    });
                });
            }
            Effect::Readiness { project, gate } => {
                tokio::spawn(async move {
                    let result = source.readiness(&project, Some(gate)).await.map_err(text);
                    let _ = tx.send(Msg::ReadinessRecorded { gate, result });
                });
            }
            Effect::SaveDraft { question_id, text } => {
                // Synchronous on purpose: a draft typed before a SIGTERM is on disk.
                let _ = self.drafts.save(&question_id, &text);
            }
            Effect::RemoveDraft { question_id } => {
                let _ = self.drafts.remove(&question_id);
            }
            Effect::Bell => out(b"\x07"),
            Effect::Notify { title, body } => {
                let clean = |s: &str| {
                    s.chars()
                        .filter(|c| !c.is_control() && *c != ';')
                        .collect::<String>()
                };
                let (title, body) = (clean(&title), clean(&body));
                out(
                    format!("\x1b]9;{title}: {body}\x1b\\\x1b]777;notify;{title};{body}\x1b\\")
                        .as_bytes(),
                );
            }
            Effect::OpenEditor { .. } => {}
            Effect::Quit => {}
        }
    }
}
