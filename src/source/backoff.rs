//! How long a remote source that could not be reached waits before it tries again
//! (`resilient.rs`): exponential, capped, with jitter, so a TUI polling every second
//! does not hammer a dead host.

use std::time::Duration;

/// The first retry waits about this long; each failure doubles it, up to [`BACKOFF_MAX`].
const BACKOFF_BASE: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// `base` doubled per failure, capped, times a random factor in [0.5, 1.5).
pub(super) fn backoff(failures: u32) -> Duration {
    let exp = BACKOFF_BASE.saturating_mul(1u32 << failures.saturating_sub(1).min(10));
    let capped = exp.min(BACKOFF_MAX);
    let mut b = [0u8; 2];
    let r = getrandom::fill(&mut b).map_or(0.5, |()| f64::from(u16::from_le_bytes(b)) / 65536.0);
    capped.mul_f64(0.5 + r)
}
