//! The script doors against a real `oq serve` (the built binary on a loopback port), run
//! side by side with the same doors on the local engine: same output shapes, same exit
//! codes, same one-line refusals.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

const OQ: &str = env!("CARGO_BIN_EXE_oq");

/// Kills the server when the test ends, whatever happens.
struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn token_pair() -> (String, String) {
    let out = Command::new(OQ).args(["token", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        v["token"].as_str().unwrap().into(),
        v["tokenSha256"].as_str().unwrap().into(),
    )
}

/// Starts `oq serve` with people dev-a and dev-b and agents po-bot and qa-bot in `loja`.
fn start_server(dir: &Path) -> (Server, Vec<(String, String)>) {
    let names = ["dev-a", "dev-b", "po-bot", "qa-bot"];
    let tokens: Vec<(String, String)> = names
        .iter()
        .map(|n| (n.to_string(), token_pair().0))
        .collect();
    let mut cfg = String::from("listen = \"127.0.0.1:0\"\ndata_dir = \"data\"\n");
    for (name, token) in &tokens {
        let hash = {
            use sha2::Digest;
            hex::encode(sha2::Sha256::digest(token.as_bytes()))
        };
        let kind = match name.as_str() {
            "po-bot" => "kind = \"agent\"\nrole = \"po\"",
            "qa-bot" => "kind = \"agent\"\nrole = \"qa-agent\"",
            _ => "kind = \"person\"",
        };
        cfg.push_str(&format!(
            "\n[[users]]\nid = \"{name}\"\n{kind}\ntoken_sha256 = \"{hash}\"\n"
        ));
    }
    cfg.push_str("\n[[projects]]\nid = \"loja\"\nmembers = [\"dev-a\", \"dev-b\"]\nagents = [\"po-bot\", \"qa-bot\"]\n");
    let path = dir.join("serve.toml");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(cfg.as_bytes())
        .unwrap();
    let mut child = Command::new(OQ)
        .args(["serve", "--config"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let base = loop {
        let line = lines
            .next()
            .expect("the server said where it listens")
            .unwrap();
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.trim().to_string();
        }
    };
    // Keep draining stdout so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (Server { child, base }, tokens)
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }
}

/// How a door is invoked on one source, as one of its people or agents.
trait Door {
    fn run(&self, who: &str, args: &[&str]) -> Run;
}

fn exec(mut cmd: Command) -> Run {
    let out = cmd.output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
    }
}

struct Local<'a> {
    data_dir: &'a Path,
}

impl Door for Local<'_> {
    fn run(&self, who: &str, args: &[&str]) -> Run {
        let mut cmd = Command::new(OQ);
        cmd.env_remove("OQ_SOURCE")
            .env_remove("OQ_TOKEN")
            .arg("--data-dir")
            .arg(self.data_dir)
            .args(["-p", "loja"]);
        // Locally an agent is named by its role after the door; a person by `--as`.
        match who {
            "po-bot" => cmd.args(args).args(["--agent", "po"]),
            "qa-bot" => cmd.args(args).args(["--agent", "qa-agent"]),
            person => cmd.args(["--as", person]).args(args),
        };
        exec(cmd)
    }
}

struct Http<'a> {
    base: &'a str,
    tokens: &'a [(String, String)],
}

impl Door for Http<'_> {
    fn run(&self, who: &str, args: &[&str]) -> Run {
        let token = &self.tokens.iter().find(|(n, _)| n == who).unwrap().1;
        let mut cmd = Command::new(OQ);
        cmd.env_remove("OQ_DATA_DIR")
            .env("OQ_TOKEN", token)
            .args(["--source", self.base, "-p", "loja"]);
        cmd.args(args);
        exec(cmd)
    }
}

/// The same scenario on one source; returns what was observed, with ids replaced.
fn scenario(door: &dyn Door) -> Vec<String> {
    let mut seen = Vec::new();
    fn note(seen: &mut Vec<String>, label: &str, r: &Run) {
        seen.push(format!(
            "{label}: exit {} {}",
            r.code,
            r.stderr.lines().last().unwrap_or("")
        ));
    }
    let session = door.run("dev-a", &["session", "start", "--kind", "execution"]);
    note(&mut seen, "session", &session);
    let session_id = session.stdout.trim().to_string();

    let ask = door.run(
        "po-bot",
        &[
            "ask",
            "Which payment provider?",
            "--suggest",
            "Pix",
            "--session",
            &session_id,
            "--json",
        ],
    );
    note(&mut seen, "ask", &ask);
    let q = ask.json();
    let qid = q["questionId"].as_str().unwrap().to_string();
    seen.push(format!(
        "ask fields: status={} autor={} sessionAuthor={} sugestao={}",
        q["status"], q["autor"], q["sessionAuthor"], q["sugestao"]
    ));

    let list = door.run("dev-b", &["list", "--json"]);
    note(&mut seen, "list", &list);
    let l = list.json();
    let item = &l["items"][0];
    seen.push(format!(
        "list: total={} canAnswer={} reason={}",
        l["total"], item["canAnswer"], item["reason"]
    ));

    let r = door.run("dev-b", &["answer", &qid, "--text", "Cards"]);
    note(&mut seen, "non-author answer", &r);
    let r = door.run("dev-a", &["answer", &qid, "--accept", "--json"]);
    note(&mut seen, "author answer", &r);
    let a = r.json();
    seen.push(format!(
        "answer: resposta={} aceitou={}",
        a["answer"]["resposta"], a["answer"]["aceitouSugestao"]
    ));
    let r = door.run("dev-a", &["answer", &qid, "--text", "again"]);
    note(&mut seen, "second answer", &r);
    let r = door.run("dev-a", &["answer", &qid, "--text", "   "]);
    note(&mut seen, "blank answer", &r);
    let r = door.run("dev-a", &["show", "q-doesnotexist"]);
    note(&mut seen, "unknown id", &r);
    let long = "é".repeat(501);
    let r = door.run("po-bot", &["ask", &long, "--session", &session_id]);
    note(&mut seen, "oversize", &r);
    let r = door.run("dev-a", &["readiness", "--json"]);
    note(&mut seen, "readiness", &r);
    seen.push(format!(
        "readiness body: {}",
        r.stdout.split_whitespace().collect::<String>()
    ));
    let r = door.run("dev-a", &["list", "--status", "answered", "--json"]);
    seen.push(format!("answered total: {}", r.json()["total"]));
    let r = door.run("dev-a", &["task", "waiting", "--json"]);
    seen.push(format!(
        "waiting: exit {} {}",
        r.code,
        r.stdout.split_whitespace().collect::<String>()
    ));
    seen.into_iter()
        .map(|s| s.replace(&qid, "QID").replace(&session_id, "SID"))
        .collect()
}

#[test]
fn the_doors_behave_the_same_on_a_server_and_locally() {
    let dir = tempfile::tempdir().unwrap();
    let (server, tokens) = start_server(dir.path());
    let local_dir = dir.path().join("local");
    let local = scenario(&Local {
        data_dir: &local_dir,
    });
    let remote = scenario(&Http {
        base: &server.base,
        tokens: &tokens,
    });
    assert_eq!(local, remote, "local and http observations differ");
    // And the observations are the ADR's: a refusal for the non-author, one answer.
    assert!(
        local
            .iter()
            .any(|l| l.starts_with("non-author answer: exit 3 oq: so_o_autor_da_sessao"))
    );
    assert!(
        local
            .iter()
            .any(|l| l.starts_with("second answer: exit 4 oq: pergunta_ja_respondida"))
    );
    assert!(local.iter().any(|l| l.starts_with("unknown id: exit 5")));
    assert!(
        local
            .iter()
            .any(|l| l.starts_with("oversize: exit 6 oq: text_too_long"))
    );
}

#[test]
fn a_server_that_is_down_or_refuses_the_token_exits_10() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _tokens) = start_server(dir.path());
    let r = exec({
        let mut c = Command::new(OQ);
        c.args(["--source", &server.base, "--token", "not-a-token", "list"]);
        c
    });
    assert_eq!(r.code, 10, "{}", r.stderr);
    assert!(r.stderr.contains("unauthorized"), "{}", r.stderr);
    let base = server.base.clone();
    drop(server);
    let r = exec({
        let mut c = Command::new(OQ);
        c.args(["--source", &base, "--token", "x", "list"]);
        c
    });
    assert_eq!(r.code, 10, "{}", r.stderr);
    assert!(r.stderr.contains("unreachable"), "{}", r.stderr);
}

#[test]
fn a_profile_names_the_server_and_token() {
    let dir = tempfile::tempdir().unwrap();
    let (server, tokens) = start_server(dir.path());
    let token = &tokens.iter().find(|(n, _)| n == "dev-a").unwrap().1;
    let config_dir = dir.path().join("config");
    std::fs::create_dir_all(&config_dir).unwrap();
    std::fs::write(
        config_dir.join("config.toml"),
        format!(
            "[profiles.team]\nsource = \"{}\"\ntoken = \"{token}\"\nproject = \"loja\"\n",
            server.base
        ),
    )
    .unwrap();
    let r = exec({
        let mut c = Command::new(OQ);
        c.env("OQ_CONFIG_DIR", &config_dir)
            .args(["--profile", "team", "readiness", "--json"]);
        c
    });
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["openQuestions"], 0);
    let r = exec({
        let mut c = Command::new(OQ);
        c.env("OQ_CONFIG_DIR", &config_dir)
            .args(["--profile", "nope", "list"]);
        c
    });
    assert_eq!(r.code, 6);
    assert!(
        r.stderr.contains("no profile \"nope\"") && r.stderr.contains("team"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_server_logs_to_a_file_and_never_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let (server, tokens) = start_server(dir.path());
    let token = &tokens.iter().find(|(n, _)| n == "dev-a").unwrap().1;
    let r = exec({
        let mut c = Command::new(OQ);
        c.args([
            "--source",
            &server.base,
            "--token",
            token,
            "-p",
            "loja",
            "readiness",
        ]);
        c
    });
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bad = exec({
        let mut c = Command::new(OQ);
        c.args([
            "--source",
            &server.base,
            "--token",
            "wrong-token-value",
            "list",
        ]);
        c
    });
    assert_eq!(bad.code, 10);
    drop(server);
    let log = std::fs::read_to_string(dir.path().join("data/logs/serve.log")).expect("serve.log");
    assert!(log.contains("listening"), "{log}");
    for (_, t) in &tokens {
        assert!(!log.contains(t.as_str()), "a token is in the log");
    }
    assert!(
        !log.contains("wrong-token-value"),
        "a presented token is in the log"
    );
}
