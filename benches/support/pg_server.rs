//! The team store in the server benchmark: `oq serve` on PostgreSQL, 64 clients answering
//! through 1, 2 and 3 servers that share one database, beside pgbench's own rate for a
//! one-row INSERT transaction on the same database (the ceiling), and the fan-out of one
//! change to 1,000 subscribers spread over three servers.
//!
//! The cluster is Debian's PostgreSQL, `initdb` in the bench's temp dir, with production
//! durability (fsync on, synchronous_commit on), started here and stopped at the end
//! (`tests/common_pg`). `OQ_BENCH_PG=0` skips this part; without PostgreSQL it says why
//! and skips.

#[path = "../../tests/common_pg/mod.rs"]
mod common_pg;

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use reqwest::Client;
use serde_json::json;
use tokio::runtime::Runtime;

use super::{
    Fanout, Knobs, Load, PROJECT, Spawned, Tokens, config_text, drive, fan_out, metric, ms,
    runtime, seed_into, verdict,
};
use oq::engine::{EngineConfig, PgStore};
use oq::server::ServerOptions;
use oq::server::config::Config;

/// Targets of issue 16: one server reaches 0.3× pgbench's rate; two beat one.
const PG_TARGET_RATIO: f64 = 0.3;
/// How long pgbench runs for the ceiling.
const PGBENCH_SECONDS: u32 = 10;

pub struct PgResults {
    pgbench_tps: f64,
    /// answers/s by number of servers.
    answers: Vec<(usize, Load)>,
    fanout: Fanout,
}

pub fn enabled() -> bool {
    if std::env::var("OQ_BENCH_PG").is_ok_and(|v| v == "0") {
        return false;
    }
    match common_pg::available() {
        Ok(()) => true,
        Err(why) => {
            println!("== PostgreSQL: skipped ({why})");
            false
        }
    }
}

pub fn run(knobs: &Knobs, tokens: &Tokens, dir: &std::path::Path) -> Result<PgResults> {
    let cluster = common_pg::PgCluster::start(common_pg::Durability::Production);
    let db = cluster.database();
    println!(
        "== PostgreSQL {} on 127.0.0.1:{} (fsync on, synchronous_commit on), database {}",
        pg_version(&cluster),
        cluster.port,
        db.name
    );
    let tps = pgbench(&cluster, &db)?;
    println!("  pgbench, 64 clients, one-row INSERT per transaction: {tps:.0} tps (the ceiling)");

    let per_run = knobs.warmup + knobs.answers;
    let t = Instant::now();
    let engine = oq::engine::Engine::new(PgStore::open(&db.app_target())?, EngineConfig::default());
    let questions = seed_into(&engine, per_run * 3)?;
    drop(engine);
    println!(
        "  seeded {} questions in {:.1} s",
        questions.len(),
        t.elapsed().as_secs_f64()
    );

    let client_rt = runtime("bench-client-pg")?;
    let mut answers = Vec::new();
    for servers in 1..=3 {
        let slice = &questions[(servers - 1) * per_run..servers * per_run];
        let load = with_servers(&client_rt, servers, tokens, &db, dir, |bases| {
            answer_run(knobs, tokens, bases, slice)
        })?;
        load.print_line(&format!("oq serve ×{servers} on PostgreSQL"));
        answers.push((servers, load));
    }
    println!(
        "== fan-out on PostgreSQL: {} subscribers spread over 3 servers, {} rounds",
        knobs.subscribers, knobs.fanout_reps
    );
    let fanout = with_servers(&client_rt, 3, tokens, &db, dir, |bases| async move {
        let refs: Vec<&str> = bases.iter().map(String::as_str).collect();
        fan_out(knobs, tokens, &refs).await
    })?;
    client_rt.shutdown_timeout(Duration::from_secs(5));
    drop(db);
    drop(cluster);
    Ok(PgResults {
        pgbench_tps: tps,
        answers,
        fanout,
    })
}

impl PgResults {
    pub fn print(&self) {
        println!("== PostgreSQL results");
        println!(
            "  pgbench one-row INSERT        {:>10.0} tps (64 clients, {PGBENCH_SECONDS} s)",
            self.pgbench_tps
        );
        metric("pg.pgbench_tps", self.pgbench_tps, "tps");
        for (n, load) in &self.answers {
            let ratio = load.rate() / self.pgbench_tps;
            println!(
                "  answers/s, {n} server(s)        {:>10.0}   {ratio:.3}× pgbench",
                load.rate()
            );
            metric(&format!("pg.answers_per_s.servers_{n}"), load.rate(), "/s");
        }
        let one = self.answers.first().map_or(0.0, |(_, l)| l.rate());
        let two = self.answers.get(1).map_or(0.0, |(_, l)| l.rate());
        let ratio = one / self.pgbench_tps;
        println!(
            "  one server vs pgbench         {ratio:>10.3}   (target ≥ {PG_TARGET_RATIO}: {})",
            verdict(ratio >= PG_TARGET_RATIO)
        );
        println!(
            "  two servers vs one            {:>10.3}   (target > 1: {})",
            two / one,
            verdict(two > one)
        );
        let mut lasts: Vec<Duration> = self.fanout.rounds.iter().map(|r| r.last).collect();
        lasts.sort();
        let median = lasts.get(lasts.len() / 2).copied().unwrap_or_default();
        let worst = lasts.last().copied().unwrap_or_default();
        println!(
            "  fan-out to all subscribers    median {:.1} ms, worst {:.1} ms (target < 200 ms: {})",
            ms(median),
            ms(worst),
            verdict(worst < super::FANOUT_TARGET)
        );
        metric("pg.fanout_last_median", ms(median), "ms");
    }
}

fn pg_version(cluster: &common_pg::PgCluster) -> String {
    cluster
        .admin()
        .ok()
        .and_then(|mut c| c.query_one("SHOW server_version", &[]).ok())
        .map(|r| r.get::<_, String>(0))
        .unwrap_or_default()
}

/// pgbench's rate for `INSERT INTO t (v) VALUES ('x')`, one per transaction, 64 clients.
fn pgbench(cluster: &common_pg::PgCluster, db: &common_pg::PgDb) -> Result<f64> {
    let mut admin = cluster.admin()?;
    drop(admin.batch_execute("SELECT 1"));
    let mut owner = db.client(&db.owner);
    owner.batch_execute(
        "CREATE TABLE pgbench_one_row (id bigserial PRIMARY KEY, v text NOT NULL)",
    )?;
    let script = tempfile::NamedTempFile::new()?;
    std::fs::write(
        script.path(),
        "INSERT INTO pgbench_one_row (v) VALUES ('x');\n",
    )?;
    let out = Command::new(cluster.bin().join("pgbench"))
        .args(["-n", "-c", "64", "-j", "2", "-M", "prepared", "-T"])
        .arg(PGBENCH_SECONDS.to_string())
        .arg("-f")
        .arg(script.path())
        .args(["-h", "127.0.0.1", "-p"])
        .arg(cluster.port.to_string())
        .args(["-U", &db.owner])
        .arg(&db.name)
        .env("PGPASSWORD", &db.password)
        .output()
        .context("running pgbench")?;
    let text = String::from_utf8_lossy(&out.stdout);
    ensure!(
        out.status.success(),
        "pgbench failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tps = text
        .lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse::<f64>().ok())
        .with_context(|| format!("no tps in pgbench's output: {text}"))?;
    owner.batch_execute("DROP TABLE pgbench_one_row")?;
    Ok(tps)
}

/// Starts `n` servers on `db` (each on a runtime of its own, as separate processes would
/// be), runs `f` with their base URLs, stops them.
fn with_servers<T, F, Fut>(
    client_rt: &Runtime,
    n: usize,
    tokens: &Tokens,
    db: &common_pg::PgDb,
    dir: &std::path::Path,
    f: F,
) -> Result<T>
where
    F: FnOnce(Vec<String>) -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    let mut runtimes = Vec::new();
    let mut servers = Vec::new();
    for i in 0..n {
        let sdir = dir.join(format!("pg-server-{i}"));
        std::fs::create_dir_all(&sdir)?;
        db.write_password_file(&sdir.join("pgpass"));
        let text = format!(
            "store = \"{}\"\nstore_password_file = \"pgpass\"\n{}",
            db.app_url(),
            config_text(tokens)
        );
        let path = sdir.join("serve.toml");
        std::fs::write(&path, &text)?;
        let config = Config::parse(&path, &text)?;
        let rt = runtime(&format!("oq-serve-pg-{i}"))?;
        let spawned = client_rt.block_on(Spawned::oq(&rt, config, ServerOptions::default()))?;
        servers.push(spawned);
        runtimes.push(rt);
    }
    let bases: Vec<String> = servers.iter().map(|s| s.base.clone()).collect();
    let outcome = client_rt.block_on(f(bases));
    for s in servers {
        client_rt.block_on(s.stop())?;
    }
    for rt in runtimes {
        rt.shutdown_timeout(Duration::from_secs(5));
    }
    outcome
}

/// 64 clients answering `questions` (warm-up first), request `i` to server `i % n`.
async fn answer_run(
    knobs: &Knobs,
    tokens: &Tokens,
    bases: Vec<String>,
    questions: &[String],
) -> Result<Load> {
    let urls: Arc<Vec<String>> = Arc::new(
        questions
            .iter()
            .enumerate()
            .map(|(i, q)| {
                format!(
                    "{}/projects/{PROJECT}/open-questions/{q}/answer",
                    bases[i % bases.len()]
                )
            })
            .collect(),
    );
    let clients = (0..knobs.clients)
        .map(|_| {
            Client::builder()
                .pool_max_idle_per_host(1)
                .timeout(Duration::from_secs(30))
                .build()
                .context("http client")
        })
        .collect::<Result<Vec<_>>>()?;
    let person = tokens.person.clone();
    let answer = move |client: &Client, url: &str, i: usize| {
        client
            .post(url)
            .bearer_auth(&person)
            .json(&json!({"resposta": format!("Answer {i}: go with the one-page checkout.")}))
    };
    drive(
        &clients,
        urls.clone(),
        0..knobs.warmup,
        knobs.max_run,
        answer.clone(),
    )
    .await?
    .expect_clean("answer warm-up (PostgreSQL)")?;
    let load = drive(
        &clients,
        urls,
        knobs.warmup..knobs.warmup + knobs.answers,
        knobs.max_run,
        answer,
    )
    .await?;
    load.expect_clean("answers (PostgreSQL)")?;
    if load.done < knobs.answers {
        bail!("stopped by the time bound after {} answers", load.done);
    }
    Ok(load)
}
