//! The state of the screens over the queue — the Decisions view, triage's marks and
//! review, the snooze prompt and the snoozed list — as data the model holds. The keys
//! that drive them are `decisions/`, `triage/` and `snooze.rs`, above the model; these
//! types sit below it, so the model names them without an import cycle.

pub mod decision_filter;
pub mod decisions;
pub mod memory;
pub mod snooze;
pub mod triage;
