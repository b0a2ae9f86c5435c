//! `store = "postgres://…"`: where `oq serve` keeps the log. Without it, the SQLite file
//! in `data_dir` (the default). With it, a PostgreSQL database that several servers may
//! share; its password comes from `store_password_env` (the name of an environment
//! variable) or `store_password_file` (a file, relative to the configuration's folder),
//! never from the URL, so the configuration file holds no secret and no log line shows one.

use std::ops::Range;
use std::path::Path;

use toml::Spanned;

use super::ConfigError;
use crate::engine::postgres::{PgTarget, is_postgres_url, read_password};

/// Which store the server opens.
#[derive(Debug, Clone, Default)]
pub enum StoreChoice {
    /// `oq.sqlite3` in `data_dir`.
    #[default]
    Sqlite,
    /// A PostgreSQL database (its target holds the password, never shown).
    Postgres(PgTarget),
}

/// The `store*` keys as written.
pub struct RawStore<'a> {
    pub store: Option<&'a Spanned<String>>,
    pub password_env: Option<&'a Spanned<String>>,
    pub password_file: Option<&'a Spanned<String>>,
}

pub fn parse_store(
    raw: RawStore<'_>,
    config_path: &Path,
    err: &dyn Fn(Option<Range<usize>>, String) -> ConfigError,
) -> Result<StoreChoice, ConfigError> {
    let Some(store) = raw.store else {
        if let Some(k) = raw.password_env.or(raw.password_file) {
            return Err(err(
                Some(k.span()),
                "a store password is given but no store = \"postgres://…\"".into(),
            ));
        }
        return Ok(StoreChoice::Sqlite);
    };
    let url = store.get_ref();
    if !is_postgres_url(url) {
        return Err(err(
            Some(store.span()),
            format!(
                "store {:?}: expected postgres://USER@HOST:PORT/DB (leave it out for the SQLite store in data_dir)",
                shorten(url)
            ),
        ));
    }
    let file = raw.password_file.map(|f| {
        let p = Path::new(f.get_ref());
        if p.is_relative() {
            config_path.parent().unwrap_or(Path::new(".")).join(p)
        } else {
            p.to_path_buf()
        }
    });
    let password = read_password(
        raw.password_env.map(|e| e.get_ref().as_str()),
        file.as_deref(),
    )
    .map_err(|m| err(raw.password_env.or(raw.password_file).map(|k| k.span()), m))?;
    PgTarget::parse(url, password)
        .map(StoreChoice::Postgres)
        .map_err(|m| err(Some(store.span()), m))
}

/// The start of a value that was not a URL, without anything that could be a secret.
fn shorten(s: &str) -> String {
    s.split(['@', ':'])
        .next()
        .unwrap_or_default()
        .chars()
        .take(40)
        .collect()
}
