//! Damage detection: what `oq store check` runs, and what `oq serve` runs at start in
//! its quick form. A store is checked against its own log: SQLite's `integrity_check`
//! for the file's structure, the schema against the one the migrations write, and every
//! index the engine reads (the open set, the links, the one-settlement rule, sessions)
//! recomputed from the events alone.

pub mod schema;
