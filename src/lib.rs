//! oq: the questions AI agents leave for people, as durable pending items with an owner.
//!
//! - [`domain`]: ADR 0214's rules as pure code.
//! - [`engine`]: the operations over the append-only log, and the embedded SQLite store.
//! - [`cli`]: the script doors (`oq ask`, `oq list`, `oq answer`…).
//! - [`server`]: `oq serve`, the HTTP API.
//! - [`mcp`]: the MCP tools (`oq mcp` over stdio, `/mcp` on `oq serve`).

pub mod bridge;
pub mod cli;
pub mod demo;
pub mod domain;
pub mod engine;
pub mod logging;
pub mod mcp;
pub mod opencode;
pub mod private_fs;
pub mod server;
pub mod source;
pub mod tui;
pub mod wire;
