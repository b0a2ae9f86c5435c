//! The TUI benchmark (`cargo bench --bench tui`), plain `fn main`, no harness.
//!
//! With 100,000 open questions in a local store:
//! 1. first full frame from process start: the built `oq` in a pseudo-terminal, timed
//!    from spawn until the first frame's queue title appears in its output;
//! 2. the same in-process: engine open → first page → first `terminal.draw`;
//! 3. keypress to frame while scrolling: `update` + `view` for one `j`, 2,000 times
//!    (page loads are the driver's background work and are run outside the timing);
//! 4. resident memory of the spawned TUI and of this process;
//! 5. the floor: ratatui drawing the same visible rows, prebuilt, alone.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers};
use oq::domain::{Afeta, Event, SessionKind};
use oq::engine::{
    EngineConfig, ListQuery, LocalEngine, NewEvent, SqliteStore, StatusFilter, Store,
};
use oq::source::{LocalSource, Source};
use oq::tui::effect::{Effect, Msg};
use oq::tui::keymap::Keymap;
use oq::tui::model::{Model, PAGE};
use oq::tui::theme::Theme;
use oq::tui::update::{init, update};
use oq::tui::view;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

const QUESTIONS: usize = 100_000;
const W: u16 = 120;
const H: u16 = 40;

fn build(dir: &std::path::Path) {
    let store = SqliteStore::open_in(dir).expect("store");
    let session = NewEvent {
        project_id: "bench".into(),
        actor: "me".into(),
        event: Event::SessionStarted {
            session_id: "s-bench".into(),
            kind: SessionKind::Conversation,
            author: "me".into(),
        },
    };
    store
        .transact(|_| Ok((vec![session], ())))
        .expect("session");
    for chunk in 0..QUESTIONS / 5000 {
        let batch: Vec<NewEvent> = (0..5000)
            .map(|i| {
                let n = chunk * 5000 + i;
                NewEvent {
                    project_id: "bench".into(),
                    actor: "po".into(),
                    event: Event::OpenQuestion {
                        question_id: format!("q-bench{n:07}"),
                        pergunta: format!("Question {n}: should the checkout accept payment method {} in region {}?", n % 17, n % 5),
                        sugestao: Some("Yes, behind a flag".into()),
                        afeta: Afeta { regras: vec![format!("RN-{}", n % 900)], historias: vec![], tarefas: vec![] },
                        autor: "po".into(),
                        session_id: "s-bench".into(),
                        source: "oq".into(),
                        prompts: Vec::new(),
                        upstream: None,
                    },
                }
            })
            .collect();
        store.transact(|_| Ok((batch, ()))).expect("questions");
    }
}

fn rss_kb(pid: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn stats(mut v: Vec<Duration>) -> String {
    v.sort();
    let mean = v.iter().sum::<Duration>() / v.len() as u32;
    let p = |q: f64| v[((v.len() as f64 * q) as usize).min(v.len() - 1)];
    format!(
        "mean {:.3} ms, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        ms(mean),
        ms(p(0.5)),
        ms(p(0.99)),
        ms(v[v.len() - 1])
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs a load effect the way the driver does, returning its reply.
async fn run_load(source: &LocalSource, e: Effect) -> Option<Msg> {
    match e {
        Effect::Load { id, query, .. } => Some(Msg::Loaded {
            id,
            append: false,
            page: source.list(None, &query).await.map_err(|e| e.to_string()),
        }),
        Effect::LoadMore { id, query } => Some(Msg::Loaded {
            id,
            append: true,
            page: source.list(None, &query).await.map_err(|e| e.to_string()),
        }),
        Effect::LoadCounts { id } => {
            let open = source
                .list(None, &ListQuery::new(StatusFilter::Open).limit(1))
                .await
                .map(|l| l.total)
                .map_err(|e| e.to_string());
            Some(Msg::Counts {
                id,
                open,
                waiting: source.waiting(None).await.map_err(|e| e.to_string()),
                newest: vec![],
            })
        }
        _ => None,
    }
}

fn pty_first_frame(dir: &std::path::Path) -> (Duration, u64) {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: H,
            cols: W,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("pty");
    let config = tempfile::tempdir().expect("config");
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_oq"));
    cmd.args(["--data-dir", dir.to_str().unwrap(), "--as", "me"]);
    cmd.env("TERM", "xterm-256color");
    cmd.env("OQ_CONFIG_DIR", config.path());
    let started = Instant::now();
    let mut child = pair.slave.spawn_command(cmd).expect("spawn");
    let mut reader = pair.master.try_clone_reader().expect("reader");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    let needle = "Question 0: should";
    let first = loop {
        if String::from_utf8_lossy(&seen.lock().unwrap()).contains(needle) {
            break started.elapsed();
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let out = String::from_utf8_lossy(&seen.lock().unwrap()).to_string();
            panic!("no first frame; output: {out:?}");
        }
        std::thread::sleep(Duration::from_micros(200));
    };
    std::thread::sleep(Duration::from_millis(1500));
    let rss = child
        .process_id()
        .map(|p| rss_kb(&p.to_string()))
        .unwrap_or(0);
    let _ = child.kill();
    let _ = child.wait();
    (first, rss)
}

fn main() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let t = Instant::now();
    build(tmp.path());
    println!(
        "TUI benchmark: {QUESTIONS} open questions, built in {:.1} s; frame {W}×{H}",
        t.elapsed().as_secs_f64()
    );

    // 2. In-process: engine open → first page → first draw.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let theme = Theme::embedded("dark").expect("theme");
    let started = Instant::now();
    let engine = LocalEngine::new(
        SqliteStore::open_in(tmp.path()).expect("store"),
        EngineConfig::default(),
    );
    let source = LocalSource::new(Arc::new(engine), "me");
    let mut model = Model::new(
        "me",
        &source.describe(),
        None,
        oq::engine::sqlite::now_ms(),
        Keymap::default(),
    );
    for e in init(&mut model) {
        if let Some(m) = rt.block_on(run_load(&source, e)) {
            update(&mut model, m);
        }
    }
    let mut terminal = Terminal::new(TestBackend::new(W, H)).expect("terminal");
    terminal
        .draw(|f| view::draw(f, &model, &theme))
        .expect("draw");
    println!(
        "first full frame in-process (open, first page + counts, draw): {:.1} ms",
        ms(started.elapsed())
    );

    let t = Instant::now();
    let probe = rt
        .block_on(source.list(None, &ListQuery::new(StatusFilter::Open).limit(PAGE)))
        .expect("list");
    println!(
        "  (one page of {} from the source: {:.1} ms)",
        probe.items.len(),
        ms(t.elapsed())
    );
    // 1. From process start, in a pseudo-terminal (best of 5).
    let runs: Vec<(Duration, u64)> = (0..5).map(|_| pty_first_frame(tmp.path())).collect();
    let best = runs.iter().map(|r| r.0).min().unwrap();
    let worst = runs.iter().map(|r| r.0).max().unwrap();
    let child_rss = runs.iter().map(|r| r.1).max().unwrap();
    println!(
        "first full frame from process start (pty, 5 runs): best {:.1} ms, worst {:.1} ms",
        ms(best),
        ms(worst)
    );
    println!(
        "resident memory of the TUI after its first frame: {:.1} MB",
        child_rss as f64 / 1024.0
    );

    // 3. Keypress to frame while scrolling.
    let j = Msg::Key(KeyEvent {
        code: KeyCode::Char('j'),
        modifiers: KeyModifiers::NONE,
        kind: KeyEventKind::Press,
        state: KeyEventState::NONE,
    });
    let mut times = Vec::with_capacity(2000);
    for _ in 0..2000 {
        let t = Instant::now();
        let fx = update(&mut model, j.clone());
        terminal
            .draw(|f| view::draw(f, &model, &theme))
            .expect("draw");
        times.push(t.elapsed());
        for e in fx {
            if let Some(m) = rt.block_on(run_load(&source, e)) {
                update(&mut model, m);
            }
        }
    }
    println!(
        "keypress to frame while scrolling (j × 2000, {} rows loaded): {}",
        model.queue.items.len(),
        stats(times)
    );

    // 5. The floor: the same visible rows, prebuilt, drawn by ratatui alone.
    let rows: Vec<Line> = model
        .queue
        .items
        .iter()
        .take(H as usize)
        .map(|q| Line::raw(q.pergunta.clone()))
        .collect();
    let mut floor = Vec::with_capacity(2000);
    for _ in 0..2000 {
        let t = Instant::now();
        terminal
            .draw(|f| f.render_widget(Paragraph::new(rows.clone()), f.area()))
            .expect("draw");
        floor.push(t.elapsed());
    }
    println!(
        "floor, ratatui drawing the same rows alone: {}",
        stats(floor)
    );
    println!(
        "resident memory of this process (store open, {} rows loaded): {:.1} MB",
        model.queue.items.len(),
        rss_kb("self") as f64 / 1024.0
    );
}
