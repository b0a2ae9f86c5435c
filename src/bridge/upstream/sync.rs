//! Keeping the engine in step with upstream: import, settle, orphan.

use std::collections::HashSet;
use std::sync::Arc;

use super::*;
use crate::bridge::delegate::{Input, ListError, ListToken};
use crate::domain::ErrorCode;

impl Upstream {
    // ---- engine sync ----------------------------------------------------------------

    /// Requests the machine settled and the engine still holds open (and no person's
    /// POST is deciding): queued for an `External` close.
    pub(super) fn settle_in_engine(&self, inner: &mut Inner) {
        if inner.known.is_empty() {
            return;
        }
        let settled: Vec<String> = inner
            .delegate
            .snapshot()
            .requests
            .into_iter()
            .filter(|r| r.state == "settled" && !inner.manual.contains(&r.request_id))
            .map(|r| r.request_id)
            .filter(|id| inner.known.contains_key(id))
            .collect();
        for id in settled {
            inner.known.remove(&id);
            self.pending_closes
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(id);
        }
    }

    /// Runs the queued `External` closes.
    pub(crate) async fn flush_closes(&self) {
        let ids: Vec<String> = std::mem::take(
            &mut *self
                .pending_closes
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
        for id in ids {
            self.close_external(&id).await;
        }
    }

    pub(super) async fn close_external(&self, question_id: &str) {
        let (actor, project, id) = (
            self.service.clone(),
            self.cfg.project.clone(),
            question_id.to_string(),
        );
        let _ = self
            .app
            .write(move |e| e.close_question(&actor, Some(&project), &id, ClosedReason::External))
            .await;
    }

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
            .app
            .write(move |e| {
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
        if let Ok(true) = out {
            inner.known.insert(
                request.id.clone(),
                Known {
                    session_id: request.session_id.clone(),
                },
            );
        }
    }

    /// The open engine questions of this upstream in `directory`: (question id, session).
    pub(crate) async fn engine_open(&self, directory: &str) -> Vec<(String, String)> {
        let (project, name, dir) = (
            self.cfg.project.clone(),
            self.cfg.name.clone(),
            directory.to_string(),
        );
        self.app
            .read(move |e| {
                let mut out = Vec::new();
                let mut cursor: Option<String> = None;
                loop {
                    let page = e.list(Some(&project), StatusFilter::Open, cursor.as_deref(), 50)?;
                    for q in &page.items {
                        if let Some(up) = &q.upstream
                            && up.kind == "opencode"
                            && up.name == name
                            && up.directory == dir
                        {
                            out.push((q.question_id.clone(), up.session_id.clone()));
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

    /// `GET /question?directory=`: imports what is pending, feeds the machine, and closes
    /// in the engine what upstream no longer holds — only for a list that succeeded, and
    /// only what the machine settled or never saw this run (imported by an earlier run).
    pub(crate) async fn list_and_sync(self: &Arc<Self>, directory: &str) -> bool {
        let token: ListToken = self.lock().delegate.list_token();
        let listed = self.client.list(directory).await;
        let ok = listed.is_ok();
        match listed {
            Ok(requests) => {
                for r in &requests {
                    self.import(r, directory).await;
                }
                let present: HashSet<&str> = requests.iter().map(|r| r.id.as_str()).collect();
                let engine_open = self.engine_open(directory).await;
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
                            result: Ok(requests.iter().map(to_machine).collect()),
                        },
                    );
                    let snapshot = inner.delegate.snapshot();
                    for (id, _) in engine_open {
                        if present.contains(id.as_str()) || inner.manual.contains(&id) {
                            continue;
                        }
                        let unseen = !snapshot.requests.iter().any(|r| r.request_id == id);
                        if unseen {
                            inner.known.remove(&id);
                            self.pending_closes
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .push(id);
                        }
                    }
                }
                self.flush_closes().await;
            }
            Err(e) => {
                let _ = self.feed(Input::ListResult {
                    directory: Some(directory.to_string()),
                    token,
                    result: Err(ListError(e.to_string())),
                });
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
        let _ = self.feed(Input::Asked {
            request: to_machine(&request),
            directory,
        });
        self.flush_closes().await;
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
                .app
                .write(move |e| e.mark_orphaned(&actor, Some(&project), &id))
                .await;
        }
        let _ = self.feed(Input::GoalPaused {
            root_session: session_id.to_string(),
        });
    }

    pub(super) async fn resolve_session(self: &Arc<Self>, session_id: String) {
        for dir in self.cfg.directories.clone() {
            if let Ok(s) = self.client.get_session(&session_id, &dir).await {
                let directory = if s.directory.is_empty() {
                    dir
                } else {
                    s.directory
                };
                let _ = self.feed(Input::SessionDirectoryResolved {
                    session_id: session_id.clone(),
                    directory,
                });
                if let Some(parent) = s.parent_id {
                    let _ = self.feed(Input::SessionParent {
                        session_id,
                        parent_id: parent,
                    });
                }
                self.flush_closes().await;
                return;
            }
        }
    }
}
