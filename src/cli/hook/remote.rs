//! `oq hook claude-code --source http://…`: the same two hooks on an `oq serve`, as the
//! token's agent. The question is declared in the session `--session` names (one a
//! person started there: agents start none), through the Claude Code routes, and the
//! wait reads the question until it is settled or the bound passes; past it, the
//! question is handed to Claude Code's own dialog (`…/handoff`).
//!
//! Invariant: the token is only ever sent as the bearer header; nothing here prints or
//! logs it.

use std::time::Duration;

use tokio::time::Instant;

use super::claude::{self, HookEvent, HookInput};
use super::{ClaudeArgs, Interrupt, Waited};
use crate::cli::context::Remote;
use crate::domain::claude_code::ClaudeSettlement;
use crate::domain::{ErrorCode, OqError};
use crate::engine::ids;
use crate::source::Source;
use crate::source::http::HttpSource;
use crate::wire::QuestionItem;

/// How often the waiting hook reads the question: a person's answer is seconds away,
/// and a read is one small request.
const POLL: Duration = Duration::from_millis(200);

pub async fn hook(
    server: Remote,
    args: &ClaudeArgs,
    event: HookEvent,
    input: &HookInput,
) -> Result<Option<serde_json::Value>, OqError> {
    let source = HttpSource::with_ca(&server.base, &server.token, server.ca.as_deref())?;
    let me = source.identity().await?;
    let project = match server.project {
        Some(p) => p,
        None => match me.projects.as_slice() {
            [only] => only.clone(),
            _ => {
                return Err(OqError::invalid(
                    ErrorCode::ProjectRequired,
                    "this token has several projects (or none): name one with --project",
                ));
            }
        },
    };
    match event {
        HookEvent::PreToolUse => {
            let prompts = claude::prompts(input)?;
            let session = args.session.clone().ok_or_else(|| {
                OqError::invalid(
                    ErrorCode::SessionRequired,
                    "oq hook claude-code --source http://… needs --session S (or OQ_SESSION): a session a person started there",
                )
            })?;
            let declared = claude::declaration(input, session, prompts);
            let mut stop = Interrupt::new()?;
            let q = source.claude_declare(&project, &declared).await?;
            let bound = Duration::from_secs(args.wait);
            let id = &q.question_id;
            let settled = match wait(&source, &project, id, bound, &mut stop).await? {
                Waited::Settled(q) => q,
                Waited::Passed => source.claude_hand_off(&project, id).await?,
                Waited::Interrupted => {
                    let how = ClaudeSettlement::Declined {};
                    source.claude_settle(&project, id, &how).await?;
                    return Ok(None);
                }
            };
            Ok(claude::answered_output(input, &settled))
        }
        HookEvent::PostToolUse => {
            let id = ids::keyed_question_id(&project, &me.user, &claude::call(input).key());
            settle_open(&source, &project, &id, |q| {
                claude::dialog_settlement(input, &q.prompts)
            })
            .await
        }
        HookEvent::UserPromptSubmit | HookEvent::Stop | HookEvent::SessionEnd => {
            for call in super::declined(input)? {
                let id = ids::keyed_question_id(&project, &me.user, &call.key());
                settle_open(&source, &project, &id, |_| ClaudeSettlement::Declined {}).await?;
            }
            Ok(None)
        }
    }
}

/// Settles the Claude Code question `id` with `how` when it is still open (the server's
/// agent id is the token's user: the question's id follows); one our PreToolUse never
/// declared (the server was unreachable then) is nothing to settle.
async fn settle_open(
    source: &HttpSource,
    project: &str,
    id: &str,
    how: impl FnOnce(&QuestionItem) -> ClaudeSettlement,
) -> Result<Option<serde_json::Value>, OqError> {
    let q = match source.question(Some(project), id).await {
        Ok(q) => q,
        Err(e) if e.code() == "not_found" => return Ok(None),
        Err(e) => return Err(e),
    };
    if q.status == "open" {
        source.claude_settle(project, id, &how(&q)).await?;
    }
    Ok(None)
}

/// The question once settled, `Passed` when `bound` passes with it still open, or
/// `Interrupted` when Claude Code ends the hook first.
async fn wait(
    source: &HttpSource,
    project: &str,
    question_id: &str,
    bound: Duration,
    stop: &mut Interrupt,
) -> Result<Waited<QuestionItem>, OqError> {
    let deadline = Instant::now() + bound;
    loop {
        let q = tokio::select! {
            q = source.question(Some(project), question_id) => q?,
            _ = stop.recv() => return Ok(Waited::Interrupted),
        };
        if q.status != "open" {
            return Ok(Waited::Settled(q));
        }
        if Instant::now() >= deadline {
            return Ok(Waited::Passed);
        }
        tokio::select! {
            _ = tokio::time::sleep_until(deadline.min(Instant::now() + POLL)) => {}
            _ = stop.recv() => return Ok(Waited::Interrupted),
        }
    }
}
