//! The whole TUI in-process: the real driver loop (`oq::tui::app::run_on`) on ratatui's
//! `TestBackend` over a real source, fed scripted key events, its frames read back as
//! text. The loop runs on a thread of its own with its own runtime, as the binary does;
//! the test talks to it through channels, so it waits for screen content (a generous
//! deadline, no durations asserted) and never sleeps for the loop.
//!
//! Dropping an [`App`] sends it the signal teardown and joins its thread: nothing is
//! left running.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use oq::source::{LocalSource, Source};
use oq::tui::app::{Options, run_on};
use oq::tui::tty::{Input, Tty};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use tokio::sync::{mpsc, oneshot};

pub const DEADLINE: Duration = Duration::from_secs(30);

/// What the editor does with the text it is given (a test's scripted `$EDITOR`).
pub type Editor = Box<dyn FnMut(&str) -> Result<String, String> + Send>;

/// The test's terminal: frames on a `TestBackend`, each published for the test to read.
struct TestTty {
    terminal: Terminal<TestBackend>,
    events: mpsc::UnboundedReceiver<Input>,
    screen: Arc<Mutex<Buffer>>,
    raw: Arc<Mutex<Vec<u8>>>,
    editor: Editor,
}

impl Tty for TestTty {
    type Backend = TestBackend;

    fn terminal(&mut self) -> &mut Terminal<TestBackend> {
        &mut self.terminal
    }

    async fn next_event(&mut self) -> Input {
        self.events.recv().await.flatten()
    }

    fn ready_event(&mut self) -> Option<Input> {
        match self.events.try_recv() {
            Ok(ev) => Some(ev),
            Err(mpsc::error::TryRecvError::Empty) => None,
            Err(mpsc::error::TryRecvError::Disconnected) => Some(None),
        }
    }

    fn end_frame(&mut self) -> io::Result<()> {
        *self.screen.lock().unwrap() = self.terminal.backend().buffer().clone();
        Ok(())
    }

    fn raw(&mut self, bytes: &[u8]) {
        self.raw.lock().unwrap().extend_from_slice(bytes);
    }

    fn edit(&mut self, _dir: &Path, _question_id: &str, text: &str) -> Result<String, String> {
        (self.editor)(text)
    }
}

/// The running app and the test's ends of its channels.
pub struct App {
    keys: Option<mpsc::UnboundedSender<Input>>,
    screen: Arc<Mutex<Buffer>>,
    raw: Arc<Mutex<Vec<u8>>>,
    signal: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<anyhow::Result<()>>>,
    _config: tempfile::TempDir,
}

/// How to start an [`App`].
pub struct Start {
    pub user: String,
    pub project: Option<String>,
    pub data_dir: PathBuf,
    pub width: u16,
    pub height: u16,
    /// Written as `config.toml` in the app's config dir.
    pub config: String,
    pub editor: Editor,
}

impl Start {
    pub fn new(data_dir: &Path, user: &str) -> Start {
        Start {
            user: user.into(),
            project: None,
            data_dir: data_dir.to_path_buf(),
            width: 100,
            height: 30,
            config: String::new(),
            editor: Box::new(|_| Err("no editor in this test".into())),
        }
    }
}

impl App {
    /// The app on the local store in `data_dir`, acting as `user`, at 100×30.
    pub fn local(data_dir: &Path, user: &str) -> App {
        App::start(Start::new(data_dir, user))
    }

    /// The app on the local store of `start.data_dir`.
    pub fn start(start: Start) -> App {
        let engine = Arc::new(super::engine(&start.data_dir));
        let source = LocalSource::new(engine, start.user.clone());
        App::start_on(source, start)
    }

    /// The app on any source.
    pub fn start_on<S: Source + Clone + Send + 'static>(source: S, start: Start) -> App {
        let config = tempfile::tempdir().expect("config dir");
        std::fs::write(config.path().join("config.toml"), &start.config).expect("config");
        let (keys, events) = mpsc::unbounded_channel();
        let (signal, signalled) = oneshot::channel::<()>();
        let screen = Arc::new(Mutex::new(Buffer::empty(ratatui::layout::Rect::new(
            0,
            0,
            start.width,
            start.height,
        ))));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let tty = TestTty {
            terminal: Terminal::new(TestBackend::new(start.width, start.height)).expect("terminal"),
            events,
            screen: Arc::clone(&screen),
            raw: Arc::clone(&raw),
            editor: start.editor,
        };
        let opts = Options {
            user: start.user,
            project: start.project,
            data_dir: start.data_dir,
            config_dir: Some(config.path().to_path_buf()),
        };
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            let result = runtime.block_on(run_on(source, opts, tty, async {
                let _ = signalled.await;
            }));
            runtime.shutdown_timeout(Duration::from_secs(5));
            result
        });
        App {
            keys: Some(keys),
            screen,
            raw,
            signal: Some(signal),
            thread: Some(thread),
            _config: config,
        }
    }

    pub fn event(&self, ev: Event) {
        if let Some(keys) = &self.keys {
            let _ = keys.send(Some(Ok(ev)));
        }
    }

    pub fn key(&self, code: KeyCode) {
        self.event(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    }

    pub fn ctrl(&self, c: char) {
        self.event(Event::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::CONTROL,
        )));
    }

    pub fn ch(&self, c: char) {
        self.key(KeyCode::Char(c));
    }

    pub fn typed(&self, s: &str) {
        s.chars().for_each(|c| self.ch(c));
    }

    /// The last frame drawn, as text (one line per row, right-trimmed).
    pub fn screen(&self) -> String {
        let buffer = self.screen.lock().unwrap().clone();
        let width = buffer.area.width as usize;
        buffer
            .content
            .chunks(width.max(1))
            .map(|row| {
                row.iter()
                    .map(ratatui::buffer::Cell::symbol)
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The bytes written outside frames (the bell, OSC notifications).
    pub fn raw(&self) -> Vec<u8> {
        self.raw.lock().unwrap().clone()
    }

    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if pred(&s) {
                return s;
            }
            assert!(
                !self.thread.as_ref().is_some_and(JoinHandle::is_finished),
                "the app ended while waiting for {what}; screen:\n{s}"
            );
            assert!(
                start.elapsed() < DEADLINE,
                "timed out waiting for {what}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn wait_text(&self, text: &str) -> String {
        self.wait_for(text, |s| s.contains(text))
    }

    /// The input ends, as when the terminal is gone (EOF or EIO on the tty).
    pub fn end_input(&mut self) {
        if let Some(keys) = self.keys.take() {
            let _ = keys.send(None);
        }
    }

    /// The signal teardown (what SIGTERM, SIGHUP or SIGQUIT become).
    pub fn signal(&mut self) {
        if let Some(s) = self.signal.take() {
            let _ = s.send(());
        }
    }

    /// Waits for the app to end by itself (after `q`, [`App::end_input`] or
    /// [`App::signal`]) and returns how `run_on` ended.
    pub fn join(mut self) -> anyhow::Result<()> {
        let thread = self.thread.take().expect("running");
        let start = Instant::now();
        while !thread.is_finished() {
            assert!(
                start.elapsed() < DEADLINE,
                "the app did not end; screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        thread.join().expect("the app's thread panicked")
    }
}

impl Drop for App {
    fn drop(&mut self) {
        self.signal();
        self.end_input();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
