//! `oq serve --config FILE`: the TOML of SPEC §3, checked whole before anything starts.
//!
//! Every refusal names the file, the line and the problem, so an operator fixes it in one
//! look; syntax errors take their line from toml's span, semantic ones from the item's.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::domain::text::check_id;
use crate::domain::{Actor, Role};

mod limits;
mod notify;
mod opencode;
mod store;

pub use limits::Limits;
use limits::{RawLimits, parse_limits};
pub use notify::{NotifyKind, NotifyTarget, Secret};
use notify::{RawNotify, parse_notify};
pub use opencode::{DEFAULT_WINDOW_SECONDS, OpencodeUpstream, UpstreamTiming};
use opencode::{RawOpencode, parse_opencode};
pub use store::StoreChoice;
use store::{RawStore, parse_store};

/// The address `oq serve` binds when the file names none: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7878";

/// A loaded, checked configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file it came from (for messages).
    pub path: PathBuf,
    pub listen: SocketAddr,
    /// Logs and bridge settings; the SQLite store too, unless `store` names another.
    pub data_dir: PathBuf,
    /// `store = "postgres://…"`, or the SQLite file in `data_dir`.
    pub store: StoreChoice,
    pub users: Vec<User>,
    pub projects: Vec<Project>,
    /// `[[opencode]]`: the OpenCode servers this one bridges (SPEC §5).
    pub opencode: Vec<OpencodeUpstream>,
    /// `[limits]`: timeouts and caps (defaults without the table).
    pub limits: Limits,
    /// `[[notify]]`: webhooks and ntfy topics told of each new question.
    pub notify: Vec<NotifyTarget>,
    /// `tls_cert` / `tls_key`: serve HTTPS (both or neither).
    pub tls: Option<TlsFiles>,
}

/// The PEM files of the server's certificate chain and its private key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub id: String,
    /// `None` for a person, the role for an agent.
    pub role: Option<Role>,
    /// sha256 of the bearer token; the token itself is never stored.
    pub token_sha256: [u8; 32],
}

impl User {
    pub fn actor(&self) -> Actor {
        match self.role {
            None => Actor::person(&self.id),
            Some(role) => Actor::Agent {
                id: self.id.clone(),
                role,
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    pub id: String,
    /// People.
    pub members: Vec<String>,
    /// Agents.
    pub agents: Vec<String>,
}

/// A configuration refusal: `FILE:LINE: problem`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    listen: Option<Spanned<String>>,
    data_dir: Option<Spanned<String>>,
    store: Option<Spanned<String>>,
    store_password_env: Option<Spanned<String>>,
    store_password_file: Option<Spanned<String>>,
    tls_cert: Option<Spanned<String>>,
    tls_key: Option<Spanned<String>>,
    #[serde(default)]
    users: Vec<RawUser>,
    #[serde(default)]
    projects: Vec<RawProject>,
    #[serde(default)]
    opencode: Vec<RawOpencode>,
    limits: Option<RawLimits>,
    #[serde(default)]
    notify: Vec<RawNotify>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUser {
    id: Spanned<String>,
    kind: Spanned<String>,
    role: Option<Spanned<String>>,
    token_sha256: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProject {
    id: Spanned<String>,
    #[serde(default)]
    members: Vec<Spanned<String>>,
    #[serde(default)]
    agents: Vec<Spanned<String>>,
}

/// A key of the file's top that was written under a `[[users]]`, `[[projects]]` or other
/// table (TOML puts every key after a table's header into that table: the usual slip when
/// lines are added at the end of a file `oq init serve` wrote) says where it belongs.
fn misplaced_hint(message: String) -> String {
    let Some(key) = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split('`').next())
    else {
        return message;
    };
    // Is it a key of the top? Asked of the parser itself, so the list is never kept twice.
    let alone = toml::from_str::<RawConfig>(&format!("{key} = 0"));
    let at_top = !alone.is_err_and(|e| e.message().starts_with("unknown field"));
    if at_top {
        format!("{message}; `{key}` is a key of the file's top: put it above the first [[…]] table")
    } else {
        message
    }
}

impl Config {
    /// Reads and checks `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.to_path_buf(),
            line: None,
            message: format!("cannot read the configuration: {e}"),
        })?;
        Config::parse(path, &text)
    }

    /// Checks `text` as if read from `path`; a relative `data_dir` is relative to the
    /// file's directory, so the service does not depend on its working directory.
    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let err = |span: Option<Range<usize>>, message: String| ConfigError {
            file: path.to_path_buf(),
            line: span.map(|s| line_of(text, s.start)),
            message,
        };
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let message = e.message().trim().replace('\n', " ");
            err(e.span(), misplaced_hint(message))
        })?;

        let listen = match &raw.listen {
            None => DEFAULT_LISTEN
                .parse()
                .map_err(|_| err(None, "bad default".into()))?,
            Some(l) => l.get_ref().parse::<SocketAddr>().map_err(|_| {
                err(
                    Some(l.span()),
                    format!(
                        "listen {:?} is not an address like 127.0.0.1:7878",
                        l.get_ref()
                    ),
                )
            })?,
        };
        // Paths in the file are relative to the file's folder, not the working directory.
        let beside = |p: &str| {
            let p = PathBuf::from(p);
            if p.is_relative() {
                path.parent().unwrap_or(Path::new(".")).join(p)
            } else {
                p
            }
        };
        let tls = match (&raw.tls_cert, &raw.tls_key) {
            (None, None) => None,
            (Some(c), Some(k)) => Some(TlsFiles {
                cert: beside(c.get_ref()),
                key: beside(k.get_ref()),
            }),
            (Some(c), None) => {
                return Err(err(
                    Some(c.span()),
                    "tls_cert needs tls_key (the certificate's private key, PEM)".into(),
                ));
            }
            (None, Some(k)) => {
                return Err(err(
                    Some(k.span()),
                    "tls_key needs tls_cert (the certificate chain, PEM)".into(),
                ));
            }
        };
        let data_dir = match &raw.data_dir {
            None => {
                return Err(err(
                    None,
                    "data_dir is required (where the store lives)".into(),
                ));
            }
            Some(d) if d.get_ref().trim().is_empty() => {
                return Err(err(Some(d.span()), "data_dir is empty".into()));
            }
            Some(d) => beside(d.get_ref()),
        };

        let mut users = Vec::with_capacity(raw.users.len());
        let mut seen_ids = HashSet::new();
        let mut seen_hashes = HashSet::new();
        for u in &raw.users {
            let id = u.id.get_ref();
            check_id("user id", id).map_err(|e| err(Some(u.id.span()), e.to_string()))?;
            if !seen_ids.insert(id.clone()) {
                return Err(err(
                    Some(u.id.span()),
                    format!("user {id:?} is declared twice"),
                ));
            }
            let role = match (u.kind.get_ref().as_str(), &u.role) {
                ("person", None) => None,
                ("person", Some(r)) => {
                    return Err(err(
                        Some(r.span()),
                        format!("user {id:?} is a person; only agents have a role"),
                    ));
                }
                ("agent", None) => {
                    return Err(err(
                        Some(u.kind.span()),
                        format!(
                            "agent {id:?} needs a role: criativo, po, arquiteto, dev-lead or qa-agent"
                        ),
                    ));
                }
                ("agent", Some(r)) => Some(
                    r.get_ref()
                        .parse::<Role>()
                        .map_err(|e| err(Some(r.span()), format!("user {id:?}: {e}")))?,
                ),
                (other, _) => {
                    return Err(err(
                        Some(u.kind.span()),
                        format!("user {id:?}: kind {other:?} is neither person nor agent"),
                    ));
                }
            };
            let token_sha256 = parse_hash(u.token_sha256.get_ref()).ok_or_else(|| {
                err(
                    Some(u.token_sha256.span()),
                    format!(
                        "user {id:?}: token_sha256 must be 64 hex characters (`oq token` prints one)"
                    ),
                )
            })?;
            if !seen_hashes.insert(token_sha256) {
                return Err(err(
                    Some(u.token_sha256.span()),
                    format!("user {id:?}: this token_sha256 is already another user's"),
                ));
            }
            users.push(User {
                id: id.clone(),
                role,
                token_sha256,
            });
        }
        let kinds: HashMap<&str, Option<Role>> =
            users.iter().map(|u| (u.id.as_str(), u.role)).collect();

        let mut projects = Vec::with_capacity(raw.projects.len());
        let mut seen_projects = HashSet::new();
        for p in &raw.projects {
            let id = p.id.get_ref();
            check_id("project id", id).map_err(|e| err(Some(p.id.span()), e.to_string()))?;
            if !seen_projects.insert(id.clone()) {
                return Err(err(
                    Some(p.id.span()),
                    format!("project {id:?} is declared twice"),
                ));
            }
            let mut listed = HashSet::new();
            for m in &p.members {
                let name = m.get_ref();
                match kinds.get(name.as_str()) {
                    None => {
                        return Err(err(
                            Some(m.span()),
                            format!("project {id:?}: member {name:?} is not a declared user"),
                        ));
                    }
                    Some(Some(_)) => {
                        return Err(err(
                            Some(m.span()),
                            format!(
                                "project {id:?}: {name:?} is an agent; list it under agents, not members"
                            ),
                        ));
                    }
                    Some(None) => {}
                }
                if !listed.insert(name.clone()) {
                    return Err(err(
                        Some(m.span()),
                        format!("project {id:?}: {name:?} is listed twice"),
                    ));
                }
            }
            for a in &p.agents {
                let name = a.get_ref();
                match kinds.get(name.as_str()) {
                    None => {
                        return Err(err(
                            Some(a.span()),
                            format!("project {id:?}: agent {name:?} is not a declared user"),
                        ));
                    }
                    Some(None) => {
                        return Err(err(
                            Some(a.span()),
                            format!(
                                "project {id:?}: {name:?} is a person; list it under members, not agents"
                            ),
                        ));
                    }
                    Some(Some(_)) => {}
                }
                if !listed.insert(name.clone()) {
                    return Err(err(
                        Some(a.span()),
                        format!("project {id:?}: {name:?} is listed twice"),
                    ));
                }
            }
            projects.push(Project {
                id: id.clone(),
                members: p.members.iter().map(|m| m.get_ref().clone()).collect(),
                agents: p.agents.iter().map(|a| a.get_ref().clone()).collect(),
            });
        }

        let opencode = parse_opencode(&raw.opencode, &projects, &err)?;
        let notify = parse_notify(&raw.notify, &projects, &err)?;
        let store = parse_store(
            RawStore {
                store: raw.store.as_ref(),
                password_env: raw.store_password_env.as_ref(),
                password_file: raw.store_password_file.as_ref(),
            },
            path,
            &err,
        )?;

        let limits = parse_limits(raw.limits.as_ref(), &err)?;

        Ok(Config {
            path: path.to_path_buf(),
            listen,
            data_dir,
            store,
            users,
            projects,
            opencode,
            limits,
            notify,
            tls,
        })
    }
}

/// sha256 of a token, as the configuration stores it.
pub fn token_hash(token: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(token.as_bytes()).into()
}

fn parse_hash(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    hex::decode_to_slice(s, &mut out).ok()?;
    Some(out)
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests;
