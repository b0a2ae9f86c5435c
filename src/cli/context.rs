//! What every door needs before it acts: the engine, who is acting, which project, and
//! how to print.

use std::path::PathBuf;

use serde::Serialize;

use super::args::GlobalArgs;
use crate::domain::{Actor, OqError, Role};
use crate::engine::{EngineConfig, LocalEngine, SqliteStore};
use crate::wire::ErrorBody;

pub struct Context {
    pub global: GlobalArgs,
    pub engine: LocalEngine,
    pub user: String,
}

impl Context {
    pub fn open(global: GlobalArgs) -> Result<Self, OqError> {
        if global.source != "local" {
            return Err(OqError::invalid(
                "unknown_source",
                format!(
                    "source {:?} is not supported by this build; use `local`",
                    global.source
                ),
            ));
        }
        let dir = data_dir(&global)?;
        let store = SqliteStore::open_in(&dir)?;
        let user = global.as_user.clone().unwrap_or_else(os_user);
        crate::domain::text::check_id("--as", &user)?;
        Ok(Context {
            global,
            engine: LocalEngine::new(store, EngineConfig::default()),
            user,
        })
    }

    pub fn person(&self) -> Actor {
        Actor::person(&self.user)
    }

    /// The project named by `--project`, else the only one in the store, else `default`
    /// when the store has none; with several and none named, asks which.
    pub fn project(&self) -> Result<String, OqError> {
        if let Some(p) = &self.global.project {
            crate::domain::text::check_id("--project", p)?;
            return Ok(p.clone());
        }
        let projects = self.engine.read(|v| v.projects())?;
        match projects.as_slice() {
            [] => Ok("default".into()),
            [only] => Ok(only.clone()),
            many => Err(OqError::invalid(
                "project_required",
                format!(
                    "several projects in this store; name one with --project ({})",
                    many.join(", ")
                ),
            )),
        }
    }

    /// The project filter for reads: `--project` if given, else every project.
    pub fn project_filter(&self) -> Option<&str> {
        self.global.project.as_deref()
    }

    pub fn emit<T: Serialize>(&self, value: &T, human: impl FnOnce() -> String) {
        if self.global.json {
            println!(
                "{}",
                serde_json::to_string_pretty(value)
                    .unwrap_or_else(|e| format!("{{\"code\":\"internal\",\"message\":\"{e}\"}}"))
            );
        } else {
            print!("{}", human());
        }
    }
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
                "no_data_dir",
                "no home directory to put the store in; pass --data-dir",
            )
        })
}

fn os_user() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "me".into())
}
