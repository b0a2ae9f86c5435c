//! The route table: one file per area. The table is the single list the router is built
//! from and the OpenAPI test walks, so the served routes and the document cannot drift.

pub mod claude_code;
pub mod decisions;
pub mod delegate;
pub mod meta;
pub mod questions;
pub mod readiness;
pub mod sessions;
pub mod stories;
pub mod tasks;

use axum::routing::{MethodRouter, get, post, put};

use super::AppState;
use super::events;

pub struct Route {
    pub method: &'static str,
    /// axum's syntax, which is also OpenAPI's: `/projects/{projectId}/…`.
    pub path: &'static str,
    pub handler: MethodRouter<AppState>,
}

fn route(method: &'static str, path: &'static str, handler: MethodRouter<AppState>) -> Route {
    Route {
        method,
        path,
        handler,
    }
}

pub fn table() -> Vec<Route> {
    vec![
        route("GET", "/healthz", get(meta::healthz)),
        route("GET", "/openapi.json", get(meta::openapi)),
        route("GET", "/me", get(meta::me)),
        route(
            "GET",
            "/projects/{projectId}/open-questions",
            get(questions::list),
        ),
        route(
            "POST",
            "/projects/{projectId}/open-questions",
            post(questions::declare),
        ),
        route(
            "GET",
            "/projects/{projectId}/open-questions/{questionId}",
            get(questions::show),
        ),
        route(
            "POST",
            "/projects/{projectId}/open-questions/{questionId}/answer",
            post(questions::answer),
        ),
        route(
            "POST",
            "/projects/{projectId}/open-questions/{questionId}/dismiss",
            post(questions::dismiss),
        ),
        route(
            "POST",
            "/projects/{projectId}/open-questions/{questionId}/snooze",
            post(questions::snooze),
        ),
        route(
            "POST",
            "/projects/{projectId}/open-questions/{questionId}/unsnooze",
            post(questions::unsnooze),
        ),
        route(
            "POST",
            "/projects/{projectId}/sessions",
            post(sessions::start),
        ),
        route(
            "GET",
            "/projects/{projectId}/readiness",
            get(readiness::show),
        ),
        route(
            "GET",
            "/projects/{projectId}/revision",
            get(readiness::revision),
        ),
        route(
            "POST",
            "/projects/{projectId}/readiness/{gate}",
            post(readiness::record),
        ),
        route(
            "POST",
            "/projects/{projectId}/stories",
            post(stories::create),
        ),
        route(
            "POST",
            "/projects/{projectId}/stories/{storyId}/state",
            post(stories::move_state),
        ),
        route(
            "POST",
            "/projects/{projectId}/stories/{storyId}/corrections",
            post(stories::correct),
        ),
        route("GET", "/projects/{projectId}/tasks", get(tasks::waiting)),
        route("POST", "/projects/{projectId}/tasks", post(tasks::create)),
        route(
            "GET",
            "/projects/{projectId}/tasks/{taskId}",
            get(tasks::show),
        ),
        route(
            "POST",
            "/projects/{projectId}/tasks/{taskId}/state",
            post(tasks::move_state),
        ),
        route(
            "POST",
            "/projects/{projectId}/tasks/{taskId}/qa-verdicts",
            post(tasks::verdict),
        ),
        route(
            "GET",
            "/projects/{projectId}/tasks/{taskId}/dev-context",
            get(tasks::dev_context),
        ),
        route("GET", "/projects/{projectId}/events", get(events::stream)),
        route(
            "POST",
            "/projects/{projectId}/claude-code/questions",
            post(claude_code::declare),
        ),
        route(
            "POST",
            "/projects/{projectId}/claude-code/questions/{questionId}/settlement",
            post(claude_code::settle),
        ),
        route(
            "POST",
            "/projects/{projectId}/claude-code/questions/{questionId}/handoff",
            post(claude_code::hand_off),
        ),
        route(
            "GET",
            "/projects/{projectId}/decisions",
            get(decisions::list),
        ),
        route(
            "GET",
            "/api/question-auto-delegate",
            get(delegate::snapshot),
        ),
        route(
            "POST",
            "/api/question-auto-delegate/requests/{requestId}/pause",
            post(delegate::pause),
        ),
        route(
            "POST",
            "/api/question-auto-delegate/requests/{requestId}/resume",
            post(delegate::resume),
        ),
        route(
            "POST",
            "/api/question-auto-delegate/requests/{requestId}/delegate",
            post(delegate::delegate),
        ),
        route(
            "PUT",
            "/api/question-auto-delegate/settings",
            put(delegate::settings),
        ),
        route(
            "GET",
            "/api/question-auto-delegate/sessions/{sessionId}/blocking",
            get(delegate::blocking),
        ),
    ]
}
