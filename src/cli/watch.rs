//! `oq watch [--exec CMD]`: follows the source and, for each question that arrives and
//! this person may answer, prints a line and runs CMD with the question in its
//! environment (`OQ_QUESTION_ID`, `OQ_QUESTION`, `OQ_SUGGESTION`, `OQ_PROJECT`,
//! `OQ_SESSION`, `OQ_AGENT`).
//!
//! Invariant: nothing CMD does stops the watch. Each run is bounded (`--exec-timeout`):
//! a CMD that outlives it is killed with its whole process group, and a failure, a kill
//! or a command that cannot start is reported on stderr; the watch goes on. Questions
//! already open when the watch starts are not announced (`--existing` announces them).

use std::collections::HashSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use clap::Args;

use super::context::Context;
use crate::domain::OqError;
use crate::engine::{ListQuery, StatusFilter};
use crate::source::Source;
use crate::wire::QuestionItem;

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Run this (with `sh -c`) for each new question you can answer.
    #[arg(long, value_name = "CMD")]
    pub exec: Option<String>,
    /// Kill CMD (and what it started) after this many seconds.
    #[arg(long, default_value_t = 10, value_name = "SECS")]
    pub exec_timeout: u64,
    /// How often to look at the source, in milliseconds (at least 50).
    #[arg(long, default_value_t = 1000, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(50..))]
    pub interval: u64,
    /// Also announce the questions already open when the watch starts.
    #[arg(long)]
    pub existing: bool,
}

/// What became of one run of CMD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Failed(Option<i32>),
    TimedOut,
    NotStarted(String),
}

pub async fn run(ctx: &Context, a: WatchArgs) -> Result<i32, OqError> {
    let mut seen: HashSet<String> = HashSet::new();
    if !a.existing {
        seen.extend(open_for_me(ctx).await?.into_iter().map(|q| q.question_id));
    }
    eprintln!(
        "oq watch: following {} ({} already open for you{})",
        ctx.source.describe(),
        seen.len(),
        if a.existing {
            ", announced"
        } else {
            ", not announced"
        }
    );
    let mut revision = None;
    loop {
        // The revision is cheap; the list is read only when something changed.
        let now = ctx.source.revision(ctx.project_filter()).await.ok();
        if now.is_none() || now != revision {
            match open_for_me(ctx).await {
                Ok(items) => {
                    for q in items {
                        if seen.insert(q.question_id.clone()) {
                            announce(ctx, &a, q).await;
                        }
                    }
                    revision = now;
                }
                // A source that went away is said and retried, never the end of the watch.
                Err(e) => eprintln!("oq watch: {}: {e}", e.code()),
            }
        }
        tokio::time::sleep(Duration::from_millis(a.interval)).await;
    }
}

/// Every open question this person may answer now, page by page.
async fn open_for_me(ctx: &Context) -> Result<Vec<QuestionItem>, OqError> {
    let (mut out, mut cursor) = (Vec::new(), None::<String>);
    loop {
        let page = ctx
            .source
            .list(
                ctx.project_filter(),
                &ListQuery::new(StatusFilter::Open).after(cursor.as_deref()),
            )
            .await?;
        let more = !page.items.is_empty();
        out.extend(page.items.into_iter().filter(|q| q.can_answer));
        match page.cursor {
            Some(c) if more => cursor = Some(c),
            _ => return Ok(out),
        }
    }
}

async fn announce(ctx: &Context, a: &WatchArgs, q: QuestionItem) {
    if ctx.global.json {
        println!("{}", serde_json::to_string(&q).unwrap_or_default());
    } else {
        println!("{}  {}  {}", q.question_id, q.project_id, q.pergunta);
    }
    let Some(cmd) = a.exec.clone() else { return };
    let limit = Duration::from_secs(a.exec_timeout);
    let id = q.question_id.clone();
    let outcome = tokio::task::spawn_blocking(move || exec(&cmd, &q, limit))
        .await
        .unwrap_or_else(|e| Outcome::NotStarted(e.to_string()));
    match outcome {
        Outcome::Ok => {}
        Outcome::Failed(code) => eprintln!(
            "oq watch: --exec for {id} failed ({}); watching on",
            code.map_or("killed by a signal".into(), |c| format!("exit {c}"))
        ),
        Outcome::TimedOut => eprintln!(
            "oq watch: --exec for {id} ran past {}s and was killed; watching on",
            a.exec_timeout
        ),
        Outcome::NotStarted(e) => {
            eprintln!("oq watch: --exec for {id} could not start: {e}; watching on")
        }
    }
}

/// Runs `cmd` for `q` in a process group of its own, at most `limit`.
pub fn exec(cmd: &str, q: &QuestionItem, limit: Duration) -> Outcome {
    use std::os::unix::process::CommandExt;
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(cmd)
        .env("OQ_QUESTION_ID", &q.question_id)
        .env("OQ_QUESTION", &q.pergunta)
        .env("OQ_SUGGESTION", q.sugestao.as_deref().unwrap_or(""))
        .env("OQ_PROJECT", &q.project_id)
        .env("OQ_SESSION", &q.session_id)
        .env("OQ_AGENT", &q.autor)
        .stdin(Stdio::null())
        .process_group(0);
    let mut child = match c.spawn() {
        Ok(c) => c,
        Err(e) => return Outcome::NotStarted(e.to_string()),
    };
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Outcome::Ok,
            Ok(Some(status)) => return Outcome::Failed(status.code()),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                // The whole group: `sh -c 'sleep 99'` leaves no sleeper behind.
                let group = i32::try_from(child.id())
                    .ok()
                    .and_then(rustix::process::Pid::from_raw);
                if let Some(pid) = group {
                    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                }
                let _ = child.kill();
                let _ = child.wait();
                return Outcome::TimedOut;
            }
        }
    }
}
