//! The `[[opencode]]` tables of `oq serve`'s configuration: the OpenCode upstreams a
//! bridge imports questions from, and how each is checked.

use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::{ConfigError, Project};
use crate::domain::text::check_id;

/// One `[[opencode]]` upstream: an OpenCode server whose pending questions this server
/// imports into `project`, answered by `answerer`.
#[derive(Clone, PartialEq, Eq)]
pub struct OpencodeUpstream {
    /// Names it in routes, snapshots, session ids and its settings file.
    pub name: String,
    /// `http://HOST:PORT`.
    pub url: String,
    /// Absolute paths; OpenCode scopes pending questions by exact directory.
    pub directories: Vec<String>,
    pub username: Option<String>,
    /// From `password` or the variable `password_env` names; never logged (`Debug` hides it).
    pub password: Option<String>,
    pub project: String,
    /// The person (a member of `project`) who answers its questions.
    pub answerer: String,
    /// The auto-delegate toggle when nothing was persisted yet.
    pub auto_delegate: bool,
    pub window_ms: u64,
    /// Timing knobs; only tests change them (not in the file).
    pub timing: UpstreamTiming,
}

impl std::fmt::Debug for OpencodeUpstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpencodeUpstream")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("directories", &self.directories)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<hidden>"))
            .field("project", &self.project)
            .field("answerer", &self.answerer)
            .field("auto_delegate", &self.auto_delegate)
            .field("window_ms", &self.window_ms)
            .finish()
    }
}

/// How an upstream connection is watched and retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpstreamTiming {
    /// An event stream silent this long is dead (OpenCode sends heartbeats every ~10 s).
    pub stall: std::time::Duration,
    /// A reply/reject POST with no answer after this is `uncertain`.
    pub post_timeout: std::time::Duration,
    /// An event stream whose response head does not come within this is given up (a
    /// server still starting may accept the connection and never answer it).
    pub subscribe_timeout: std::time::Duration,
    /// The first reconnect delay, doubled per failure up to `backoff_max`, with jitter.
    pub backoff_min: std::time::Duration,
    pub backoff_max: std::time::Duration,
}

impl Default for UpstreamTiming {
    fn default() -> Self {
        UpstreamTiming {
            stall: std::time::Duration::from_secs(45),
            post_timeout: std::time::Duration::from_secs(15),
            subscribe_timeout: std::time::Duration::from_secs(10),
            backoff_min: std::time::Duration::from_millis(250),
            backoff_max: std::time::Duration::from_secs(15),
        }
    }
}

/// The auto-delegate window when `window_seconds` is not given.
pub const DEFAULT_WINDOW_SECONDS: u64 = 30;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOpencode {
    name: Spanned<String>,
    url: Spanned<String>,
    #[serde(default)]
    directories: Vec<Spanned<String>>,
    username: Option<Spanned<String>>,
    password: Option<Spanned<String>>,
    password_env: Option<Spanned<String>>,
    project: Spanned<String>,
    answerer: Spanned<String>,
    auto_delegate: Option<Spanned<bool>>,
    window_seconds: Option<Spanned<u64>>,
}

/// The `[[opencode]]` tables: names unique and id-like, URLs http(s), directories
/// absolute, the project configured and the answerer one of its people, a password from
/// the file or from the variable `password_env` names (not both).
pub(super) fn parse_opencode(
    raw: &[RawOpencode],
    projects: &[Project],
    err: &dyn Fn(Option<Range<usize>>, String) -> ConfigError,
) -> Result<Vec<OpencodeUpstream>, ConfigError> {
    let mut out = Vec::with_capacity(raw.len());
    let mut names = HashSet::new();
    for o in raw {
        let name = o.name.get_ref();
        check_id("opencode name", name).map_err(|e| err(Some(o.name.span()), e.to_string()))?;
        if !names.insert(name.clone()) {
            return Err(err(
                Some(o.name.span()),
                format!("opencode upstream {name:?} is declared twice"),
            ));
        }
        let url = o.url.get_ref().trim_end_matches('/').to_string();
        if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10 {
            return Err(err(
                Some(o.url.span()),
                format!("opencode {name:?}: url {url:?} is not like http://127.0.0.1:4096"),
            ));
        }
        if o.directories.is_empty() {
            return Err(err(
                Some(o.name.span()),
                format!("opencode {name:?}: directories is required (absolute paths)"),
            ));
        }
        let mut directories = Vec::new();
        for d in &o.directories {
            if !Path::new(d.get_ref()).is_absolute() {
                return Err(err(
                    Some(d.span()),
                    format!(
                        "opencode {name:?}: directory {:?} is not an absolute path",
                        d.get_ref()
                    ),
                ));
            }
            if !directories.contains(d.get_ref()) {
                directories.push(d.get_ref().clone());
            }
        }
        let project = o.project.get_ref();
        let Some(p) = projects.iter().find(|p| p.id == *project) else {
            return Err(err(
                Some(o.project.span()),
                format!("opencode {name:?}: project {project:?} is not a configured project"),
            ));
        };
        let answerer = o.answerer.get_ref();
        if !p.members.contains(answerer) {
            return Err(err(
                Some(o.answerer.span()),
                format!(
                    "opencode {name:?}: answerer {answerer:?} is not a person (member) of project {project:?}"
                ),
            ));
        }
        let password = match (&o.password, &o.password_env) {
            (Some(_), Some(e)) => {
                return Err(err(
                    Some(e.span()),
                    format!("opencode {name:?}: give password or password_env, not both"),
                ));
            }
            (Some(p), None) => Some(p.get_ref().clone()),
            (None, Some(e)) => match std::env::var(e.get_ref()) {
                Ok(v) if !v.is_empty() => Some(v),
                _ => {
                    return Err(err(
                        Some(e.span()),
                        format!(
                            "opencode {name:?}: password_env names {:?}, which is not set",
                            e.get_ref()
                        ),
                    ));
                }
            },
            (None, None) => None,
        };
        let window_seconds = match &o.window_seconds {
            None => DEFAULT_WINDOW_SECONDS,
            Some(w) if *w.get_ref() == 0 || *w.get_ref() > 86_400 => {
                return Err(err(
                    Some(w.span()),
                    format!("opencode {name:?}: window_seconds must be 1 to 86400"),
                ));
            }
            Some(w) => *w.get_ref(),
        };
        out.push(OpencodeUpstream {
            name: name.clone(),
            url,
            directories,
            username: o.username.as_ref().map(|u| u.get_ref().clone()),
            password,
            project: project.clone(),
            answerer: answerer.clone(),
            auto_delegate: o.auto_delegate.as_ref().is_none_or(|a| *a.get_ref()),
            window_ms: window_seconds * 1000,
            timing: UpstreamTiming::default(),
        });
    }
    Ok(out)
}
