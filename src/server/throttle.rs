//! What one caller may hold or try: failed authentications per address per minute, and
//! event streams per token. Both are counted in memory (a restart forgets them, which
//! costs an attacker nothing they could not get by waiting a minute).
//!
//! Invariant: a right token is never slowed. The limiter counts failures only; a request
//! whose token matches is served whatever its address did before. Tokens are 256 random
//! bits, so the limit is against floods and log noise, not against guessing.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The window failures are counted in.
const WINDOW: Duration = Duration::from_secs(60);
/// Addresses remembered before stale windows are swept.
const SWEEP_AT: usize = 4096;

/// Failed authentications per address, in fixed one-minute windows.
#[derive(Debug)]
pub struct AuthFailures {
    per_minute: u32,
    windows: Mutex<HashMap<Option<IpAddr>, (Instant, u32)>>,
}

impl AuthFailures {
    pub fn new(per_minute: u32) -> Self {
        AuthFailures {
            per_minute,
            windows: Mutex::default(),
        }
    }

    /// Counts one failure of `addr` at `now`: `Ok` to answer 401, `Err(seconds)` when the
    /// address is over its limit until its window ends (429, `Retry-After: seconds`).
    pub fn fail(&self, addr: Option<IpAddr>, now: Instant) -> Result<(), u64> {
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        if windows.len() >= SWEEP_AT {
            windows.retain(|_, (start, _)| now.duration_since(*start) < WINDOW);
        }
        let (start, count) = windows.entry(addr).or_insert((now, 0));
        if now.duration_since(*start) >= WINDOW {
            (*start, *count) = (now, 0);
        }
        *count = count.saturating_add(1);
        if *count <= self.per_minute {
            return Ok(());
        }
        let left = WINDOW.saturating_sub(now.duration_since(*start));
        Err(left.as_secs().max(1))
    }
}

/// Event streams held per token (per user: one token each).
#[derive(Debug, Clone)]
pub struct StreamSlots {
    max: usize,
    held: Arc<Mutex<HashMap<String, usize>>>,
}

/// One held stream; dropping it (the stream ended or its client went) frees the slot.
#[derive(Debug)]
pub struct StreamSlot {
    user: String,
    held: Arc<Mutex<HashMap<String, usize>>>,
}

impl StreamSlots {
    pub fn new(max: usize) -> Self {
        StreamSlots {
            max,
            held: Arc::default(),
        }
    }

    /// A slot for `user`, or `None` when they hold the maximum already.
    pub fn enter(&self, user: &str) -> Option<StreamSlot> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let n = held.entry(user.to_string()).or_insert(0);
        if *n >= self.max {
            return None;
        }
        *n += 1;
        Some(StreamSlot {
            user: user.to_string(),
            held: self.held.clone(),
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = held.get_mut(&self.user) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.user);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_beyond_the_limit_wait_for_the_window_and_addresses_are_apart() {
        let limiter = AuthFailures::new(2);
        let (a, b) = (
            Some(IpAddr::from([10, 0, 0, 1])),
            Some(IpAddr::from([10, 0, 0, 2])),
        );
        let t0 = Instant::now();
        assert_eq!(limiter.fail(a, t0), Ok(()));
        assert_eq!(limiter.fail(a, t0), Ok(()));
        assert_eq!(limiter.fail(a, t0 + Duration::from_secs(20)), Err(40));
        assert_eq!(
            limiter.fail(b, t0),
            Ok(()),
            "another address has its own count"
        );
        assert_eq!(limiter.fail(a, t0 + WINDOW), Ok(()), "a new window");
    }

    #[test]
    fn a_stream_slot_is_freed_when_dropped() {
        let slots = StreamSlots::new(1);
        let held = slots.enter("ana").expect("first");
        assert!(slots.enter("ana").is_none());
        assert!(slots.enter("bia").is_some(), "per token");
        drop(held);
        assert!(slots.enter("ana").is_some());
    }
}
