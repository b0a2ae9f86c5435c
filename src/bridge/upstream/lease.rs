//! Who drives an upstream among several `oq serve` on one PostgreSQL database: the one
//! holding its lease row (`engine::postgres::lease`).
//!
//! A server waits for the lease before it restores, connects or counts anything; while
//! it drives, [`Keeper::keep`] renews the lease every quarter of its term and ends the
//! drive when a renewal is refused or the term would run out before the next attempt (a
//! lost database) — before any other server can take it. Losing the lease releases the
//! connection through the one cleanup and forgets the machine: the next take restores
//! it from the log, where the server that drove meanwhile left its deadlines, pauses and
//! claims. A clean shutdown gives the lease up, so another takes over at once.
//!
//! Takeover bound: a server that died without giving its lease up (kill -9, a lost host)
//! is replaced within `lease + lease/4` — the term running out, then the next attempt of
//! a waiting server. On SQLite there is no lease: one `oq serve` per store file is the
//! supported setup; two on one file would both drive, and the claim row in the log
//! would still keep every request to one POST.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::{Inner, Upstream};
use crate::engine::postgres::lease::{Lease, Leases};

/// The lease of one upstream as this server holds or waits for it.
pub(crate) struct Keeper {
    pub(super) leases: Option<Arc<Leases>>,
    /// This server's holder id for the lease row: the process and a random part.
    pub holder: String,
}

impl Keeper {
    pub fn new(leases: Option<Leases>) -> Keeper {
        let token = crate::engine::ids::token();
        Keeper {
            leases: leases.map(Arc::new),
            holder: format!(
                "pid{}-{}",
                std::process::id(),
                &token[..token.len().min(12)]
            ),
        }
    }
}

impl Upstream {
    fn lease_term(&self) -> Duration {
        Duration::from_millis(self.cfg.lease_ms.max(4))
    }

    /// One take or renewal: `Ok(true)` held until `term` after `sent`.
    async fn take_lease(&self) -> Result<bool, crate::domain::OqError> {
        let Some(leases) = self.lease.leases.clone() else {
            return Ok(true);
        };
        let (name, holder, term) = (
            self.cfg.name.clone(),
            self.lease.holder.clone(),
            self.lease_term(),
        );
        let got = tokio::task::spawn_blocking(move || leases.take(&name, &holder, term))
            .await
            .map_err(|e| crate::domain::OqError::Internal(format!("lease task: {e}")))??;
        Ok(got == Lease::Held)
    }

    /// Waits until this server holds the lease; `None` if the server stops first. The
    /// instant returned is when the holding take was sent.
    pub(crate) async fn wait_for_lease(
        &self,
        stopping: &mut watch::Receiver<bool>,
    ) -> Option<Instant> {
        let mut said = false;
        loop {
            if *stopping.borrow() {
                return None;
            }
            let sent = Instant::now();
            match self.take_lease().await {
                Ok(true) => {
                    if self.lease.leases.is_some() {
                        tracing::info!(upstream = %self.cfg.name, holder = %self.lease.holder, "took the upstream's lease: driving it");
                    }
                    return Some(sent);
                }
                Ok(false) if !said => {
                    said = true;
                    tracing::info!(upstream = %self.cfg.name, "another server drives this upstream; waiting for its lease");
                }
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(upstream = %self.cfg.name, error = %e, "cannot ask for the upstream's lease")
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(self.lease_term() / 4) => {}
                _ = stopping.changed() => {}
            }
        }
    }

    /// Renews the lease taken at `sent` while the drive lasts; sets `end` when the server
    /// stops or the lease is lost. Returns whether it was lost.
    pub(crate) async fn keep_lease(
        self: Arc<Self>,
        mut sent: Instant,
        mut stopping: watch::Receiver<bool>,
        end: watch::Sender<bool>,
    ) -> bool {
        let (term, every) = (self.lease_term(), self.lease_term() / 4);
        let lost = loop {
            if *stopping.borrow() {
                break false;
            }
            if self.lease.leases.is_none() {
                // SQLite: held for the server's life.
                if stopping.changed().await.is_err() {
                    break false;
                }
                continue;
            }
            tokio::select! {
                _ = tokio::time::sleep(every) => {}
                r = stopping.changed() => {
                    if r.is_err() {
                        break false;
                    }
                    continue;
                }
            }
            let attempt = Instant::now();
            match self.take_lease().await {
                Ok(true) => sent = attempt,
                Ok(false) => {
                    tracing::warn!(upstream = %self.cfg.name, "the upstream's lease was taken by another server; no longer driving it");
                    break true;
                }
                Err(e) if Instant::now() + every >= sent + term => {
                    tracing::warn!(upstream = %self.cfg.name, error = %e, "cannot renew the upstream's lease before it runs out; no longer driving it");
                    break true;
                }
                Err(e) => {
                    tracing::warn!(upstream = %self.cfg.name, error = %e, "cannot renew the upstream's lease; trying again")
                }
            }
        };
        let _ = end.send(true);
        lost
    }

    /// After a lost lease: nothing of the machine is trusted any more.
    pub(crate) fn forget_all(&self) {
        let mut inner = self.lock();
        *inner = Inner::new(&self.cfg, true);
    }

    /// Marks the upstream as driven here (the lease is ours).
    pub(crate) fn driving(&self) {
        self.lock().elsewhere = false;
    }

    /// Gives the lease up at a clean shutdown.
    pub(crate) async fn give_up_lease(&self) {
        let Some(leases) = self.lease.leases.clone() else {
            return;
        };
        let (name, holder) = (self.cfg.name.clone(), self.lease.holder.clone());
        let out = tokio::task::spawn_blocking(move || leases.give_up(&name, &holder)).await;
        if let Ok(Err(e)) = out {
            tracing::warn!(upstream = %self.cfg.name, error = %e, "could not give the upstream's lease up; another server takes it when it runs out");
        }
    }

    /// `upstream_driven_elsewhere` when another server drives this upstream.
    pub(crate) fn check_driving(&self) -> Result<(), crate::domain::OqError> {
        if self.lock().elsewhere {
            return Err(crate::domain::OqError::upstream(
                crate::domain::ErrorCode::UpstreamDrivenElsewhere,
                format!(
                    "OpenCode upstream {} is driven by another oq serve on this database; \
                     send this to that server (or retry: it takes over if that one is gone)",
                    self.cfg.name
                ),
            ));
        }
        Ok(())
    }
}
