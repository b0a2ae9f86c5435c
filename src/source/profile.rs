//! Named profiles in the config file: where to work and with which token.
//!
//! `<config dir>/config.toml` (the `directories` config dir for oq, or `OQ_CONFIG_DIR`):
//!
//! ```toml
//! [profiles.team]
//! source = "http://oq.internal:7878"
//! token = "…"            # or token_env = "OQ_TEAM_TOKEN"
//! project = "loja"
//!
//! [profiles.agent]
//! source = "opencode+http://127.0.0.1:4096"
//! directories = ["/home/me/code/loja"]
//! username = "opencode"  # OpenCode's basic auth (default user `opencode`)
//! password = "…"         # or OPENCODE_SERVER_PASSWORD / OC_PASSWORD in the environment
//!
//! [profiles.tls]
//! source = "https://oq.internal:7878"
//! ca = "oq-ca.pem"       # trust only this CA (relative to the config dir); default: the system's
//! ```
//!
//! Other tables (`[tui]`, `[keys]`) belong to the TUI and are ignored here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::domain::{ErrorCode, OqError};

pub const CONFIG_FILE: &str = "config.toml";

#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub source: Option<String>,
    pub token: Option<String>,
    /// Read the token from this environment variable instead of the file.
    pub token_env: Option<String>,
    pub project: Option<String>,
    /// An OpenCode source's directories (`--directory` adds to none of them: it replaces).
    #[serde(default)]
    pub directories: Vec<String>,
    /// An OpenCode server's basic-auth user (default `opencode`).
    pub username: Option<String>,
    /// An OpenCode server's basic-auth password.
    pub password: Option<String>,
    /// An `https://` server's CA certificate (PEM), trusted instead of the system's roots;
    /// relative to the config dir.
    pub ca: Option<PathBuf>,
}

/// Secrets (token, password) never show in `Debug`.
impl std::fmt::Debug for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hidden = |s: &Option<String>| s.as_ref().map(|_| "<hidden>");
        f.debug_struct("Profile")
            .field("source", &self.source)
            .field("token", &hidden(&self.token))
            .field("token_env", &self.token_env)
            .field("project", &self.project)
            .field("directories", &self.directories)
            .field("username", &self.username)
            .field("password", &hidden(&self.password))
            .field("ca", &self.ca)
            .finish()
    }
}

#[derive(Debug, Default, Deserialize)]
struct ConfigFile {
    #[serde(default)]
    profiles: BTreeMap<String, Profile>,
}

/// The config dir: `OQ_CONFIG_DIR`, else the platform's (`~/.config/oq` on Linux).
pub fn config_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("OQ_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    directories::ProjectDirs::from("", "", "oq").map(|d| d.config_dir().to_path_buf())
}

/// The profile `name` from the config file in `dir`. A missing file or profile, or a file
/// that does not parse, is an error naming the file (and the line, from toml).
pub fn load(dir: &Path, name: &str) -> Result<Profile, OqError> {
    let path = dir.join(CONFIG_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        OqError::invalid(
            ErrorCode::UnknownProfile,
            format!("profile {name:?}: cannot read {}: {e}", path.display()),
        )
    })?;
    let file: ConfigFile = toml::from_str(&text).map_err(|e| {
        OqError::invalid(
            ErrorCode::InvalidConfig,
            format!("{}: {}", path.display(), e.to_string().trim()),
        )
    })?;
    let mut profile = file.profiles.get(name).cloned().ok_or_else(|| {
        let known: Vec<&str> = file.profiles.keys().map(String::as_str).collect();
        OqError::invalid(
            ErrorCode::UnknownProfile,
            format!(
                "no profile {name:?} in {} (known: {})",
                path.display(),
                known.join(", ")
            ),
        )
    })?;
    if let Some(var) = &profile.token_env {
        profile.token = std::env::var(var).ok().or(profile.token);
    }
    profile.ca = profile.ca.map(|ca| dir.join(ca));
    Ok(profile)
}
