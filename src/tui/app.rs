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

use std::io::{self, Stdout, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use crossterm::event::{Event, EventStream};
use crossterm::terminal::{BeginSynchronizedUpdate, Clear, ClearType, EndSynchronizedUpdate};
use futures_util::{FutureExt, StreamExt};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use super::config::{Config, config_dir};
use super::drafts::Drafts;
use super::effect::{Effect, Msg};
use super::keymap::Keymap;
use super::model::{Model, PAGE};
use super::terminal::TerminalGuard;
use super::theme::Theme;
use super::{update, view};
use crate::engine::StatusFilter;
use crate::engine::sqlite::now_ms;
use crate::source::Source;
use crate::wire::QuestionList;

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
    let drafts = Drafts::new(&opts.data_dir);
    let mut sigterm = signal(SignalKind::terminate()).context("SIGTERM handler")?;
    let mut sighup = signal(SignalKind::hangup()).context("SIGHUP handler")?;
    let mut sigquit = signal(SignalKind::quit()).context("SIGQUIT handler")?;
    let guard = TerminalGuard::enter().context("cannot take the terminal")?;
    let mut terminal = fresh_terminal().context("terminal")?;

    let (tx, mut rx) = unbounded_channel::<Msg>();
    let mut events = EventStream::new();
    let mut ticker = tokio::time::interval(poll);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let polling = Arc::new(AtomicBool::new(false));
    let runner = Runner {
        source,
        tx: tx.clone(),
        project: opts.project.clone(),
        drafts,
    };

    let first = update::init(&mut model);
    runner.run_all(first, &mut model, &guard, &mut terminal, &mut events);
    draw(&mut terminal, &mut model, &theme)?;

    while !model.quit {
        let msg = tokio::select! {
            ev = events.next() => event_msg(ev),
            Some(m) = rx.recv() => Some(m),
            _ = ticker.tick() => {
                runner.poll_revision(&polling);
                None
            }
            _ = sigterm.recv() => Some(Msg::Quit),
            _ = sighup.recv() => Some(Msg::Quit),
            _ = sigquit.recv() => Some(Msg::Quit),
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
            let fx = update::update(&mut model, m);
            runner.run_all(fx, &mut model, &guard, &mut terminal, &mut events);
            if model.quit {
                break;
            }
        }
        if !model.quit && model.dirty {
            draw(&mut terminal, &mut model, &theme)?;
        }
    }
    drop(terminal);
    drop(guard);
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
        Some(Err(_)) | None => Some(Msg::Quit),
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
    tx: UnboundedSender<Msg>,
    project: Option<String>,
    drafts: Drafts,
}

fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl<S: Source + Clone + 'static> Runner<S> {
    fn poll_revision(&self, polling: &Arc<AtomicBool>) {
        if polling.swap(true, Ordering::SeqCst) {
            return;
        }
        let (source, tx, project, polling) = (
            self.source.clone(),
            self.tx.clone(),
            self.project.clone(),
            Arc::clone(polling),
        );
        tokio::spawn(async move {
            let revision = source.revision(project.as_deref()).await.map_err(text);
            polling.store(false, Ordering::SeqCst);
            let _ = tx.send(Msg::Revision {
                now: now_ms(),
                revision,
            });
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
                question_id,
                project,
                input,
            } => {
                tokio::spawn(async move {
                    let result = source
                        .answer(Some(&project), &question_id, &input)
                        .await
                        .map(Box::new)
                        .map_err(text);
                    let _ = tx.send(Msg::Answered {
                        id,
                        question_id,
                        result,
                    });
                });
            }
            Effect::SubmitChoices {
                question_id,
                answers: _,
            } => {
                let result = Err(format!(
                    "answering questions with options is not supported by this source ({}) yet",
                    source.describe()
                ));
                let _ = tx.send(Msg::ChoicesSent {
                    question_id,
                    result,
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

fn out(bytes: &[u8]) {
    let mut o = io::stdout();
    let _ = o.write_all(bytes);
    let _ = o.flush();
}

async fn load_pages<S: Source>(
    source: &S,
    project: Option<&str>,
    filter: StatusFilter,
    pages: usize,
) -> Result<QuestionList, String> {
    let mut list = source
        .list(project, filter, None, PAGE)
        .await
        .map_err(text)?;
    for _ in 1..pages {
        let Some(cursor) = list.cursor.clone() else {
            break;
        };
        let next = source
            .list(project, filter, Some(&cursor), PAGE)
            .await
            .map_err(text)?;
        list.items.extend(next.items);
        list.cursor = next.cursor;
        list.total = next.total;
    }
    Ok(list)
}

/// `$VISUAL`, `$EDITOR` or `vi` on a temp file holding `text`; the file's text after.
fn edit(
    guard: &TerminalGuard,
    dir: &Path,
    question_id: &str,
    text: &str,
) -> Result<String, String> {
    std::fs::create_dir_all(dir).map_err(text_err)?;
    let path = dir.join(format!(".edit-{}-{question_id}.md", std::process::id()));
    std::fs::write(&path, text).map_err(text_err)?;
    let editor = std::env::var("VISUAL")
        .ok()
        .or_else(|| std::env::var("EDITOR").ok())
        .filter(|e| !e.trim().is_empty())
        .unwrap_or_else(|| "vi".into());
    guard.suspend();
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(&path)
        .status();
    let resumed = guard.resume();
    let result = match status {
        Ok(s) if s.success() => std::fs::read_to_string(&path).map_err(text_err),
        Ok(s) => Err(format!("{editor} exited with {s}")),
        Err(e) => Err(format!("{editor}: {e}")),
    };
    let _ = std::fs::remove_file(&path);
    resumed.map_err(text_err)?;
    result
}

fn text_err(e: io::Error) -> String {
    e.to_string()
}
