//! The `[[opencode]]` tables of `oq serve`'s configuration: the OpenCode upstreams a
//! bridge imports questions from, and how each is checked.

use std::collections::HashSet;
use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::{ConfigError, Project};
pub use crate::bridge::config::{OpencodeUpstream, UpstreamTiming};
use crate::domain::text::check_id;

/// The auto-delegate window when `window_seconds` is not given.
pub const DEFAULT_WINDOW_SECONDS: u64 = 30;
/// The term of an upstream's lease on a PostgreSQL store when `lease_seconds` is not
/// given: a server that dies holding it is replaced within 12.5 s.
pub const DEFAULT_LEASE_SECONDS: u64 = 10;

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
    #[serde(default)]
    admins: Option<Vec<Spanned<String>>>,
    auto_delegate: Option<Spanned<bool>>,
    window_seconds: Option<Spanned<u64>>,
    lease_seconds: Option<Spanned<u64>>,
}

/// The `[[opencode]]` tables: names unique and id-like, URLs http(s), directories
/// absolute, the project configured and the answerer and every admin one of its people
/// (admins default to the answerer), a password from the file or from the variable
/// `password_env` names (not both).
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
        let admins = match &o.admins {
            None => vec![answerer.clone()],
            Some(list) => {
                let mut admins: Vec<String> = Vec::new();
                for a in list {
                    if !p.members.contains(a.get_ref()) {
                        return Err(err(
                            Some(a.span()),
                            format!(
                                "opencode {name:?}: admin {:?} is not a person (member) of project {project:?}",
                                a.get_ref()
                            ),
                        ));
                    }
                    if !admins.contains(a.get_ref()) {
                        admins.push(a.get_ref().clone());
                    }
                }
                if admins.is_empty() {
                    return Err(err(
                        Some(o.name.span()),
                        format!(
                            "opencode {name:?}: admins is empty; leave it out to let the answerer change the settings"
                        ),
                    ));
                }
                admins
            }
        };
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
        let lease_seconds = match &o.lease_seconds {
            None => DEFAULT_LEASE_SECONDS,
            Some(l) if *l.get_ref() == 0 || *l.get_ref() > 600 => {
                return Err(err(
                    Some(l.span()),
                    format!("opencode {name:?}: lease_seconds must be 1 to 600"),
                ));
            }
            Some(l) => *l.get_ref(),
        };
        out.push(OpencodeUpstream {
            name: name.clone(),
            url,
            directories,
            username: o.username.as_ref().map(|u| u.get_ref().clone()),
            password,
            project: project.clone(),
            answerer: answerer.clone(),
            admins,
            auto_delegate: o.auto_delegate.as_ref().is_none_or(|a| *a.get_ref()),
            window_ms: window_seconds * 1000,
            lease_ms: lease_seconds * 1000,
            timing: UpstreamTiming::default(),
        });
    }
    Ok(out)
}
