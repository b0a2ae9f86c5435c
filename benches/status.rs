//! `oq status` as a whole process (`cargo bench --bench status`), plain `fn main`: what a
//! shell prompt or tmux's `status-right` pays every few seconds — exec, opening the
//! local store, counting the open questions, printing one line. Target: p50 < 10 ms.
//!
//! The store: `OQ_BENCH_QUESTIONS` (2000) questions, all answered but 1 in 20, half of
//! the open ones in another person's session. `OQ_BENCH_REPS` (200) runs of the binary,
//! after 10 warm-up runs, of the built binary or of each in `OQ_BENCH_BIN` in turn. Prints
//! a table and `OQBENCH <metric> <value> <unit>` lines.

use std::process::{Command, Stdio};
use std::time::Instant;

use oq::domain::{Actor, AnswerInput, DeclareInput, Role, SessionKind};
use oq::engine::{EngineConfig, LocalEngine, SqliteStore};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> anyhow::Result<()> {
    let questions = env("OQ_BENCH_QUESTIONS", 2000);
    let reps = env("OQ_BENCH_REPS", 200);
    let dir = tempfile::tempdir()?;
    {
        let engine = LocalEngine::new(SqliteStore::open_in(dir.path())?, EngineConfig::default());
        for who in ["ana", "bia"] {
            engine.start_session(
                &Actor::person(who),
                "loja",
                SessionKind::Conversation,
                Some(who),
            )?;
        }
        for i in 0..questions {
            let session = if i % 40 == 0 { "bia" } else { "ana" };
            let q = engine.declare(
                &Actor::agent(Role::Po),
                "loja",
                &DeclareInput {
                    pergunta: format!("Question {i}?"),
                    session_id: session.into(),
                    ..Default::default()
                },
            )?;
            if i % 20 != 0 {
                engine.answer(
                    &Actor::person(session),
                    Some("loja"),
                    &q.question_id,
                    &AnswerInput::text("yes"),
                )?;
            }
        }
    }
    // The binaries measured, run in turn so that a drift of the machine's load hits each
    // alike: the one cargo built, or `OQ_BENCH_BIN` (paths separated by `:`, e.g. the
    // previous commit's binary beside this one's).
    let bins: Vec<String> = match std::env::var("OQ_BENCH_BIN") {
        Ok(list) => list.split(':').map(str::to_string).collect(),
        Err(_) => vec![env!("CARGO_BIN_EXE_oq").to_string()],
    };
    let status = |bin: &str| {
        let t = Instant::now();
        let out = Command::new(bin)
            .arg("--data-dir")
            .arg(dir.path())
            .args(["--as", "ana", "status"])
            .env_remove("OQ_SOURCE")
            .env_remove("OQ_PROFILE")
            .stderr(Stdio::inherit())
            .output()
            .expect("run oq status");
        assert!(out.status.success(), "{bin}: {out:?}");
        (
            t.elapsed().as_secs_f64() * 1e3,
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    for bin in &bins {
        for _ in 0..10 {
            status(bin);
        }
    }
    let mut times = vec![Vec::with_capacity(reps); bins.len()];
    for _ in 0..reps {
        for (bin, t) in bins.iter().zip(&mut times) {
            t.push(status(bin).0);
        }
    }
    println!("| binary | line | p50 | p90 | p99 | max |\n|---|---|---|---|---|---|");
    for (i, (bin, t)) in bins.iter().zip(&mut times).enumerate() {
        t.sort_by(f64::total_cmp);
        let pct = |p: f64| t[((t.len() - 1) as f64 * p).round() as usize];
        println!(
            "| {bin} | {} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms |",
            status(bin).1.trim(),
            pct(0.5),
            pct(0.9),
            pct(0.99),
            pct(1.0)
        );
        let suffix = if i == 0 {
            String::new()
        } else {
            format!("_{i}")
        };
        println!("OQBENCH status_process_p50{suffix} {:.3} ms", pct(0.5));
        println!("OQBENCH status_process_p99{suffix} {:.3} ms", pct(0.99));
    }
    println!("oq status, {questions} questions, {reps} runs of each binary");
    Ok(())
}
