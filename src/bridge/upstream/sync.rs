//! Keeping the engine in step with upstream (import, orphan) and the machine in step
//! with the log (restore after a restart).

use std::sync::Arc;

use super::*;
use crate::bridge::delegate::{Input, ListError, ListToken, Restored};
use crate::domain::ErrorCode;
use crate::domain::choices::Upstream as UpstreamRef;
use crate::domain::delegation::PauseReason;
use crate::domain::{DeclareInput, Event, Question, SessionKind};
use crate::engine::{ListQuery, NewQuestion, StatusFilter};
use crate::opencode::Request;
use crate::opencode::types::OPENCODE_AUTHOR;

impl Upstream {
    /// Imports `request` (seen in `directory`) as an open question, once.
    pub(crate) async fn import(&self, request: &Request, directory: &str) {
        if self.lock().known.contains_key(&request.id) {
            return;
        }
        let session = format!("oc-{}-{}", self.cfg.name, request.session_id);
        let project = self.cfg.project.clone();
        let person = self.cfg.answerer.clone();
        let service = self.service.clone();
        let upstream_name = self.cfg.name.clone();
        let request_c = request.clone();
        let directory_c = directory.to_string();
        let need_session = !self.lock().sessions.contains(&session);
        let session_c = session.clone();
        let out = self
            .on_engine(true, move |e| {
                if need_session {
                    let exists = e.read(|v| v.session(&session_c))?.is_some();
                    if !exists {
                        match e.start_session(
                            &Actor::person(&person),
                            &project,
                            SessionKind::Conversation,
                            Some(&session_c),
                        ) {
                            Ok(_) | Err(OqError::Conflict { .. }) => {}
                            Err(other) => return Err(other),
                        }
                    }
                }
                // A session of that id someone else made (a store written before the
                // server kept `oc-` ids for the bridge) is not ours: import nothing
                // rather than give its author the upstream's question.
                match e.read(|v| v.session(&session_c))? {
                    Some(s) if s.project_id == project && s.author == person => {}
                    _ => {
                        tracing::error!(session = %session_c, "bridge session taken by someone else; request not imported");
                        return Err(OqError::conflict(
                            ErrorCode::SessionIdReserved,
                            format!("session {session_c} is not the bridge's"),
                        ));
                    }
                }
                let q = request_c.to_question(&crate::opencode::Placement {
                    upstream_name: &upstream_name,
                    directory: &directory_c,
                    person: &person,
                    seen_at: 0,
                });
                let input = DeclareInput {
                    pergunta: q.pergunta.clone(),
                    sugestao: None,
                    afeta: Default::default(),
                    session_id: session_c.clone(),
                    idempotency_key: None,
                };
                let recorded = e.record_question(
                    &service,
                    &project,
                    NewQuestion {
                        input: &input,
                        autor: OPENCODE_AUTHOR,
                        source: "opencode",
                        question_id: Some(&request_c.id),
                        prompts: q.prompts,
                        upstream: Some(UpstreamRef {
                            kind: "opencode".into(),
                            name: upstream_name.clone(),
                            directory: directory_c.clone(),
                            request_id: request_c.id.clone(),
                            session_id: request_c.session_id.clone(),
                            call_id: request_c.tool.as_ref().map(|t| t.call_id.clone()),
                        }),
                    },
                );
                match recorded {
                    Ok(q) => Ok(q.is_open()),
                    Err(OqError::Conflict {
                        code: ErrorCode::QuestionExists,
                        ..
                    }) => Ok(e.question(Some(&project), &request_c.id)?.is_open()),
                    Err(other) => Err(other),
                }
            })
            .await;
        let mut inner = self.lock();
        inner.sessions.insert(session);
        match out {
            Ok(true) => {
                inner.known.insert(
                    request.id.clone(),
                    Known {
                        session_id: request.session_id.clone(),
                    },
                );
            }
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(upstream = %self.cfg.name, request = %request.id, error = %e, "could not import the request")
            }
        }
    }

    /// Every open question of this upstream in the engine.
    pub(crate) async fn engine_open(&self) -> Vec<Question> {
        let (project, name) = (self.cfg.project.clone(), self.cfg.name.clone());
        self.on_engine(false, move |e| {
            let mut out = Vec::new();
            let mut cursor: Option<String> = None;
            loop {
                let query = ListQuery::new(StatusFilter::Open).after(cursor.as_deref());
                let page = e.list(Some(&project), &query)?;
                for q in &page.items {
                    if q.upstream
                        .as_ref()
                        .is_some_and(|up| up.kind == "opencode" && up.name == name)
                    {
                        out.push(q.clone());
                    }
                }
                match page.cursor {
                    Some(c) if !page.items.is_empty() => cursor = Some(c),
                    _ => break,
                }
            }
            Ok(out)
        })
        .await
        .unwrap_or_default()
    }

    /// At start, before any connection: every question of this upstream the log holds
    /// open goes back into the machine with what the log says of it — its last deadline,
    /// a pause that still holds (and who made it), a POST noted as sent with no outcome
    /// after it (a tombstone carrying who it spoke for).
    pub(crate) async fn restore_from_log(self: &Arc<Self>) {
        for q in self.engine_open().await {
            let Some(request) = Request::of_question(&q) else {
                continue;
            };
            let Some(directory) = q.upstream.as_ref().map(|u| u.directory.clone()) else {
                continue;
            };
            let id = q.question_id.clone();
            let events = self
                .on_engine(false, move |e| e.question_events(&id))
                .await
                .unwrap_or_default();
            let (restored, submission) = self.read_notes(&q, &events);
            let mut inner = self.lock();
            inner.known.insert(
                request.id.clone(),
                Known {
                    session_id: request.session_id.clone(),
                },
            );
            let _ = self.feed_locked(
                &mut inner,
                Input::Restore {
                    request: request.clone(),
                    directory,
                    restored,
                },
            );
            let claim = match inner.delegate.request(&request.id).map(|r| r.state) {
                Some(crate::bridge::delegate::RequestState::Uncertain { claim }) => Some(claim),
                _ => None,
            };
            if let (Some(claim), Some(s)) = (claim, submission) {
                inner.submissions.insert(claim.id, s);
            }
        }
        self.flush_writes().await;
    }

    /// What a question's notes say, in log order: the last deadline; the last pause
    /// unless resumed; the last submission unless something after it (a pause, a
    /// resume, a countdown) shows its claim was released.
    fn read_notes(&self, q: &Question, events: &[Event]) -> (Restored, Option<Submission>) {
        let mut restored = Restored::default();
        let mut submission = None;
        for e in events {
            match e {
                Event::QuestionCountdown { deadline, .. } => {
                    restored.deadline_ms = Some(self.machine_of(*deadline));
                    restored.submitted = None;
                    submission = None;
                }
                Event::QuestionPaused { reason, by, .. } => {
                    let by = (by != self.service.id()).then(|| by.clone());
                    restored.pause = Some((*reason, by));
                    restored.submitted = None;
                    submission = None;
                }
                Event::QuestionResumed { .. } => {
                    restored.pause = None;
                    restored.submitted = None;
                    submission = None;
                }
                Event::QuestionSubmitted {
                    claimant,
                    post,
                    answers,
                    by,
                    idempotency_key,
                    ..
                } => {
                    restored.submitted = Some((*claimant, *post, answers.clone()));
                    let actor = if by == self.service.id() {
                        self.service.clone()
                    } else {
                        Actor::person(by)
                    };
                    submission = Some(Submission {
                        actor,
                        post: match post {
                            crate::domain::delegation::PostKind::Reply => {
                                crate::bridge::delegate::Post::Reply {
                                    answers: answers.clone(),
                                }
                            }
                            crate::domain::delegation::PostKind::Reject => {
                                crate::bridge::delegate::Post::Reject
                            }
                        },
                        key: idempotency_key.clone(),
                    });
                }
                _ => {}
            }
        }
        if q.orphaned && restored.pause.as_ref().is_none_or(|(r, _)| !r.is_persons()) {
            restored.pause = Some((PauseReason::Goal, None));
        }
        (restored, submission)
    }

    /// `GET /question?directory=`: imports what is pending and feeds the machine, which
    /// settles what a successful list no longer holds.
    pub(crate) async fn list_and_sync(self: &Arc<Self>, directory: &str) -> bool {
        let token: ListToken = self.lock().delegate.list_token();
        let listed = self.client.list(directory).await;
        let ok = listed.is_ok();
        match listed {
            Ok(requests) => {
                for r in &requests {
                    self.import(r, directory).await;
                }
                {
                    let mut inner = self.lock();
                    if let Some(conn) = inner.conn.as_mut() {
                        conn.coverage.insert(directory.to_string());
                    }
                    let _ = self.feed_locked(
                        &mut inner,
                        Input::ListResult {
                            directory: Some(directory.to_string()),
                            token,
                            result: Ok(requests),
                        },
                    );
                }
                self.flush_writes().await;
            }
            Err(e) => {
                tracing::debug!(upstream = %self.cfg.name, directory, error = %e, "list failed");
                let _ = self
                    .feed(Input::ListResult {
                        directory: Some(directory.to_string()),
                        token,
                        result: Err(ListError(e.to_string())),
                    })
                    .await;
            }
        }
        ok
    }

    /// `question.asked`: import, then let the machine arm its window.
    pub(crate) async fn asked(self: &Arc<Self>, request: Request, directory: Option<String>) {
        let dir = directory
            .clone()
            .unwrap_or_else(|| self.cfg.directories[0].clone());
        self.import(&request, &dir).await;
        let _ = self.feed(Input::Asked { request, directory }).await;
    }

    /// `session.error` with `MessageAbortedError`: its pending questions are orphans,
    /// and its tree's timers pause (reason `goal`): nobody will read a continuation.
    pub(crate) async fn session_aborted(self: &Arc<Self>, session_id: &str) {
        let ids: Vec<String> = self
            .lock()
            .known
            .iter()
            .filter(|(_, k)| k.session_id == session_id)
            .map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            let (actor, project) = (self.service.clone(), self.cfg.project.clone());
            let _ = self
                .on_engine(true, move |e| e.mark_orphaned(&actor, Some(&project), &id))
                .await;
        }
        let _ = self
            .feed(Input::GoalPaused {
                root_session: session_id.to_string(),
            })
            .await;
    }

    pub(super) async fn resolve_session(self: &Arc<Self>, session_id: String) {
        for dir in self.cfg.directories.clone() {
            if let Ok(s) = self.client.get_session(&session_id, &dir).await {
                let directory = if s.directory.is_empty() {
                    dir
                } else {
                    s.directory
                };
                let _ = self
                    .feed(Input::SessionDirectoryResolved {
                        session_id: session_id.clone(),
                        directory,
                    })
                    .await;
                if let Some(parent) = s.parent_id {
                    let _ = self
                        .feed(Input::SessionParent {
                            session_id,
                            parent_id: parent,
                        })
                        .await;
                }
                return;
            }
        }
    }
}
