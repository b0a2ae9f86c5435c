//! The bridge: `oq serve`'s OpenCode upstreams (SPEC §5, seed 002).
//!
//! - [`delegate`]: the pure auto-delegate state machine (timers, the single-flight claim,
//!   upstream outcomes, settings, reconcile). No IO, no clock, no async.

pub mod delegate;
