//! Reads over the log for the engine, in PostgreSQL: the same folds as the SQLite store's
//! view (`engine::fold`), each query prepared once per connection.

use std::cell::RefCell;

use postgres::Row;
use postgres::types::ToSql;

use super::ahead;
use super::conn::Conn;
use super::decisions::decisions_sql;
use super::list::{list_sql, refs};
use super::rows::{AFTER_QUESTION, QUESTION_COLUMNS, SETTLEMENT_JOIN, get, question_row};
use super::snoozes;
use crate::domain::dev_context::Decisao;
use crate::domain::work::{Session, Story, Task};
use crate::domain::{Event, OqError, Question, StoredEvent};
use crate::engine::decisions::{DecisionPage, DecisionQuery};
use crate::engine::fold::{self, parse_event};
use crate::engine::list::capped_total;
use crate::engine::store::{LogHead, ParkedTask, QuestionPage, QuestionQuery, StoreView};

pub struct PgView<'c> {
    conn: RefCell<&'c mut Conn>,
    /// The tasks parked on the question [`StoreView::question`] read last, fetched with
    /// it: an answer asks for both, and on the writer every query is a round trip while
    /// the write lock is held. A view lives for one decision or one read, so nothing is
    /// written between the two.
    parked: RefCell<Option<(String, Vec<String>)>>,
}

impl<'c> PgView<'c> {
    pub fn new(conn: &'c mut Conn) -> Self {
        PgView {
            conn: RefCell::new(conn),
            parked: RefCell::new(None),
        }
    }

    fn rows(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, OqError> {
        self.conn.borrow_mut().query(sql, params)
    }

    fn questions_of(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Question>, OqError> {
        self.rows(sql, params)?
            .iter()
            .map(|r| question_row(r)?.into_question())
            .collect()
    }

    fn count(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, OqError> {
        let rows = self.rows(sql, params)?;
        Ok(rows
            .first()
            .map(|r| get::<i64>(r, 0))
            .transpose()?
            .unwrap_or(0) as u64)
    }

    fn one_i64(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<i64, OqError> {
        let rows = self.rows(sql, params)?;
        Ok(rows
            .first()
            .map(|r| get::<i64>(r, 0))
            .transpose()?
            .unwrap_or(0))
    }

    fn strings(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<String>, OqError> {
        self.rows(sql, params)?.iter().map(|r| get(r, 0)).collect()
    }

    fn events_of(&self, column: &str, id: &str) -> Result<Vec<(String, Event)>, OqError> {
        let sql = format!(
            "SELECT project_id, payload::text FROM oq.events WHERE {column} = $1 ORDER BY seq"
        );
        self.rows(&sql, &[&id])?
            .iter()
            .map(|r| Ok((get(r, 0)?, parse_event(&get::<String>(r, 1)?)?)))
            .collect()
    }
}

/// `AND column = $n` when a project is given (two plans rather than `$n IS NULL OR …`).
fn scoped(sql: &str, column: &str, project: Option<&str>, n: usize) -> String {
    let clause = match project {
        Some(_) => format!("AND {column} = ${n}"),
        None => String::new(),
    };
    sql.replace("{scope}", &clause)
}

impl StoreView for PgView<'_> {
    fn revision(&self) -> Result<i64, OqError> {
        self.one_i64("SELECT coalesce(max(seq), 0) FROM oq.events", &[])
    }

    fn project_revision(&self, project_id: &str) -> Result<i64, OqError> {
        self.one_i64(
            "SELECT coalesce(max(project_seq), 0) FROM oq.events WHERE project_id = $1",
            &[&project_id],
        )
    }

    fn projects(&self) -> Result<Vec<String>, OqError> {
        self.strings(
            "SELECT DISTINCT project_id FROM oq.events WHERE type = 'session.started' ORDER BY project_id",
            &[],
        )
    }

    fn session(&self, session_id: &str) -> Result<Option<Session>, OqError> {
        let rows = self.rows(
            "SELECT project_id, payload::text FROM oq.events WHERE type = 'session.started' AND session_id = $1",
            &[&session_id],
        )?;
        match rows.first() {
            None => Ok(None),
            Some(r) => fold::session(get(r, 0)?, parse_event(&get::<String>(r, 1)?)?).map(Some),
        }
    }

    fn sessions(&self, project_id: Option<&str>) -> Result<Vec<Session>, OqError> {
        let sql = scoped(
            "SELECT project_id, payload::text FROM oq.events WHERE type = 'session.started' {scope} ORDER BY seq",
            "project_id",
            project_id,
            1,
        );
        let rows = match project_id {
            Some(p) => self.rows(&sql, &[&p])?,
            None => self.rows(&sql, &[])?,
        };
        rows.iter()
            .map(|r| fold::session(get(r, 0)?, parse_event(&get::<String>(r, 1)?)?))
            .collect()
    }

    fn question(&self, question_id: &str) -> Result<Option<Question>, OqError> {
        let ahead = self.conn.borrow().ahead.question(question_id);
        let found = match ahead {
            Some(read) => Some(read),
            None => ahead::read(&mut self.conn.borrow_mut(), &[question_id.into()])?
                .pop()
                .map(|(read, _)| read),
        };
        Ok(found.map(|(q, parked)| {
            *self.parked.borrow_mut() = Some((question_id.to_string(), parked));
            q
        }))
    }

    fn questions(&self, q: &QuestionQuery<'_>) -> Result<QuestionPage, OqError> {
        let sql = list_sql(q, QUESTION_COLUMNS, SETTLEMENT_JOIN);
        let counted = self.count(&sql.count, &refs(&sql.count_params))?;
        // A search's count stops one past the cap (`list_sql`): past it, "at least".
        let (total, total_is_lower_bound) = capped_total(q.search.is_some(), counted);
        let mut items = self.questions_of(&sql.page, &refs(&sql.page_params))?;
        let rows = |s: &str, p: &[&(dyn ToSql + Sync)]| self.rows(s, p);
        snoozes::attach(&rows, &mut items)?;
        Ok(QuestionPage {
            items,
            total,
            total_is_lower_bound,
            snoozed: match &sql.snoozed {
                Some((s, p)) => snoozes::count(&rows, s, p)?,
                None => Default::default(),
            },
        })
    }

    /// What SQLite's finds through its trigram index, here by `ILIKE` (`similar.rs`).
    fn similar_candidates(
        &self,
        project_id: &str,
        words: &[String],
        per_word: usize,
        lookup: crate::engine::store::Lookup,
    ) -> Result<Vec<Question>, OqError> {
        let mut out: Vec<Question> = Vec::new();
        for params in super::similar::queries(project_id, words, per_word, lookup) {
            let sql = super::similar::sql(params.len(), QUESTION_COLUMNS, SETTLEMENT_JOIN);
            out.extend(self.questions_of(&sql, &refs(&params))?);
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|q| seen.insert(q.question_id.clone()));
        Ok(out)
    }

    fn decisions(
        &self,
        project_id: Option<&str>,
        query: &DecisionQuery,
        after: Option<i64>,
        limit: usize,
    ) -> Result<DecisionPage, OqError> {
        let sql = decisions_sql(project_id, query, after, limit, QUESTION_COLUMNS);
        let items = self
            .rows(&sql.page, &refs(&sql.page_params))?
            .iter()
            .map(|r| Ok((get(r, AFTER_QUESTION)?, question_row(r)?.into_question()?)))
            .collect::<Result<_, OqError>>()?;
        let counted = self.count(&sql.count, &refs(&sql.count_params))?;
        Ok(DecisionPage::counted(
            items,
            counted,
            query.search.is_some(),
        ))
    }

    fn open_count(&self, project_id: &str) -> Result<u64, OqError> {
        self.count(
            "SELECT count(*) FROM oq.open_questions WHERE project_id = $1",
            &[&project_id],
        )
    }

    fn story(&self, story_id: &str) -> Result<Option<Story>, OqError> {
        Ok(fold::story(self.events_of("story_id", story_id)?))
    }

    fn stories(&self, project_id: Option<&str>) -> Result<Vec<Story>, OqError> {
        let sql = scoped(
            "SELECT story_id FROM oq.events WHERE type = 'story.created' {scope} ORDER BY seq",
            "project_id",
            project_id,
            1,
        );
        let ids = match project_id {
            Some(p) => self.strings(&sql, &[&p])?,
            None => self.strings(&sql, &[])?,
        };
        let mut out = Vec::new();
        for id in ids {
            out.extend(self.story(&id)?);
        }
        Ok(out)
    }

    fn task(&self, task_id: &str) -> Result<Option<Task>, OqError> {
        Ok(fold::task(self.events_of("task_id", task_id)?))
    }

    fn tasks_of_story(&self, story_id: &str) -> Result<Vec<Task>, OqError> {
        let ids = self.strings(
            "SELECT task_id FROM oq.events WHERE type = 'task.created' AND story_id = $1 ORDER BY seq",
            &[&story_id],
        )?;
        let mut out = Vec::new();
        for id in ids {
            out.extend(self.task(&id)?);
        }
        Ok(out)
    }

    fn waiting_for(
        &self,
        project_id: Option<&str>,
        person: &str,
    ) -> Result<Vec<ParkedTask>, OqError> {
        let sql = scoped(
            "SELECT p.task_id, p.question_id, p.at FROM oq.events p
               JOIN oq.open_questions o ON o.question_id = p.question_id
               JOIN oq.events d ON d.type = 'artifact.open_question' AND d.question_id = p.question_id
               JOIN oq.events s ON s.type = 'session.started' AND s.session_id = d.session_id
              WHERE p.type = 'gate.rescue_parked'
                AND s.payload ->> 'author' = $1 {scope}
              ORDER BY p.seq",
            "o.project_id",
            project_id,
            2,
        );
        let rows = match project_id {
            Some(p) => self.rows(&sql, &[&person, &p])?,
            None => self.rows(&sql, &[&person])?,
        };
        let mut out = Vec::new();
        for r in &rows {
            let (task_id, question_id, parked_at): (String, String, i64) =
                (get(r, 0)?, get(r, 1)?, get(r, 2)?);
            if let Some(task) = self.task(&task_id)? {
                out.push(ParkedTask {
                    task,
                    question_id,
                    parked_at,
                });
            }
        }
        Ok(out)
    }

    fn parked_on(&self, question_id: &str) -> Result<Vec<String>, OqError> {
        if let Some((_, parked)) = self
            .parked
            .borrow_mut()
            .take_if(|(q, _)| q.as_str() == question_id)
        {
            return Ok(parked);
        }
        self.strings(
            "SELECT p.task_id FROM oq.events p
              WHERE p.type = 'gate.rescue_parked' AND p.question_id = $1
                AND NOT EXISTS (SELECT 1 FROM oq.events r WHERE r.type = 'gate.resumed'
                                AND r.question_id = $1 AND r.task_id = p.task_id)
              ORDER BY p.seq",
            &[&question_id],
        )
    }

    fn decisions_linked(
        &self,
        project_id: &str,
        task_id: &str,
        story_id: &str,
    ) -> Result<Vec<Decisao>, OqError> {
        // The links are by id alone; the declaration and the answer must both be of the
        // task's project.
        let rows = self.rows(
            "SELECT DISTINCT d.payload::text, a.payload::text, a.at, a.seq FROM oq.question_links l
               JOIN oq.events a ON a.type = 'open_question.answered' AND a.question_id = l.question_id
               JOIN oq.events d ON d.type = 'artifact.open_question' AND d.question_id = l.question_id
              WHERE ((l.kind = 'task' AND l.target = $1) OR (l.kind = 'story' AND l.target = $2))
                AND d.project_id = $3 AND a.project_id = $3
              ORDER BY a.seq DESC",
            &[&task_id, &story_id, &project_id],
        )?;
        let mut out = Vec::new();
        for r in &rows {
            let (declared, answered): (String, String) = (get(r, 0)?, get(r, 1)?);
            out.extend(fold::decisao(
                parse_event(&declared)?,
                parse_event(&answered)?,
                get(r, 2)?,
                get(r, 3)?,
            ));
        }
        Ok(out)
    }

    fn question_events(&self, question_id: &str) -> Result<Vec<Event>, OqError> {
        Ok(self
            .events_of("question_id", question_id)?
            .into_iter()
            .map(|(_, e)| e)
            .collect())
    }

    fn heads_after(&self, after: i64, limit: usize) -> Result<Vec<LogHead>, OqError> {
        let rows = self.rows(
            "SELECT seq, project_id, project_seq, type FROM oq.events WHERE seq > $1 ORDER BY seq LIMIT $2",
            &[&after, &(limit as i64)],
        )?;
        let head = |r: &Row| {
            let (seq, project_id, project_seq, kind) =
                (get(r, 0)?, get(r, 1)?, get(r, 2)?, get(r, 3)?);
            Ok(LogHead {
                seq,
                project_id,
                project_seq,
                kind,
            })
        };
        rows.iter().map(head).collect()
    }

    fn events_after(
        &self,
        project_id: Option<&str>,
        after: i64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, OqError> {
        let limit = limit as i64;
        // One project is walked in its own numbering, the whole log in the log's.
        let rows = match project_id {
            Some(p) => self.rows(
                "SELECT seq, project_seq, event_id, project_id, actor, at, payload::text FROM oq.events
                  WHERE project_id = $3 AND project_seq > $1 ORDER BY project_seq LIMIT $2",
                &[&after, &limit, &p],
            )?,
            None => self.rows(
                "SELECT seq, project_seq, event_id, project_id, actor, at, payload::text FROM oq.events
                  WHERE seq > $1 ORDER BY seq LIMIT $2",
                &[&after, &limit],
            )?,
        };
        rows.iter()
            .map(|r| {
                Ok(StoredEvent {
                    seq: get(r, 0)?,
                    project_seq: get(r, 1)?,
                    event_id: get(r, 2)?,
                    project_id: get(r, 3)?,
                    actor: get(r, 4)?,
                    at: get(r, 5)?,
                    event: parse_event(&get::<String>(r, 6)?)?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn after_question_counts_the_question_columns() {
        let columns = crate::engine::fold::select_columns(super::QUESTION_COLUMNS);
        assert_eq!(
            columns,
            super::AFTER_QUESTION,
            "{}",
            super::QUESTION_COLUMNS
        );
    }
}
