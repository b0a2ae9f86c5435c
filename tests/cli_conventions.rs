//! The conventions of a command-line tool, through the built binary: completions and the
//! man page are generated from the one clap definition (every subcommand is in them, and
//! bash loads the script), and `oq init serve` writes a 0600 configuration that a real
//! `oq serve` starts from, whose printed tokens are the ones it accepts.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Output, Stdio};

use clap::CommandFactory;
use serde_json::Value;

const OQ: &str = env!("CARGO_BIN_EXE_oq");

fn oq(args: &[&str]) -> Output {
    Command::new(OQ)
        .env_remove("OQ_SOURCE")
        .env_remove("OQ_TOKEN")
        .env_remove("OQ_PROFILE")
        .args(args)
        .output()
        .unwrap()
}

/// Every subcommand's name, from the same definition the binary parses.
fn subcommands() -> Vec<String> {
    oq::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect()
}

#[test]
fn completions_name_every_subcommand_and_bash_loads_them() {
    for shell in ["bash", "zsh", "fish"] {
        let out = oq(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {out:?}");
        let script = String::from_utf8(out.stdout).unwrap();
        for name in subcommands() {
            assert!(script.contains(&name), "{shell} completion lacks {name}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("oq.bash");
    std::fs::write(&file, oq(&["completions", "bash"]).stdout).unwrap();
    let loaded = Command::new("bash")
        .arg("-c")
        .arg(format!("source {:?} && complete -p oq", file))
        .output()
        .unwrap();
    assert!(loaded.status.success(), "{loaded:?}");
    assert!(String::from_utf8_lossy(&loaded.stdout).contains("oq"));
}

#[test]
fn an_unknown_shell_is_refused_by_name() {
    let out = oq(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tcsh"));
}

#[test]
fn the_man_page_is_roff_with_every_subcommand() {
    let out = oq(&["man"]);
    assert!(out.status.success(), "{out:?}");
    // roff escapes a hyphen as `\-`.
    let page = String::from_utf8(out.stdout).unwrap().replace("\\-", "-");
    assert!(page.contains(".TH oq 1"), "{page}");
    for name in subcommands() {
        assert!(page.contains(&name), "man page lacks {name}");
    }
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn init_serve_writes_a_private_config_whose_printed_tokens_work() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("conf/serve.toml");
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let cfg_s = cfg.to_str().unwrap();
    let out = oq(&[
        "--json", "init", "serve", "--config", cfg_s, "--person", "ana", "--agent", "bot",
        "--role", "po", "--name", "loja", "--listen", &listen,
    ]);
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let person_token = v["person"]["token"].as_str().unwrap().to_string();
    let agent_token = v["agent"]["token"].as_str().unwrap().to_string();
    assert_ne!(person_token, agent_token);

    let mode = std::fs::metadata(&cfg).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let text = std::fs::read_to_string(&cfg).unwrap();
    assert!(!text.contains(&person_token) && !text.contains(&agent_token));
    let hash = |t: &str| hex::encode(oq::server::config::token_hash(t));
    assert!(text.contains(&hash(&person_token)) && text.contains(&hash(&agent_token)));

    // A second run changes nothing.
    let again = oq(&["init", "serve", "--config", cfg_s]);
    assert_eq!(again.status.code(), Some(8), "{again:?}");
    assert!(String::from_utf8_lossy(&again.stderr).contains("config_exists"));
    assert_eq!(std::fs::read_to_string(&cfg).unwrap(), text);

    let mut child = Command::new(OQ)
        .args(["serve", "--config", cfg_s])
        .env_remove("OQ_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let _server = Server(child);
    let mut lines = BufReader::new(stdout).lines();
    loop {
        let line = lines.next().expect("the server started").unwrap();
        if line.contains("listening on") {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    let base = format!("http://{listen}");
    let client = tempfile::tempdir().unwrap();
    let with = |token: &str| {
        Command::new(OQ)
            .env_remove("OQ_SOURCE")
            .env_remove("OQ_PROFILE")
            .arg("--data-dir")
            .arg(client.path())
            .args(["--source", &base, "--token", token, "-p", "loja", "--json"])
            .args(["list"])
            .output()
            .unwrap()
    };
    assert!(with(&person_token).status.success());
    assert!(with(&agent_token).status.success());
    let stranger = with(&"0".repeat(64));
    assert!(!stranger.status.success(), "{stranger:?}");
}

#[test]
fn init_serve_refuses_bad_input_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("serve.toml");
    let cfg_s = cfg.to_str().unwrap();
    for (args, code) in [
        (vec!["--role", "wizard"], "unknown_role"),
        (vec!["--person", "a b"], "invalid_id"),
        (vec!["--person", "x", "--agent", "x"], "invalid_id"),
        (vec!["--listen", "nowhere"], "invalid_config"),
    ] {
        let mut all = vec!["init", "serve", "--config", cfg_s];
        all.extend(args);
        let out = oq(&all);
        assert_eq!(out.status.code(), Some(6), "{all:?}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(code),
            "{out:?}"
        );
        assert!(!cfg.exists(), "{all:?} wrote a file");
    }
}
