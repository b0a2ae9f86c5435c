//! Who acts: a person (a project member) or an agent with one of ADR 0214's roles.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use super::error::{ErrorCode, OqError};

/// The agent roles of ADR 0214. Only `criativo`, `po`, `arquiteto` and `dev-lead` declare
/// questions directly; `qa-agent` asks through its `needs_user_decision` verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Criativo,
    Po,
    Arquiteto,
    DevLead,
    QaAgent,
}

impl Role {
    pub const ALL: [Role; 5] = [
        Role::Criativo,
        Role::Po,
        Role::Arquiteto,
        Role::DevLead,
        Role::QaAgent,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Criativo => "criativo",
            Role::Po => "po",
            Role::Arquiteto => "arquiteto",
            Role::DevLead => "dev-lead",
            Role::QaAgent => "qa-agent",
        }
    }

    /// ADR 0214 §2: "declare_open_question (Criativo, PO, Arquiteto, Dev Lead)".
    pub fn may_declare(self) -> bool {
        !matches!(self, Role::QaAgent)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = OqError;
    fn from_str(s: &str) -> Result<Self, OqError> {
        Role::ALL.into_iter().find(|r| r.as_str() == s).ok_or_else(|| {
            OqError::invalid(
                ErrorCode::UnknownRole,
                format!("unknown agent role {s:?}: expected one of criativo, po, arquiteto, dev-lead, qa-agent"),
            )
        })
    }
}

/// The one who calls an operation. Identity is established by the caller's door (the OS
/// user or `--as` locally, a bearer token on the server); the domain trusts it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Actor {
    Person {
        id: String,
    },
    Agent {
        id: String,
        role: Role,
    },
    /// oq itself acting for an upstream (a bridge importing or settling questions); it
    /// never answers.
    Service {
        id: String,
    },
}

impl Actor {
    pub fn person(id: impl Into<String>) -> Self {
        Actor::Person { id: id.into() }
    }
    /// A local agent: its id is its role, as in ADR 0214 (`autor: qa-agent`).
    pub fn agent(role: Role) -> Self {
        Actor::Agent {
            id: role.as_str().to_string(),
            role,
        }
    }
    pub fn id(&self) -> &str {
        match self {
            Actor::Person { id } | Actor::Agent { id, .. } | Actor::Service { id } => id,
        }
    }
    pub fn role(&self) -> Option<Role> {
        match self {
            Actor::Agent { role, .. } => Some(*role),
            Actor::Person { .. } | Actor::Service { .. } => None,
        }
    }
    /// Requires one of `roles`; people and other agents are refused with a reason.
    pub fn require_role(&self, roles: &[Role], what: &str) -> Result<Role, OqError> {
        match self.role() {
            Some(r) if roles.contains(&r) => Ok(r),
            _ => {
                let names: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
                Err(OqError::forbidden(
                    ErrorCode::RoleNotAllowed,
                    format!(
                        "{what} is for the agent roles {}; {} may not",
                        names.join(", "),
                        self.describe()
                    ),
                ))
            }
        }
    }
    pub fn describe(&self) -> String {
        match self {
            Actor::Person { id } => format!("person {id}"),
            Actor::Agent { id, role } if id == role.as_str() => format!("agent {role}"),
            Actor::Agent { id, role } => format!("agent {id} ({role})"),
            Actor::Service { id } => format!("service {id}"),
        }
    }
}
