//! Executes a parsed command line and returns the process's exit code.
//!
//! The question doors (ask, list, show, answer, readiness, verdict, dev-context, waiting)
//! work through [`Source`], so they behave the same on the local engine and on a server;
//! the work doors (sessions, stories, tasks, demo) are in `work.rs`.

use std::io::Read;
use std::time::Duration;

use super::args::{AnswerArgs, AskArgs, Cli, Command, ListArgs, VerdictArgs};
use super::context::{Context, agent, report_error};
use super::render;
use super::work;
use crate::domain::error::exit;
use crate::domain::gate::consolidate;
use crate::domain::readiness::ReadinessGate;
use crate::domain::snooze::{SnoozeInput, parse_duration};
use crate::domain::{Afeta, AnswerInput, DeclareInput, ErrorCode, OqError, Verdict};
use crate::engine::sqlite::now_ms;
use crate::engine::{ListQuery, SnoozeFilter, StatusFilter, VerdictInput};
use crate::source::{AnySource, Source};
use crate::wire::QuestionItem;

/// How often `ask --wait` looks at the source.
const WAIT_POLL: Duration = Duration::from_millis(200);

pub fn run(cli: Cli) -> i32 {
    let json = cli.global.json;
    let Some(command) = cli.command else {
        // No subcommand: the terminal UI, on whatever source was chosen.
        return match Context::open(cli.global) {
            Ok(ctx) => open_tui(ctx),
            Err(e) => {
                report_error(json, &e);
                e.exit_code()
            }
        };
    };
    // The server has its own configuration and store; it never opens the local context.
    let command = match command {
        Command::Serve(s) => return crate::server::main(&s.config),
        Command::Token => return crate::server::token_main(json),
        Command::Store(s) => return super::store::run(s, &cli.global),
        Command::Completions { shell } => return super::conventions::completions(shell),
        Command::Man => return super::conventions::man(),
        Command::Init(i) => {
            return super::conventions::init(i, json).unwrap_or_else(|e| {
                report_error(json, &e);
                e.exit_code()
            });
        }
        // Standard output is the protocol's: its own runtime and context.
        Command::Mcp(m) => return super::mcp::run(cli.global, m),
        // Claude Code reads its standard output and exit code: its own mapping.
        Command::Hook(h) => return super::hook::run(cli.global, h),
        other => other,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            report_error(
                json,
                &OqError::Internal(format!("cannot start the runtime: {e}")),
            );
            return exit::INTERNAL;
        }
    };
    let tui_after = matches!(&command, Command::Demo(d) if d.opens_tui(json));
    let opened = {
        // Inside the runtime: a remote source may start background work as it opens.
        let _inside = runtime.enter();
        Context::open(cli.global)
    };
    let ctx = match opened {
        Ok(ctx) => ctx,
        Err(e) => {
            report_error(json, &e);
            return e.exit_code();
        }
    };
    let result = runtime.block_on(async {
        let done = dispatch(&ctx, command).await;
        // Only a door that answered from the mirror says so; a refusal (a write that
        // cannot be queued, an answer that was) says what happened in its own words.
        if done.is_ok() {
            super::outbox::note_offline(&ctx);
        }
        done
    });
    drop(runtime);
    match result {
        Ok(code) if tui_after && code == exit::OK => open_tui(ctx),
        Ok(code) => code,
        Err(e) => {
            report_error(json, &e);
            e.exit_code()
        }
    }
}

/// The TUI on the context's source, with drafts in the data dir.
fn open_tui(ctx: Context) -> i32 {
    let dir = match super::context::data_dir(&ctx.global) {
        Ok(d) => d,
        Err(e) => {
            report_error(false, &e);
            return e.exit_code();
        }
    };
    let project = ctx.global.project.clone();
    // Logs to a file, never to the screen; without one the TUI still works.
    let _ = crate::logging::init(&dir, "tui");
    tracing::info!(source = %ctx.source.describe(), "terminal UI opened");
    let code = crate::tui::open(ctx.source, ctx.user, dir, project);
    tracing::info!(code, "terminal UI closed");
    code
}

async fn dispatch(ctx: &Context, command: Command) -> Result<i32, OqError> {
    match command {
        Command::Ask(a) => ask(ctx, a).await,
        Command::List(l) => list(ctx, l).await,
        Command::Show { question_id } => {
            let item = ctx
                .source
                .question(ctx.project_filter(), &question_id)
                .await?;
            ctx.emit(&item, || render::question(&item, now_ms()));
            Ok(exit::OK)
        }
        Command::Answer(a) => answer(ctx, a).await,
        Command::Dismiss { question_id } => {
            let item = ctx
                .source
                .dismiss(ctx.project_filter(), &question_id)
                .await?;
            ctx.emit(&item, || format!("dismissed {}\n", item.question_id));
            Ok(exit::OK)
        }
        Command::Snooze(a) => {
            let input = match (&a.until, &a.for_) {
                (Some(date), _) => SnoozeInput::until(crate::domain::date::parse_utc(date)?),
                (None, Some(d)) => SnoozeInput::for_seconds(parse_duration(d)?),
                (None, None) => SnoozeInput::default(),
            };
            let item = ctx
                .source
                .snooze(ctx.project_filter(), &a.question_id, &input)
                .await?;
            ctx.emit(&item, || snoozed_line(&item));
            Ok(exit::OK)
        }
        Command::Unsnooze { question_id } => {
            let item = ctx
                .source
                .unsnooze(ctx.project_filter(), &question_id)
                .await?;
            ctx.emit(&item, || format!("unsnoozed {}\n", item.question_id));
            Ok(exit::OK)
        }
        Command::Readiness(r) => {
            let project = ctx.project().await?;
            let gate = r
                .record
                .as_deref()
                .map(str::parse::<ReadinessGate>)
                .transpose()?;
            let readiness = ctx.source.readiness(&project, gate).await?;
            ctx.emit(&readiness, || match &readiness.notice {
                Some(n) => format!("{n}: oq list --project {project}\n"),
                None => "no questions are open\n".into(),
            });
            Ok(exit::OK)
        }
        Command::Verdict(v) => verdict(ctx, v).await,
        Command::DevContext { task_id } => {
            let dc = ctx
                .source
                .dev_context(&ctx.project().await?, &task_id)
                .await?;
            ctx.emit(&dc, || {
                let mut out = format!("{}\n", dc.header);
                for d in &dc.decisoes {
                    out.push_str(&format!("- {} → {}\n", d.pergunta, d.resposta));
                }
                if dc.decisoes.is_empty() {
                    out.push_str("(no decisions yet)\n");
                }
                out
            });
            Ok(exit::OK)
        }
        Command::Session(s) => work::session(ctx, s).await,
        Command::Story(s) => work::story(ctx, s).await,
        Command::Task(t) => work::task(ctx, t).await,
        Command::Demo(d) => work::demo(ctx, d).await,
        Command::Outbox(o) => super::outbox::run(ctx, o).await,
        Command::Status { format } => super::status::run(ctx, format).await,
        Command::Watch(w) => super::watch::run(ctx, w).await,
        Command::Decisions(d) => super::decisions::run(ctx, d).await,
        Command::Serve(_)
        | Command::Token
        | Command::Store(_)
        | Command::Completions { .. }
        | Command::Man
        | Command::Init(_)
        | Command::Mcp(_)
        | Command::Hook(_) => Err(OqError::Internal(
            "serve and token run before the local context".into(),
        )),
    }
}

async fn list(ctx: &Context, l: ListArgs) -> Result<i32, OqError> {
    let status: StatusFilter = l.status.parse()?;
    let query = ListQuery::new(status)
        .search(l.search.as_deref().unwrap_or(""))?
        .sorted(l.sort.parse()?)
        .after(l.cursor.as_deref())
        .limit(l.limit)
        .snoozed(if l.snoozed {
            SnoozeFilter::Only
        } else {
            SnoozeFilter::Show
        });
    let list = ctx.source.list(ctx.project_filter(), &query).await?;
    ctx.emit(&list, || render::question_list(&list, now_ms()));
    Ok(exit::OK)
}

/// `snoozed q-1 until 2026-12-04T09:00:00Z`.
fn snoozed_line(item: &QuestionItem) -> String {
    match &item.snooze {
        Some(s) => format!(
            "snoozed {} until {}\n",
            item.question_id,
            crate::domain::date::format_utc(s.until)
        ),
        None => format!("snoozed {}\n", item.question_id),
    }
}

async fn ask(ctx: &Context, a: AskArgs) -> Result<i32, OqError> {
    let local = matches!(ctx.source, AnySource::Local(_));
    let role = match (a.agent.as_deref(), local) {
        (Some(r), _) => Some(agent(r)?),
        (None, false) => None,
        (None, true) => {
            return Err(OqError::invalid(
                ErrorCode::AgentRequired,
                "oq ask needs --agent ROLE (criativo, po, arquiteto or dev-lead), or OQ_AGENT",
            ));
        }
    };
    if let Some(actor) = &role {
        // Refuse a bad role or bad text before anything is created.
        crate::domain::question::check_declarer(actor)?;
    }
    let project = ctx.project().await?;
    let afeta = parse_affects(&a.affects)?;
    let mut input = DeclareInput {
        pergunta: a.pergunta,
        sugestao: a.suggest,
        afeta,
        session_id: "pending".into(),
        idempotency_key: a.key,
    };
    input.validated()?;
    input.session_id = match a.session {
        Some(s) => s,
        None => ctx.source.default_session(&project).await?.ok_or_else(|| {
            OqError::invalid(
                ErrorCode::SessionRequired,
                "name the session the question is born in: --session ID",
            )
        })?,
    };
    let q = ctx
        .source
        .declare(&project, role.and_then(|r| r.role()), &input)
        .await?;
    if !a.wait {
        ctx.emit(&q, || format!("{}\n", q.question_id));
        return Ok(exit::OK);
    }
    eprintln!(
        "oq: waiting for {} to answer {} …",
        q.session_author, q.question_id
    );
    let timeout = a.timeout.map(Duration::from_secs);
    let answered = ctx
        .source
        .wait_for_answer(Some(&project), &q.question_id, timeout, WAIT_POLL)
        .await?;
    ctx.emit(&answered, || {
        format!(
            "{}\n",
            answered
                .answer
                .as_ref()
                .map(|a| a.resposta.as_str())
                .unwrap_or("")
        )
    });
    Ok(exit::OK)
}

async fn answer(ctx: &Context, a: AnswerArgs) -> Result<i32, OqError> {
    let question_id = match a.question_ids.as_slice() {
        [one] => one.clone(),
        _ if a.accept => return super::triage::accept_all(ctx, &a.question_ids).await,
        _ => {
            return Err(OqError::invalid(
                ErrorCode::InvalidAnswers,
                "several question ids: only --accept answers more than one at a time",
            ));
        }
    };
    let input = if a.accept {
        AnswerInput::accept()
    } else if let Some(json) = a.answers_json.as_deref() {
        let json = if json == "-" {
            read_stdin()?
        } else {
            json.to_string()
        };
        let answers: Vec<Vec<String>> = serde_json::from_str(&json).map_err(|e| {
            OqError::invalid(
                ErrorCode::InvalidAnswers,
                format!("--answers-json: expected an array of arrays of strings: {e}"),
            )
        })?;
        AnswerInput {
            answers: Some(answers),
            ..AnswerInput::default()
        }
    } else {
        let text = match a.text.as_deref() {
            Some("-") => read_stdin()?,
            Some(t) => t.to_string(),
            None => String::new(),
        };
        AnswerInput::text(text)
    };
    let item = ctx
        .source
        .answer(ctx.project_filter(), &question_id, &input)
        .await?;
    ctx.emit(&item, || {
        let decision = item
            .answer
            .as_ref()
            .map(|a| a.decision_event_id.as_str())
            .unwrap_or("");
        format!("answered {} (decision {decision})\n", item.question_id)
    });
    Ok(exit::OK)
}

fn read_stdin() -> Result<String, OqError> {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).map_err(|e| {
        OqError::invalid(
            ErrorCode::InvalidText,
            format!("cannot read the answer from stdin: {e}"),
        )
    })?;
    Ok(s)
}

async fn verdict(ctx: &Context, v: VerdictArgs) -> Result<i32, OqError> {
    let actor = agent(&v.agent)?;
    let project = ctx.project().await?;
    let mut verdicts = Vec::new();
    let mut subspecialty = None;
    for entry in &v.verdicts {
        let (sub, verdict) = match entry.split_once('=') {
            Some((sub, verdict)) => (Some(sub.to_string()), verdict),
            None => (None, entry.as_str()),
        };
        verdicts.push(verdict.parse::<Verdict>()?);
        if v.verdicts.len() == 1 {
            subspecialty = sub;
        }
    }
    let consolidated = consolidate(&verdicts)
        .ok_or_else(|| OqError::invalid(ErrorCode::InvalidBody, "no verdict given"))?;
    let needs_question = consolidated == Verdict::NeedsUserDecision;
    let input = VerdictInput {
        verdict: Some(consolidated),
        pergunta: v.question.filter(|_| needs_question),
        sugestao: v.suggest.filter(|_| needs_question),
        open_question_id: v.open_question.filter(|_| needs_question),
        subspecialty,
    };
    let reply = ctx
        .source
        .verdict(&project, actor.role(), &v.task_id, &input)
        .await?;
    ctx.emit(&reply, || {
        format!(
            "verdict {consolidated} on {}\n{}",
            reply.task.task_id,
            render::task(&reply.task)
        )
    });
    Ok(exit::OK)
}

/// `rule:RN-1`, `story:S-3`, `task:T-7` (or the ADR's `regra`, `historia`, `tarefa`).
pub fn parse_affects(entries: &[String]) -> Result<Afeta, OqError> {
    let mut afeta = Afeta::default();
    for entry in entries.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
        let (kind, id) = entry.split_once(':').ok_or_else(|| {
            OqError::invalid(
                ErrorCode::InvalidAffects,
                format!("--affects {entry:?}: expected rule:ID, story:ID or task:ID"),
            )
        })?;
        let list = match kind {
            "rule" | "regra" | "regras" => &mut afeta.regras,
            "story" | "historia" | "historias" => &mut afeta.historias,
            "task" | "tarefa" | "tarefas" => &mut afeta.tarefas,
            _ => {
                return Err(OqError::invalid(
                    ErrorCode::InvalidAffects,
                    format!(
                        "--affects {entry:?}: unknown kind {kind:?}; expected rule, story or task"
                    ),
                ));
            }
        };
        list.push(id.to_string());
    }
    afeta.validate()?;
    Ok(afeta)
}
