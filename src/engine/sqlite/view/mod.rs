//! Reads over the log for the engine: every state is folded from events here.

use rusqlite::{Connection, OptionalExtension};

use crate::domain::dev_context::Decisao;
use crate::domain::gate::Gate;
use crate::domain::work::{Session, Story, Task, WorkState};
use crate::domain::{Event, OqError, Question, StoredEvent};
use crate::engine::decisions::{DecisionPage, DecisionQuery};
use crate::engine::store::{LogHead, Lookup, ParkedTask, QuestionPage, QuestionQuery, StoreView};

mod decisions;
mod questions;
mod rows;
mod similar;
mod snoozes;
mod words;

use rows::{
    QUESTION_COLUMNS, SETTLEMENT_JOIN, bind, collect, parse_event, question_from_row, scope,
    session_from,
};
pub struct SqliteView<'c> {
    conn: &'c Connection,
}

impl<'c> SqliteView<'c> {
    pub fn new(conn: &'c Connection) -> Self {
        SqliteView { conn }
    }
}

impl SqliteView<'_> {
    fn query_questions(
        &self,
        sql: &str,
        args: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<Question>, OqError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map(args, question_from_row)?;
        collect(rows)
    }

    fn count(&self, sql: &str, args: &[&dyn rusqlite::ToSql]) -> Result<u64, OqError> {
        let n: i64 = self
            .conn
            .prepare_cached(sql)?
            .query_row(args, |r| r.get(0))?;
        Ok(n as u64)
    }

    fn events_of(&self, column: &str, id: &str) -> Result<Vec<(String, Event)>, OqError> {
        let sql =
            format!("SELECT project_id, payload FROM events WHERE {column} = ?1 ORDER BY seq");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map([id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (project, payload) = row?;
            out.push((project, parse_event(&payload)?));
        }
        Ok(out)
    }
}

impl StoreView for SqliteView<'_> {
    fn revision(&self) -> Result<i64, OqError> {
        Ok(self
            .conn
            .query_row("SELECT coalesce(max(seq), 0) FROM events", [], |r| r.get(0))?)
    }

    fn project_revision(&self, project_id: &str) -> Result<i64, OqError> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT coalesce(max(project_seq), 0) FROM events WHERE project_id = ?1",
            )?
            .query_row([project_id], |r| r.get(0))?)
    }

    fn projects(&self) -> Result<Vec<String>, OqError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT DISTINCT project_id FROM events WHERE type = 'session.started' ORDER BY project_id",
        )?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn session(&self, session_id: &str) -> Result<Option<Session>, OqError> {
        let row: Option<(String, String)> = self
            .conn
            .prepare_cached("SELECT project_id, payload FROM events WHERE type = 'session.started' AND session_id = ?1")?
            .query_row([session_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        match row {
            None => Ok(None),
            Some((project_id, payload)) => {
                session_from(project_id, parse_event(&payload)?).map(Some)
            }
        }
    }

    fn sessions(&self, project_id: Option<&str>) -> Result<Vec<Session>, OqError> {
        let mut stmt = self.conn.prepare_cached(&scope(
            "SELECT project_id, payload FROM events WHERE type = 'session.started' {scope} ORDER BY seq",
            "project_id",
            project_id,
        ))?;
        let rows = stmt.query_map(&*bind(vec![], &project_id), |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (project, payload) = row?;
            out.push(session_from(project, parse_event(&payload)?)?);
        }
        Ok(out)
    }

    fn question(&self, question_id: &str) -> Result<Option<Question>, OqError> {
        let sql = format!(
            "SELECT {QUESTION_COLUMNS} FROM events d {SETTLEMENT_JOIN}
             WHERE d.type = 'artifact.open_question' AND d.question_id = ?1"
        );
        let q = self.query_questions(&sql, &[&question_id])?.pop();
        snoozes::attach_one(self.conn, q)
    }

    fn questions(&self, q: &QuestionQuery<'_>) -> Result<QuestionPage, OqError> {
        questions::questions(self.conn, q)
    }

    fn decisions(
        &self,
        project_id: Option<&str>,
        query: &DecisionQuery,
        after: Option<i64>,
        limit: usize,
    ) -> Result<DecisionPage, OqError> {
        decisions::decisions(self.conn, project_id, query, after, limit)
    }

    fn similar_candidates(
        &self,
        project_id: &str,
        words: &[String],
        per_word: usize,
        lookup: Lookup,
    ) -> Result<Vec<Question>, OqError> {
        similar::candidates(self.conn, project_id, words, per_word, lookup)
    }

    fn open_counts(
        &self,
        project_id: Option<&str>,
        viewer: &crate::domain::Actor,
        now: i64,
    ) -> Result<crate::engine::OpenCounts, OqError> {
        questions::open_counts(self.conn, project_id, viewer, now)
    }

    fn open_count(&self, project_id: &str) -> Result<u64, OqError> {
        self.count(
            "SELECT count(*) FROM open_questions WHERE project_id = ?1",
            &[&project_id],
        )
    }

    fn story(&self, story_id: &str) -> Result<Option<Story>, OqError> {
        let mut story: Option<Story> = None;
        for (project_id, event) in self.events_of("story_id", story_id)? {
            // Only the creating project's events move it (see `task`).
            if story.as_ref().is_some_and(|s| s.project_id != project_id) {
                continue;
            }
            match event {
                Event::StoryCreated { story_id, title } => {
                    story = Some(Story {
                        story_id,
                        project_id,
                        title,
                        state: WorkState::Draft,
                    })
                }
                Event::StoryStateChanged { to, .. } => {
                    if let Some(s) = story.as_mut() {
                        s.state = to;
                    }
                }
                _ => {}
            }
        }
        Ok(story)
    }

    fn stories(&self, project_id: Option<&str>) -> Result<Vec<Story>, OqError> {
        let sql = scope(
            "SELECT story_id FROM events WHERE type = 'story.created' {scope} ORDER BY seq",
            "project_id",
            project_id,
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let ids: Vec<String> = stmt
            .query_map(&*bind(vec![], &project_id), |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let mut out = Vec::new();
        for id in ids {
            out.extend(self.story(&id)?);
        }
        Ok(out)
    }

    fn task(&self, task_id: &str) -> Result<Option<Task>, OqError> {
        let mut task: Option<Task> = None;
        for (project_id, event) in self.events_of("task_id", task_id)? {
            if let Event::TaskCreated {
                task_id,
                story_id,
                session_id,
                title,
                correction_ceiling,
            } = event
            {
                task = Some(Task {
                    task_id,
                    project_id,
                    story_id,
                    session_id,
                    title,
                    state: WorkState::Draft,
                    gate: Gate::new(correction_ceiling),
                });
                continue;
            }
            // Every fold reads only the project's own events: an event of another
            // project naming this id (refused by the engine; only tampering or an old
            // store holds one) moves nothing here.
            if let Some(t) = task.as_mut()
                && t.project_id == project_id
            {
                t.apply(&event);
            }
        }
        Ok(task)
    }

    fn tasks_of_story(&self, story_id: &str) -> Result<Vec<Task>, OqError> {
        let ids = self.ids(
            "SELECT task_id FROM events WHERE type = 'task.created' AND story_id = ?1 ORDER BY seq",
            Some(story_id),
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
        let mut stmt = self.conn.prepare_cached(&scope(
            // From the parked tasks (their own index: few), to those whose question is
            // still open and was asked in a session `person` authored.
            "SELECT p.task_id, p.question_id, p.at FROM events p
               JOIN open_questions o ON o.question_id = p.question_id
               JOIN events d ON d.type = 'artifact.open_question' AND d.question_id = p.question_id
               JOIN events s ON s.type = 'session.started' AND s.session_id = d.session_id
              WHERE p.type = 'gate.rescue_parked'
                AND json_extract(s.payload, '$.author') = :person {scope}
              ORDER BY p.seq",
            "o.project_id",
            project_id,
        ))?;
        let rows = stmt.query_map(&*bind(vec![(":person", &person)], &project_id), |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (task_id, question_id, parked_at) = row?;
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
        let mut stmt = self.conn.prepare_cached(
            "SELECT p.task_id FROM events p
              WHERE p.type = 'gate.rescue_parked' AND p.question_id = ?1
                AND NOT EXISTS (SELECT 1 FROM events r WHERE r.type = 'gate.resumed'
                                AND r.question_id = ?1 AND r.task_id = p.task_id)
              ORDER BY p.seq",
        )?;
        let rows = stmt.query_map([question_id], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn decisions_linked(
        &self,
        project_id: &str,
        task_id: &str,
        story_id: &str,
    ) -> Result<Vec<Decisao>, OqError> {
        // The links are by id alone; the declaration and the answer must both be of the
        // task's project (a store written before references were checked may hold a
        // question of another project that names this task).
        let mut stmt = self.conn.prepare_cached(
            "SELECT DISTINCT d.payload, a.payload, a.at, a.seq FROM question_links l
               JOIN events a ON a.type = 'open_question.answered' AND a.question_id = l.question_id
               JOIN events d ON d.type = 'artifact.open_question' AND d.question_id = l.question_id
              WHERE ((l.kind = 'task' AND l.target = ?1) OR (l.kind = 'story' AND l.target = ?2))
                AND d.project_id = ?3 AND a.project_id = ?3
              ORDER BY a.seq DESC",
        )?;
        let rows = stmt.query_map([task_id, story_id, project_id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (declared, answered, at, seq) = row?;
            if let (
                Event::OpenQuestion {
                    question_id,
                    pergunta,
                    ..
                },
                Event::QuestionAnswered {
                    resposta,
                    aceitou_sugestao,
                    decision_event_id,
                    respondida_por,
                    ..
                },
            ) = (parse_event(&declared)?, parse_event(&answered)?)
            {
                out.push(Decisao {
                    question_id,
                    pergunta,
                    resposta,
                    aceitou_sugestao,
                    respondida_por,
                    decision_event_id,
                    decided_at: at,
                    seq,
                });
            }
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
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, project_id, project_seq, type FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2",
        )?;
        let rows = stmt.query_map((after, limit as i64), |r| {
            let (seq, project_id, project_seq, kind) = (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
            Ok(LogHead {
                seq,
                project_id,
                project_seq,
                kind,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    fn events_after(
        &self,
        project_id: Option<&str>,
        after: i64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, OqError> {
        let limit = limit as i64;
        // One project is walked in its own numbering, the whole log in the log's.
        let sql = match project_id {
            Some(_) => {
                "SELECT seq, project_seq, event_id, project_id, actor, at, payload FROM events
                  WHERE project_id = :project AND project_seq > :after
                  ORDER BY project_seq LIMIT :limit"
            }
            None => {
                "SELECT seq, project_seq, event_id, project_id, actor, at, payload FROM events
                  WHERE seq > :after ORDER BY seq LIMIT :limit"
            }
        };
        let mut stmt = self.conn.prepare_cached(sql)?;
        let params = bind(vec![(":after", &after), (":limit", &limit)], &project_id);
        let rows = stmt.query_map(&*params, |r| {
            Ok((
                (r.get::<_, i64>(0)?, r.get::<_, i64>(1)?),
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, String>(6)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let ((seq, project_seq), event_id, project_id, actor, at, payload) = row?;
            out.push(StoredEvent {
                seq,
                project_seq,
                event_id,
                project_id,
                actor,
                at,
                event: parse_event(&payload)?,
            });
        }
        Ok(out)
    }
}

impl SqliteView<'_> {
    fn ids(&self, sql: &str, arg: Option<&str>) -> Result<Vec<String>, OqError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map([arg], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
