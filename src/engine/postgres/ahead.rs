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
use crate::engine::sqlite::chain::{GENESIS, Link, as_link};

/// A question as a decision reads it: with the tasks parked on it.
pub type Read = (Question, Vec<String>);
/// A project's newest `project_seq` and chain link.
pub type Head = (i64, Link);

/// What one batch holds back or read ahead; empty between batches.
#[derive(Default)]
pub struct Ahead {
    /// Appended rows not yet sent, in position order, with their payload texts and links.
    pub pending: Vec<(StoredEvent, String, Link)>,
    questions: HashMap<String, Read>,
    /// The newest `project_seq` and link of the projects of the questions read ahead, as
    /// they were before the batch appended anything (the writer keeps them from there).
    heads: HashMap<String, Head>,
}

impl Ahead {
    pub fn clear(&mut self) {
        self.pending.clear();
        self.questions.clear();
        self.heads.clear();
    }

    /// `project`'s newest position and link as read ahead, if it was.
    pub fn head(&self, project: &str) -> Option<Head> {
        self.heads.get(project).copied()
    }

    /// The question as read ahead, unless the batch has appended to it since.
    pub fn question(&self, question_id: &str) -> Option<Read> {
        self.questions.get(question_id).cloned()
    }

    pub fn remember(&mut self, reads: Vec<(Read, Head)>) {
        for (read, head) in reads {
            self.heads.insert(read.0.project_id.clone(), head);
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
/// snooze — what [`crate::engine::store::StoreView::question`] returns — and its
/// project's newest position and link (the chain head the batch's first append to it
/// goes on from), in one query.
pub fn read(conn: &mut Conn, ids: &[String]) -> Result<Vec<(Read, Head)>, OqError> {
    conn.query(&sql(), &[&ids])?.iter().map(from_row).collect()
}

/// [`read`]'s statement (`$1`: the question ids); public for the plan tests.
pub fn sql() -> String {
    format!(
        "SELECT {QUESTION_COLUMNS}, {PARKED_ON},
                (SELECT z.payload::text FROM oq.events z
                  WHERE z.question_id = d.question_id AND z.type IN {KINDS}
                  ORDER BY z.seq DESC LIMIT 1),
                n.project_seq, n.chain
           FROM oq.events d {SETTLEMENT_JOIN}
           LEFT JOIN LATERAL (SELECT h.project_seq, h.chain FROM oq.events h
                               WHERE h.project_id = d.project_id
                               ORDER BY h.project_seq DESC LIMIT 1) n ON true
          WHERE d.type = 'artifact.open_question' AND d.question_id = ANY($1)"
    )
}

fn from_row(row: &Row) -> Result<(Read, Head), OqError> {
    let mut q = question_row(row)?.into_question()?;
    let parked: Vec<String> = get(row, AFTER_QUESTION)?;
    let newest_snooze: Option<String> = get(row, AFTER_QUESTION + 1)?;
    if q.answer.is_none() && q.closure.is_none() {
        q.snooze = match newest_snooze {
            Some(p) => snooze::current(&[parse_event(&p)?]),
            None => None,
        };
    }
    let newest: i64 = get(row, AFTER_QUESTION + 2)?;
    let link = as_link(get(row, AFTER_QUESTION + 3)?).unwrap_or(GENESIS);
    Ok(((q, parked), (newest, link)))
}
