//! Bridge leases: which server drives each `[[opencode]]` upstream (`oq.bridge_leases`).
//!
//! A lease is a row `(upstream, holder, expires_at)` taken or renewed by one statement
//! that succeeds only when the row is free, expired, or already the caller's; times are
//! the database's clock alone, so servers' clocks never have to agree. The holder renews
//! well before expiry and counts its lease valid only until `ttl` after it SENT the
//! renewal (the database's `expires_at` is later than that), so it stops driving before
//! any other server can take over. A clean shutdown gives the row up at once.
//!
//! Invariant: at most one holder of an unexpired row per upstream; what a holder does
//! with the upstream is guarded again in the log (a claim is a row there: see
//! `domain::delegation::outstanding_submission`), so even a stalled holder that missed
//! its expiry cannot make a second POST.

use std::sync::Mutex;
use std::time::Duration;

use super::conn::{Backoff, PgTarget, Slot};
use crate::domain::OqError;

const TAKE: &str = "INSERT INTO oq.bridge_leases (upstream, holder, expires_at)
     VALUES ($1, $2, now() + make_interval(secs => $3::float8 / 1000))
     ON CONFLICT (upstream) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
     WHERE oq.bridge_leases.holder = EXCLUDED.holder OR oq.bridge_leases.expires_at < now()
     RETURNING holder";
const HOLDER: &str = "SELECT holder FROM oq.bridge_leases WHERE upstream = $1";
const GIVE_UP: &str = "DELETE FROM oq.bridge_leases WHERE upstream = $1 AND holder = $2";

/// The leases of one server, on a connection of their own (a renewal never waits behind
/// the writer's batch).
pub struct Leases {
    target: PgTarget,
    slot: Mutex<Slot>,
    backoff: Backoff,
}

/// What a take says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lease {
    /// Ours until `ttl` after the statement was sent.
    Held,
    /// Another server's (its holder id), or free again by the time we asked (`None`).
    Elsewhere(Option<String>),
}

impl Leases {
    pub fn new(target: PgTarget) -> Leases {
        Leases {
            target,
            slot: Mutex::new(Slot::empty()),
            backoff: Backoff::default(),
        }
    }

    /// Takes or renews `upstream`'s lease for `holder` for `ttl`.
    pub fn take(&self, upstream: &str, holder: &str, ttl: Duration) -> Result<Lease, OqError> {
        let ms = ttl.as_millis() as f64;
        let rows = self.with(|c| c.query(TAKE, &[&upstream, &holder, &ms]))?;
        if !rows.is_empty() {
            return Ok(Lease::Held);
        }
        let rows = self.with(|c| c.query(HOLDER, &[&upstream]))?;
        Ok(Lease::Elsewhere(rows.first().map(|r| r.get(0))))
    }

    /// Gives `upstream`'s lease up, if `holder` still has it (a clean shutdown).
    pub fn give_up(&self, upstream: &str, holder: &str) -> Result<(), OqError> {
        self.with(|c| c.query(GIVE_UP, &[&upstream, &holder]))
            .map(|_| ())
    }

    pub(super) fn with<T>(
        &self,
        f: impl FnOnce(&mut super::Conn) -> Result<T, OqError>,
    ) -> Result<T, OqError> {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        let out = f(slot.get(&self.target, &self.backoff)?);
        if out.is_err() {
            // A failed statement may have left the connection unusable: a fresh one next.
            slot.reset();
        }
        out
    }
}
