//! The script doors against a real `oq serve` (the built binary on a loopback port), run
//! side by side with the same doors on the local engine: same output shapes, same exit
//! codes, same one-line refusals.
#![allow(clippy::unwrap_used)]

mod common_doors;

use common_doors::*;
use std::process::Command;

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
