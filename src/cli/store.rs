//! `oq store …`: for the local store, `init` makes a new, empty one deliberately (the
//! only way to replace a lost one); for the team store, `migrate` sets up (or brings
//! forward) a PostgreSQL database and grants the serving role; `copy` moves a whole log
//! between a SQLite data dir and PostgreSQL, either way, verified event by event.
//!
//! A PostgreSQL password never goes on the command line or in the URL: it comes from
//! `OQ_STORE_PASSWORD` or `--password-file`.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::args::GlobalArgs;
use super::store_local;
use crate::domain::error::exit;
use crate::domain::{ErrorCode, OqError};
use crate::engine::SqliteStore;
use crate::engine::copy::{self, Endpoint};
use crate::engine::postgres::{self, PgTarget, SchemaState, is_postgres_url, read_password};
use crate::engine::sqlite::{Initialised, STORE_FILE};

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Make a new, empty local store in the data dir. An oq store already there is left
    /// as it is; the leftovers of a lost one (an empty `oq.sqlite3`, a `-wal` without
    /// its store) are moved aside to `….lost-<ms>` first.
    Init,
    /// Check the local store: SQLite's integrity_check, the schema, every index against
    /// the log recomputed alone, and the hash chains. Exit 0 sound, 14 damaged.
    Check {
        /// The quick form `oq serve` runs at start (quick_check, no chain walk).
        #[arg(long)]
        quick: bool,
    },
    /// Walk every project's hash chain and name the first event edited, deleted,
    /// inserted or reordered by hand. Exit 0 intact, 14 tampered.
    Verify(VerifyArgs),
    /// Print each project's chain head (events, newest link), to keep elsewhere.
    Head(VerifyArgs),
    /// Copy the local store to FILE (which must not exist) while it is in use — one
    /// consistent moment, checked whole (chains too) before it is put in place.
    Backup {
        /// Where the copy goes: restore it as `<data dir>/oq.sqlite3` (README).
        file: PathBuf,
    },
    /// Create or bring forward the oq schema in a PostgreSQL database (as its owner), and
    /// grant the role `oq serve` uses reading and appending only.
    Migrate(MigrateArgs),
    /// Copy a whole store — every event with its positions — into an empty one, then
    /// verify it event by event: a SQLite data dir into PostgreSQL, or back.
    Copy(CopyArgs),
}

#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The database, as its owner: postgres://OWNER@HOST:PORT/DB (no password in it).
    #[arg(long, value_name = "URL")]
    pub to: String,
    /// The role `oq serve` connects as: granted SELECT and INSERT on the log, nothing that
    /// could alter it.
    #[arg(long, value_name = "ROLE")]
    pub grant: Option<String>,
    #[command(flatten)]
    pub password: PasswordArgs,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// A PostgreSQL store instead of the local one: postgres://USER@HOST:PORT/DB (any
    /// role that can read the log).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    #[command(flatten)]
    pub password: PasswordArgs,
}

#[derive(Debug, Args)]
pub struct CopyArgs {
    /// Where from: a SQLite data dir, or postgres://USER@HOST:PORT/DB.
    #[arg(long, value_name = "DIR|URL")]
    pub from: String,
    /// Where to (an empty store): a data dir, or postgres://USER@HOST:PORT/DB (migrated,
    /// with the serving role).
    #[arg(long, value_name = "DIR|URL")]
    pub to: String,
    #[command(flatten)]
    pub password: PasswordArgs,
}

#[derive(Debug, Args)]
pub struct PasswordArgs {
    /// A file holding the PostgreSQL password (else `OQ_STORE_PASSWORD`, else none).
    #[arg(long, value_name = "FILE")]
    pub password_file: Option<PathBuf>,
}

impl PasswordArgs {
    fn target(&self, url: &str) -> Result<PgTarget, OqError> {
        let env = std::env::var_os("OQ_STORE_PASSWORD")
            .is_some()
            .then_some("OQ_STORE_PASSWORD");
        let password = match (&self.password_file, env) {
            (Some(file), _) => read_password(None, Some(file)),
            (None, env) => read_password(env, None),
        }
        .map_err(|m| OqError::invalid(ErrorCode::InvalidConfig, m))?;
        PgTarget::parse(url, password).map_err(|m| OqError::invalid(ErrorCode::InvalidConfig, m))
    }

    fn endpoint(&self, s: &str) -> Result<Endpoint, OqError> {
        if is_postgres_url(s) {
            self.target(s).map(Endpoint::Postgres)
        } else {
            Ok(Endpoint::Sqlite(Path::new(s).to_path_buf()))
        }
    }
}

/// Runs `oq store …`; returns the exit code.
pub fn run(command: StoreCommand, global: &GlobalArgs) -> i32 {
    let json = global.json;
    let outcome = match command {
        StoreCommand::Init => init(global),
        StoreCommand::Check { quick } => {
            return finish(
                json,
                local(global).and_then(|d| store_local::check(&d, quick, json)),
            );
        }
        StoreCommand::Verify(VerifyArgs {
            store: Some(url),
            password,
        }) => {
            let verified = password.target(&url).and_then(|t| {
                let v = postgres::chain::verify(&t)?;
                Ok(store_local::report_verified(t.shown(), &v, json))
            });
            return finish(json, verified);
        }
        StoreCommand::Verify(_) => {
            return finish(
                json,
                local(global).and_then(|d| store_local::verify(&d, json)),
            );
        }
        StoreCommand::Backup { file } => {
            return finish(
                json,
                local(global).and_then(|d| store_local::backup(&d, &file, json)),
            );
        }
        StoreCommand::Head(VerifyArgs {
            store: Some(url),
            password,
        }) => {
            let heads = password
                .target(&url)
                .and_then(|t| postgres::chain::heads(&t))
                .map(|h| store_local::report_heads(&h, json));
            return finish(json, heads);
        }
        StoreCommand::Head(_) => {
            return finish(
                json,
                local(global).and_then(|d| store_local::head(&d, json)),
            );
        }
        StoreCommand::Migrate(m) => migrate(&m, json),
        StoreCommand::Copy(c) => copy_store(&c, json),
    };
    match outcome {
        Ok(()) => exit::OK,
        Err(e) => {
            super::context::report_error(json, &e);
            e.exit_code()
        }
    }
}

fn finish(json: bool, outcome: Result<i32, OqError>) -> i32 {
    outcome.unwrap_or_else(|e| {
        super::context::report_error(json, &e);
        e.exit_code()
    })
}

/// The local data dir, which must already hold a store: checking never makes one.
fn local(global: &GlobalArgs) -> Result<PathBuf, OqError> {
    let dir = super::context::data_dir(global)?;
    if !dir.join(STORE_FILE).exists() {
        return Err(OqError::store(
            ErrorCode::NotAnOqStore,
            format!("{} holds no oq store ({STORE_FILE})", dir.display()),
        ));
    }
    Ok(dir)
}

fn init(global: &GlobalArgs) -> Result<(), OqError> {
    let dir = super::context::data_dir(global)?;
    let store = dir.join(STORE_FILE);
    let done = SqliteStore::init_in(&dir)?;
    let moved = match &done {
        Initialised::Created { moved_aside } => moved_aside.clone(),
        Initialised::AlreadyThere => Vec::new(),
    };
    if global.json {
        println!(
            "{}",
            serde_json::json!({
                "store": store,
                "created": done != Initialised::AlreadyThere,
                "movedAside": moved,
            })
        );
        return Ok(());
    }
    for m in &moved {
        println!("moved the lost store's {} aside", m.display());
    }
    match done {
        Initialised::Created { .. } => println!("{}: a new, empty oq store", store.display()),
        Initialised::AlreadyThere => {
            println!("{}: already an oq store; left as it is", store.display())
        }
    }
    Ok(())
}

fn migrate(m: &MigrateArgs, json: bool) -> Result<(), OqError> {
    let target = m.password.target(&m.to)?;
    let found = postgres::migrate(&target, m.grant.as_deref())?;
    let from = match found {
        SchemaState::At(v) => v,
        _ => 0,
    };
    let to = postgres::schema::LATEST_VERSION;
    if json {
        println!(
            "{}",
            serde_json::json!({ "store": target.shown(), "fromVersion": from, "version": to, "granted": m.grant })
        );
    } else {
        match from {
            0 => println!(
                "{}: oq store created at schema version {to}",
                target.shown()
            ),
            v if v == to => println!("{}: already at schema version {to}", target.shown()),
            v => println!("{}: schema version {v} → {to}", target.shown()),
        }
        if let Some(role) = &m.grant {
            println!("granted {role} reading and appending (no UPDATE, DELETE or TRUNCATE)");
        }
    }
    Ok(())
}

fn copy_store(c: &CopyArgs, json: bool) -> Result<(), OqError> {
    let (from, to) = (c.password.endpoint(&c.from)?, c.password.endpoint(&c.to)?);
    let done = copy::copy(&from, &to)?;
    if json {
        println!(
            "{}",
            serde_json::json!({ "from": from.describe(), "to": to.describe(), "events": done.events, "verified": done.verified })
        );
    } else {
        println!(
            "copied {} events from {} to {}; verified {} event by event",
            done.events,
            from.describe(),
            to.describe(),
            done.verified
        );
    }
    Ok(())
}
