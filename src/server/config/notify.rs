//! The `[[notify]]` tables of `oq serve`'s configuration: per project, a webhook (a JSON
//! POST signed with HMAC-SHA256) or an ntfy-style topic URL told of each new question.
//!
//! Invariant: a target's URL is http(s); a webhook has its key (`secret`, or the variable
//! `secret_env` names) and the key is never printed — not by `Debug`, not in a log.

use std::ops::Range;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::{ConfigError, Project};

/// Attempts per notification when `max_attempts` is not given.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 8;
/// The first retry's delay when `retry_base_ms` is not given; each next one doubles.
pub const DEFAULT_RETRY_BASE_MS: u64 = 1000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawNotify {
    project: Spanned<String>,
    kind: Spanned<String>,
    url: Spanned<String>,
    secret: Option<Spanned<String>>,
    secret_env: Option<Spanned<String>>,
    include_text: Option<bool>,
    max_attempts: Option<Spanned<u32>>,
    retry_base_ms: Option<Spanned<u64>>,
}

/// An HMAC key: shown as `***` wherever the configuration is printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl Secret {
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotifyKind {
    /// JSON POST, `X-Oq-Signature: sha256=HEX` over the body.
    Webhook(Secret),
    /// The question as the plain-text body of a POST to the topic URL (ntfy's publish).
    Ntfy,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyTarget {
    pub project: String,
    pub kind: NotifyKind,
    pub url: String,
    /// `false`: the question's text and suggestion are never sent (ids and counts only).
    pub include_text: bool,
    pub max_attempts: u32,
    pub retry_base: Duration,
}

/// The `[[notify]]` tables, each checked: a configured project, a kind, an http(s) URL,
/// a webhook's key from the file or from the variable `secret_env` names (not both; an
/// ntfy topic takes none), at least one attempt.
pub(super) fn parse_notify(
    raw: &[RawNotify],
    projects: &[Project],
    err: &dyn Fn(Option<Range<usize>>, String) -> ConfigError,
) -> Result<Vec<NotifyTarget>, ConfigError> {
    let mut out = Vec::with_capacity(raw.len());
    for n in raw {
        let project = n.project.get_ref();
        if !projects.iter().any(|p| p.id == *project) {
            return Err(err(
                Some(n.project.span()),
                format!("notify: project {project:?} is not a configured project"),
            ));
        }
        let url = n.url.get_ref().trim();
        let scheme_ok = ["http://", "https://"]
            .iter()
            .any(|s| url.len() > s.len() && url[..s.len()].eq_ignore_ascii_case(s));
        if !scheme_ok || url.contains(char::is_whitespace) {
            return Err(err(
                Some(n.url.span()),
                format!("notify: url {url:?} is not an http:// or https:// URL"),
            ));
        }
        let secret = match (&n.secret, &n.secret_env) {
            (Some(_), Some(e)) => {
                return Err(err(
                    Some(e.span()),
                    "notify: give secret or secret_env, not both".into(),
                ));
            }
            (Some(s), None) => Some((s.get_ref().clone(), s.span())),
            (None, Some(e)) => match std::env::var(e.get_ref()) {
                Ok(v) => Some((v, e.span())),
                Err(_) => {
                    return Err(err(
                        Some(e.span()),
                        format!(
                            "notify: secret_env names {:?}, which is not set",
                            e.get_ref()
                        ),
                    ));
                }
            },
            (None, None) => None,
        };
        let kind = match (n.kind.get_ref().as_str(), secret) {
            ("webhook", Some((s, span))) if s.len() < 16 => {
                return Err(err(
                    Some(span),
                    "notify: a webhook's secret must be at least 16 bytes".into(),
                ));
            }
            ("webhook", Some((s, _))) => NotifyKind::Webhook(Secret(s.into_bytes())),
            ("webhook", None) => {
                return Err(err(
                    Some(n.kind.span()),
                    "notify: a webhook needs secret or secret_env (its HMAC-SHA256 key)".into(),
                ));
            }
            ("ntfy", None) => NotifyKind::Ntfy,
            ("ntfy", Some((_, span))) => {
                return Err(err(
                    Some(span),
                    "notify: an ntfy topic takes no secret".into(),
                ));
            }
            (other, _) => {
                return Err(err(
                    Some(n.kind.span()),
                    format!("notify: kind {other:?} is neither webhook nor ntfy"),
                ));
            }
        };
        let max_attempts = n
            .max_attempts
            .as_ref()
            .map_or(DEFAULT_MAX_ATTEMPTS, |m| *m.get_ref());
        if max_attempts == 0 {
            let span = n.max_attempts.as_ref().map(|m| m.span());
            return Err(err(span, "notify: max_attempts must be at least 1".into()));
        }
        let retry_base_ms = n
            .retry_base_ms
            .as_ref()
            .map_or(DEFAULT_RETRY_BASE_MS, |m| *m.get_ref());
        out.push(NotifyTarget {
            project: project.clone(),
            kind,
            url: url.to_string(),
            include_text: n.include_text.unwrap_or(true),
            max_attempts,
            retry_base: Duration::from_millis(retry_base_ms.max(1)),
        });
    }
    Ok(out)
}
