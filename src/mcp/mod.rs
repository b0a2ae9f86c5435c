//! oq as an MCP server: the tools every MCP agent (Claude Code, Codex, Gemini CLI,
//! Cursor…) takes, over stdio (`oq mcp`, on the local engine) or Streamable HTTP
//! (`/mcp` on `oq serve`, in `server::mcp`), with rmcp, the official Rust SDK.
//!
//! - `tools.rs`: the five tools as the client sees them (names, descriptions, schemas).
//! - `calls.rs`: each call's arguments read strictly and run on the engine, scoped to
//!   the door's project and session.
//! - `wait.rs`: `wait_for_answer`, bounded, with progress, ended by cancellation.
//! - `handler.rs`: rmcp's `ServerHandler`: `initialize` (with ADR 0214's central
//!   sentence as `instructions`), `tools/list`, `tools/call`; refusals are tool errors
//!   carrying oq's codes.
//!
//! Invariant: an agent sees and acts only on its own session's questions (another
//! session's is `other_session`, another project's is not found), never answers one,
//! and a wait never invents an answer: it returns what the log says or `still_open`.

mod calls;
mod handler;
mod tools;
mod wait;

use std::time::Duration;

use tokio::sync::watch;

use crate::domain::Actor;

pub use handler::OqMcp;

/// The server's `instructions`: ADR 0214's central sentence, word for word, and how the
/// tools fit around it.
pub const INSTRUCTIONS: &str = concat!(
    crate::central_instruction!(),
    " The person who started this session answers in oq (a terminal queue) when they can; ",
    "call wait_for_answer with the questionId to learn the answer, and again while it is still_open."
);

/// Who an MCP connection acts as and where: the agent, its project, its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Door {
    /// The declaring agent (locally `--agent ROLE`; on a server, the token's agent user).
    pub actor: Actor,
    pub project: String,
    pub session: String,
}

/// How a wait learns that something changed: polling the store (another process may
/// write the local file), or the server's change signal (with a slow poll as backstop).
#[derive(Debug, Clone)]
pub enum Wake {
    Poll(Duration),
    Changes(watch::Receiver<u64>),
}
