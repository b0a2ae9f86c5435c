//! The source's own workings: which directories a call spans, the pending requests and
//! their mapping to questions, what this process settled, and the event follower that
//! marks orphans and moves the revision.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use futures_util::StreamExt;

use super::*;
use crate::domain::{ErrorCode, OqError};
use crate::engine::sqlite::now_ms;
use crate::opencode::{Auth, Client, Placement, Scope, events};
use crate::wire::QuestionItem;

/// OpenCode's question request ids (`que_…`).
const REQUEST_ID_PREFIX: &str = "que_";

impl OpencodeSource {
    /// `url` is `opencode+http://HOST:PORT` (or without the prefix); `directories` are
    /// absolute paths, as OpenCode scopes them; `person` answers their questions.
    pub fn new(
        url: &str,
        directories: Vec<String>,
        person: &str,
        auth: Option<Auth>,
    ) -> Result<Self, OqError> {
        let base = url.strip_prefix(SCHEME).unwrap_or(url);
        let client = Client::new(base, auth)?;
        if directories.is_empty() {
            return Err(OqError::invalid(
                ErrorCode::DirectoryRequired,
                "an OpenCode source needs at least one --directory DIR",
            ));
        }
        for d in &directories {
            if !d.starts_with('/') {
                return Err(OqError::invalid(
                    ErrorCode::InvalidDirectory,
                    format!("--directory {d:?}: OpenCode scopes questions by absolute path"),
                ));
            }
        }
        let mut dirs: Vec<String> = Vec::new();
        for d in directories {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
        Ok(OpencodeSource {
            client,
            directories: dirs,
            person: person.to_string(),
            state: Arc::default(),
        })
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn directories(&self) -> &[String] {
        &self.directories
    }

    pub(super) fn state(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a panic elsewhere; the data is plain bookkeeping.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn scope(&self, project: Option<&str>) -> Result<Vec<&str>, OqError> {
        match project {
            None => Ok(self.directories.iter().map(String::as_str).collect()),
            Some(p) => self
                .directories
                .iter()
                .find(|d| d.as_str() == p)
                .map(|d| vec![d.as_str()])
                .ok_or_else(|| {
                    OqError::invalid(
                        ErrorCode::UnknownDirectory,
                        format!(
                            "{p:?} is not one of this source's directories ({})",
                            self.directories.join(", ")
                        ),
                    )
                }),
        }
    }

    /// Every pending request of the directories, oldest seen first.
    pub(super) async fn pending(&self, dirs: &[&str]) -> Result<Vec<Pending>, OqError> {
        let mut out = Vec::new();
        for dir in dirs {
            let requests = self.client.list(dir).await?;
            // Which sessions are still working; an older server without the route just
            // gives no orphan hint.
            let busy = if requests.is_empty() {
                None
            } else {
                self.client.session_status(dir).await.ok()
            };
            // A request's age is from when its agent asked (the tool part's start), read
            // once per request; OpenCode's list itself carries no time.
            let mut asked = HashMap::new();
            for request in &requests {
                if !self.state().seen.contains_key(&request.id) {
                    if let Some(at) = self.asked_at(dir, request).await {
                        asked.insert(request.id.clone(), at);
                    }
                }
            }
            let now = now_ms();
            let mut st = self.state();
            for request in requests {
                let at = asked.get(&request.id).copied().unwrap_or(now);
                st.seen.entry(request.id.clone()).or_insert(at);
                let not_busy = busy
                    .as_ref()
                    .is_some_and(|b| !b.get(&request.session_id).is_some_and(|s| s.is_busy()));
                let orphaned = not_busy || st.aborted.contains(&request.session_id);
                out.push(Pending {
                    directory: dir.to_string(),
                    request,
                    orphaned,
                });
            }
        }
        let st = self.state();
        out.sort_by_key(|p| (st.seen.get(&p.request.id).copied(), p.request.id.clone()));
        Ok(out)
    }

    /// When the agent asked: the start of the request's `question` tool part. `None`
    /// when upstream does not say (no tool reference, an older server, an error): the
    /// time this process first saw it stands in.
    async fn asked_at(&self, dir: &str, request: &Request) -> Option<i64> {
        let tool = request.tool.as_ref()?;
        let part = self
            .client
            .tool_part(&request.session_id, dir, &tool.call_id)
            .await
            .ok()??;
        let start = part.state?.time?.start;
        (start > 0).then_some(start)
    }

    pub(super) fn item(&self, p: &Pending) -> QuestionItem {
        let seen_at = self
            .state()
            .seen
            .get(&p.request.id)
            .copied()
            .unwrap_or_else(now_ms);
        p.request
            .to_item(&self.placement(&p.directory, seen_at), p.orphaned)
    }

    pub(super) fn placement<'a>(&'a self, directory: &'a str, seen_at: i64) -> Placement<'a> {
        Placement {
            upstream_name: self.client.base(),
            directory,
            person: &self.person,
            seen_at,
        }
    }

    pub(super) async fn find(
        &self,
        project: Option<&str>,
        id: &str,
    ) -> Result<Option<Pending>, OqError> {
        let dirs = self.scope(project)?;
        Ok(self
            .pending(&dirs)
            .await?
            .into_iter()
            .find(|p| p.request.id == id))
    }

    pub(super) fn settled(&self, id: &str) -> Option<QuestionItem> {
        self.state()
            .settled
            .iter()
            .find(|q| q.question_id == id)
            .cloned()
    }

    pub(super) fn missing(&self, id: &str) -> OqError {
        if let Some(done) = self.settled(id) {
            return if done.answer.is_some() {
                OqError::AlreadyAnswered {
                    question_id: id.into(),
                }
            } else {
                OqError::conflict(
                    ErrorCode::QuestionClosed,
                    format!("question {id} was already dismissed"),
                )
            };
        }
        OqError::NotFound {
            message: format!(
                "question {id} is not pending in OpenCode at {} ({})",
                self.client.base(),
                self.directories.join(", ")
            ),
        }
    }

    /// What answering or dismissing a request that is not pending means. OpenCode keeps
    /// no record of settled requests, so a request id (`que_…`) that is no longer listed
    /// was settled elsewhere (answered, dismissed, or lost with its session) as far as
    /// anyone here can tell: `question_closed`, as for any question settled first.
    /// Anything else is an id OpenCode never made: `not_found`.
    pub(super) fn not_settleable(&self, id: &str) -> OqError {
        if self.settled(id).is_some() || !id.starts_with(REQUEST_ID_PREFIX) {
            return self.missing(id);
        }
        OqError::conflict(
            ErrorCode::QuestionClosed,
            format!(
                "question {id} is no longer pending in OpenCode at {} ({}): it was answered, \
                 dismissed or lost there; nothing was changed",
                self.client.base(),
                self.directories.join(", ")
            ),
        )
    }

    pub(super) fn settled_elsewhere(&self, id: &str) -> OqError {
        OqError::conflict(
            ErrorCode::QuestionClosed,
            format!(
                "question {id} was already settled in OpenCode (answered, dismissed or gone \
                 elsewhere); nothing was changed"
            ),
        )
    }

    pub(super) fn record(&self, item: QuestionItem) {
        let mut st = self.state();
        st.settled.retain(|q| q.question_id != item.question_id);
        st.settled.push(item);
        st.revision += 1;
    }

    /// Follows each directory's event stream in the background (once), to learn which
    /// sessions were aborted and to move the revision on question events. Needs a tokio
    /// runtime; without one, polling alone serves. Ends when the source is dropped.
    pub(super) fn follow(&self) {
        {
            let mut st = self.state();
            if st.following {
                return;
            }
            st.following = true;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        for dir in &self.directories {
            let client = self.client.clone();
            let dir = dir.clone();
            let weak = Arc::downgrade(&self.state);
            handle.spawn(follow_directory(client, dir, weak));
        }
    }
}

pub(super) async fn follow_directory(client: Client, dir: String, state: Weak<Mutex<State>>) {
    loop {
        if state.strong_count() == 0 {
            return;
        }
        if let Ok(mut stream) = events::subscribe(&client, Scope::Directory(&dir)).await {
            while let Some(Ok(env)) = stream.next().await {
                let Some(state) = state.upgrade() else {
                    return;
                };
                let mut st = state.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(session) = env.event.aborted_session() {
                    st.aborted.insert(session.to_string());
                    st.revision += 1;
                }
                match env.event {
                    events::Event::QuestionAsked(_)
                    | events::Event::QuestionReplied { .. }
                    | events::Event::QuestionRejected { .. } => st.revision += 1,
                    _ => {}
                }
            }
        }
        tokio::time::sleep(RECONNECT).await;
    }
}

pub(super) fn fingerprint(pending: &[Pending]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for p in pending {
        p.request.id.hash(&mut h);
        p.orphaned.hash(&mut h);
    }
    h.finish()
}
