//! MCP latency (`cargo bench --bench mcp`), plain `fn main`: an agent speaking MCP over
//! stdio to the built `oq mcp` — on the local engine, and relayed to a real `oq serve`'s
//! `/mcp` (`oq mcp --source http://…`) — measured from outside:
//!
//! 1. **declare → visible**: from writing `tools/call declare_open_question` on the
//!    server's stdin until another client sees the question (locally a second engine on
//!    the same file; on the server `GET …/open-questions/{id}` with the author's token).
//! 2. **wait wakes**: a `wait_for_answer` in flight; from the moment the answer is
//!    committed by another client (locally the engine, on the server `POST …/answer`
//!    returning) until the wait's result line arrives. Targets: p50 < 50 ms locally,
//!    < 100 ms over `oq serve`.
//!
//! `OQ_BENCH_REPS` (60) per figure. Prints a table and `OQBENCH <metric> <value> <unit>`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use oq::domain::{Actor, AnswerInput};
use oq::engine::{EngineConfig, LocalEngine, SqliteStore};
use serde_json::{Value, json};

const OQ: &str = env!("CARGO_BIN_EXE_oq");

/// An MCP server on stdio, spoken to line by line.
struct Mcp {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
    next: u64,
}

impl Mcp {
    fn start(args: &[&str]) -> anyhow::Result<Mcp> {
        let mut child = Command::new(OQ)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line)
                    && tx.send(v).is_err()
                {
                    break;
                }
            }
        });
        let mut m = Mcp {
            child,
            stdin,
            lines,
            next: 0,
        };
        let id = m.send(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}),
        )?;
        m.reply(id)?;
        writeln!(
            m.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )?;
        Ok(m)
    }

    fn send(&mut self, method: &str, params: Value) -> anyhow::Result<u64> {
        self.next += 1;
        let msg = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        writeln!(self.stdin, "{msg}")?;
        self.stdin.flush()?;
        Ok(self.next)
    }

    fn call(&mut self, tool: &str, args: Value) -> anyhow::Result<u64> {
        self.send("tools/call", json!({"name": tool, "arguments": args}))
    }

    /// The reply to `id` (notifications skipped).
    fn reply(&mut self, id: u64) -> anyhow::Result<Value> {
        loop {
            let v = self.lines.recv_timeout(Duration::from_secs(60))?;
            if v["id"] == json!(id) {
                return Ok(v);
            }
        }
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The other client: sees a question, answers it.
trait Other {
    fn sees(&self, id: &str) -> bool;
    fn answer(&self, id: &str);
}

struct LocalOther(LocalEngine);

impl Other for LocalOther {
    fn sees(&self, id: &str) -> bool {
        self.0.question(Some("loja"), id).is_ok()
    }
    fn answer(&self, id: &str) {
        self.0
            .answer(
                &Actor::person("ana"),
                Some("loja"),
                id,
                &AnswerInput::text("yes"),
            )
            .expect("answer");
    }
}

struct ServerOther {
    base: String,
    token: String,
    rt: tokio::runtime::Runtime,
    http: reqwest::Client,
}

impl Other for ServerOther {
    fn sees(&self, id: &str) -> bool {
        let url = format!("{}/projects/loja/open-questions/{id}", self.base);
        self.rt.block_on(async {
            let r = self.http.get(url).bearer_auth(&self.token).send().await;
            r.is_ok_and(|r| r.status().is_success())
        })
    }
    fn answer(&self, id: &str) {
        let url = format!("{}/projects/loja/open-questions/{id}/answer", self.base);
        self.rt.block_on(async {
            let r = self
                .http
                .post(url)
                .bearer_auth(&self.token)
                .json(&json!({"resposta": "yes"}))
                .send()
                .await
                .expect("answer");
            assert!(r.status().is_success(), "answer: {}", r.status());
        });
    }
}

fn pct(samples: &mut [f64], p: f64) -> f64 {
    samples.sort_by(f64::total_cmp);
    let i = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[i]
}

/// Both figures for one door; milliseconds.
fn measure(mcp: &mut Mcp, other: &dyn Other, reps: usize) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
    let (mut visible, mut woken) = (Vec::new(), Vec::new());
    for i in 0..reps {
        let t0 = Instant::now();
        let id = mcp.call(
            "declare_open_question",
            json!({"pergunta": format!("Bench {i}?")}),
        )?;
        // The id is in the reply; the other client polls for it from the start.
        let reply = mcp.reply(id)?;
        let qid = reply["result"]["structuredContent"]["questionId"]
            .as_str()
            .ok_or_else(|| anyhow::anyhow!("declare: {reply}"))?
            .to_string();
        while !other.sees(&qid) {}
        visible.push(t0.elapsed().as_secs_f64() * 1e3);
        let wait = mcp.call(
            "wait_for_answer",
            json!({"questionId": qid, "timeoutSeconds": 30}),
        )?;
        // Let the wait start reading before the answer lands.
        std::thread::sleep(Duration::from_millis(100));
        other.answer(&qid);
        let answered = Instant::now();
        let done = mcp.reply(wait)?;
        woken.push(answered.elapsed().as_secs_f64() * 1e3);
        anyhow::ensure!(
            done["result"]["structuredContent"]["outcome"] == "answered",
            "wait: {done}"
        );
    }
    Ok((visible, woken))
}

fn report(door: &str, (mut visible, mut woken): (Vec<f64>, Vec<f64>)) {
    for (what, xs) in [
        ("declare_visible", &mut visible),
        ("wait_wakes", &mut woken),
    ] {
        let (p50, p99) = (pct(xs, 0.5), pct(xs, 0.99));
        println!(
            "{door:<8} {what:<16} p50 {p50:>8.2} ms   p99 {p99:>8.2} ms   n {}",
            xs.len()
        );
        println!("OQBENCH mcp_{door}_{what}_p50 {p50:.3} ms");
        println!("OQBENCH mcp_{door}_{what}_p99 {p99:.3} ms");
    }
}

fn main() -> anyhow::Result<()> {
    let reps = std::env::var("OQ_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let _ = rustls::crypto::ring::default_provider().install_default();

    // 1. the local engine: oq mcp on a store file another engine reads and answers.
    let dir = tempfile::tempdir()?;
    let data = dir.path().join("data");
    let engine = LocalEngine::new(SqliteStore::open_in(&data)?, EngineConfig::default());
    engine.personal_session("loja", "ana")?;
    let d = data.to_str().expect("utf-8 path");
    let mut local = Mcp::start(&[
        "--data-dir",
        d,
        "--as",
        "ana",
        "-p",
        "loja",
        "mcp",
        "--agent",
        "po",
    ])?;
    report("local", measure(&mut local, &LocalOther(engine), reps)?);
    drop(local);

    // 2. a real oq serve: the relay to /mcp with an agent's token, the author over HTTP.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let (person, agent) = (oq::engine::ids::token(), oq::engine::ids::token());
    let hash = |t: &str| hex::encode(oq::server::config::token_hash(t));
    let config = dir.path().join("serve.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"127.0.0.1:{port}\"\ndata_dir = {:?}\n\n[[users]]\nid = \"ana\"\nkind = \"person\"\ntoken_sha256 = \"{}\"\n\n[[users]]\nid = \"po-bot\"\nkind = \"agent\"\nrole = \"po\"\ntoken_sha256 = \"{}\"\n\n[[projects]]\nid = \"loja\"\nmembers = [\"ana\"]\nagents = [\"po-bot\"]\n",
            dir.path().join("served").display(),
            hash(&person),
            hash(&agent)
        ),
    )?;
    let mut server = Command::new(OQ)
        .args(["serve", "--config", config.to_str().expect("utf-8 path")])
        .stdout(Stdio::null())
        .spawn()?;
    let base = format!("http://127.0.0.1:{port}");
    let other = ServerOther {
        base: base.clone(),
        token: person,
        rt: tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?,
        http: reqwest::Client::new(),
    };
    let session = {
        let started = Instant::now();
        loop {
            let url = format!("{base}/projects/loja/sessions");
            let r = other.rt.block_on(async {
                other
                    .http
                    .post(url)
                    .bearer_auth(&other.token)
                    .json(&json!({"kind": "conversation", "sessionId": "loja.bench"}))
                    .send()
                    .await
            });
            if let Ok(r) = r {
                let v: Value = other.rt.block_on(r.json())?;
                break v["sessionId"].as_str().unwrap_or("loja.bench").to_string();
            }
            anyhow::ensure!(
                started.elapsed() < Duration::from_secs(30),
                "oq serve did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let relay_dir = dir.path().join("relay");
    let r = relay_dir.to_str().expect("utf-8 path");
    let served = (|| -> anyhow::Result<_> {
        let mut remote = Mcp::start(&[
            "--data-dir",
            r,
            "--source",
            &base,
            "--token",
            &agent,
            "mcp",
            "--session",
            &session,
        ])?;
        measure(&mut remote, &other, reps)
    })();
    let _ = server.kill();
    let _ = server.wait();
    report("serve", served?);
    Ok(())
}
