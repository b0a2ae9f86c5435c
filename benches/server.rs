//! The server benchmark (`cargo bench --bench server`), plain `fn main`, no harness.
//!
//! 1. Answers: a real `oq serve` (`oq::server::run`, production `ServerOptions`) on
//!    127.0.0.1:0, its store in a temp dir on the repository's disk. One project, one
//!    person (the author) and one agent; `OQ_BENCH_QUESTIONS` questions are declared up
//!    front (not timed), then `OQ_BENCH_CLIENTS` concurrent clients — tokio tasks, each
//!    with its own reqwest `Client`, so one keep-alive connection each — POST answers to
//!    distinct questions until `OQ_BENCH_ANSWERS` are done. Every request's latency is
//!    recorded: answers/s, p50, p99, max.
//! 2. The ceiling: a minimal axum handler (same axum, a POST route with a path parameter
//!    that parses a small JSON body and returns a small JSON body) on another loopback
//!    port, on its own runtime built the same way, driven the same way. It runs before and
//!    after the answers, and the ratio is taken against the faster of the two runs.
//! 3. Fan-out: `OQ_BENCH_SUBSCRIBERS` SSE subscribers on the project's event stream. Once
//!    every one has its response head (the handler has read its starting revision and
//!    subscribed to the change notifier), one unmeasured change proves they are all idle
//!    on the notifier; then `OQ_BENCH_FANOUT_REPS` times: the agent declares a question
//!    over HTTP and we time until every subscriber has parsed the tip of that revision.
//!    Times are taken from the moment the declaring request is sent (so they include the
//!    write's own commit).
//! 4. Group-commit probe (engine level, no HTTP, same disk): the same answers (the same
//!    two events, the same check that the question is open) once as one transaction each
//!    (`Engine::answer`), once `PROBE_BATCH` to a transaction — what a single writer
//!    batching concurrent requests into one commit would get from the store.
//!
//! Environment:
//! - `OQ_BENCH_QUESTIONS` (20000): questions declared before the answer run.
//! - `OQ_BENCH_ANSWERS` (10000): measured answers (after `OQ_BENCH_WARMUP` unmeasured ones).
//! - `OQ_BENCH_WARMUP` (256): unmeasured requests before each measured run.
//! - `OQ_BENCH_CLIENTS` (64): concurrent clients.
//! - `OQ_BENCH_CEILING_REQUESTS` (50000): measured requests of each ceiling run.
//! - `OQ_BENCH_SUBSCRIBERS` (1000), `OQ_BENCH_FANOUT_REPS` (5).
//! - `OQ_BENCH_MAX_SECS` (180): wall-clock bound of each measured run.
//! - `OQ_BENCH_PROBE` (2000; 0 skips): answers of the group-commit probe (4. below).
//! - `OQ_BENCH_ANSWER_ORDER` (`asked`): `shuffled` answers in a random order, the worst
//!   case for the indexes keyed by question id (the seeded questions are laid out as
//!   asked one per millisecond, so `asked` is the queue's own order, oldest first).
//! - `OQ_BENCH_SQLITE` (1; 0 skips): the SQLite server's part (1.–3.), to measure only the
//!   PostgreSQL store's.
//! - `OQ_BENCH_DIR`: where the temp dir goes (default `./target` when it exists, else `$TMPDIR`).
//!
//! Every figure is printed in a table and as a machine-readable line
//! `OQBENCH <metric> <value> <unit>`.

#[path = "support/cpu.rs"]
mod cpu;
#[path = "support/pg_server.rs"]
mod pg;
mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use cpu::CpuSample;
use futures_util::StreamExt;
use reqwest::Client;
use serde::{Deserialize, Serialize};
use serde_json::json;
use support::{bench_base, describe_fs};
use tokio::runtime::Runtime;
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use oq::domain::{Actor, Afeta, Event, SessionKind};
use oq::engine::{EngineConfig, LocalEngine, NewEvent, SqliteStore, Store};
use oq::server::config::{Config, token_hash};
use oq::server::{self, ServerOptions};

const PROJECT: &str = "bench";
const PERSON: &str = "ana";
const AGENT: &str = "po-bot";
const SESSION: &str = "s-bench-serve";
/// Questions per transaction while seeding the store.
const SEED_BATCH: usize = 2_000;
/// Where a question id's time part ends (`q-` and 9 characters); the rest is random.
const ID_TIME_END: usize = 11;
/// Bound on starting a server, connecting the subscribers, one fan-out round, stopping.
const STEP_BOUND: Duration = Duration::from_secs(60);
/// Pause between fan-out rounds: longer than the store poller's period (500 ms), so the
/// poller's own wake-up after one round's write has passed before the next round starts.
const ROUND_GAP: Duration = Duration::from_millis(1_200);
const ANSWER_TARGET_RATIO: f64 = 0.3;
const FANOUT_TARGET: Duration = Duration::from_millis(200);

struct Knobs {
    questions: usize,
    answers: usize,
    warmup: usize,
    clients: usize,
    ceiling_requests: usize,
    subscribers: usize,
    fanout_reps: usize,
    max_run: Duration,
    probe: usize,
    /// Answer the questions in a random order instead of the order they were asked.
    shuffled: bool,
    /// Run the SQLite server's part (`OQ_BENCH_SQLITE=0` leaves only PostgreSQL's).
    sqlite: bool,
}

impl Knobs {
    fn from_env() -> Result<Knobs> {
        let k = Knobs {
            questions: env_usize("OQ_BENCH_QUESTIONS", 20_000)?,
            answers: env_usize("OQ_BENCH_ANSWERS", 10_000)?,
            warmup: env_usize("OQ_BENCH_WARMUP", 256)?,
            clients: env_usize("OQ_BENCH_CLIENTS", 64)?.max(1),
            ceiling_requests: env_usize("OQ_BENCH_CEILING_REQUESTS", 50_000)?.max(1),
            subscribers: env_usize("OQ_BENCH_SUBSCRIBERS", 1_000)?.max(1),
            fanout_reps: env_usize("OQ_BENCH_FANOUT_REPS", 5)?.max(1),
            max_run: Duration::from_secs(env_usize("OQ_BENCH_MAX_SECS", 180)? as u64),
            probe: env_usize("OQ_BENCH_PROBE", 2_000)?,
            shuffled: match std::env::var("OQ_BENCH_ANSWER_ORDER").as_deref() {
                Err(_) | Ok("asked") => false,
                Ok("shuffled") => true,
                Ok(other) => bail!("OQ_BENCH_ANSWER_ORDER={other}: expected asked or shuffled"),
            },
            sqlite: std::env::var("OQ_BENCH_SQLITE").map_or(true, |v| v != "0"),
        };
        ensure!(
            k.answers >= 1 && k.warmup + k.answers <= k.questions,
            "OQ_BENCH_WARMUP + OQ_BENCH_ANSWERS ({}) must be at most OQ_BENCH_QUESTIONS ({}) and answers at least 1",
            k.warmup + k.answers,
            k.questions
        );
        Ok(k)
    }
}

fn main() -> Result<()> {
    let knobs = Knobs::from_env()?;
    let _ = rustls::crypto::ring::default_provider().install_default();

    let base = bench_base()?;
    let tmp = tempfile::Builder::new()
        .prefix("oq-server-bench-")
        .tempdir_in(&base)
        .with_context(|| format!("creating a temp dir under {}", base.display()))?;
    let fd_limit = open_file_limit();

    println!("oq server benchmark");
    println!("  temp dir     : {}", tmp.path().display());
    println!("  filesystem   : {}", describe_fs(tmp.path()));
    println!("  cpu          : {}", cpu_model());
    println!(
        "  cpus         : {}",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "  kernel       : {}",
        read_trim("/proc/sys/kernel/osrelease")
    );
    println!("  load average : {}", read_trim("/proc/loadavg"));
    println!(
        "  open files   : {} (limit; the fan-out needs about {})",
        fd_limit.map_or_else(|| "unknown".into(), |n| n.to_string()),
        2 * knobs.subscribers + 256
    );
    println!("  sqlite       : {}", rusqlite::version());
    println!("  durability   : journal_mode=WAL, synchronous=FULL (the store's own settings)");
    let options = ServerOptions::default();
    println!(
        "  server       : oq::server::run, heartbeat {:?}, store poll {:?} (production defaults); own multi-thread runtime",
        options.heartbeat, options.poll
    );
    println!();
    if let Some(limit) = fd_limit
        && limit < (2 * knobs.subscribers + 256) as u64
    {
        bail!(
            "the open-file limit ({limit}) is too low for {} subscribers: run `ulimit -n 4096` first",
            knobs.subscribers
        );
    }

    // ---- set up: store, config, servers -------------------------------------------------
    let tokens = Tokens {
        person: oq::engine::ids::token(),
        agent: oq::engine::ids::token(),
    };
    if knobs.sqlite {
        sqlite_part(&knobs, &tokens, tmp.path())?;
    }
    if pg::enabled() {
        println!();
        let pg = pg::run(&knobs, &tokens, tmp.path())?;
        println!();
        pg.print();
    }
    if knobs.probe > 0 {
        println!();
        group_commit_probe(&tmp.path().join("probe"), knobs.probe)?;
    }
    println!("  load average : {}", read_trim("/proc/loadavg"));
    Ok(())
}

/// The SQLite server's part: seed, answers beside the bare handler, fan-out.
fn sqlite_part(knobs: &Knobs, tokens: &Tokens, dir: &Path) -> Result<()> {
    let tmp_path = dir;
    let options = ServerOptions::default();
    let config_path = tmp_path.join("serve.toml");
    let text = config_text(tokens);
    std::fs::write(&config_path, &text)?;
    let config = Config::parse(&config_path, &text)?;

    let t = Instant::now();
    let mut questions = seed(&config.data_dir, knobs.questions)?;
    println!(
        "seeded {} questions in {:.1} s ({SEED_BATCH} per transaction, same events as Engine::declare)",
        questions.len(),
        t.elapsed().as_secs_f64()
    );
    if knobs.shuffled {
        // By the random part of the id: an order unrelated to when they were asked.
        questions.sort_by(|a, b| a[ID_TIME_END..].cmp(&b[ID_TIME_END..]));
    }
    println!(
        "answer order : {}",
        if knobs.shuffled {
            "shuffled (OQ_BENCH_ANSWER_ORDER=shuffled: every answer in another part of the indexes)"
        } else {
            "as asked, oldest first (the queue's order)"
        }
    );

    let server_rt = runtime("oq-serve")?;
    let bare_rt = runtime("bare-axum")?;
    let client_rt = runtime("bench-client")?;

    let oq_server = client_rt.block_on(Spawned::oq(&server_rt, config, options))?;
    let bare_server = match client_rt.block_on(Spawned::bare(&bare_rt)) {
        Ok(s) => s,
        Err(e) => {
            client_rt.block_on(oq_server.stop())?;
            return Err(e);
        }
    };
    println!("oq serve     : {}", oq_server.base);
    println!("bare axum    : {}", bare_server.base);
    println!();

    let outcome = client_rt.block_on(run_all(
        knobs,
        tokens,
        &questions,
        &oq_server.base,
        &bare_server.base,
    ));

    // Stop everything whatever happened.
    let stopped_oq = client_rt.block_on(oq_server.stop());
    let stopped_bare = client_rt.block_on(bare_server.stop());
    client_rt.shutdown_timeout(Duration::from_secs(5));
    server_rt.shutdown_timeout(Duration::from_secs(5));
    bare_rt.shutdown_timeout(Duration::from_secs(5));
    let results = outcome?;
    stopped_oq.context("stopping oq serve")?;
    stopped_bare.context("stopping the bare handler")?;

    results.print(knobs);
    Ok(())
}

// ---- the runs -----------------------------------------------------------------------------

struct Results {
    ceiling: Vec<Load>,
    answers: Load,
    fanout: Fanout,
}

async fn run_all(
    knobs: &Knobs,
    tokens: &Tokens,
    questions: &[String],
    oq_base: &str,
    bare_base: &str,
) -> Result<Results> {
    let answer_urls: Arc<Vec<String>> = Arc::new(
        questions
            .iter()
            .map(|q| format!("{oq_base}/projects/{PROJECT}/open-questions/{q}/answer"))
            .collect(),
    );
    let bare_urls: Arc<Vec<String>> = Arc::new(
        (0..knobs.ceiling_requests.max(knobs.warmup))
            .map(|i| format!("{bare_base}/projects/{PROJECT}/open-questions/q-{i:012}/answer"))
            .collect(),
    );
    let person = tokens.person.clone();
    let answer = move |client: &Client, url: &str, i: usize| {
        client
            .post(url)
            .bearer_auth(&person)
            .json(&json!({"resposta": format!("Answer {i}: go with the one-page checkout.")}))
    };
    let person = tokens.person.clone();
    let bare = move |client: &Client, url: &str, i: usize| {
        client
            .post(url)
            .bearer_auth(&person)
            .json(&json!({"resposta": format!("Answer {i}: go with the one-page checkout.")}))
    };

    // Built before any clock starts: a reqwest client loads the platform's root
    // certificates, tens of milliseconds of CPU each, which is the client's cost, not the
    // server's. Each has its own pool, so each keeps one keep-alive connection per server.
    let clients = (0..knobs.clients)
        .map(|_| {
            Client::builder()
                .pool_max_idle_per_host(1)
                .timeout(Duration::from_secs(30))
                .build()
                .context("http client")
        })
        .collect::<Result<Vec<_>>>()?;

    let mut ceiling = Vec::new();
    println!(
        "== ceiling run 1: bare axum handler, {} clients, {} requests",
        knobs.clients, knobs.ceiling_requests
    );
    drive(
        &clients,
        bare_urls.clone(),
        0..knobs.warmup,
        knobs.max_run,
        bare.clone(),
    )
    .await?
    .expect_clean("ceiling warm-up")?;
    let c1 = drive(
        &clients,
        bare_urls.clone(),
        0..knobs.ceiling_requests,
        knobs.max_run,
        bare.clone(),
    )
    .await?;
    c1.expect_clean("ceiling run 1")?;
    c1.print_line("bare axum handler (run 1)");
    ceiling.push(c1);

    println!(
        "== answers: oq serve, {} clients, {} answers to distinct questions of {} declared",
        knobs.clients, knobs.answers, knobs.questions
    );
    drive(
        &clients,
        answer_urls.clone(),
        0..knobs.warmup,
        knobs.max_run,
        answer.clone(),
    )
    .await?
    .expect_clean("answer warm-up")?;
    let answers = drive(
        &clients,
        answer_urls.clone(),
        knobs.warmup..knobs.warmup + knobs.answers,
        knobs.max_run,
        answer,
    )
    .await?;
    answers.expect_clean("answers")?;
    answers.print_line("oq serve: POST …/answer");
    if answers.done < knobs.answers {
        println!(
            "  (stopped by the {} s bound after {} answers)",
            knobs.max_run.as_secs(),
            answers.done
        );
    }

    println!("== ceiling run 2");
    let c2 = drive(
        &clients,
        bare_urls,
        0..knobs.ceiling_requests,
        knobs.max_run,
        bare,
    )
    .await?;
    c2.expect_clean("ceiling run 2")?;
    c2.print_line("bare axum handler (run 2)");
    ceiling.push(c2);
    println!();

    println!(
        "== fan-out: {} subscribers to GET /projects/{PROJECT}/events, {} rounds",
        knobs.subscribers, knobs.fanout_reps
    );
    let fanout = fan_out(knobs, tokens, &[oq_base]).await?;
    println!();
    Ok(Results {
        ceiling,
        answers,
        fanout,
    })
}

/// One measured run: latencies of the successful requests, wall time of the whole run.
struct Load {
    latencies: Vec<Duration>,
    wall: Duration,
    /// CPU spent during the run, per thread group (`cpu.rs`).
    cpu: BTreeMap<String, Duration>,
    done: usize,
    errors: usize,
    first_error: Option<String>,
}

impl Load {
    fn rate(&self) -> f64 {
        self.latencies.len() as f64 / self.wall.as_secs_f64()
    }

    fn expect_clean(&self, what: &str) -> Result<()> {
        ensure!(
            self.errors == 0,
            "{what}: {} of {} requests failed; first: {}",
            self.errors,
            self.done,
            self.first_error.as_deref().unwrap_or("?")
        );
        Ok(())
    }

    fn print_line(&self, name: &str) {
        let s = Stats::of(&self.latencies);
        println!(
            "  {name:<34} {:>9.0}/s  p50 {:>8.2} ms  p99 {:>8.2} ms  max {:>8.2} ms  ({} in {:.1} s)",
            self.rate(),
            ms(s.p50),
            ms(s.p99),
            ms(s.max),
            self.latencies.len(),
            self.wall.as_secs_f64()
        );
        let per_request: Vec<String> = self
            .cpu_per_request()
            .iter()
            .map(|(group, us)| format!("{group} {us:.1}"))
            .collect();
        println!(
            "  {:<34} CPU µs per request: {}",
            "",
            per_request.join(", ")
        );
    }

    /// CPU µs per successful request, per thread group, and in all (`total`).
    fn cpu_per_request(&self) -> BTreeMap<String, f64> {
        let n = self.latencies.len().max(1) as f64;
        let mut out: BTreeMap<String, f64> = self
            .cpu
            .iter()
            .map(|(group, spent)| (group.clone(), spent.as_secs_f64() * 1e6 / n))
            .collect();
        let total = out
            .iter()
            .filter(|(group, _)| group.as_str() != cpu::IDLE)
            .map(|(_, us)| us)
            .sum();
        out.insert("total".into(), total);
        out
    }
}

/// `clients` tasks, each with its own `Client` (one keep-alive connection), take the next
/// index of `range` until it is exhausted or `limit` has passed.
async fn drive<F>(
    clients: &[Client],
    urls: Arc<Vec<String>>,
    range: std::ops::Range<usize>,
    limit: Duration,
    make: F,
) -> Result<Load>
where
    F: Fn(&Client, &str, usize) -> reqwest::RequestBuilder + Clone + Send + Sync + 'static,
{
    ensure!(range.end <= urls.len(), "not enough urls for the run");
    let next = Arc::new(AtomicUsize::new(range.start));
    let cpu_before = CpuSample::now();
    let start = Instant::now();
    let deadline = start + limit;
    let mut tasks: Vec<JoinHandle<Result<Load>>> = Vec::with_capacity(clients.len());
    for client in clients {
        let (next, urls, make, end) = (next.clone(), urls.clone(), make.clone(), range.end);
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            let mut out = Load {
                latencies: Vec::new(),
                wall: Duration::ZERO,
                cpu: BTreeMap::new(),
                done: 0,
                errors: 0,
                first_error: None,
            };
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= end || Instant::now() > deadline {
                    break;
                }
                let t = Instant::now();
                let outcome = match make(&client, &urls[i], i).send().await {
                    Ok(resp) => {
                        let status = resp.status();
                        match resp.bytes().await {
                            Ok(_) if status.is_success() => Ok(()),
                            Ok(body) => Err(format!(
                                "{status}: {}",
                                String::from_utf8_lossy(&body[..body.len().min(300)])
                            )),
                            Err(e) => Err(format!("{status}: body: {e}")),
                        }
                    }
                    Err(e) => Err(e.to_string()),
                };
                let elapsed = t.elapsed();
                out.done += 1;
                match outcome {
                    Ok(()) => out.latencies.push(elapsed),
                    Err(e) => {
                        out.errors += 1;
                        out.first_error.get_or_insert(e);
                    }
                }
            }
            Ok(out)
        }));
    }
    let mut all = Load {
        latencies: Vec::with_capacity(range.len()),
        wall: Duration::ZERO,
        cpu: BTreeMap::new(),
        done: 0,
        errors: 0,
        first_error: None,
    };
    for t in tasks {
        let part = t.await.context("client task")??;
        all.latencies.extend(part.latencies);
        all.done += part.done;
        all.errors += part.errors;
        if all.first_error.is_none() {
            all.first_error = part.first_error;
        }
    }
    all.wall = start.elapsed();
    all.cpu = CpuSample::now().since(&cpu_before);
    Ok(all)
}

// ---- fan-out ------------------------------------------------------------------------------

struct Fanout {
    connect: Duration,
    warm: Round,
    rounds: Vec<Round>,
}

#[derive(Clone, Copy)]
struct Round {
    /// The declaring request, sent to acknowledged.
    write: Duration,
    /// From sending the write to the first / the last subscriber having parsed the tip.
    first: Duration,
    last: Duration,
}

/// What a subscriber reports: who, which revision, when it parsed it.
type Seen = (usize, i64, Instant);

/// Subscriber `i` listens on `bases[i % len]`; each round's change is made through the
/// first.
async fn fan_out(knobs: &Knobs, tokens: &Tokens, bases: &[&str]) -> Result<Fanout> {
    let n = knobs.subscribers;
    let base = bases[0];
    let client = Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .build()
        .context("http client")?;
    let (ready_tx, mut ready_rx) = mpsc::unbounded_channel::<Result<usize, String>>();
    let (seen_tx, mut seen_rx) = mpsc::unbounded_channel::<Seen>();
    let (stop_tx, stop_rx) = watch::channel(false);
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(n);
    for idx in 0..n {
        let url = format!("{}/projects/{PROJECT}/events", bases[idx % bases.len()]);
        let (client, token) = (client.clone(), tokens.person.clone());
        let (ready, seen, stop) = (ready_tx.clone(), seen_tx.clone(), stop_rx.clone());
        tasks.push(tokio::spawn(subscriber(
            idx, client, url, token, ready, seen, stop,
        )));
    }
    drop((ready_tx, seen_tx));

    let outcome = async {
        let mut connected = 0;
        while connected < n {
            match tokio::time::timeout_at((started + STEP_BOUND).into(), ready_rx.recv()).await {
                Ok(Some(Ok(_))) => connected += 1,
                Ok(Some(Err(e))) => bail!("a subscriber failed to connect: {e}"),
                Ok(None) => bail!("the subscribers stopped before all connected"),
                Err(_) => bail!("only {connected} of {n} subscribers connected in {STEP_BOUND:?}"),
            }
        }
        let connect = started.elapsed();
        println!(
            "  {n} subscribers have their response head after {:.0} ms",
            ms(connect)
        );
        let agent = Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .context("http client")?;
        let warm = round(&agent, tokens, base, n, &mut seen_rx, 0).await?;
        println!(
            "  warm-up round (unmeasured): last subscriber after {:.1} ms",
            ms(warm.last)
        );
        let mut rounds = Vec::new();
        for r in 1..=knobs.fanout_reps {
            tokio::time::sleep(ROUND_GAP).await;
            let res = round(&agent, tokens, base, n, &mut seen_rx, r).await?;
            println!(
                "  round {r}: write acknowledged {:>7.1} ms, first seen {:>7.1} ms, all {n} seen {:>7.1} ms",
                ms(res.write),
                ms(res.first),
                ms(res.last)
            );
            rounds.push(res);
        }
        Ok(Fanout {
            connect,
            warm,
            rounds,
        })
    }
    .await;

    // End the subscribers: they stop reading; the server's shutdown ends the streams too.
    let _ = stop_tx.send(true);
    for t in tasks {
        match tokio::time::timeout(Duration::from_secs(10), t).await {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(e))) if outcome.is_ok() => bail!("a subscriber failed: {e:#}"),
            Ok(Err(e)) if outcome.is_ok() => bail!("a subscriber task panicked: {e}"),
            Err(_) if outcome.is_ok() => bail!("a subscriber did not stop"),
            _ => {}
        }
    }
    outcome
}

/// Declares one question and waits until every subscriber has parsed its tip.
async fn round(
    agent: &Client,
    tokens: &Tokens,
    base: &str,
    n: usize,
    seen_rx: &mut mpsc::UnboundedReceiver<Seen>,
    r: usize,
) -> Result<Round> {
    // Nothing else writes: anything queued is a leftover of the previous round.
    while seen_rx.try_recv().is_ok() {}
    let t0 = Instant::now();
    let resp = agent
        .post(format!("{base}/projects/{PROJECT}/open-questions"))
        .bearer_auth(&tokens.agent)
        .json(&json!({"pergunta": format!("Fan-out round {r}: which payment provider?"), "sessionId": SESSION}))
        .send()
        .await
        .context("declaring")?;
    let status = resp.status();
    let body = resp.text().await.context("declare body")?;
    let write = t0.elapsed();
    ensure!(status.as_u16() == 201, "declare: {status} {body}");

    let deadline = t0 + STEP_BOUND;
    let mut got = vec![false; n];
    let mut count = 0;
    let mut target: Option<i64> = None;
    let (mut first, mut last) = (None::<Instant>, None::<Instant>);
    while count < n {
        let (idx, rev, at) = match tokio::time::timeout_at(deadline.into(), seen_rx.recv()).await {
            Ok(Some(s)) => s,
            Ok(None) => bail!("the subscribers stopped during round {r}"),
            Err(_) => bail!("round {r}: only {count} of {n} subscribers saw the change"),
        };
        let want = *target.get_or_insert(rev);
        ensure!(
            rev == want,
            "round {r}: subscriber {idx} saw revision {rev}, others {want}"
        );
        if !got[idx] {
            got[idx] = true;
            count += 1;
            first = Some(first.map_or(at, |f| f.min(at)));
            last = Some(last.map_or(at, |l| l.max(at)));
        }
    }
    let since = |t: Option<Instant>| t.map_or(Duration::ZERO, |t| t.saturating_duration_since(t0));
    Ok(Round {
        write,
        first: since(first),
        last: since(last),
    })
}

#[derive(Deserialize)]
struct Tip {
    revision: i64,
}

/// One SSE subscriber: reports once its response head is in, then every tip it parses.
/// A minimal line reader: `data:` lines accumulate, a blank line dispatches, comments
/// (`: heartbeat`), `id:` and `event:` lines are skipped.
async fn subscriber(
    idx: usize,
    client: Client,
    url: String,
    token: String,
    ready: mpsc::UnboundedSender<Result<usize, String>>,
    seen: mpsc::UnboundedSender<Seen>,
    mut stop: watch::Receiver<bool>,
) -> Result<()> {
    let resp = match client
        .get(&url)
        .bearer_auth(&token)
        .header("accept", "text/event-stream")
        .send()
        .await
    {
        Ok(r) if r.status().is_success() => r,
        Ok(r) => {
            let _ = ready.send(Err(format!("{}", r.status())));
            return Ok(());
        }
        Err(e) => {
            let _ = ready.send(Err(e.to_string()));
            return Ok(());
        }
    };
    let _ = ready.send(Ok(idx));
    let mut body = resp.bytes_stream();
    let mut buf: Vec<u8> = Vec::with_capacity(256);
    let mut data = String::new();
    loop {
        let chunk = tokio::select! {
            c = body.next() => c,
            _ = stop.changed() => return Ok(()),
        };
        let Some(chunk) = chunk else {
            return Ok(());
        };
        buf.extend_from_slice(&chunk.context("reading the stream")?);
        while let Some(pos) = buf.iter().position(|&b| b == b'\n') {
            let raw: Vec<u8> = buf.drain(..=pos).collect();
            let line = std::str::from_utf8(&raw)
                .context("stream is not UTF-8")?
                .trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !data.is_empty() {
                    let tip: Tip =
                        serde_json::from_str(&data).with_context(|| format!("tip {data:?}"))?;
                    let _ = seen.send((idx, tip.revision, Instant::now()));
                    data.clear();
                }
            } else if let Some(rest) = line.strip_prefix("data:") {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
            }
        }
    }
}

// ---- servers ------------------------------------------------------------------------------

/// A server running on its own runtime until `stop`.
struct Spawned {
    base: String,
    stop: Option<oneshot::Sender<()>>,
    handle: JoinHandle<Result<()>>,
}

impl Spawned {
    async fn oq(rt: &Runtime, config: Config, options: ServerOptions) -> Result<Spawned> {
        let listener = rt
            .spawn(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .await??;
        let base = format!("http://{}", listener.local_addr()?);
        let (tx, rx) = oneshot::channel::<()>();
        let handle = rt.spawn(async move {
            server::run(listener, &config, options, async {
                let _ = rx.await;
            })
            .await
        });
        let s = Spawned {
            base,
            stop: Some(tx),
            handle,
        };
        s.wait_ready("/healthz").await?;
        Ok(s)
    }

    async fn bare(rt: &Runtime) -> Result<Spawned> {
        use axum::extract::Path as UrlPath;
        use axum::routing::post;

        #[derive(Deserialize)]
        struct In {
            resposta: String,
        }
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Out {
            question_id: String,
            status: &'static str,
            chars: usize,
        }
        async fn answer(
            UrlPath((_project, question_id)): UrlPath<(String, String)>,
            axum::Json(body): axum::Json<In>,
        ) -> axum::Json<Out> {
            axum::Json(Out {
                question_id,
                status: "answered",
                chars: body.resposta.chars().count(),
            })
        }
        async fn healthz() -> &'static str {
            "ok"
        }

        let listener = rt
            .spawn(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .await??;
        let base = format!("http://{}", listener.local_addr()?);
        let app = axum::Router::new()
            .route(
                "/projects/{projectId}/open-questions/{questionId}/answer",
                post(answer),
            )
            .route("/healthz", axum::routing::get(healthz));
        let (tx, rx) = oneshot::channel::<()>();
        let handle = rt.spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await?;
            Ok(())
        });
        let s = Spawned {
            base,
            stop: Some(tx),
            handle,
        };
        s.wait_ready("/healthz").await?;
        Ok(s)
    }

    async fn wait_ready(&self, path: &str) -> Result<()> {
        let client = Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .context("http client")?;
        for _ in 0..250 {
            if let Ok(r) = client.get(format!("{}{path}", self.base)).send().await
                && r.status().is_success()
            {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        bail!("{} did not come up", self.base)
    }

    async fn stop(mut self) -> Result<()> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        tokio::time::timeout(STEP_BOUND, self.handle)
            .await
            .context("the server did not stop")?
            .context("server task")?
    }
}

fn runtime(name: &str) -> Result<Runtime> {
    // Built like `oq serve`'s own: multi-thread, one worker per CPU.
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name(name)
        .build()
        .with_context(|| format!("runtime {name}"))
}

// ---- the store ----------------------------------------------------------------------------

struct Tokens {
    person: String,
    agent: String,
}

/// Room for the fan-out's subscribers, all on the person's token (the server's defaults,
/// 512 connections and 8 streams per token, would refuse them with 503 and 429).
const STREAM_ROOM: usize = 8_192;

fn config_text(tokens: &Tokens) -> String {
    let hash = |t: &str| hex::encode(token_hash(t));
    format!(
        "listen = \"127.0.0.1:0\"\ndata_dir = \"data\"\n\n\
         [[users]]\nid = \"{PERSON}\"\nkind = \"person\"\ntoken_sha256 = \"{}\"\n\n\
         [[users]]\nid = \"{AGENT}\"\nkind = \"agent\"\nrole = \"po\"\ntoken_sha256 = \"{}\"\n\n\
         [[projects]]\nid = \"{PROJECT}\"\nmembers = [\"{PERSON}\"]\nagents = [\"{AGENT}\"]\n\n\
         [limits]\nmax_connections = {STREAM_ROOM}\nmax_streams_per_token = {STREAM_ROOM}\n",
        hash(&tokens.person),
        hash(&tokens.agent)
    )
}

/// The person's session, then `count` open questions declared by the agent in it: the
/// events `Engine::declare` appends, written `SEED_BATCH` per transaction to save fsyncs.
fn seed(data_dir: &Path, count: usize) -> Result<Vec<String>> {
    seed_into(
        &LocalEngine::new(SqliteStore::open_in(data_dir)?, EngineConfig::default()),
        count,
    )
}

/// [`seed`] on any store (the PostgreSQL runs seed theirs this way).
fn seed_into<S: Store>(engine: &oq::engine::Engine<S>, count: usize) -> Result<Vec<String>> {
    if engine.read(|v| v.session(SESSION))?.is_none() {
        engine.start_session(
            &Actor::person(PERSON),
            PROJECT,
            SessionKind::Conversation,
            Some(SESSION),
        )?;
    }
    let store = engine.store();
    // Laid out as if asked one per millisecond up to now, as real declarations are: their
    // ids sort in the order they were asked. (All made in the same few milliseconds, as
    // a plain loop would, they sort at random within each millisecond, and the clients,
    // answering oldest first like the queue shows them, would scatter every batch over
    // the whole history of the indexes keyed by question id; see BENCHMARKS.md.)
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis() as u64;
    let first = now - count as u64;
    let ids: Vec<String> = (0..count as u64)
        .map(|i| oq::engine::ids::question_id_at(first + i))
        .collect();
    for (b, chunk) in ids.chunks(SEED_BATCH).enumerate() {
        let events: Vec<NewEvent> = chunk
            .iter()
            .enumerate()
            .map(|(k, id)| {
                let i = b * SEED_BATCH + k;
                Ok(NewEvent {
                    project_id: PROJECT.into(),
                    actor: AGENT.into(),
                    // Through serde, so optional fields added to the event later keep
                    // their defaults here as they do in the store.
                    event: serde_json::from_value::<Event>(json!({
                        "type": "artifact.open_question",
                        "questionId": id,
                        "pergunta": format!(
                            "Question {i}: should the checkout keep the cart when the session expires, or start over?"
                        ),
                        "sugestao": "Keep the cart for 24 hours.",
                        "afeta": Afeta::default(),
                        "autor": "po",
                        "sessionId": SESSION,
                        "source": "oq",
                    }))?,
                })
            })
            .collect::<Result<_>>()?;
        let (stored, ()) = store.transact(move |_| Ok((events, ())))?;
        ensure!(stored.len() == chunk.len(), "seed batch {b} short");
    }
    Ok(ids)
}

// ---- group-commit probe ------------------------------------------------------------------

/// Answers per transaction in the batched half of the probe (= the answer run's clients).
const PROBE_BATCH: usize = 64;

fn group_commit_probe(data_dir: &Path, n: usize) -> Result<()> {
    println!(
        "== group-commit probe: {n} answers, 1 per transaction vs {PROBE_BATCH} per transaction (engine level, no HTTP)"
    );
    let questions = seed(data_dir, 2 * n)?;
    let (one, batched) = questions.split_at(n);
    let engine = LocalEngine::new(SqliteStore::open_in(data_dir)?, EngineConfig::default());
    let person = Actor::person(PERSON);
    let t = Instant::now();
    for (i, q) in one.iter().enumerate() {
        let input = oq::domain::AnswerInput::text(format!("Answer {i}: keep the cart."));
        let a = engine.answer(&person, Some(PROJECT), q, &input)?;
        ensure!(a.answer.is_some(), "answer not recorded");
    }
    let single = t.elapsed();
    drop(engine);

    let store = SqliteStore::open_in(data_dir)?;
    let t = Instant::now();
    for (b, chunk) in batched.chunks(PROBE_BATCH).enumerate() {
        let (expected, chunk) = (2 * chunk.len(), chunk.to_vec());
        let (stored, ()) = store.transact(move |view| {
            let mut events = Vec::with_capacity(2 * chunk.len());
            for (k, q) in chunk.iter().enumerate() {
                let question = view
                    .question(q)?
                    .ok_or_else(|| oq::domain::OqError::Internal(format!("no question {q}")))?;
                if question.answer.is_some() {
                    return Err(oq::domain::OqError::Internal(format!("{q} answered")));
                }
                let resposta = format!("Answer {}: keep the cart.", b * PROBE_BATCH + k);
                let decision = oq::engine::ids::decision_id();
                for event in [
                    json!({"type": "open_question.answered", "questionId": q, "resposta": resposta,
                           "aceitouSugestao": false, "decisionEventId": decision, "respondidaPor": PERSON}),
                    json!({"type": "decision_record", "decisionEventId": decision, "actor": PERSON,
                           "context": question.pergunta, "choice": resposta,
                           "consequences": question.afeta, "questionId": q}),
                ] {
                    events.push(NewEvent {
                        project_id: PROJECT.into(),
                        actor: PERSON.into(),
                        event: serde_json::from_value(event)
                            .map_err(|e| oq::domain::OqError::Internal(e.to_string()))?,
                    });
                }
            }
            Ok((events, ()))
        })?;
        ensure!(stored.len() == expected, "batch {b} short");
    }
    let grouped = t.elapsed();
    let (r1, r64) = (
        n as f64 / single.as_secs_f64(),
        n as f64 / grouped.as_secs_f64(),
    );
    println!(
        "  1 answer per transaction (Engine::answer)  {r1:>9.0} answers/s  ({:.3} ms each)",
        ms(single) / n as f64
    );
    println!(
        "  {PROBE_BATCH} answers per transaction             {r64:>9.0} answers/s  ({:.3} ms each, {:.1}x)",
        ms(grouped) / n as f64,
        r64 / r1
    );
    metric("probe.one_per_tx", r1, "answers/s");
    metric("probe.batched", r64, "answers/s");
    Ok(())
}

// ---- report -------------------------------------------------------------------------------

impl Results {
    fn print(&self, knobs: &Knobs) {
        let best = self
            .ceiling
            .iter()
            .max_by(|a, b| a.rate().total_cmp(&b.rate()))
            .expect("two ceiling runs");
        let ratio = self.answers.rate() / best.rate();
        let a = Stats::of(&self.answers.latencies);
        let c = Stats::of(&best.latencies);
        let lasts: Vec<Duration> = self.fanout.rounds.iter().map(|r| r.last).collect();
        let median_last = Stats::of(&lasts).p50;
        let worst_last = Stats::of(&lasts).max;
        let writes: Vec<Duration> = self.fanout.rounds.iter().map(|r| r.write).collect();

        println!("== summary ({} clients)", knobs.clients);
        println!(
            "  answers/s (oq serve)          {:>10.0}   p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            self.answers.rate(),
            ms(a.p50),
            ms(a.p99),
            ms(a.max)
        );
        println!(
            "  requests/s (bare axum, best)  {:>10.0}   p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            best.rate(),
            ms(c.p50),
            ms(c.p99),
            ms(c.max)
        );
        println!(
            "  ratio                         {ratio:>10.4}   (target ≥ {ANSWER_TARGET_RATIO}: {})",
            verdict(ratio >= ANSWER_TARGET_RATIO)
        );
        println!(
            "  fan-out to {}: median {:.1} ms, worst {:.1} ms over {} rounds   (target < {} ms: {})",
            knobs.subscribers,
            ms(median_last),
            ms(worst_last),
            lasts.len(),
            FANOUT_TARGET.as_millis(),
            verdict(median_last < FANOUT_TARGET)
        );

        metric("answers.rate", self.answers.rate(), "answers/s");
        metric("answers.p50", ms(a.p50), "ms");
        metric("answers.p99", ms(a.p99), "ms");
        metric("answers.max", ms(a.max), "ms");
        for (group, us) in self.answers.cpu_per_request() {
            metric(&format!("answers.cpu_us.{group}"), us, "us");
        }
        metric(
            "answers.count",
            self.answers.latencies.len() as f64,
            "answers",
        );
        for (i, run) in self.ceiling.iter().enumerate() {
            let s = Stats::of(&run.latencies);
            metric(&format!("ceiling.run{}.rate", i + 1), run.rate(), "req/s");
            metric(&format!("ceiling.run{}.p50", i + 1), ms(s.p50), "ms");
            metric(&format!("ceiling.run{}.p99", i + 1), ms(s.p99), "ms");
            for (group, us) in run.cpu_per_request() {
                metric(&format!("ceiling.run{}.cpu_us.{group}", i + 1), us, "us");
            }
        }
        metric("ratio.answers_over_ceiling", ratio, "ratio");
        metric(
            "answers.target_met",
            f64::from(u8::from(ratio >= ANSWER_TARGET_RATIO)),
            "bool",
        );
        metric("fanout.connect", ms(self.fanout.connect), "ms");
        metric("fanout.warmup.last", ms(self.fanout.warm.last), "ms");
        for (i, r) in self.fanout.rounds.iter().enumerate() {
            metric(&format!("fanout.round{}.last", i + 1), ms(r.last), "ms");
            metric(&format!("fanout.round{}.first", i + 1), ms(r.first), "ms");
            metric(&format!("fanout.round{}.write", i + 1), ms(r.write), "ms");
        }
        metric("fanout.median", ms(median_last), "ms");
        metric("fanout.write.median", ms(Stats::of(&writes).p50), "ms");
        metric(
            "fanout.target_met",
            f64::from(u8::from(median_last < FANOUT_TARGET)),
            "bool",
        );
    }
}

fn metric(name: &str, value: f64, unit: &str) {
    println!("OQBENCH {name} {value:.4} {unit}");
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "NOT met" }
}

struct Stats {
    p50: Duration,
    p99: Duration,
    max: Duration,
}

impl Stats {
    /// Nearest-rank percentiles.
    fn of(times: &[Duration]) -> Stats {
        let mut v = times.to_vec();
        v.sort_unstable();
        let at = |p: f64| -> Duration {
            if v.is_empty() {
                return Duration::ZERO;
            }
            let rank = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len());
            v[rank - 1]
        };
        Stats {
            p50: at(0.50),
            p99: at(0.99),
            max: v.last().copied().unwrap_or_default(),
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

// ---- environment --------------------------------------------------------------------------

fn env_usize(name: &str, default: usize) -> Result<usize> {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .replace('_', "")
            .parse()
            .with_context(|| format!("{name}={v:?}: expected a whole number")),
        Err(_) => Ok(default),
    }
}

fn read_trim(path: &str) -> String {
    std::fs::read_to_string(path).map_or_else(|_| "unknown".into(), |s| s.trim().to_string())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// The soft limit on open files, from /proc/self/limits.
fn open_file_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}
