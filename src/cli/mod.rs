//! The script doors: `oq ask`, `oq list`, `oq answer`, `oq readiness`, `oq verdict`, the
//! session/story/task helpers and `oq demo`. Each prints text, or stable JSON with
//! `--json`, and maps every refusal to its own exit code (`domain::error::exit`).

pub mod args;
mod context;
pub mod conventions;
mod csv;
mod decisions;
mod hook;
mod mcp;
mod mcp_relay;
mod outbox;
pub mod render;
mod run;
mod status;
pub mod store;
mod store_local;
mod triage;
mod watch;
mod work;

pub use args::Cli;
pub use run::run;
