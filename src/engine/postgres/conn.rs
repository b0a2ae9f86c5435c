//! Connections to the database: where to connect (the password never in the URL, never
//! logged), one connection with its prepared statements, the errors mapped to the
//! domain's, and a shared backoff so a lost database is asked again calmly.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use postgres::types::ToSql;
use postgres::{Client, NoTls, Row, Statement};

use super::ahead::Ahead;

use crate::domain::{ErrorCode, OqError};

/// How long a connection attempt may take before the database counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The first wait after a failed connection, doubled per failure up to [`BACKOFF_MAX`].
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// Where the store lives: a `postgres://` URL without a password, and the password given
/// apart (from an environment variable or a file), so neither the config file nor a log
/// line ever holds it.
#[derive(Clone)]
pub struct PgTarget {
    /// Shared: a target is cloned into every thread that connects.
    config: std::sync::Arc<postgres::Config>,
    /// `user@host:port/dbname`: what messages and logs name.
    shown: String,
}

impl std::fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgTarget({})", self.shown)
    }
}

/// Is `store` a PostgreSQL URL (rather than a SQLite data dir)?
pub fn is_postgres_url(store: &str) -> bool {
    store.starts_with("postgres://") || store.starts_with("postgresql://")
}

impl PgTarget {
    /// Parses `url`; refuses one that carries a password (give it apart).
    pub fn parse(url: &str, password: Option<String>) -> Result<PgTarget, String> {
        if !is_postgres_url(url) {
            return Err("the store URL must start with postgres:// or postgresql://".into());
        }
        let mut config: postgres::Config = url
            .parse()
            .map_err(|e| format!("the store URL is not a PostgreSQL URL: {e}"))?;
        if config.get_password().is_some() {
            return Err(
                "the store URL carries a password; give it in store_password_env or store_password_file instead"
                    .into(),
            );
        }
        if config.get_user().is_none() {
            return Err("the store URL names no user (postgres://USER@HOST/DB)".into());
        }
        if let Some(p) = password {
            config.password(p);
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        config.application_name("oq");
        let host = config
            .get_hosts()
            .first()
            .map(|h| match h {
                postgres::config::Host::Tcp(name) => name.clone(),
                #[cfg(unix)]
                postgres::config::Host::Unix(path) => path.display().to_string(),
            })
            .unwrap_or_else(|| "localhost".into());
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let shown = format!(
            "postgres://{}@{host}:{port}/{}",
            config.get_user().unwrap_or_default(),
            config
                .get_dbname()
                .or(config.get_user())
                .unwrap_or_default()
        );
        Ok(PgTarget {
            config: std::sync::Arc::new(config),
            shown,
        })
    }

    /// The URL without any secret, for messages and logs.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    pub fn user(&self) -> &str {
        self.config.get_user().unwrap_or_default()
    }

    pub fn connect(&self) -> Result<Conn, OqError> {
        let client = self
            .config
            .connect(NoTls)
            .map_err(|e| unavailable(self, &e))?;
        Ok(Conn {
            client,
            statements: HashMap::new(),
            failed: None,
            ahead: Ahead::default(),
        })
    }
}

/// The password for `store`, read from the environment variable or file named in the
/// configuration (a trailing newline of the file is not part of it).
pub fn read_password(
    env: Option<&str>,
    file: Option<&std::path::Path>,
) -> Result<Option<String>, String> {
    match (env, file) {
        (Some(_), Some(_)) => {
            Err("give store_password_env or store_password_file, not both".into())
        }
        (Some(var), None) => std::env::var(var)
            .map(Some)
            .map_err(|_| format!("the environment variable {var} (store_password_env) is not set")),
        (None, Some(path)) => std::fs::read_to_string(path)
            .map(|s| Some(s.trim_end_matches(['\n', '\r']).to_string()))
            .map_err(|e| format!("cannot read store_password_file {}: {e}", path.display())),
        (None, None) => Ok(None),
    }
}

/// One connection and the statements prepared on it.
pub struct Conn {
    client: Client,
    statements: HashMap<String, Statement>,
    /// The first database error inside the current transaction: PostgreSQL refuses
    /// everything after it until the transaction ends.
    pub failed: Option<OqError>,
    /// The writer's batch: rows held back until the next query, questions read ahead.
    pub ahead: Ahead,
}

impl Conn {
    fn statement(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql)?;
        self.statements.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    /// Runs `sql` (prepared once per connection) with `params`.
    pub fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, OqError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.flush()?;
        let result = self
            .statement(sql)
            .and_then(|s| self.client.query(&s, params));
        result.map_err(|e| {
            let e = to_domain(&e);
            self.failed = Some(e.clone());
            e
        })
    }

    /// Statements in one round trip (simple protocol: no parameters), rows as text.
    pub fn simple(&mut self, sql: &str) -> Result<Vec<postgres::SimpleQueryMessage>, OqError> {
        self.flush()?;
        self.client.simple_query(sql).map_err(|e| to_domain(&e))
    }

    pub fn batch(&mut self, sql: &str) -> Result<(), OqError> {
        self.flush()?;
        self.client.batch_execute(sql).map_err(|e| to_domain(&e))
    }

    /// Sends the rows held back ([`Ahead::pending`]); an error is the transaction's
    /// (`failed`), as any query's. In a transaction that has failed already they are
    /// dropped: nothing of it can be saved, and its ROLLBACK must still go out.
    pub fn flush(&mut self) -> Result<(), OqError> {
        if self.failed.is_some() {
            self.ahead.pending.clear();
        }
        if self.ahead.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.ahead.pending);
        super::writer::insert_pending(self, &pending)
    }

    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }
}

/// The code for "the database cannot be used right now": HTTP 503, writes refused, the
/// caller may retry (with its idempotency key).
pub const UNAVAILABLE: ErrorCode = ErrorCode::StoreUnavailable;

fn unavailable(target: &PgTarget, e: &postgres::Error) -> OqError {
    OqError::store(
        UNAVAILABLE,
        format!("the database {} cannot be reached: {e}", target.shown()),
    )
}

/// A database error as the domain's: a lost connection is `store_unavailable`, a unique
/// index of the log is a lost race, the schema's own refusals say so.
pub fn to_domain(e: &postgres::Error) -> OqError {
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        if code == "23505" && db.table() == Some("events") {
            return OqError::conflict(
                ErrorCode::DuplicateEvent,
                "another writer recorded this question event first",
            );
        }
        // Connection-class errors (08…), shutdowns (57P…), too many connections (53300).
        if code.starts_with("08") || code.starts_with("57P") || code == "53300" {
            return OqError::store(
                UNAVAILABLE,
                format!("the database is unavailable: {}", db.message()),
            );
        }
        return OqError::Internal(format!("store: {}", db.message()));
    }
    if e.is_closed() || std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>()) {
        return OqError::store(
            UNAVAILABLE,
            format!("the database connection was lost: {e}"),
        );
    }
    OqError::Internal(format!("store: {e}"))
}

pub fn is_unavailable(e: &OqError) -> bool {
    matches!(e, OqError::Store { code, .. } if *code == UNAVAILABLE)
}

/// Reconnection pacing shared by a store's connections: after a failure nobody tries
/// again before the wait is over (refusing fast meanwhile), and each failure doubles it.
pub struct Backoff {
    state: Mutex<(Duration, Option<Instant>)>,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            state: Mutex::new((BACKOFF_MIN, None)),
        }
    }
}

impl Backoff {
    /// May a connection be attempted now?
    pub fn ready(&self) -> bool {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.1.is_none_or(|next| Instant::now() >= next)
    }

    pub fn failed(&self) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let wait = s.0;
        *s = ((wait * 2).min(BACKOFF_MAX), Some(Instant::now() + wait));
    }

    pub fn succeeded(&self) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = (BACKOFF_MIN, None);
    }

    /// How long until the next attempt may be made.
    pub fn remaining(&self) -> Duration {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.1.map(|next| next.saturating_duration_since(Instant::now()))
            .unwrap_or_default()
    }
}

/// A connection slot: connected on first use and again after a loss, paced by `backoff`.
pub struct Slot {
    conn: Option<Conn>,
}

impl Slot {
    pub const fn empty() -> Self {
        Slot { conn: None }
    }

    pub fn get(&mut self, target: &PgTarget, backoff: &Backoff) -> Result<&mut Conn, OqError> {
        if self.conn.as_ref().is_some_and(Conn::is_closed) {
            self.conn = None;
        }
        if self.conn.is_none() {
            if !backoff.ready() {
                return Err(OqError::store(
                    UNAVAILABLE,
                    format!(
                        "the database {} is unreachable; next attempt in {} ms",
                        target.shown(),
                        backoff.remaining().as_millis()
                    ),
                ));
            }
            match target.connect() {
                Ok(c) => {
                    backoff.succeeded();
                    self.conn = Some(c);
                }
                Err(e) => {
                    backoff.failed();
                    return Err(e);
                }
            }
        }
        self.conn
            .as_mut()
            .ok_or_else(|| OqError::Internal("no connection".into()))
    }

    /// Whether a connection is held (it may still turn out dead when next used).
    pub fn is_connected(&self) -> bool {
        self.conn.is_some()
    }

    /// Forgets the connection (after an error that may have left it unusable).
    pub fn reset(&mut self) {
        self.conn = None;
    }
}
