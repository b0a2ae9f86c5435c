//! `[limits]`: how long `oq serve` waits for a client and how many it holds, so that no
//! client — slow, idle, or not reading — keeps a connection, a task or a slot forever.
//!
//! Every key has a default an operator need not think about; each is checked to be at
//! least 1 (a zero would mean "refuse everything", never what anyone writes on purpose).

use std::ops::Range;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::ConfigError;

/// The checked `[limits]` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// From the first byte of a request to the end of its head (slowloris).
    pub header_read: Duration,
    /// The whole request body, once its head arrived.
    pub body_read: Duration,
    /// A connection with no request in flight and no byte arriving is closed after this.
    pub idle: Duration,
    /// A write that makes no progress for this long (a client that stopped reading, an
    /// event subscriber among them) closes the connection.
    pub write: Duration,
    /// Open connections; the one beyond gets 503 `too_many_connections` and is closed.
    pub max_connections: usize,
    /// Event streams one token may hold at once; the next is 429 `too_many_streams`.
    pub max_streams_per_token: usize,
    /// Failed authentications one address may make per minute before 429 with
    /// `Retry-After` (a right token is always served).
    pub auth_failures_per_minute: u32,
    /// An MCP session (`/mcp`) with no request for this long is closed: a client that
    /// vanished without DELETE holds nothing. Longer than `wait_for_answer`'s longest.
    pub mcp_session_idle: Duration,
    /// MCP sessions one token may hold; opening one more closes its least recently used.
    pub max_mcp_sessions_per_token: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read: Duration::from_secs(10),
            body_read: Duration::from_secs(30),
            idle: Duration::from_secs(60),
            write: Duration::from_secs(30),
            max_connections: 512,
            max_streams_per_token: 8,
            auth_failures_per_minute: 20,
            mcp_session_idle: Duration::from_secs(660),
            max_mcp_sessions_per_token: 16,
        }
    }
}

/// `[limits]` as written.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    header_read_seconds: Option<Spanned<u64>>,
    body_read_seconds: Option<Spanned<u64>>,
    idle_seconds: Option<Spanned<u64>>,
    write_seconds: Option<Spanned<u64>>,
    max_connections: Option<Spanned<u64>>,
    max_streams_per_token: Option<Spanned<u64>>,
    auth_failures_per_minute: Option<Spanned<u64>>,
    mcp_session_idle_seconds: Option<Spanned<u64>>,
    max_mcp_sessions_per_token: Option<Spanned<u64>>,
}

/// Checks `raw`: each value from 1 to its key's ceiling, the defaults for the rest.
pub fn parse_limits(
    raw: Option<&RawLimits>,
    err: &dyn Fn(Option<Range<usize>>, String) -> ConfigError,
) -> Result<Limits, ConfigError> {
    let d = Limits::default();
    let Some(raw) = raw else { return Ok(d) };
    let get = |v: &Option<Spanned<u64>>, key: &str, default: u64, max: u64| match v {
        None => Ok(default),
        Some(s) if (1..=max).contains(s.get_ref()) => Ok(*s.get_ref()),
        Some(s) => Err(err(
            Some(s.span()),
            format!("limits.{key} must be 1 to {max}"),
        )),
    };
    let secs =
        |v, key, default: Duration| get(v, key, default.as_secs(), 86_400).map(Duration::from_secs);
    Ok(Limits {
        header_read: secs(
            &raw.header_read_seconds,
            "header_read_seconds",
            d.header_read,
        )?,
        body_read: secs(&raw.body_read_seconds, "body_read_seconds", d.body_read)?,
        idle: secs(&raw.idle_seconds, "idle_seconds", d.idle)?,
        write: secs(&raw.write_seconds, "write_seconds", d.write)?,
        max_connections: get(
            &raw.max_connections,
            "max_connections",
            d.max_connections as u64,
            1_000_000,
        )? as usize,
        max_streams_per_token: get(
            &raw.max_streams_per_token,
            "max_streams_per_token",
            d.max_streams_per_token as u64,
            10_000,
        )? as usize,
        auth_failures_per_minute: get(
            &raw.auth_failures_per_minute,
            "auth_failures_per_minute",
            u64::from(d.auth_failures_per_minute),
            1_000_000,
        )? as u32,
        mcp_session_idle: secs(
            &raw.mcp_session_idle_seconds,
            "mcp_session_idle_seconds",
            d.mcp_session_idle,
        )?,
        max_mcp_sessions_per_token: get(
            &raw.max_mcp_sessions_per_token,
            "max_mcp_sessions_per_token",
            d.max_mcp_sessions_per_token as u64,
            10_000,
        )? as usize,
    })
}
