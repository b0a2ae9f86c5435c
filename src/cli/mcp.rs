//! `oq mcp`: an MCP server over stdio for one agent in one session — on the local engine
//! by default; with `--source http://…`, relayed to that server's `/mcp` (`mcp_relay.rs`). Standard output is the protocol's alone: refusals before it starts go
//! to standard error (and the exit code), logs to `<data dir>/logs/mcp.log`.

use std::time::Duration;

use rmcp::ServiceExt;

use super::args::{GlobalArgs, McpArgs};
use super::context::{Context, agent, report_error};
use crate::domain::error::exit;
use crate::domain::question::check_declarer;
use crate::domain::{ErrorCode, OqError};
use crate::mcp::{Door, OqMcp, Wake};

/// How often a local wait reads the store: another process (`oq answer`, the TUI)
/// writes the same file, and a read is cheap beside a person's answer.
const LOCAL_POLL: Duration = Duration::from_millis(20);

pub fn run(global: GlobalArgs, args: McpArgs) -> i32 {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            report_error(
                false,
                &OqError::Internal(format!("cannot start the runtime: {e}")),
            );
            return exit::INTERNAL;
        }
    };
    match runtime.block_on(serve(global, args)) {
        Ok(()) => exit::OK,
        Err(e) => {
            report_error(false, &e);
            e.exit_code()
        }
    }
}

async fn serve(global: GlobalArgs, args: McpArgs) -> Result<(), OqError> {
    // A server: the token is the agent, and the server checks everything.
    if let Some(remote) = super::context::remote(&global)? {
        let session = args.session.ok_or_else(|| {
            OqError::invalid(
                ErrorCode::SessionRequired,
                "oq mcp --source http://… needs --session S: a session a person started there",
            )
        })?;
        if let Ok(dir) = super::context::data_dir(&global) {
            let _ = crate::logging::init(&dir, "mcp");
        }
        tracing::info!(base = %remote.base, %session, "oq mcp relaying to a server");
        return super::mcp_relay::run(remote, &session).await;
    }
    let role = args.agent.as_deref().ok_or_else(|| {
        OqError::invalid(
            ErrorCode::AgentRequired,
            "oq mcp needs --agent ROLE (criativo, po, arquiteto or dev-lead), or OQ_AGENT",
        )
    })?;
    let actor = agent(role)?;
    check_declarer(&actor)?;
    let ctx = Context::open(global)?;
    let engine = ctx.local("oq mcp")?.clone();
    let project = ctx.project().await?;
    let session = match args.session {
        Some(s) => s,
        None => {
            let (engine, project, user) = (engine.clone(), project.clone(), ctx.user.clone());
            tokio::task::spawn_blocking(move || engine.personal_session(&project, &user))
                .await
                .map_err(|e| OqError::Internal(e.to_string()))??
                .session_id
        }
    };
    if let Ok(dir) = super::context::data_dir(&ctx.global) {
        let _ = crate::logging::init(&dir, "mcp");
    }
    tracing::info!(%project, %session, agent = %actor.id(), "oq mcp started");
    let door = Door {
        actor,
        project,
        session,
    };
    let server = OqMcp::new(engine, Some(door), Wake::Poll(LOCAL_POLL))
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| OqError::Internal(format!("MCP initialisation failed: {e}")))?;
    let reason = server
        .waiting()
        .await
        .map_err(|e| OqError::Internal(e.to_string()))?;
    tracing::info!(?reason, "oq mcp ended");
    Ok(())
}
