//! What every door needs before it acts: the source, who is acting, which project, and
//! how to print.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use super::args::GlobalArgs;
use crate::domain::text::check_id;
use crate::domain::{Actor, ErrorCode, OqError, Role};
use crate::engine::{EngineConfig, LocalEngine, SqliteStore};
use crate::opencode::Auth;
use crate::source::opencode::{self, OpencodeSource};
use crate::source::{AnySource, HttpSource, LocalSource, ResilientSource, Source, profile};
use crate::wire::ErrorBody;

pub struct Context {
    pub global: GlobalArgs,
    pub source: AnySource,
    /// The acting person in local mode (`--as`, else the OS user).
    pub user: String,
    /// The project named by `--project` or the profile.
    project: Option<String>,
}

impl Context {
    pub fn open(global: GlobalArgs) -> Result<Self, OqError> {
        let profile = profile_of(&global)?;
        let project = global.project.clone().or(profile.project.clone());
        if let Some(p) = &project {
            check_id("--project", p)?;
        }
        let source_name = source_name(&global, &profile);
        let user = global.as_user.clone().unwrap_or_else(os_user);
        check_id("--as", &user)?;
        let source = if source_name == "local" {
            let store = SqliteStore::open_in(&data_dir(&global)?)?;
            if let Some((from, to)) = store.migrated() {
                eprintln!(
                    "oq: migrated the store {} from schema v{from} to v{to} (once)",
                    store.path().display()
                );
            }
            let engine = Arc::new(LocalEngine::new(store, EngineConfig::default()));
            AnySource::Local(LocalSource::new(engine, user.clone()))
        } else if source_name.starts_with("http://") || source_name.starts_with("https://") {
            if global.as_user.is_some() {
                return Err(OqError::invalid(
                    ErrorCode::AsIsLocal,
                    "--as acts as another person in local mode only; a server knows you by your token",
                ));
            }
            let token = global
                .token
                .clone()
                .or(profile.token.clone())
                .unwrap_or_default();
            // Offline mirror + outbox in the data dir (src/source/resilient.rs).
            let http = HttpSource::with_ca(&source_name, &token, profile.ca.as_deref())?;
            AnySource::Resilient(ResilientSource::new(http, &data_dir(&global)?)?)
        } else if let Some(base) = source_name.strip_prefix(opencode::SCHEME) {
            // The person who answers: `--as`, else the OS user.
            let directories = if !global.directories.is_empty() {
                global.directories.clone()
            } else if !profile.directories.is_empty() {
                profile.directories.clone()
            } else {
                vec![".".into()]
            };
            let directories = directories
                .iter()
                .map(|d| absolute_dir(d))
                .collect::<Result<Vec<_>, _>>()?;
            let auth = Auth::resolve(profile.username.as_deref(), profile.password.as_deref());
            AnySource::Opencode(OpencodeSource::new(base, directories, &user, auth)?)
        } else {
            return Err(OqError::invalid(
                ErrorCode::UnknownSource,
                format!(
                    "source {source_name:?}: expected local, http://HOST:PORT or \
                     opencode+http://HOST:PORT"
                ),
            ));
        };
        Ok(Context {
            global,
            source,
            user,
            project,
        })
    }

    /// The embedded engine, for the doors that only exist locally (stories, tasks, demo).
    pub fn local(&self, door: &str) -> Result<&Arc<LocalEngine>, OqError> {
        match &self.source {
            AnySource::Local(l) => Ok(l.engine()),
            other => Err(OqError::invalid(
                ErrorCode::LocalOnly,
                format!(
                    "{door} works on the local engine; {} is a server: use its HTTP API",
                    other.describe()
                ),
            )),
        }
    }

    /// The project named by `--project` (or the profile), else the only one visible, else
    /// `default` when none exists yet; with several and none named, asks which.
    pub async fn project(&self) -> Result<String, OqError> {
        if let Some(p) = &self.project {
            return Ok(p.clone());
        }
        let identity = self.source.identity().await?;
        match identity.projects.as_slice() {
            [] => Ok("default".into()),
            [only] => Ok(only.clone()),
            many => Err(OqError::invalid(
                ErrorCode::ProjectRequired,
                format!(
                    "several projects; name one with --project ({})",
                    many.join(", ")
                ),
            )),
        }
    }

    /// The project filter for reads: the one named, else every project the source can
    /// span (the local engine spans all; a server needs one and picks it itself).
    pub fn project_filter(&self) -> Option<&str> {
        self.project.as_deref()
    }

    pub fn emit<T: Serialize>(&self, value: &T, human: impl FnOnce() -> String) {
        if self.global.json {
            match serde_json::to_string_pretty(value) {
                Ok(text) => println!("{text}"),
                Err(e) => report_error(true, &OqError::Internal(e.to_string())),
            }
        } else {
            print!("{}", human());
        }
    }
}

/// The `--profile` named, or none.
fn profile_of(global: &GlobalArgs) -> Result<profile::Profile, OqError> {
    match &global.profile {
        Some(name) => {
            let dir = profile::config_dir().ok_or_else(|| {
                OqError::invalid(
                    ErrorCode::UnknownProfile,
                    "no config dir to read profiles from",
                )
            })?;
            profile::load(&dir, name)
        }
        None => Ok(profile::Profile::default()),
    }
}

fn source_name(global: &GlobalArgs, profile: &profile::Profile) -> String {
    global
        .source
        .clone()
        .or(profile.source.clone())
        .unwrap_or_else(|| "local".into())
}

/// An `oq serve` a door talks to itself (`oq mcp --source http://…` relays MCP to it).
pub struct Remote {
    pub base: String,
    pub token: String,
    pub project: Option<String>,
    pub ca: Option<PathBuf>,
}

/// The server `--source`/`--profile` name, with its token; `None` for any other source.
pub fn remote(global: &GlobalArgs) -> Result<Option<Remote>, OqError> {
    let profile = profile_of(global)?;
    let base = source_name(global, &profile);
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Ok(None);
    }
    let token = global
        .token
        .clone()
        .or(profile.token.clone())
        .unwrap_or_default();
    if token.is_empty() {
        return Err(OqError::Source {
            code: ErrorCode::Unauthorized,
            message: format!("{base} needs a token: --token, OQ_TOKEN, or a profile"),
        });
    }
    Ok(Some(Remote {
        base: base.trim_end_matches('/').to_string(),
        token,
        project: global.project.clone().or(profile.project.clone()),
        ca: profile.ca.clone(),
    }))
}

/// The acting agent for a door that agents use; an unknown role is refused by name.
pub fn agent(role: &str) -> Result<Actor, OqError> {
    Ok(Actor::agent(role.parse::<Role>()?))
}

/// Prints a refusal: one line on stderr naming the reason, and the `{code, message}` body
/// on stdout under `--json` so a script reads it where it reads results.
pub fn report_error(json: bool, e: &OqError) {
    eprintln!("oq: {}: {e}", e.code());
    if json {
        println!(
            "{}",
            serde_json::to_string(&ErrorBody::from(e)).unwrap_or_default()
        );
    }
}

pub fn data_dir(global: &GlobalArgs) -> Result<PathBuf, OqError> {
    if let Some(d) = &global.data_dir {
        return Ok(d.clone());
    }
    directories::ProjectDirs::from("", "", "oq")
        .map(|d| d.data_dir().to_path_buf())
        .ok_or_else(|| {
            OqError::store(
                ErrorCode::NoDataDir,
                "no home directory to put the store in; pass --data-dir",
            )
        })
}

/// OpenCode scopes questions by exact absolute path: a relative `--directory` is taken
/// from the current directory (`.` is the current directory itself, without a trailing
/// `/.`).
fn absolute_dir(dir: &str) -> Result<String, OqError> {
    let path = std::path::Path::new(dir);
    let abs = std::path::absolute(path).map_err(|e| {
        OqError::invalid(
            ErrorCode::InvalidDirectory,
            format!("--directory {dir:?}: cannot make it absolute: {e}"),
        )
    })?;
    let mut text = abs.to_string_lossy().into_owned();
    while text.len() > 1 && (text.ends_with('/') || text.ends_with("/.")) {
        text.truncate(text.len() - if text.ends_with("/.") { 2 } else { 1 });
    }
    Ok(text)
}

fn os_user() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "me".into())
}
