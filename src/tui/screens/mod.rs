//! The state of the screens over the queue — the Decisions view and triage's marks and
//! review — as data the model holds. The keys that drive them are `decisions/` and
//! `triage/`, above the model; these types sit below it, so the model names them without
//! an import cycle.

pub mod decision_filter;
pub mod decisions;
pub mod memory;
pub mod triage;
