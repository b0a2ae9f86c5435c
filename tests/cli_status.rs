//! `oq status` and `oq watch` through the built binary, on the local engine and on a real
//! `oq serve`: the one-line summary and its template's refusals, and a watch that runs
//! its command per new question this person can answer, whatever the command does.
#![allow(clippy::unwrap_used)]

mod common;
mod serve_process;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{oq, run, spawn};

fn ask(dir: &Path, user: &str, pergunta: &str) -> String {
    let out = run(oq(dir, user).args(["ask", pergunta, "--agent", "po"]));
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout.trim().to_string()
}

/// Waits (bounded) until `f` holds; the bound only keeps a broken build from hanging.
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn status_counts_open_and_yours_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let status = |args: &[&str]| run(oq(d, "ana").arg("status").args(args));
    assert_eq!(status(&[]).stdout, "oq 0 · 0 for you\n");
    ask(d, "ana", "Which database?");
    let q = ask(d, "ana", "Which queue?");
    ask(d, "bia", "Bia's question?");
    assert_eq!(status(&[]).stdout, "oq 3 · 2 for you\n");
    let out = status(&["--format", "{{{mine}}}/{open} {project}"]);
    assert_eq!(out.stdout, "{2}/3 all\n", "{out:?}");
    let v = run(oq(d, "ana").args(["status", "--json"])).json();
    assert_eq!((v["open"].as_u64(), v["mine"].as_u64()), (Some(3), Some(2)));
    assert_eq!(
        run(oq(d, "ana").args(["answer", &q, "--text", "redis"])).code,
        0
    );
    assert_eq!(status(&[]).stdout, "oq 2 · 1 for you\n");
}

#[test]
fn an_unknown_format_field_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    for (template, named) in [
        ("oq {opne}", "{opne}"),
        ("{open", "not closed"),
        ("a}", "'}'"),
    ] {
        let out = run(oq(dir.path(), "ana").args(["status", "--format", template]));
        assert_eq!(out.code, 6, "{out:?}");
        assert!(out.stderr.starts_with("oq: invalid_format: "), "{out:?}");
        assert!(out.stderr.contains(named), "{out:?}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn status_on_oq_serve() {
    let mut serve = serve_process::Serve::new();
    serve.seed(3);
    serve.start();
    let client = tempfile::tempdir().unwrap();
    let out: common::Out = serve
        .oq(client.path())
        .arg("status")
        .output()
        .unwrap()
        .into();
    assert_eq!(out.stdout, "oq 3 · 3 for you\n", "{out:?}");
    let bad: common::Out = serve
        .oq(client.path())
        .args(["status", "--format", "{who}"])
        .output()
        .unwrap()
        .into();
    assert_eq!(bad.code, 6, "{bad:?}");
}

/// Whether any process on the machine runs `sleep SECS` (the hung command's marker).
fn sleeper_alive(secs: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|p| {
        std::fs::read(p.path().join("cmdline"))
            .map(|c| c.split(|b| *b == 0).any(|arg| arg == secs.as_bytes()))
            .unwrap_or(false)
    })
}

#[test]
fn watch_runs_the_command_per_new_question_and_survives_its_failures() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let before = ask(d, "ana", "Already open?");
    let seen = d.join("seen.txt");
    let err = d.join("watch.err");
    // A unique duration marks the hung command so the test can look for survivors.
    let marker = "31.734";
    let script = format!(
        "case \"$OQ_QUESTION\" in *hang*) sleep {marker};; *fail*) exit 3;; esac; \
         printf '%s|%s|%s\\n' \"$OQ_QUESTION_ID\" \"$OQ_QUESTION\" \"$OQ_PROJECT\" >> {:?}",
        seen
    );
    let mut watch = spawn(
        oq(d, "ana")
            .args([
                "watch",
                "--interval",
                "50",
                "--exec-timeout",
                "1",
                "--exec",
                &script,
            ])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap()),
    );
    let stderr = || std::fs::read_to_string(&err).unwrap_or_default();
    eventually("the watch started", || stderr().contains("following"));

    let hang = ask(d, "ana", "Please hang?");
    let fail = ask(d, "ana", "Please fail?");
    ask(d, "bia", "Not yours?");
    let ok = ask(d, "ana", "Which port?");
    let read = || std::fs::read_to_string(&seen).unwrap_or_default();
    eventually("the command ran for the answerable question", || {
        read().contains(&ok)
    });
    assert_eq!(read(), format!("{ok}|Which port?|default\n"));
    eventually("both failures reported", || {
        let e = stderr();
        e.contains(&format!("--exec for {hang} ran past 1s and was killed"))
            && e.contains(&format!("--exec for {fail} failed (exit 3)"))
    });
    assert!(!read().contains(&before));
    assert!(
        !sleeper_alive(marker),
        "the hung command's group was killed"
    );

    // Still watching after all that.
    let later = ask(d, "ana", "And later?");
    eventually("the watch goes on", || read().contains(&later));
    assert!(watch.child().try_wait().unwrap().is_none(), "{}", stderr());
}
