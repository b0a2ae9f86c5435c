//! Delivering the outbox: each entry sent under its key and settled by what the source
//! said (see the parent module for the states), and the report of what happened.

use super::{Entry, Outbox, State, retry_later};
use crate::domain::{ErrorCode, OqError};
use crate::source::Source;
use serde::Serialize;

/// What delivery did, entry by entry (keys).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    pub delivered: Vec<String>,
    pub conflicts: Vec<String>,
    pub refused: Vec<String>,
    /// Still `uncertain`: the server does not know yet how its upstream took them.
    pub uncertain: Vec<String>,
    /// Tried and still pending: the server's upstream could not be reached, or another
    /// submission holds the question for now.
    pub pending: Vec<String>,
    /// Set when the source could not be reached: the rest stays pending.
    pub stopped: Option<String>,
}

impl Delivery {
    /// Adds `other`'s entries (a later attempt) to these; its stop, if any, wins.
    pub fn absorb(&mut self, other: Delivery) {
        for key in other
            .delivered
            .iter()
            .chain(&other.conflicts)
            .chain(&other.refused)
            .chain(&other.uncertain)
            .chain(&other.pending)
        {
            self.forget(key);
        }
        self.delivered.extend(other.delivered);
        self.conflicts.extend(other.conflicts);
        self.refused.extend(other.refused);
        self.uncertain.extend(other.uncertain);
        self.pending.extend(other.pending);
        if other.stopped.is_some() {
            self.stopped = other.stopped;
        }
    }

    fn forget(&mut self, key: &str) {
        for list in [
            &mut self.delivered,
            &mut self.conflicts,
            &mut self.refused,
            &mut self.uncertain,
            &mut self.pending,
        ] {
            list.retain(|k| k != key);
        }
    }

    /// Whether this attempt reached the source for at least one entry.
    pub fn contacted(&self) -> bool {
        !(self.delivered.is_empty()
            && self.conflicts.is_empty()
            && self.refused.is_empty()
            && self.uncertain.is_empty()
            && self.pending.is_empty())
    }
}

impl Outbox {
    /// Sends one entry and settles it by the outcome; `Err` only when the source is
    /// unreachable (the entry stays pending) or the outbox itself fails.
    pub async fn deliver_one<S: Source>(
        &self,
        source: &S,
        entry: &Entry,
    ) -> Result<State, OqError> {
        let sent = source
            .answer_once(
                entry.project.as_deref(),
                &entry.question_id,
                &entry.body,
                &entry.key,
            )
            .await;
        self.settle_by(&entry.key, entry.state, sent.map(|_| ()))
    }

    /// Records what one sending of `key` (in state `was`) came to, and returns the new
    /// state; `Err` when the source could not be reached (nothing settled).
    pub fn settle_by(
        &self,
        key: &str,
        was: State,
        sent: Result<(), OqError>,
    ) -> Result<State, OqError> {
        match sent {
            Ok(()) => {
                self.mark_delivered(key)?;
                Ok(State::Delivered)
            }
            Err(e) if retry_later(&e) => Err(e),
            Err(e @ OqError::AlreadyAnswered { .. })
            | Err(
                e @ OqError::Conflict {
                    code: ErrorCode::QuestionClosed,
                    ..
                },
            ) => {
                self.mark_conflict(key, &format!("settled elsewhere meanwhile: {e}"))?;
                Ok(State::Conflict)
            }
            Err(
                e @ OqError::Upstream {
                    code: ErrorCode::UpstreamUncertain,
                    ..
                },
            ) => {
                self.mark_uncertain(key, &e.to_string())?;
                Ok(State::Uncertain)
            }
            // Held for now: another submission has the question (for an uncertain entry,
            // its own tombstone: still unknown), or the server's upstream is away and
            // nothing was sent. Tried again next time.
            Err(OqError::Conflict {
                code: ErrorCode::QuestionSubmissionClaimed,
                ..
            })
            | Err(OqError::Upstream {
                code: ErrorCode::UpstreamUnreachable,
                ..
            }) => Ok(was),
            Err(e) => {
                self.mark_refused(key, &format!("{}: {e}", e.code()))?;
                Ok(State::Refused)
            }
        }
    }

    /// Delivers every pending entry for `source` (named `name`), oldest first, stopping
    /// at the first sign that the source is unreachable.
    pub async fn deliver_all<S: Source>(
        &self,
        source: &S,
        name: &str,
    ) -> Result<Delivery, OqError> {
        self.deliver_all_except(source, name, |_| false).await
    }

    /// [`Outbox::deliver_all`] leaving out the keys `skip` names (answers this process is
    /// sending right now: they settle themselves).
    pub async fn deliver_all_except<S: Source>(
        &self,
        source: &S,
        name: &str,
        skip: impl Fn(&str) -> bool,
    ) -> Result<Delivery, OqError> {
        let mut report = Delivery::default();
        for entry in self.pending(name)?.into_iter().filter(|e| !skip(&e.key)) {
            match self.deliver_one(source, &entry).await {
                Ok(State::Delivered) => report.delivered.push(entry.key),
                Ok(State::Conflict) => report.conflicts.push(entry.key),
                Ok(State::Refused) => report.refused.push(entry.key),
                Ok(State::Uncertain) => report.uncertain.push(entry.key),
                Ok(State::Pending) => report.pending.push(entry.key),
                Err(e) if retry_later(&e) => {
                    report.stopped = Some(e.to_string());
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(report)
    }
}
