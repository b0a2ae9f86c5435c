//! The work doors: sessions, stories, tasks and the demo. Sessions and "waiting for you"
//! go through the source; stories, tasks and the demo exist on the local engine only
//! (a server's are reached through its HTTP API).

use super::args::{DemoArgs, SessionCommand, StoryCommand, TaskCommand};
use super::context::{Context, agent};
use super::render;
use crate::domain::error::exit;
use crate::domain::{OqError, SessionKind, WorkState};
use crate::engine::sqlite::now_ms;
use crate::engine::{ListQuery, StatusFilter};
use crate::source::Source;
use crate::wire::{SessionItem, StoryItem, TaskItem, WaitingList};

pub async fn session(ctx: &Context, s: SessionCommand) -> Result<i32, OqError> {
    match s {
        SessionCommand::Start { kind, id } => {
            let kind: SessionKind = kind.parse()?;
            let item = ctx
                .source
                .start_session(&ctx.project().await?, kind, id.as_deref())
                .await?;
            ctx.emit(&item, || format!("{}\n", item.session_id));
        }
        SessionCommand::List => {
            let engine = ctx.local("oq session list")?;
            let items: Vec<SessionItem> = engine
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

pub async fn story(ctx: &Context, s: StoryCommand) -> Result<i32, OqError> {
    let engine = ctx.local("oq story")?;
    let story = match s {
        StoryCommand::Add { title, agent: role } => {
            engine.create_story(&agent(&role)?, &ctx.project().await?, &title)?
        }
        StoryCommand::List => {
            let items: Vec<StoryItem> = engine
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
        } => engine.move_story(
            &agent(&role)?,
            &ctx.project().await?,
            &story_id,
            state.parse::<WorkState>()?,
        )?,
        StoryCommand::Correct {
            story_id,
            question,
            agent: role,
        } => engine.correct_story(
            &agent(&role)?,
            &ctx.project().await?,
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

pub async fn task(ctx: &Context, t: TaskCommand) -> Result<i32, OqError> {
    if let TaskCommand::Waiting = t {
        let list = WaitingList::from(ctx.source.waiting(ctx.project_filter()).await?);
        ctx.emit(&list, || render::waiting(&list.items, now_ms()));
        return Ok(exit::OK);
    }
    let engine = ctx.local("oq task")?;
    let task = match t {
        TaskCommand::Add {
            title,
            story,
            session,
            agent: role,
        } => engine.create_task(
            &agent(&role)?,
            &ctx.project().await?,
            &story,
            &session,
            &title,
        )?,
        TaskCommand::State {
            task_id,
            state,
            agent: role,
        } => engine.move_task(
            &agent(&role)?,
            &ctx.project().await?,
            &task_id,
            state.parse::<WorkState>()?,
        )?,
        TaskCommand::Show { task_id } => engine.task(&ctx.project().await?, &task_id)?,
        TaskCommand::Waiting => unreachable!("handled above"),
    };
    let item = TaskItem::from(&task);
    ctx.emit(&item, || render::task(&item));
    Ok(exit::OK)
}

pub async fn demo(ctx: &Context, d: DemoArgs) -> Result<i32, OqError> {
    let engine = ctx.local("oq demo")?;
    let summary = crate::demo::fill(engine.as_ref(), &ctx.user)?;
    let dir = super::context::data_dir(&ctx.global)?;
    if d.quiet && !ctx.global.json {
        println!("{}", dir.display());
        return Ok(exit::OK);
    }
    if d.opens_tui(ctx.global.json) {
        // The TUI opens next, on this store; it shows all of this better.
        return Ok(exit::OK);
    }
    let open = ctx
        .source
        .list(None, &ListQuery::new(StatusFilter::Open))
        .await?;
    ctx.emit(&summary, || {
        format!(
            "{}\nOpen questions (● you can answer, ○ another person's session):\n{}",
            crate::demo::describe(&summary, &dir, &oq_invocation(ctx)),
            render::question_list(&open, now_ms())
        )
    });
    Ok(exit::OK)
}

/// How the user invoked oq, for hints that work when pasted: the program as started (under
/// `cargo run` it is not on PATH), plus `--data-dir` when they chose one.
fn oq_invocation(ctx: &Context) -> String {
    let program = std::env::args()
        .next()
        .filter(|a| a.contains('/'))
        .unwrap_or_else(|| "oq".into());
    match &ctx.global.data_dir {
        Some(dir) => format!("{program} --data-dir {}", dir.display()),
        None => program,
    }
}
