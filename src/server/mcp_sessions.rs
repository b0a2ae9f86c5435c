//! The MCP sessions of `/mcp`: which token opened each, when each was last used, and
//! rmcp's session manager they live in. rmcp keeps a session's handle in its table after
//! the session's worker idled out, so nothing there ever shrinks by itself; this table
//! decides when a session ends and closes it in rmcp too.
//!
//! Invariant: the sessions held are bounded — each token holds at most
//! `[limits] max_mcp_sessions_per_token` (opening one more closes its least recently
//! used), and a session with no request for `[limits] mcp_session_idle_seconds` is
//! closed the next time any session is opened or it is named.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};

/// One session: its opener (a user id) and its last request's start or end.
struct Entry {
    user: String,
    last: Instant,
}

/// What a request naming a session finds.
#[derive(Debug, PartialEq, Eq)]
pub enum Named {
    /// The caller's own, live: marked used.
    Live,
    /// Unknown, another token's, or idle past the limit (now closed).
    Gone,
}

#[derive(Clone)]
pub struct Owners {
    table: Arc<Mutex<HashMap<String, Entry>>>,
    manager: Arc<LocalSessionManager>,
    idle: Duration,
    per_token: usize,
}

impl Owners {
    pub fn new(idle: Duration, per_token: usize) -> Owners {
        let mut manager = LocalSessionManager::default();
        // rmcp's own idle clock agrees with ours (its default is 5 minutes, shorter than
        // the longest wait_for_answer without progress).
        manager.session_config.keep_alive = Some(idle);
        Owners {
            table: Arc::default(),
            manager: Arc::new(manager),
            idle,
            per_token,
        }
    }

    pub fn manager(&self) -> Arc<LocalSessionManager> {
        Arc::clone(&self.manager)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // A panic while holding it leaves a table that is still a table.
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `id` named by `user`: live and theirs (marked used now), or gone.
    pub async fn named(&self, id: &str, user: &str) -> Named {
        let now = Instant::now();
        let expired = {
            let mut table = self.lock();
            match table.get_mut(id) {
                Some(e) if e.user == user && now.duration_since(e.last) <= self.idle => {
                    e.last = now;
                    return Named::Live;
                }
                Some(e) if e.user == user => {
                    table.remove(id);
                    true
                }
                _ => false,
            }
        };
        if expired {
            self.close(&[id.to_string()]).await;
        }
        Named::Gone
    }

    /// A request on `id` ended: its end counts as use (a long wait is not idleness).
    pub fn touch(&self, id: &str) {
        if let Some(e) = self.lock().get_mut(id) {
            e.last = Instant::now();
        }
    }

    /// `user` opened `id`: every idle session is closed, and `user`'s least recently used
    /// ones past the per-token limit.
    pub async fn opened(&self, id: &str, user: &str) {
        let now = Instant::now();
        let closing = {
            let mut table = self.lock();
            let mut closing: Vec<String> = table
                .iter()
                .filter(|(_, e)| now.duration_since(e.last) > self.idle)
                .map(|(k, _)| k.clone())
                .collect();
            for k in &closing {
                table.remove(k);
            }
            let mut mine: Vec<(Instant, String)> = table
                .iter()
                .filter(|(_, e)| e.user == user)
                .map(|(k, e)| (e.last, k.clone()))
                .collect();
            mine.sort();
            let over = (mine.len() + 1).saturating_sub(self.per_token);
            for (_, k) in mine.into_iter().take(over) {
                table.remove(&k);
                closing.push(k);
            }
            table.insert(
                id.to_string(),
                Entry {
                    user: user.to_string(),
                    last: now,
                },
            );
            closing
        };
        self.close(&closing).await;
    }

    /// `id` was ended by its client (DELETE).
    pub fn ended(&self, id: &str) {
        self.lock().remove(id);
    }

    async fn close(&self, ids: &[String]) {
        for id in ids {
            let sid: SessionId = Arc::from(id.as_str());
            if let Err(e) = self.manager.close_session(&sid).await {
                tracing::warn!(error = %e, "closing an MCP session");
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A session rmcp holds, opened as `/mcp` opens one, recorded for `user`.
    async fn open(owners: &Owners, user: &str) -> String {
        let (id, _worker) = owners.manager.create_session().await.unwrap();
        owners.opened(&id, user).await;
        id.to_string()
    }

    async fn rmcp_holds(owners: &Owners) -> usize {
        owners.manager.sessions.read().await.len()
    }

    #[tokio::test]
    async fn sessions_held_stay_within_the_per_token_limit_in_both_tables() {
        let owners = Owners::new(Duration::from_secs(600), 2);
        let mut ids = Vec::new();
        for _ in 0..10 {
            ids.push(open(&owners, "po-bot").await);
        }
        assert_eq!(owners.lock().len(), 2);
        assert_eq!(rmcp_holds(&owners).await, 2);
        // The newest two are the ones kept; another token's are its own.
        assert_eq!(owners.named(&ids[9], "po-bot").await, Named::Live);
        assert_eq!(owners.named(&ids[0], "po-bot").await, Named::Gone);
        assert_eq!(owners.named(&ids[9], "arq-bot").await, Named::Gone);
        open(&owners, "arq-bot").await;
        assert_eq!(owners.lock().len(), 3);
    }

    #[tokio::test]
    async fn idle_sessions_are_closed_in_both_tables() {
        let owners = Owners::new(Duration::from_millis(20), 100);
        let first = open(&owners, "po-bot").await;
        for _ in 0..5 {
            open(&owners, "po-bot").await;
        }
        tokio::time::sleep(Duration::from_millis(60)).await;
        // Opening any session closes every idle one, whoever opened it.
        open(&owners, "arq-bot").await;
        assert_eq!(owners.lock().len(), 1);
        assert_eq!(rmcp_holds(&owners).await, 1);
        assert_eq!(owners.named(&first, "po-bot").await, Named::Gone);
    }
}
