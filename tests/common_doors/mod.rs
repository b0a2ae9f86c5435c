//! The script doors as a test runs them: the built `oq serve` on a loopback port (killed
//! on drop), and the same door invoked on the local engine or on that server, as one of
//! its people or agents, with its exit code and output.
#![allow(dead_code, clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

pub const OQ: &str = env!("CARGO_BIN_EXE_oq");

/// Kills the server when the test ends, whatever happens.
pub struct Server {
    child: Child,
    pub base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn token_pair() -> (String, String) {
    let out = Command::new(OQ).args(["token", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        v["token"].as_str().unwrap().into(),
        v["tokenSha256"].as_str().unwrap().into(),
    )
}

/// Starts `oq serve` with people dev-a and dev-b and agents po-bot and qa-bot in `loja`.
pub fn start_server(dir: &Path) -> (Server, Vec<(String, String)>) {
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

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }
}

/// How a door is invoked on one source, as one of its people or agents.
pub trait Door {
    fn run(&self, who: &str, args: &[&str]) -> Run;
}

pub fn exec(mut cmd: Command) -> Run {
    let out = cmd.output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr: String::from_utf8_lossy(&out.stderr).into(),
    }
}

pub struct Local<'a> {
    pub data_dir: &'a Path,
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

pub struct Http<'a> {
    pub base: &'a str,
    pub tokens: &'a [(String, String)],
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
