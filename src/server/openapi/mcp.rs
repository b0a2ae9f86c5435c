//! `/mcp` in the document: MCP's Streamable HTTP transport (JSON-RPC, answered as JSON
//! or an event stream), for agent tokens, with the door in the query.

use serde_json::{Value, json};

use super::parts::{err, unauthorized};
use crate::domain::ErrorCode as C;

/// The `/mcp` path item: the three methods Streamable HTTP uses.
pub(super) fn path_item() -> Value {
    let params = json!([
        { "name": "session", "in": "query", "required": true, "schema": { "type": "string" },
          "description": "the session the agent works in: one a person started in the project (its author answers)" },
        { "name": "project", "in": "query", "schema": { "type": "string" },
          "description": "default: the token's only project" },
        { "name": "Mcp-Session-Id", "in": "header", "schema": { "type": "string" },
          "description": "after initialize: the MCP session, which only the token that opened it may use" }
    ]);
    let refusals = |ok: Value| {
        json!({
            "200": ok,
            "401": unauthorized(),
            "403": err("a person's token: /mcp is for agents (`role_not_allowed`)", &[C::RoleNotAllowed]),
            "404": err("the project is not the token's, the session does not exist in it, or the MCP session is not this token's or was closed (idle past `[limits] mcp_session_idle_seconds`, or its token opened more than `max_mcp_sessions_per_token`) (`not_found`)", &[C::NotFound]),
            "422": err("no session, several projects and none named, or an unknown query field (`session_required`, `project_required`, `invalid_query`)", &[C::SessionRequired, C::ProjectRequired, C::InvalidQuery, C::InvalidId]),
            "429": err("too many failed authentications from this address this minute (`too_many_auth_failures`)", &[C::TooManyAuthFailures])
        })
    };
    let stream = json!({ "description": "JSON-RPC messages", "content": {
        "application/json": { "schema": { "type": "object" } },
        "text/event-stream": { "schema": { "type": "string" } } } });
    let op = |summary: &str| {
        json!({
            "summary": summary,
            "description": format!(
                "Who: an agent of the project. The tools of `oq mcp` (declare_open_question, \
                 wait_for_answer, get_question, list_my_questions, withdraw_question) over MCP's \
                 Streamable HTTP transport; declare_open_question's description carries ADR 0214's \
                 central sentence: {}",
                crate::domain::CENTRAL_INSTRUCTION
            ),
            "security": [{ "bearer": [] }],
            "parameters": params,
            "responses": refusals(stream.clone()),
        })
    };
    let mut post =
        op("MCP: a JSON-RPC message from the client (initialize, tools/list, tools/call…)");
    // rmcp reads only a POST's body; oq reads it first, under the body clock and cap.
    post["responses"]["408"] = err(
        "the body did not arrive within `[limits] body_read_seconds` (`body_timeout`); the connection is closed",
        &[C::BodyTimeout],
    );
    post["responses"]["413"] = err(
        "the body is larger than 64 KiB (`body_too_large`)",
        &[C::BodyTooLarge],
    );
    post["requestBody"] = json!({ "required": true, "content": { "application/json": { "schema": { "type": "object" } } } });
    json!({
        "post": post,
        "get": op("MCP: the server's event stream for the session"),
        "delete": op("MCP: end the session"),
    })
}
