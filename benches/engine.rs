//! The engine benchmark (`cargo bench --bench engine`), plain `fn main`, no harness.
//!
//! 1. Throughput, on one disk: the engine's declare + answer (each one durable write
//!    transaction through `SqliteStore`) against raw rusqlite inserts of the same rows into
//!    a plain table (same columns, no triggers, no extra indexes), with the same durability
//!    settings (WAL, `synchronous=FULL`), one INSERT per transaction.
//! 2. Listing: `Engine::list` of 50 open questions of one project in a store of 1,000,000
//!    events, built through `Store::transact` so the triggers maintain the derived indexes
//!    exactly as in production.
//!
//! Environment:
//! - `OQ_BENCH_N` (2000): declare + answer iterations of the throughput part.
//! - `OQ_BENCH_ROUNDS` (20): the throughput part alternates engine and raw blocks in this
//!   many rounds, so a drift of the disk's flush latency hits both sides alike.
//! - `OQ_BENCH_EVENTS` (1000000): events in the listing store.
//! - `OQ_BENCH_REPS` (200): repetitions of each warm listing measurement.
//! - `OQ_BENCH_COLD` (10): reopen-and-list cycles for the cold first call.
//! - `OQ_BENCH_DIR`: where the temp dir goes (default `./target` when it exists, else `$TMPDIR`).
//! - `OQ_BENCH_REBUILD=1`: rebuild the cached listing store (`target/bench-cache/`).
//! - `OQ_BENCH_SKIP_THROUGHPUT=1` / `OQ_BENCH_SKIP_LIST=1`: run one part only.
//!
//! Every figure is printed in a table and as a machine-readable line
//! `OQBENCH <metric> <value> <unit>`.

mod support;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use rusqlite::{Connection, TransactionBehavior, params};
use support::{bench_base, describe_fs};

use oq::domain::readiness::ReadinessGate;
use oq::domain::{Actor, Afeta, AnswerInput, DeclareInput, Event, Role, SessionKind, StoredEvent};
use oq::engine::{
    Engine, EngineConfig, ListQuery, LocalEngine, NewEvent, SqliteStore, StatusFilter, Store,
};

/// Bump when the generator of the listing store changes, so a stale cache is not reused.
const CACHE_FORMAT: u32 = 3;
/// Events per `Store::transact` while building the listing store.
const BUILD_BATCH: usize = 20_000;
const PROJECTS: usize = 5;
const SESSIONS_PER_PROJECT: usize = 8;
/// The project whose open questions are listed.
const MEASURED: &str = "bench-p0";
const OPEN_MEASURED: u64 = 60;
const OPEN_PER_OTHER_PROJECT: u64 = 15;
/// An answered question is answered between 1 and this many declarations later.
const MAX_ANSWER_LAG: u64 = 2_000;
const PAGE: usize = 50;

fn main() -> Result<()> {
    let n = env_u64("OQ_BENCH_N", 2_000)?;
    let rounds = env_u64("OQ_BENCH_ROUNDS", 20)?.clamp(1, n.max(1));
    let total_events = env_u64("OQ_BENCH_EVENTS", 1_000_000)?;
    let reps = env_u64("OQ_BENCH_REPS", 200)?.max(1) as usize;
    let cold_reps = env_u64("OQ_BENCH_COLD", 10)?.max(1) as usize;

    let base = bench_base()?;
    let tmp = tempfile::Builder::new()
        .prefix("oq-bench-")
        .tempdir_in(&base)
        .with_context(|| format!("creating a temp dir under {}", base.display()))?;
    let mut out = Report::default();

    println!("oq engine benchmark");
    println!("  temp dir     : {}", tmp.path().display());
    println!("  filesystem   : {}", describe_fs(tmp.path()));
    println!(
        "  cpus         : {}",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!("  sqlite       : {}", rusqlite::version());
    println!("  durability   : journal_mode=WAL, synchronous=FULL (engine and raw)");
    println!();

    if !env_flag("OQ_BENCH_SKIP_THROUGHPUT") {
        throughput(tmp.path(), n, rounds, &mut out)?;
    }
    if !env_flag("OQ_BENCH_SKIP_LIST") {
        let cache_root = base.join("bench-cache");
        listing(&cache_root, total_events, reps, cold_reps, &mut out)?;
    }

    println!();
    println!("machine-readable:");
    for line in &out.lines {
        println!("OQBENCH {line}");
    }
    Ok(())
}

// ---- throughput -----------------------------------------------------------------------

/// The times of one kind of write transaction: wall clock each, and on-CPU time in total
/// (this thread's, from /proc/thread-self/schedstat; wall − CPU is mostly waiting on the
/// disk's flush).
#[derive(Default)]
struct Phase {
    wall: Vec<Duration>,
    cpu: Duration,
}

impl Phase {
    /// Times `f` (and nothing around it) as one transaction.
    fn time<T>(&mut self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        let cpu = thread_cpu();
        let t = Instant::now();
        let out = f()?;
        self.wall.push(t.elapsed());
        self.cpu += thread_cpu().saturating_sub(cpu);
        Ok(out)
    }
    fn total(&self) -> Duration {
        self.wall.iter().sum()
    }
    fn merge(&self, other: &Phase) -> Phase {
        Phase {
            wall: self.wall.iter().chain(&other.wall).copied().collect(),
            cpu: self.cpu + other.cpu,
        }
    }
}

/// This thread's on-CPU time so far; zero where /proc does not tell.
fn thread_cpu() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .map_or(Duration::ZERO, Duration::from_nanos)
}

#[derive(Default)]
struct Throughput {
    declare: Phase,
    answer: Phase,
    /// Raw, plain table, one row per transaction.
    raw_one: Phase,
    /// Raw, plain table, the engine's transactions (1 row, or 2 for an answer).
    raw_shaped: Phase,
    /// Raw rows into the engine's own schema (its indexes and triggers), engine-shaped
    /// transactions, no engine code: the schema's share of the cost.
    raw_schema: Phase,
}

fn throughput(dir: &Path, n: u64, rounds: u64, out: &mut Report) -> Result<()> {
    println!(
        "== throughput: declare + answer vs raw SQLite inserts ({n} iterations, {rounds} rounds)"
    );
    let engine: LocalEngine = Engine::new(
        SqliteStore::open_in(&dir.join("engine"))?,
        EngineConfig::default(),
    );
    let author = "bench-author";
    let session = engine.start_session(
        &Actor::person(author),
        PROJECT_THROUGHPUT,
        SessionKind::Conversation,
        Some("s-bench-throughput"),
    )?;
    let refs = Refs::create(&engine, author)?;
    let session_rows: Vec<RawRow> = engine
        .events_after(None, 0, 1000)?
        .iter()
        .map(RawRow::from)
        .collect();
    let mut last_seq = engine.revision()?;

    let mut raw_one = RawStore::plain(&dir.join("raw-one-row-per-tx.sqlite3"))?;
    let mut raw_shaped = RawStore::plain(&dir.join("raw-engine-shaped-tx.sqlite3"))?;
    let mut raw_schema = RawStore::engine_schema(&dir.join("raw-engine-schema"), &session_rows)?;

    let mut t = Throughput::default();
    let mut payload_bytes = 0usize;
    let mut rows = 0usize;
    let mut rng = Rng(0x0b5e_55ed);
    let mut done = 0;
    for round in 0..rounds {
        let iterations = (n * (round + 1)) / rounds - done;
        done += iterations;
        let events = engine_round(
            &engine,
            &session.session_id,
            author,
            &refs,
            iterations,
            &mut rng,
            &mut t,
        )?;
        let events = engine.events_after(None, last_seq, events + 10)?;
        last_seq = events.last().map_or(last_seq, |e| e.seq);
        let raw_rows: Vec<RawRow> = events.iter().map(RawRow::from).collect();
        payload_bytes += raw_rows.iter().map(|r| r.payload.len()).sum::<usize>();
        rows += raw_rows.len();
        raw_one.insert_one_per_tx(&raw_rows, &mut t.raw_one)?;
        raw_shaped.insert_engine_shaped(&raw_rows, &mut t.raw_shaped)?;
        raw_schema.insert_engine_shaped(&raw_rows, &mut t.raw_schema)?;
    }
    ensure!(
        rows as u64 == 3 * n,
        "expected 3 events per iteration (declare; answer + decision), found {rows} for {n}"
    );

    let engine_ops = t.declare.merge(&t.answer);
    let ops = 2 * n;
    let events = 3 * n;
    let declare_ops = rate(n, t.declare.total());
    let answer_ops = rate(n, t.answer.total());
    let engine_ops_s = rate(ops, engine_ops.total());
    let engine_events_s = rate(events, engine_ops.total());
    let raw_rows_s = rate(events, t.raw_one.total());
    let raw_shaped_tx_s = rate(ops, t.raw_shaped.total());
    let raw_schema_tx_s = rate(ops, t.raw_schema.total());
    let ratio_ops = engine_ops_s / raw_rows_s;
    let ratio_events = engine_events_s / raw_rows_s;
    let ratio_same_tx = engine_ops_s / raw_shaped_tx_s;
    let ratio_schema = engine_ops_s / raw_schema_tx_s;

    println!(
        "  rows: {events} ({n} declarations, {n} answers + {n} decision records), mean payload {} bytes",
        payload_bytes / rows.max(1)
    );
    println!();
    println!(
        "  {:<40} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "", "per s", "mean ms", "p50 ms", "p99 ms", "cpu ms", "wait ms"
    );
    let line = |name: &str, per_s: f64, p: &Phase| {
        let s = Stats::of(&p.wall);
        let count = p.wall.len().max(1) as u32;
        let cpu = p.cpu / count;
        println!(
            "  {:<40} {:>9.1} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
            name,
            per_s,
            ms(s.mean),
            ms(s.median),
            ms(s.p99),
            ms(cpu),
            ms(s.mean.saturating_sub(cpu))
        );
    };
    line("engine declare (1 tx, 1 event)", declare_ops, &t.declare);
    line("engine answer (1 tx, 2 events)", answer_ops, &t.answer);
    line("engine declare+answer: ops", engine_ops_s, &engine_ops);
    println!(
        "  {:<40} {:>9.1}",
        "engine declare+answer: events", engine_events_s
    );
    line(
        "raw plain table, 1 row per tx: rows",
        raw_rows_s,
        &t.raw_one,
    );
    line(
        "raw plain table, engine-shaped tx",
        raw_shaped_tx_s,
        &t.raw_shaped,
    );
    line(
        "raw into engine schema, engine-shaped tx",
        raw_schema_tx_s,
        &t.raw_schema,
    );
    println!("  (per-transaction columns; cpu = on-CPU time of the thread, wait = mean − cpu)");
    println!();
    println!(
        "  engine ops/s ÷ raw rows/s (1 row per tx)      = {ratio_ops:.3}   target ≥ 0.5: {}",
        verdict(ratio_ops >= 0.5)
    );
    println!("  engine events/s ÷ raw rows/s (1 row per tx)   = {ratio_events:.3}");
    println!("  engine ops/s ÷ raw plain engine-shaped tx/s   = {ratio_same_tx:.3}");
    println!("  engine ops/s ÷ raw engine-schema tx/s         = {ratio_schema:.3}");
    println!();

    out.metric("throughput.iterations", n as f64, "count");
    out.metric(
        "throughput.mean_payload_bytes",
        (payload_bytes / rows.max(1)) as f64,
        "bytes",
    );
    for (name, per_s, unit, p) in [
        ("engine.declare", declare_ops, "ops/s", &t.declare),
        ("engine.answer", answer_ops, "ops/s", &t.answer),
        ("engine.ops", engine_ops_s, "ops/s", &engine_ops),
        ("raw.one_row_per_tx", raw_rows_s, "rows/s", &t.raw_one),
        ("raw.engine_shaped", raw_shaped_tx_s, "tx/s", &t.raw_shaped),
        ("raw.engine_schema", raw_schema_tx_s, "tx/s", &t.raw_schema),
    ] {
        out.metric(&format!("throughput.{name}"), per_s, unit);
        let s = Stats::of(&p.wall);
        out.metric(&format!("throughput.{name}.p50"), ms(s.median), "ms");
        out.metric(&format!("throughput.{name}.p99"), ms(s.p99), "ms");
        out.metric(
            &format!("throughput.{name}.cpu_per_tx"),
            ms(p.cpu / p.wall.len().max(1) as u32),
            "ms",
        );
    }
    out.metric("throughput.engine.events", engine_events_s, "events/s");
    out.metric(
        "throughput.ratio.engine_ops_over_raw_rows",
        ratio_ops,
        "ratio",
    );
    out.metric(
        "throughput.ratio.engine_events_over_raw_rows",
        ratio_events,
        "ratio",
    );
    out.metric(
        "throughput.ratio.engine_ops_over_raw_shaped_tx",
        ratio_same_tx,
        "ratio",
    );
    out.metric(
        "throughput.ratio.engine_ops_over_raw_schema_tx",
        ratio_schema,
        "ratio",
    );
    out.metric(
        "throughput.target_met",
        f64::from(u8::from(ratio_ops >= 0.5)),
        "bool",
    );
    Ok(())
}

const PROJECT_THROUGHPUT: &str = "bench-throughput";

/// Real stories and tasks of the throughput project: the engine refuses an `afeta` that
/// names one it does not have, so the declarations name these (checking them is part of
/// what a declaration costs).
struct Refs {
    stories: Vec<String>,
    tasks: Vec<String>,
}

impl Refs {
    fn create(engine: &LocalEngine, author: &str) -> Result<Refs> {
        let execution = engine.start_session(
            &Actor::person(author),
            PROJECT_THROUGHPUT,
            SessionKind::Execution,
            Some("s-bench-execution"),
        )?;
        let po = Actor::agent(Role::Po);
        let mut refs = Refs {
            stories: Vec::new(),
            tasks: Vec::new(),
        };
        for i in 0..8 {
            let story = engine.create_story(&po, PROJECT_THROUGHPUT, &format!("Story {i}"))?;
            let task = engine.create_task(
                &po,
                PROJECT_THROUGHPUT,
                &story.story_id,
                &execution.session_id,
                &format!("Task {i}"),
            )?;
            refs.stories.push(story.story_id);
            refs.tasks.push(task.task_id);
        }
        Ok(refs)
    }

    /// The same shape of `afeta`, naming real ids.
    fn make_real(&self, afeta: &mut Afeta, rng: &mut Rng) {
        for s in &mut afeta.historias {
            *s = self.stories[rng.below(self.stories.len() as u64) as usize].clone();
        }
        for t in &mut afeta.tarefas {
            *t = self.tasks[rng.below(self.tasks.len() as u64) as usize].clone();
        }
    }
}

/// Declares and answers `iterations` questions, timing each operation; returns how many
/// events that appended.
fn engine_round(
    engine: &LocalEngine,
    session_id: &str,
    author: &str,
    refs: &Refs,
    iterations: u64,
    rng: &mut Rng,
    t: &mut Throughput,
) -> Result<usize> {
    let declarer = Actor::agent(Role::Po);
    let answerer = Actor::person(author);
    for i in 0..iterations {
        let mut content = QuestionText::new(rng, i);
        refs.make_real(&mut content.afeta, rng);
        let input = DeclareInput {
            pergunta: content.pergunta,
            sugestao: Some(content.sugestao),
            afeta: content.afeta,
            session_id: session_id.into(),
            idempotency_key: None,
        };
        let q = t
            .declare
            .time(|| Ok(engine.declare(&declarer, PROJECT_THROUGHPUT, &input)?))?;
        let reply = AnswerInput::text(content.resposta);
        let answered = t.answer.time(|| {
            Ok(engine.answer(&answerer, Some(PROJECT_THROUGHPUT), &q.question_id, &reply)?)
        })?;
        ensure!(answered.answer.is_some(), "the answer was not recorded");
    }
    Ok(3 * iterations as usize)
}

/// One row of the raw table: the engine's event as the store wrote it, with its project
/// position and a 32-byte chain link (the bytes of a link; the raw side computes none).
struct RawRow {
    project_seq: i64,
    chain: Vec<u8>,
    event_id: String,
    kind: &'static str,
    project_id: String,
    session_id: Option<String>,
    question_id: Option<String>,
    task_id: Option<String>,
    story_id: Option<String>,
    actor: String,
    at: i64,
    payload: String,
}

impl From<&StoredEvent> for RawRow {
    fn from(e: &StoredEvent) -> Self {
        use sha2::Digest;
        RawRow {
            project_seq: e.project_seq,
            chain: sha2::Sha256::digest(e.event_id.as_bytes()).to_vec(),
            event_id: e.event_id.clone(),
            kind: e.event.type_name(),
            project_id: e.project_id.clone(),
            session_id: e.event.session_id().map(str::to_string),
            question_id: e.event.question_id().map(str::to_string),
            task_id: e.event.task_id().map(str::to_string),
            story_id: e.event.story_id().map(str::to_string),
            actor: e.actor.clone(),
            at: e.at,
            // The same serialisation the store uses, so the same bytes.
            payload: serde_json::to_string(&e.event).expect("an event serialises"),
        }
    }
}

/// A rusqlite connection with the engine's durability settings.
struct RawStore {
    conn: Connection,
}

impl RawStore {
    fn connect(path: &Path) -> Result<Connection> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        let sync: i64 = conn.query_row("PRAGMA synchronous", [], |r| r.get(0))?;
        ensure!(
            mode == "wal" && sync == 2,
            "raw store not WAL/FULL: {mode}/{sync}"
        );
        Ok(conn)
    }

    /// A plain table of the log's columns: no triggers, no index but the rowid.
    fn plain(path: &Path) -> Result<Self> {
        let conn = Self::connect(path)?;
        conn.execute_batch(
            "CREATE TABLE events (
                seq         INTEGER PRIMARY KEY,
                project_seq INTEGER NOT NULL,
                chain       BLOB,
                event_id    TEXT NOT NULL,
                type        TEXT NOT NULL,
                project_id  TEXT NOT NULL,
                session_id  TEXT,
                question_id TEXT,
                task_id     TEXT,
                story_id    TEXT,
                actor       TEXT NOT NULL,
                at          INTEGER NOT NULL,
                payload     TEXT NOT NULL
            ) STRICT;",
        )?;
        Ok(RawStore { conn })
    }

    /// The engine's own schema (created by `SqliteStore`), written to with raw inserts.
    fn engine_schema(dir: &Path, seed: &[RawRow]) -> Result<Self> {
        drop(SqliteStore::open_in(dir)?);
        let conn = Self::connect(&dir.join(oq::engine::sqlite::STORE_FILE))?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        let mut store = RawStore { conn };
        store.insert_engine_shaped(seed, &mut Phase::default())?;
        Ok(store)
    }

    fn insert(tx: &rusqlite::Transaction<'_>, r: &RawRow) -> Result<()> {
        tx.prepare_cached(
            "INSERT INTO events (project_seq, chain, event_id, type, project_id, session_id, question_id, task_id, story_id, actor, at, payload)
             VALUES (?11, ?12, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?
        .execute(params![
            r.event_id,
            r.kind,
            r.project_id,
            r.session_id,
            r.question_id,
            r.task_id,
            r.story_id,
            r.actor,
            r.at,
            r.payload,
            r.project_seq,
            r.chain
        ])?;
        Ok(())
    }

    /// `BEGIN IMMEDIATE`, the rows, `COMMIT`: one durable transaction.
    fn commit(&mut self, rows: &[RawRow]) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        for r in rows {
            Self::insert(&tx, r)?;
        }
        tx.commit()?;
        Ok(())
    }

    fn insert_one_per_tx(&mut self, rows: &[RawRow], phase: &mut Phase) -> Result<()> {
        for r in rows {
            phase.time(|| self.commit(std::slice::from_ref(r)))?;
        }
        Ok(())
    }

    /// The engine's transaction shape: a declaration alone, an answer with its decision
    /// record. Same rows, same order.
    fn insert_engine_shaped(&mut self, rows: &[RawRow], phase: &mut Phase) -> Result<()> {
        let mut i = 0;
        while i < rows.len() {
            let len = if rows[i].kind == "open_question.answered" {
                2
            } else {
                1
            };
            let group = &rows[i..(i + len).min(rows.len())];
            phase.time(|| self.commit(group))?;
            i += len;
        }
        Ok(())
    }
}

// ---- listing --------------------------------------------------------------------------

fn listing(
    cache_root: &Path,
    total_events: u64,
    reps: usize,
    cold_reps: usize,
    out: &mut Report,
) -> Result<()> {
    println!("== listing: {PAGE} open questions of one project among {total_events} events");
    let plan = Plan::new(total_events)?;
    let dir = cache_root.join(format!(
        "oq-list-v{}-f{CACHE_FORMAT}-{total_events}",
        oq::engine::sqlite::LATEST_VERSION
    ));
    println!("  store        : {}", dir.display());
    println!("  filesystem   : {}", describe_fs(cache_root));
    let reuse = !env_flag("OQ_BENCH_REBUILD") && cached_store_ok(&dir, &plan)?;
    if reuse {
        println!("  (reusing the cached store; OQ_BENCH_REBUILD=1 rebuilds it)");
    } else {
        let (secs, bytes) = build_store(cache_root, &dir, &plan)?;
        println!(
            "  built in {secs:.1} s through Store::transact ({BUILD_BATCH} events per transaction): {:.0} events/s, {:.0} MB",
            total_events as f64 / secs,
            bytes as f64 / 1e6
        );
        out.metric("list.build.seconds", secs, "s");
        out.metric(
            "list.build.events_per_s",
            total_events as f64 / secs,
            "events/s",
        );
    }
    let file = dir.join(oq::engine::sqlite::STORE_FILE);
    let size = std::fs::metadata(&file).map_or(0, |m| m.len());
    println!(
        "  contents     : {} events, {} questions, {PROJECTS} projects × {SESSIONS_PER_PROJECT} sessions, {} open ({OPEN_MEASURED} in {MEASURED}), file {:.0} MB",
        plan.total_events,
        plan.questions,
        plan.open_total(),
        size as f64 / 1e6
    );
    out.metric("list.events", plan.total_events as f64, "count");
    out.metric("list.store_bytes", size as f64, "bytes");

    let engine = open_engine(&dir)?;
    let first = engine.list(
        Some(MEASURED),
        &ListQuery::new(StatusFilter::Open).limit(PAGE),
    )?;
    ensure!(
        first.items.len() == PAGE && first.total == OPEN_MEASURED,
        "expected {PAGE} of {OPEN_MEASURED} open questions, got {} of {}",
        first.items.len(),
        first.total
    );
    let spread = (
        first.items.first().map_or(0, |q| q.seq),
        first.items.last().map_or(0, |q| q.seq),
    );
    println!(
        "  open page    : {} of {} open, declared at log positions {}..{}",
        first.items.len(),
        first.total,
        spread.0,
        spread.1
    );
    let answered = engine.list(
        Some(MEASURED),
        &ListQuery::new(StatusFilter::Answered).limit(PAGE),
    )?;
    ensure!(
        answered.items.len() == PAGE,
        "expected a full page of answered questions"
    );
    println!(
        "  answered page: {} of {} answered",
        answered.items.len(),
        answered.total
    );
    println!();

    let cases: [(&str, Option<&str>, StatusFilter); 3] = [
        ("open, project", Some(MEASURED), StatusFilter::Open),
        ("answered, project", Some(MEASURED), StatusFilter::Answered),
        ("open, all projects", None, StatusFilter::Open),
    ];
    println!(
        "  {:<34} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "list(…, limit 50)", "n", "min ms", "p50 ms", "mean ms", "p99 ms", "max ms"
    );
    let mut open_p99 = Duration::ZERO;
    let mut open_cold_max = Duration::ZERO;
    for (name, project, status) in cases {
        let mut warm = Vec::with_capacity(reps);
        for _ in 0..reps {
            let t = Instant::now();
            let page = engine.list(project, &ListQuery::new(status).limit(PAGE))?;
            warm.push(t.elapsed());
            ensure!(page.items.len() == PAGE, "short page for {name}");
        }
        print_latency(&format!("{name} (warm)"), &warm);
        out.latency(&format!("list.{}.warm", slug(name)), &warm);
        if status == StatusFilter::Open && project.is_some() {
            open_p99 = Stats::of(&warm).p99;
        }
    }
    drop(engine);
    for (name, project, status) in cases {
        let mut cold = Vec::with_capacity(cold_reps);
        for _ in 0..cold_reps {
            let engine = open_engine(&dir)?;
            let t = Instant::now();
            let page = engine.list(project, &ListQuery::new(status).limit(PAGE))?;
            cold.push(t.elapsed());
            ensure!(page.items.len() == PAGE, "short page for {name}");
        }
        print_latency(&format!("{name} (cold first call)"), &cold);
        out.latency(&format!("list.{}.cold", slug(name)), &cold);
        if status == StatusFilter::Open && project.is_some() {
            open_cold_max = Stats::of(&cold).max;
        }
    }
    println!(
        "  (cold = first call on a freshly opened store: empty SQLite page cache, unprepared statements; the OS page cache stays warm)"
    );
    println!();
    let met = open_p99 < Duration::from_millis(5);
    println!(
        "  open list p99 = {:.3} ms, cold first call max = {:.3} ms   (target < 5 ms: {})",
        ms(open_p99),
        ms(open_cold_max),
        verdict(met)
    );
    out.metric("list.target_met", f64::from(u8::from(met)), "bool");
    println!();
    verify_chain(&dir, plan.total_events, out)
}

/// `oq store verify`'s work over the listing store: every project's chain recomputed
/// from its first event, three times (the OS page cache warm after the first).
fn verify_chain(dir: &Path, events: u64, out: &mut Report) -> Result<()> {
    println!("== verify: every chain of the {events}-event store recomputed");
    let store = SqliteStore::open_in(dir)?;
    let mut runs = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let verified = store.verify()?;
        runs.push(t.elapsed());
        ensure!(
            verified.first_break.is_none() && verified.events == events as i64,
            "verify found {verified:?} in a store oq wrote"
        );
    }
    for (i, d) in runs.iter().enumerate() {
        println!(
            "  run {}: {:.2} s, {:.0} events/s",
            i + 1,
            d.as_secs_f64(),
            events as f64 / d.as_secs_f64()
        );
    }
    let best = runs.iter().min().copied().unwrap_or_default();
    out.metric("verify.best.seconds", best.as_secs_f64(), "s");
    out.metric(
        "verify.best.events_per_s",
        events as f64 / best.as_secs_f64(),
        "events/s",
    );
    Ok(())
}

fn open_engine(dir: &Path) -> Result<LocalEngine> {
    Ok(Engine::new(
        SqliteStore::open_in(dir)?,
        EngineConfig::default(),
    ))
}

/// The cached store is reused when it holds exactly what the plan builds.
fn cached_store_ok(dir: &Path, plan: &Plan) -> Result<bool> {
    if !dir.join(oq::engine::sqlite::STORE_FILE).is_file() {
        return Ok(false);
    }
    let engine = match open_engine(dir) {
        Ok(e) => e,
        Err(e) => {
            println!("  cached store unusable ({e}); rebuilding");
            return Ok(false);
        }
    };
    let revision = engine.revision()?;
    let open = engine.readiness(MEASURED)?.open_questions;
    let ok = revision == plan.total_events as i64 && open == OPEN_MEASURED;
    if !ok {
        println!("  cached store has {revision} events, {open} open; rebuilding");
    }
    Ok(ok)
}

/// Builds the store in a scratch dir beside `dir`, then renames it into place, so an
/// interrupted build is never mistaken for a cache. Returns seconds and file size.
fn build_store(cache_root: &Path, dir: &Path, plan: &Plan) -> Result<(f64, u64)> {
    std::fs::create_dir_all(cache_root)?;
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    let scratch = tempfile::Builder::new()
        .prefix("building-")
        .tempdir_in(cache_root)?;
    print!("  building the store");
    let started = Instant::now();
    {
        let store = SqliteStore::open_in(scratch.path())?;
        let mut sink = Sink {
            store: &store,
            buf: Vec::with_capacity(BUILD_BATCH + 4),
            appended: 0,
        };
        plan.generate(&mut sink)?;
        sink.flush()?;
        ensure!(
            sink.appended == plan.total_events,
            "the plan produced {} events, expected {}",
            sink.appended,
            plan.total_events
        );
    }
    let secs = started.elapsed().as_secs_f64();
    println!();
    let scratch = scratch.keep();
    // Closing the last connection checkpointed and removed the WAL.
    std::fs::rename(&scratch, dir)?;
    let size = std::fs::metadata(dir.join(oq::engine::sqlite::STORE_FILE))?.len();
    Ok((secs, size))
}

struct Sink<'s> {
    store: &'s SqliteStore,
    buf: Vec<NewEvent>,
    appended: u64,
}

impl Sink<'_> {
    /// Appends a group of events that stays in one transaction (an answer and its record).
    fn push(&mut self, group: impl IntoIterator<Item = NewEvent>) -> Result<()> {
        let before = self.buf.len();
        self.buf.extend(group);
        if self.buf.len() >= BUILD_BATCH && before > 0 {
            let rest = self.buf.split_off(before);
            self.flush()?;
            self.buf = rest;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let batch = std::mem::take(&mut self.buf);
        let (stored, ()) = self.store.transact(|_| Ok((batch, ())))?;
        self.appended += stored.len() as u64;
        if self.appended % 200_000 < stored.len() as u64 {
            print!(" {}k", self.appended / 1000);
            use std::io::Write;
            std::io::stdout().flush().ok();
        }
        self.buf = Vec::with_capacity(BUILD_BATCH + 4);
        Ok(())
    }
}

/// What the listing store holds: sessions first, then ~33 % of the events are
/// declarations, each answered (answer + decision record) 1 to 2,000 declarations later
/// except the chosen open ones, scattered over the whole log; readiness and story events
/// fill up to the exact total.
struct Plan {
    total_events: u64,
    questions: u64,
    filler: u64,
    /// Question index → project index, for the questions that stay open.
    open: HashMap<u64, usize>,
}

struct Pending {
    question_id: String,
    project: usize,
    author: String,
    pergunta: String,
    sugestao: String,
    afeta: Afeta,
    resposta: String,
}

impl Plan {
    fn new(total_events: u64) -> Result<Plan> {
        if total_events < 10_000 {
            bail!("OQ_BENCH_EVENTS must be at least 10000");
        }
        let sessions = (PROJECTS * SESSIONS_PER_PROJECT) as u64;
        let questions = total_events * 33 / 100;
        let open_total = OPEN_MEASURED + (PROJECTS as u64 - 1) * OPEN_PER_OTHER_PROJECT;
        let filler = total_events + 2 * open_total - sessions - 3 * questions;
        let mut rng = Rng(0x5eed_0214);
        let mut open = HashMap::new();
        let mut choose = |project: usize, count: u64, rng: &mut Rng| {
            let stride = questions / count;
            for k in 0..count {
                let mut i = k * stride + rng.below(stride);
                while open.contains_key(&i) {
                    i = (i + 1) % questions;
                }
                open.insert(i, project);
            }
        };
        choose(0, OPEN_MEASURED, &mut rng);
        for p in 1..PROJECTS {
            choose(p, OPEN_PER_OTHER_PROJECT, &mut rng);
        }
        Ok(Plan {
            total_events,
            questions,
            filler,
            open,
        })
    }

    fn open_total(&self) -> usize {
        self.open.len()
    }

    fn generate(&self, sink: &mut Sink<'_>) -> Result<()> {
        let mut rng = Rng(0x0214_0214);
        let project = |p: usize| format!("bench-p{p}");
        let session = |p: usize, s: usize| format!("s-bench-{p}-{s}");
        let author = |p: usize, s: usize| format!("person-{}", (p * 3 + s) % 11);
        for p in 0..PROJECTS {
            for s in 0..SESSIONS_PER_PROJECT {
                sink.push([NewEvent {
                    project_id: project(p),
                    actor: author(p, s),
                    event: Event::SessionStarted {
                        session_id: session(p, s),
                        kind: SessionKind::Conversation,
                        author: author(p, s),
                    },
                }])?;
            }
        }
        let mut due: BinaryHeap<Reverse<(u64, u64)>> = BinaryHeap::new();
        let mut pending: HashMap<u64, Pending> = HashMap::new();
        let mut filler_done = 0;
        for i in 0..self.questions {
            while let Some(Reverse((at, q))) = due.peek().copied() {
                if at > i {
                    break;
                }
                due.pop();
                let p = pending.remove(&q).context("pending answer")?;
                sink.push(answer_events(p, &mut rng))?;
            }
            let (p, stays_open) = match self.open.get(&i) {
                Some(p) => (*p, true),
                None => (rng.below(PROJECTS as u64) as usize, false),
            };
            let s = rng.below(SESSIONS_PER_PROJECT as u64) as usize;
            let text = QuestionText::new(&mut rng, i);
            let question_id = random_id("q-", 12, &mut rng);
            sink.push([NewEvent {
                project_id: project(p),
                actor: Role::Po.as_str().into(),
                event: Event::OpenQuestion {
                    question_id: question_id.clone(),
                    pergunta: text.pergunta.clone(),
                    sugestao: Some(text.sugestao.clone()),
                    afeta: text.afeta.clone(),
                    autor: Role::Po.as_str().into(),
                    session_id: session(p, s),
                    source: "oq".into(),
                    prompts: Vec::new(),
                    upstream: None,
                },
            }])?;
            if !stays_open {
                due.push(Reverse((i + 1 + rng.below(MAX_ANSWER_LAG), i)));
                pending.insert(
                    i,
                    Pending {
                        question_id,
                        project: p,
                        author: author(p, s),
                        pergunta: text.pergunta,
                        sugestao: text.sugestao,
                        afeta: text.afeta,
                        resposta: text.resposta,
                    },
                );
            }
            let filler_target = (i + 1) * self.filler / self.questions;
            while filler_done < filler_target {
                let fp = rng.below(PROJECTS as u64) as usize;
                let event = if filler_done % 2 == 0 {
                    Event::ReadinessRecorded {
                        gate: ReadinessGate::ImReady,
                        by: author(fp, 0),
                        open_questions: rng.below(40),
                    }
                } else {
                    Event::StoryCreated {
                        story_id: random_id("st-", 8, &mut rng),
                        title: sentence(&mut rng, 6, 10),
                    }
                };
                sink.push([NewEvent {
                    project_id: project(fp),
                    actor: author(fp, 0),
                    event,
                }])?;
                filler_done += 1;
            }
        }
        while let Some(Reverse((_, q))) = due.pop() {
            let p = pending.remove(&q).context("pending answer")?;
            sink.push(answer_events(p, &mut rng))?;
        }
        Ok(())
    }
}

fn answer_events(p: Pending, rng: &mut Rng) -> [NewEvent; 2] {
    let accepted = rng.below(2) == 0;
    let resposta = if accepted { p.sugestao } else { p.resposta };
    let decision_event_id = random_id("d-", 12, rng);
    let project_id = format!("bench-p{}", p.project);
    [
        NewEvent {
            project_id: project_id.clone(),
            actor: p.author.clone(),
            event: Event::QuestionAnswered {
                question_id: p.question_id.clone(),
                resposta: resposta.clone(),
                aceitou_sugestao: accepted,
                decision_event_id: decision_event_id.clone(),
                respondida_por: p.author.clone(),
                answers: Vec::new(),
                idempotency_key: None,
                decision_source: Some(oq::domain::DecisionSource::for_answer(accepted)),
            },
        },
        NewEvent {
            project_id,
            actor: p.author.clone(),
            event: Event::DecisionRecord {
                decision_event_id,
                actor: p.author,
                context: p.pergunta,
                choice: resposta,
                consequences: p.afeta,
                question_id: p.question_id,
            },
        },
    ]
}

// ---- content --------------------------------------------------------------------------

/// A question as an agent would leave it: ~150 characters, a suggestion, what it affects.
struct QuestionText {
    pergunta: String,
    sugestao: String,
    resposta: String,
    afeta: Afeta,
}

impl QuestionText {
    fn new(rng: &mut Rng, i: u64) -> Self {
        let mut afeta = Afeta {
            regras: vec![format!("RN-{}", 100 + rng.below(900))],
            ..Afeta::default()
        };
        if i % 3 == 0 {
            afeta.historias.push(format!("S-{}", rng.below(400)));
        }
        if i % 4 == 0 {
            afeta.tarefas.push(format!("T-{}", rng.below(2000)));
        }
        QuestionText {
            pergunta: format!("{}?", sentence(rng, 18, 26)),
            sugestao: sentence(rng, 8, 12),
            resposta: sentence(rng, 10, 16),
            afeta,
        }
    }
}

const WORDS: &[&str] = &[
    "should", "the", "export", "retry", "schema", "token", "limit", "session", "deadline",
    "budget", "index", "queue", "payload", "fallback", "timeout", "region", "quota", "locale",
    "audit", "webhook", "tenant", "invoice", "refund", "draft", "archive", "when", "before",
    "after", "every", "customer", "report", "monthly",
];

fn sentence(rng: &mut Rng, min_words: u64, max_words: u64) -> String {
    let n = min_words + rng.below(max_words - min_words + 1);
    let words: Vec<&str> = (0..n)
        .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize])
        .collect();
    let mut s = words.join(" ");
    if let Some(first) = s.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    s
}

/// Same alphabet and length as the engine's ids, so the unique indexes see the same keys.
fn random_id(prefix: &str, len: usize, rng: &mut Rng) -> String {
    const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
    let mut s = String::with_capacity(prefix.len() + len);
    s.push_str(prefix);
    for _ in 0..len {
        s.push(ALPHABET[rng.below(32) as usize] as char);
    }
    s
}

/// splitmix64: deterministic, so the cached store is the same store on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

// ---- reporting ------------------------------------------------------------------------

#[derive(Default)]
struct Report {
    lines: Vec<String>,
}

impl Report {
    fn metric(&mut self, name: &str, value: f64, unit: &str) {
        self.lines.push(format!("{name} {value:.4} {unit}"));
    }
    fn latency(&mut self, name: &str, times: &[Duration]) {
        let s = Stats::of(times);
        self.metric(&format!("{name}.n"), times.len() as f64, "count");
        for (k, v) in [
            ("min", s.min),
            ("p50", s.median),
            ("mean", s.mean),
            ("p99", s.p99),
            ("max", s.max),
        ] {
            self.metric(&format!("{name}.{k}"), ms(v), "ms");
        }
    }
}

struct Stats {
    min: Duration,
    median: Duration,
    mean: Duration,
    p99: Duration,
    max: Duration,
}

impl Stats {
    fn of(times: &[Duration]) -> Stats {
        let mut t = times.to_vec();
        t.sort();
        let at = |q: f64| -> Duration {
            if t.is_empty() {
                return Duration::ZERO;
            }
            // Nearest rank.
            let rank = ((q * t.len() as f64).ceil() as usize).clamp(1, t.len());
            t[rank - 1]
        };
        let sum: Duration = t.iter().sum();
        Stats {
            min: t.first().copied().unwrap_or_default(),
            median: at(0.5),
            mean: sum / (t.len().max(1) as u32),
            p99: at(0.99),
            max: t.last().copied().unwrap_or_default(),
        }
    }
}

fn print_latency(name: &str, times: &[Duration]) {
    let s = Stats::of(times);
    println!(
        "  {:<34} {:>6} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
        name,
        times.len(),
        ms(s.min),
        ms(s.median),
        ms(s.mean),
        ms(s.p99),
        ms(s.max)
    );
}

fn slug(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == ' ')
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("_")
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn rate(count: u64, d: Duration) -> f64 {
    count as f64 / d.as_secs_f64().max(1e-9)
}

fn verdict(met: bool) -> &'static str {
    if met { "MET" } else { "NOT MET" }
}

// ---- environment ----------------------------------------------------------------------

fn env_u64(name: &str, default: u64) -> Result<u64> {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .replace('_', "")
            .parse()
            .with_context(|| format!("{name}={v:?} is not a number")),
        Err(_) => Ok(default),
    }
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}
