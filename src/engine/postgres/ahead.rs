//! The writer's round trips, shed (issue 16). Under the write lock every query is a round
//! trip that every server's writer waits on, so a batch of answers cost two or three per
//! answer. Now a batch reads the questions its members named ([`read`], one query for
//! all of them) before they decide, and the rows they append wait in [`Ahead::pending`]
//! until the connection's next query of any kind, or the COMMIT: a batch of answers is
//! a handful of round trips whatever its size.
//!
//! Read-your-writes holds as before: every query flushes what is pending first (so it
//! sees every earlier append of the batch), and a question read ahead is forgotten as
//! soon as the batch appends an event to it (a second answer to it in the same batch
//! reads it again, after the first was flushed, and is refused).

use std::collections::HashMap;

use postgres::Row;

use super::conn::Conn;
use super::rows::{
    AFTER_QUESTION, PARKED_ON, QUESTION_COLUMNS, SETTLEMENT_JOIN, get, question_row,
};
use super::snoozes::KINDS;
use crate::domain::snooze;
use crate::domain::{OqError, Question, StoredEvent};
use crate::engine::fold::parse_event;
use crate::engine::sqlite::chain::Link;

/// A question as a decision reads it: with the tasks parked on it.
pub type Read = (Question, Vec<String>);

/// What one batch holds back or read ahead; empty between batches.
#[derive(Default)]
pub struct Ahead {
    /// Appended rows not yet sent, in position order, with their payload texts and links.
    pub pending: Vec<(StoredEvent, String, Link)>,
    questions: HashMap<String, Read>,
}

impl Ahead {
    pub fn clear(&mut self) {
        self.pending.clear();
        self.questions.clear();
    }

    /// The question as read ahead, unless the batch has appended to it since.
    pub fn question(&self, question_id: &str) -> Option<Read> {
        self.questions.get(question_id).cloned()
    }

    pub fn remember(&mut self, reads: Vec<Read>) {
        for read in reads {
            self.questions.insert(read.0.question_id.clone(), read);
        }
    }

    /// Holds `row` back, forgetting what was read ahead of its question.
    pub fn hold(&mut self, row: StoredEvent, payload: String, link: Link) {
        if let Some(q) = row.event.question_id() {
            self.questions.remove(q);
        }
        self.pending.push((row, payload, link));
    }
}

/// The questions `ids` (those that exist), each with its parked tasks and its current
/// snooze, in one query: what [`crate::engine::store::StoreView::question`] returns.
pub fn read(conn: &mut Conn, ids: &[String]) -> Result<Vec<Read>, OqError> {
    conn.query(&sql(), &[&ids])?.iter().map(from_row).collect()
}

/// [`read`]'s statement (`$1`: the question ids); public for the plan tests.
pub fn sql() -> String {
    format!(
        "SELECT {QUESTION_COLUMNS}, {PARKED_ON},
                (SELECT z.payload::text FROM oq.events z
                  WHERE z.question_id = d.question_id AND z.type IN {KINDS}
                  ORDER BY z.seq DESC LIMIT 1)
           FROM oq.events d {SETTLEMENT_JOIN}
          WHERE d.type = 'artifact.open_question' AND d.question_id = ANY($1)"
    )
}

fn from_row(row: &Row) -> Result<Read, OqError> {
    let mut q = question_row(row)?.into_question()?;
    let parked: Vec<String> = get(row, AFTER_QUESTION)?;
    let newest_snooze: Option<String> = get(row, AFTER_QUESTION + 1)?;
    if q.answer.is_none() && q.closure.is_none() {
        q.snooze = match newest_snooze {
            Some(p) => snooze::current(&[parse_event(&p)?]),
            None => None,
        };
    }
    Ok((q, parked))
}
