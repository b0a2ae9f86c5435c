//! The store `oq serve` runs on, chosen by its configuration: the embedded SQLite file
//! (the default) or a PostgreSQL database shared by several servers.
//!
//! An enum rather than a trait object: [`Store`]'s methods are generic (each decision
//! keeps its own types), so the choice is a `match` per call.

use futures_util::future::Either;

use super::postgres::PgStore;
use super::sqlite::SqliteStore;
use super::store::{NewEvent, Store, StoreView};
use crate::domain::{OqError, StoredEvent};

pub enum AnyStore {
    Sqlite(SqliteStore),
    Postgres(PgStore),
}

impl AnyStore {
    /// Whether the store serves: SQLite's own health (damage, a failed flush); a
    /// PostgreSQL database keeps its own, and an unreachable one shows as failing reads.
    pub fn standing(&self) -> super::sqlite::Standing {
        match self {
            AnyStore::Sqlite(s) => s.standing(),
            AnyStore::Postgres(_) => super::sqlite::Standing::Sound,
        }
    }

    /// What `/healthz` and the logs call it.
    pub fn kind(&self) -> StoreKind {
        match self {
            AnyStore::Sqlite(_) => StoreKind::Sqlite,
            AnyStore::Postgres(_) => StoreKind::Postgres,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    Sqlite,
    Postgres,
}

impl Store for AnyStore {
    fn read<T>(&self, f: impl FnOnce(&dyn StoreView) -> Result<T, OqError>) -> Result<T, OqError> {
        match self {
            AnyStore::Sqlite(s) => s.read(f),
            AnyStore::Postgres(s) => s.read(f),
        }
    }

    fn transact<T: Send + 'static>(
        &self,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
    ) -> Result<(Vec<StoredEvent>, T), OqError> {
        match self {
            AnyStore::Sqlite(s) => s.transact(decide),
            AnyStore::Postgres(s) => s.transact(decide),
        }
    }

    fn transact_async<T: Send + 'static>(
        &self,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
    ) -> impl Future<Output = Result<(Vec<StoredEvent>, T), OqError>> + Send {
        match self {
            AnyStore::Sqlite(s) => Either::Left(s.transact_async(decide)),
            AnyStore::Postgres(s) => Either::Right(s.transact_async(decide)),
        }
    }

    fn transact_async_on<T: Send + 'static>(
        &self,
        question_id: &str,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
    ) -> impl Future<Output = Result<(Vec<StoredEvent>, T), OqError>> + Send {
        match self {
            AnyStore::Sqlite(s) => Either::Left(s.transact_async_on(question_id, decide)),
            AnyStore::Postgres(s) => Either::Right(s.transact_async_on(question_id, decide)),
        }
    }
}
