//! Bridge commands: what a server that does not drive an upstream leaves for the one that
//! does (`oq.bridge_commands`). A person's pause, resume, delegate, answer or setting
//! reaches whichever `oq serve` the load balancer picked; only the lease holder acts on
//! the upstream, so the others put the command in a row, notify, and wait for the
//! holder's outcome in the same row.
//!
//! A row is `pending`, then `taken` by the holder (one statement: a second holder, after
//! a failover, never takes it twice), then `done` with its outcome; the server that asked
//! removes it. A pending row it gives up on is removed before anyone took it, so a command
//! either runs once or, the asker told so, not at all.

use super::Conn;
use super::lease::Leases;
use super::schema::CHANNEL;
use crate::domain::OqError;

const REQUEST: &str = "WITH ins AS (
        INSERT INTO oq.bridge_commands (upstream, actor, command) VALUES ($1, $2, ($3::text)::json)
        RETURNING id)
     SELECT id, pg_notify($4, 'command') FROM ins";
const TAKE: &str = "UPDATE oq.bridge_commands SET state = 'taken', taken_by = $2
      WHERE id = (SELECT id FROM oq.bridge_commands WHERE upstream = $1 AND state = 'pending'
                   ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING id, actor, command::text";
const FINISH: &str = "UPDATE oq.bridge_commands SET state = 'done', outcome = ($2::text)::json
      WHERE id = $1 AND state = 'taken' AND taken_by = $3";
const STATE: &str = "SELECT state, outcome::text FROM oq.bridge_commands WHERE id = $1";
const WITHDRAW: &str =
    "DELETE FROM oq.bridge_commands WHERE id = $1 AND state = 'pending' RETURNING id";
const REMOVE: &str = "DELETE FROM oq.bridge_commands WHERE id = $1";

/// A command as the holder takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    pub id: i64,
    pub actor: String,
    /// The command's JSON text (the bridge's vocabulary).
    pub command: String,
}

/// Where a command stands, as the asker sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandState {
    Pending,
    /// The holder took it; no outcome yet.
    Taken,
    /// The outcome's JSON text.
    Done(String),
    /// The row is gone.
    Gone,
}

impl Leases {
    /// Leaves `command` (JSON text) by `actor` for `upstream`'s holder; its row id.
    pub fn request_command(
        &self,
        upstream: &str,
        actor: &str,
        command: &str,
    ) -> Result<i64, OqError> {
        let rows =
            self.with(|c: &mut Conn| c.query(REQUEST, &[&upstream, &actor, &command, &CHANNEL]))?;
        rows.first()
            .map(|r| r.get(0))
            .ok_or_else(|| OqError::Internal("store: no command id returned".into()))
    }

    /// The oldest pending command of `upstream`, taken by `holder`.
    pub fn take_command(&self, upstream: &str, holder: &str) -> Result<Option<Taken>, OqError> {
        let rows = self.with(|c| c.query(TAKE, &[&upstream, &holder]))?;
        Ok(rows.first().map(|r| Taken {
            id: r.get(0),
            actor: r.get(1),
            command: r.get(2),
        }))
    }

    /// Records the outcome (JSON text) of a command `holder` took.
    pub fn finish_command(&self, id: i64, holder: &str, outcome: &str) -> Result<(), OqError> {
        self.with(|c| c.query(FINISH, &[&id, &outcome, &holder]))
            .map(|_| ())
    }

    pub fn command_state(&self, id: i64) -> Result<CommandState, OqError> {
        let rows = self.with(|c| c.query(STATE, &[&id]))?;
        let Some(r) = rows.first() else {
            return Ok(CommandState::Gone);
        };
        let state: String = r.get(0);
        Ok(match (state.as_str(), r.get::<_, Option<String>>(1)) {
            ("pending", _) => CommandState::Pending,
            ("done", Some(outcome)) => CommandState::Done(outcome),
            _ => CommandState::Taken,
        })
    }

    /// Removes a command nobody took yet; `false` when the holder took it meanwhile.
    pub fn withdraw_command(&self, id: i64) -> Result<bool, OqError> {
        let rows = self.with(|c| c.query(WITHDRAW, &[&id]))?;
        Ok(!rows.is_empty())
    }

    /// Removes a command's row once its asker has the outcome (or stopped waiting).
    pub fn remove_command(&self, id: i64) -> Result<(), OqError> {
        self.with(|c| c.query(REMOVE, &[&id])).map(|_| ())
    }
}
