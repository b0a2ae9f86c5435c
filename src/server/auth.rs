//! Who calls: a bearer token, hashed and matched against the configuration's users, then
//! the project's membership. A caller outside the project gets the same 404 as for a
//! project that does not exist, so membership leaks nothing. Failed authentications are
//! counted per address (`throttle`); a right token never is.

use std::collections::{HashMap, HashSet};

use std::net::SocketAddr;
use std::time::Instant;

use axum::extract::{ConnectInfo, FromRequestParts, Path};
use axum::http::StatusCode;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;

use super::AppState;
use super::config::{Config, User, token_hash};
use super::error::ApiError;
use crate::domain::{Actor, ErrorCode};

/// The users and projects of the configuration, ready for lookups.
#[derive(Debug, Clone)]
pub struct Directory {
    users: Vec<User>,
    projects: HashMap<String, ProjectAccess>,
}

#[derive(Debug, Clone, Default)]
struct ProjectAccess {
    members: HashSet<String>,
    agents: HashSet<String>,
}

/// How a caller belongs to a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A person listed under `members`.
    Member,
    /// An agent listed under `agents`.
    Agent,
}

impl Directory {
    pub fn new(config: &Config) -> Self {
        let projects = config
            .projects
            .iter()
            .map(|p| {
                (
                    p.id.clone(),
                    ProjectAccess {
                        members: p.members.iter().cloned().collect(),
                        agents: p.agents.iter().cloned().collect(),
                    },
                )
            })
            .collect();
        Directory {
            users: config.users.clone(),
            projects,
        }
    }

    /// The user whose token hash matches. Every user's hash is compared in full, whatever
    /// matches, so the time taken says nothing about which hash was close.
    pub fn authenticate(&self, token: &str) -> Option<&User> {
        let presented = token_hash(token);
        let mut found = None;
        for user in &self.users {
            let diff = user
                .token_sha256
                .iter()
                .zip(presented.iter())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b));
            if diff == 0 {
                found = Some(user);
            }
        }
        found
    }

    /// The projects `user` belongs to, sorted.
    pub fn projects_of(&self, user: &User) -> Vec<String> {
        let mut ids: Vec<String> = self
            .projects
            .keys()
            .filter(|p| self.access(user, p).is_some())
            .cloned()
            .collect();
        ids.sort();
        ids
    }

    pub fn access(&self, user: &User, project_id: &str) -> Option<Access> {
        let p = self.projects.get(project_id)?;
        if user.role.is_none() && p.members.contains(&user.id) {
            Some(Access::Member)
        } else if user.role.is_some() && p.agents.contains(&user.id) {
            Some(Access::Agent)
        } else {
            None
        }
    }
}

/// An authenticated caller.
#[derive(Debug, Clone)]
pub struct Caller {
    pub user: User,
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        const SEND: &str = "send Authorization: Bearer <token>";
        let Some(header) = parts.headers.get(AUTHORIZATION) else {
            return Err(failed(parts, state, SEND));
        };
        let token = header
            .to_str()
            .ok()
            .and_then(|h| {
                let (scheme, rest) = h.split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
            })
            .filter(|t| !t.is_empty());
        let Some(token) = token else {
            return Err(failed(parts, state, SEND));
        };
        match state.directory().authenticate(token) {
            Some(user) => Ok(Caller { user: user.clone() }),
            None => Err(failed(
                parts,
                state,
                "this token is not valid on this server",
            )),
        }
    }
}

/// A request without a valid token: 401, or 429 once its address failed more than
/// `[limits] auth_failures_per_minute` times this minute.
fn failed(parts: &Parts, state: &AppState, message: &str) -> ApiError {
    let addr = parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    match state.auth_failures().fail(addr, Instant::now()) {
        Ok(()) => ApiError::unauthorized(message),
        Err(seconds) => ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::TooManyAuthFailures,
            format!("too many failed authentications from this address; retry in {seconds} s"),
        )
        .retry_after(seconds),
    }
}

/// An authenticated caller who belongs to the route's `{projectId}`.
#[derive(Debug, Clone)]
pub struct InProject {
    pub actor: Actor,
    pub project: String,
    pub access: Access,
}

impl InProject {
    /// Refuses agents on the routes for people (sessions, readiness, "waiting for you").
    pub fn require_member(&self, what: &str) -> Result<(), ApiError> {
        match self.access {
            Access::Member => Ok(()),
            Access::Agent => Err(ApiError::people_only(what)),
        }
    }
}

impl FromRequestParts<AppState> for InProject {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let caller = Caller::from_request_parts(parts, state).await?;
        let params = Path::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::project_not_found(""))?;
        let project = params.get("projectId").cloned().unwrap_or_default();
        let access = state
            .directory()
            .access(&caller.user, &project)
            .ok_or_else(|| ApiError::project_not_found(&project))?;
        Ok(InProject {
            actor: caller.user.actor(),
            project,
            access,
        })
    }
}
