//! Executes a parsed command line and returns the process's exit code.

use std::io::Read;
use std::time::Duration;

use serde_json::json;

use super::args::{
    AnswerArgs, AskArgs, Cli, Command, SessionCommand, StoryCommand, TaskCommand, VerdictArgs,
};
use super::context::{Context, agent, report_error};
use super::render;
use crate::domain::error::exit;
use crate::domain::gate::consolidate;
use crate::domain::readiness::ReadinessGate;
use crate::domain::{Afeta, AnswerInput, DeclareInput, OqError, SessionKind, Verdict, WorkState};
use crate::engine::sqlite::now_ms;
use crate::engine::{StatusFilter, VerdictInput};
use crate::wire::{QuestionItem, QuestionList, SessionItem, StoryItem, TaskItem, WaitingItem};

/// How often `ask --wait` looks at the shared store.
const WAIT_POLL: Duration = Duration::from_millis(200);

pub fn run(cli: Cli) -> i32 {
    let json = cli.global.json;
    let Some(command) = cli.command else {
        eprintln!(
            "oq: the terminal UI is not in this build yet; try `oq demo` then `oq list` (see `oq --help`)"
        );
        return exit::USAGE;
    };
    // The server has its own configuration and store; it never opens the local context.
    let command = match command {
        Command::Serve(s) => return crate::server::main(&s.config),
        Command::Token => return crate::server::token_main(json),
        other => other,
    };
    let result = Context::open(cli.global).and_then(|ctx| dispatch(&ctx, command));
    match result {
        Ok(code) => code,
        Err(e) => {
            report_error(json, &e);
            e.exit_code()
        }
    }
}

fn dispatch(ctx: &Context, command: Command) -> Result<i32, OqError> {
    match command {
        Command::Ask(a) => ask(ctx, a),
        Command::List(l) => {
            let status: StatusFilter = l.status.parse()?;
            let page =
                ctx.engine
                    .list(ctx.project_filter(), status, l.cursor.as_deref(), l.limit)?;
            let viewer = ctx.person();
            let list = QuestionList {
                items: page
                    .items
                    .iter()
                    .map(|q| QuestionItem::from_question(q, &viewer))
                    .collect(),
                total: page.total,
                cursor: page.cursor,
            };
            ctx.emit(&list, || render::question_list(&list, now_ms()));
            Ok(exit::OK)
        }
        Command::Show { question_id } => {
            let q = ctx.engine.question(ctx.project_filter(), &question_id)?;
            let item = QuestionItem::from_question(&q, &ctx.person());
            ctx.emit(&item, || render::question(&item, now_ms()));
            Ok(exit::OK)
        }
        Command::Answer(a) => answer(ctx, a),
        Command::Readiness(r) => {
            let project = ctx.project()?;
            let readiness = match r.record {
                Some(gate) => ctx.engine.record_readiness(
                    &ctx.person(),
                    &project,
                    gate.parse::<ReadinessGate>()?,
                )?,
                None => ctx.engine.readiness(&project)?,
            };
            ctx.emit(&readiness, || match &readiness.notice {
                Some(n) => format!("{n}: oq list --project {project}\n"),
                None => "no questions are open\n".into(),
            });
            Ok(exit::OK)
        }
        Command::Verdict(v) => verdict(ctx, v),
        Command::DevContext { task_id } => {
            let dc = ctx.engine.dev_context(&ctx.project()?, &task_id)?;
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
        Command::Session(s) => session(ctx, s),
        Command::Story(s) => story(ctx, s),
        Command::Task(t) => task(ctx, t),
        Command::Serve(_) | Command::Token => Err(OqError::Internal(
            "serve and token run before the local context".into(),
        )),
        Command::Demo(d) => {
            let summary = crate::demo::fill(&ctx.engine, &ctx.user)?;
            let dir = super::context::data_dir(&ctx.global)?;
            ctx.emit(&summary, || {
                if d.quiet {
                    return format!("{}\n", dir.display());
                }
                let viewer = ctx.person();
                let open = ctx
                    .engine
                    .list(None, StatusFilter::Open, None, 50)
                    .map(|page| QuestionList {
                        items: page
                            .items
                            .iter()
                            .map(|q| QuestionItem::from_question(q, &viewer))
                            .collect(),
                        total: page.total,
                        cursor: page.cursor,
                    });
                let queue = open
                    .map(|l| render::question_list(&l, now_ms()))
                    .unwrap_or_default();
                format!(
                    "{}\nOpen questions (● you can answer, ○ another person's session):\n{queue}",
                    crate::demo::describe(&summary, &dir, &oq_invocation(ctx))
                )
            });
            Ok(exit::OK)
        }
    }
}

fn ask(ctx: &Context, a: AskArgs) -> Result<i32, OqError> {
    let role = a.agent.as_deref().ok_or_else(|| {
        OqError::invalid(
            "agent_required",
            "oq ask needs --agent ROLE (criativo, po, arquiteto or dev-lead), or OQ_AGENT",
        )
    })?;
    let actor = agent(role)?;
    let project = ctx.project()?;
    let afeta = parse_affects(&a.affects)?;
    // Refuse a bad role or bad text before creating the person's session.
    crate::domain::question::check_declarer(&actor)?;
    let mut input = DeclareInput {
        pergunta: a.pergunta,
        sugestao: a.suggest,
        afeta,
        session_id: "pending".into(),
    };
    input.validated()?;
    input.session_id = match a.session {
        Some(s) => s,
        None => ctx.engine.personal_session(&project, &ctx.user)?.session_id,
    };
    let q = ctx.engine.declare(&actor, &project, &input)?;
    if !a.wait {
        let item = QuestionItem::from_question(&q, &ctx.person());
        ctx.emit(&item, || format!("{}\n", q.question_id));
        return Ok(exit::OK);
    }
    eprintln!(
        "oq: waiting for {} to answer {} …",
        q.session_author, q.question_id
    );
    let answered = ctx.engine.wait_for_answer(
        &q.question_id,
        a.timeout.map(Duration::from_secs),
        WAIT_POLL,
    )?;
    let item = QuestionItem::from_question(&answered, &ctx.person());
    ctx.emit(&item, || {
        format!(
            "{}\n",
            item.answer
                .as_ref()
                .map(|a| a.resposta.as_str())
                .unwrap_or("")
        )
    });
    Ok(exit::OK)
}

fn answer(ctx: &Context, a: AnswerArgs) -> Result<i32, OqError> {
    let input = if a.accept {
        AnswerInput::accept()
    } else {
        let text = match a.text.as_deref() {
            Some("-") => {
                let mut s = String::new();
                std::io::stdin().read_to_string(&mut s).map_err(|e| {
                    OqError::invalid(
                        "invalid_text",
                        format!("cannot read the answer from stdin: {e}"),
                    )
                })?;
                s
            }
            Some(t) => t.to_string(),
            None => String::new(),
        };
        AnswerInput::text(text)
    };
    let q = ctx
        .engine
        .answer(&ctx.person(), ctx.project_filter(), &a.question_id, &input)?;
    let item = QuestionItem::from_question(&q, &ctx.person());
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

fn verdict(ctx: &Context, v: VerdictArgs) -> Result<i32, OqError> {
    let actor = agent(&v.agent)?;
    let project = ctx.project()?;
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
        .ok_or_else(|| OqError::invalid("invalid_body", "no verdict given"))?;
    let needs_question = consolidated == Verdict::NeedsUserDecision;
    let input = VerdictInput {
        verdict: Some(consolidated),
        pergunta: v.question.filter(|_| needs_question),
        sugestao: v.suggest.filter(|_| needs_question),
        open_question_id: v.open_question.filter(|_| needs_question),
        subspecialty,
    };
    let outcome = ctx.engine.verdict(&actor, &project, &v.task_id, &input)?;
    let item = TaskItem::from(&outcome.task);
    let body =
        json!({ "verdict": consolidated, "task": item, "openQuestionId": outcome.question_id });
    ctx.emit(&body, || {
        let mut out = format!("verdict {consolidated} on {}\n", item.task_id);
        out.push_str(&render::task(&item));
        out
    });
    Ok(exit::OK)
}

fn session(ctx: &Context, s: SessionCommand) -> Result<i32, OqError> {
    match s {
        SessionCommand::Start { kind, id } => {
            let kind: SessionKind = kind.parse()?;
            let session =
                ctx.engine
                    .start_session(&ctx.person(), &ctx.project()?, kind, id.as_deref())?;
            let item = SessionItem::from(&session);
            ctx.emit(&item, || format!("{}\n", item.session_id));
        }
        SessionCommand::List => {
            let items: Vec<SessionItem> = ctx
                .engine
                .read(|v| v.sessions(ctx.project_filter()))?
                .iter()
                .map(SessionItem::from)
                .collect();
            ctx.emit(&items, || {
                items
                    .iter()
                    .map(|s| {
                        format!(
                            "{:<24} {:<12} {:<13} {}\n",
                            s.session_id, s.project_id, s.kind, s.author
                        )
                    })
                    .collect()
            });
        }
    }
    Ok(exit::OK)
}

fn story(ctx: &Context, s: StoryCommand) -> Result<i32, OqError> {
    let story = match s {
        StoryCommand::Add { title, agent: role } => {
            ctx.engine
                .create_story(&agent(&role)?, &ctx.project()?, &title)?
        }
        StoryCommand::List => {
            let items: Vec<StoryItem> = ctx
                .engine
                .stories(ctx.project_filter())?
                .iter()
                .map(StoryItem::from)
                .collect();
            ctx.emit(&items, || {
                items
                    .iter()
                    .map(|s| {
                        format!(
                            "{:<12} {:<12} {:<11} {}\n",
                            s.story_id, s.project_id, s.state, s.title
                        )
                    })
                    .collect()
            });
            return Ok(exit::OK);
        }
        StoryCommand::State {
            story_id,
            state,
            agent: role,
        } => ctx.engine.move_story(
            &agent(&role)?,
            &ctx.project()?,
            &story_id,
            state.parse::<WorkState>()?,
        )?,
        StoryCommand::Correct {
            story_id,
            question,
            agent: role,
        } => ctx.engine.correct_story(
            &agent(&role)?,
            &ctx.project()?,
            &story_id,
            question.as_deref(),
        )?,
    };
    let item = StoryItem::from(&story);
    ctx.emit(&item, || {
        format!("{}  [{}]  {}\n", item.story_id, item.state, item.title)
    });
    Ok(exit::OK)
}

fn task(ctx: &Context, t: TaskCommand) -> Result<i32, OqError> {
    let task = match t {
        TaskCommand::Add {
            title,
            story,
            session,
            agent: role,
        } => ctx
            .engine
            .create_task(&agent(&role)?, &ctx.project()?, &story, &session, &title)?,
        TaskCommand::State {
            task_id,
            state,
            agent: role,
        } => ctx.engine.move_task(
            &agent(&role)?,
            &ctx.project()?,
            &task_id,
            state.parse::<WorkState>()?,
        )?,
        TaskCommand::Show { task_id } => ctx.engine.task(&ctx.project()?, &task_id)?,
        TaskCommand::Waiting => {
            let items: Vec<WaitingItem> = ctx
                .engine
                .waiting_for(ctx.project_filter(), &ctx.user)?
                .iter()
                .map(WaitingItem::from)
                .collect();
            ctx.emit(&items, || render::waiting(&items, now_ms()));
            return Ok(exit::OK);
        }
    };
    let item = TaskItem::from(&task);
    ctx.emit(&item, || render::task(&item));
    Ok(exit::OK)
}

/// How the user invoked oq, for hints that work when pasted: `oq`, plus `--data-dir` when
/// they chose one.
fn oq_invocation(ctx: &Context) -> String {
    // Under `cargo run` the binary is not on PATH: show the path it was started by.
    let program = std::env::args()
        .next()
        .filter(|a| a.contains('/'))
        .unwrap_or_else(|| "oq".into());
    match &ctx.global.data_dir {
        Some(dir) => format!("{program} --data-dir {}", dir.display()),
        None => program,
    }
}

/// `rule:RN-1`, `story:S-3`, `task:T-7` (or the ADR's `regra`, `historia`, `tarefa`).
pub fn parse_affects(entries: &[String]) -> Result<Afeta, OqError> {
    let mut afeta = Afeta::default();
    for entry in entries.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
        let (kind, id) = entry.split_once(':').ok_or_else(|| {
            OqError::invalid(
                "invalid_affects",
                format!("--affects {entry:?}: expected rule:ID, story:ID or task:ID"),
            )
        })?;
        let list = match kind {
            "rule" | "regra" | "regras" => &mut afeta.regras,
            "story" | "historia" | "historias" => &mut afeta.historias,
            "task" | "tarefa" | "tarefas" => &mut afeta.tarefas,
            _ => {
                return Err(OqError::invalid(
                    "invalid_affects",
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
