//! The engine: ADR 0214's operations over an append-only log.
//!
//! Each operation reads what it needs through [`store::StoreView`], lets the pure domain
//! decide, and appends the resulting events in the same write transaction, so a decision
//! never rests on a stale read. The server and the local doors call the same operations;
//! who the caller is was settled by the door (membership is the server's check).

pub mod any;
pub mod copy;
pub mod counts;
pub mod decisions;
pub mod fold;
pub mod ids;
pub mod list;
mod operations;
pub mod postgres;
pub mod snoozed;
pub mod sqlite;
pub mod store;

pub use any::{AnyStore, StoreKind};
pub use counts::OpenCounts;
pub use decisions::{DecisionPage, DecisionQuery};
pub use list::{ListQuery, PAGE_LIMIT, SEARCH_TOTAL_CAP, Sort};
pub use operations::{
    DevContext, Engine, EngineConfig, ImportedSettlement, ListPage, NewQuestion, Readiness,
    VerdictInput, VerdictOutcome,
};
pub use postgres::PgStore;
pub use snoozed::{SnoozeFilter, SnoozedCount};
pub use sqlite::SqliteStore;
pub use store::{LogHead, NewEvent, ParkedTask, StatusFilter, Store, StoreView};

/// The engine on the embedded store: what local mode and `oq serve` run.
pub type LocalEngine = Engine<SqliteStore>;

/// The engine `oq serve` runs: on SQLite by default, on PostgreSQL for a team.
pub type ServerEngine = Engine<AnyStore>;
