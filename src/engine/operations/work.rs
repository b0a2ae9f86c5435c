//! Stories and tasks: creation, moves, and ADR 0212/0214 §8's story correction.

use crate::domain::text::{check_id, check_text};
use crate::domain::work::{CitedQuestion, check_story_correction};
use crate::domain::{Actor, ErrorCode, Event, OqError, Role, SessionKind, Story, Task, WorkState};
use crate::engine::ids;
use crate::engine::store::Store;

use super::{Engine, TITLE_MAX_CHARS, new_event, question_in, session_in, story_in, task_in};

impl<S: Store> Engine<S> {
    // ---- stories --------------------------------------------------------------------

    pub fn create_story(
        &self,
        actor: &Actor,
        project_id: &str,
        title: &str,
    ) -> Result<Story, OqError> {
        actor.require_role(&[Role::Po], "creating a story")?;
        check_id("projectId", project_id)?;
        let title = check_text("title", title, TITLE_MAX_CHARS)?;
        let story_id = ids::story_id();
        let story = Story {
            story_id: story_id.clone(),
            project_id: project_id.into(),
            title: title.clone(),
            state: WorkState::Draft,
        };
        let owned = (project_id.to_string(), actor.clone());
        self.store.transact(move |_| {
            let (project_id, actor) = (owned.0.as_str(), &owned.1);
            Ok((
                vec![new_event(
                    project_id,
                    actor,
                    Event::StoryCreated { story_id, title },
                )],
                (),
            ))
        })?;
        Ok(story)
    }

    pub fn move_story(
        &self,
        actor: &Actor,
        project_id: &str,
        story_id: &str,
        to: WorkState,
    ) -> Result<Story, OqError> {
        actor.require_role(&[Role::Po], "moving a story")?;
        let owned = (project_id.to_string(), actor.clone(), story_id.to_string());
        let (_, story) = self.store.transact(move |v| {
            let (project_id, actor, story_id) = (owned.0.as_str(), &owned.1, owned.2.as_str());
            let mut story = story_in(v, project_id, story_id)?;
            story.check_move(to)?;
            let event = Event::StoryStateChanged {
                story_id: story_id.into(),
                from: story.state,
                to,
            };
            story.state = to;
            Ok((vec![new_event(project_id, actor, event)], story))
        })?;
        Ok(story)
    }

    /// ADR 0212 as revised by ADR 0214 §8.
    pub fn correct_story(
        &self,
        actor: &Actor,
        project_id: &str,
        story_id: &str,
        question_id: Option<&str>,
    ) -> Result<Story, OqError> {
        actor.require_role(&[Role::Po], "correcting a story")?;
        let owned = (
            project_id.to_string(),
            actor.clone(),
            story_id.to_string(),
            question_id.map(str::to_string),
        );
        let (_, story) = self.store.transact(move |v| {
            let (project_id, actor, story_id) = (owned.0.as_str(), &owned.1, owned.2.as_str());
            let question_id = owned.3.as_deref();
            let story = story_in(v, project_id, story_id)?;
            let cited = match question_id {
                None => CitedQuestion::None,
                Some(q) => match question_in(v, Some(project_id), q)?.answer {
                    Some(_) => CitedQuestion::Answered,
                    None => CitedQuestion::Open,
                },
            };
            let task_states: Vec<WorkState> = v
                .tasks_of_story(story_id)?
                .iter()
                .map(|t| t.state)
                .collect();
            check_story_correction(&story, &task_states, cited)?;
            let event = Event::StoryCorrected {
                story_id: story_id.into(),
                question_id: question_id.map(Into::into),
            };
            Ok((vec![new_event(project_id, actor, event)], story))
        })?;
        Ok(story)
    }

    pub fn stories(&self, project_id: Option<&str>) -> Result<Vec<Story>, OqError> {
        self.store.read(|v| v.stories(project_id))
    }

    // ---- tasks and the QA gate ------------------------------------------------------

    pub fn create_task(
        &self,
        actor: &Actor,
        project_id: &str,
        story_id: &str,
        session_id: &str,
        title: &str,
    ) -> Result<Task, OqError> {
        actor.require_role(&[Role::Po, Role::DevLead], "creating a task")?;
        let title = check_text("title", title, TITLE_MAX_CHARS)?;
        let ceiling = self.config.correction_ceiling;
        let owned = (
            project_id.to_string(),
            actor.clone(),
            story_id.to_string(),
            session_id.to_string(),
        );
        let (_, task) = self.store.transact(move |v| {
            let (project_id, actor) = (owned.0.as_str(), &owned.1);
            let (story_id, session_id) = (owned.2.as_str(), owned.3.as_str());
            story_in(v, project_id, story_id)?;
            let session = session_in(v, project_id, session_id)?;
            if session.kind != SessionKind::Execution {
                return Err(OqError::invalid(
                    ErrorCode::NotAnExecutionSession,
                    format!("session {session_id} is a conversation; a task belongs to an execution session"),
                ));
            }
            let task_id = ids::task_id();
            let task = Task {
                task_id: task_id.clone(),
                project_id: project_id.into(),
                story_id: story_id.into(),
                session_id: session_id.into(),
                title: title.clone(),
                state: WorkState::Draft,
                gate: crate::domain::Gate::new(ceiling),
            };
            let event = Event::TaskCreated { task_id, story_id: story_id.into(), session_id: session_id.into(), title, correction_ceiling: ceiling };
            Ok((vec![new_event(project_id, actor, event)], task))
        })?;
        Ok(task)
    }

    pub fn move_task(
        &self,
        actor: &Actor,
        project_id: &str,
        task_id: &str,
        to: WorkState,
    ) -> Result<Task, OqError> {
        actor.require_role(&[Role::Po, Role::DevLead], "moving a task")?;
        let owned = (project_id.to_string(), actor.clone(), task_id.to_string());
        let (_, task) = self.store.transact(move |v| {
            let (project_id, actor, task_id) = (owned.0.as_str(), &owned.1, owned.2.as_str());
            let mut task = task_in(v, project_id, task_id)?;
            let event = Event::TaskStateChanged {
                task_id: task_id.into(),
                from: task.state,
                to,
            };
            task.state = to;
            Ok((vec![new_event(project_id, actor, event)], task))
        })?;
        Ok(task)
    }

    pub fn task(&self, project_id: &str, task_id: &str) -> Result<Task, OqError> {
        self.store.read(|v| task_in(v, project_id, task_id))
    }
}
