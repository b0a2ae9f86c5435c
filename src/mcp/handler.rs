//! rmcp's `ServerHandler` for oq: `initialize` says who we are and carries ADR 0214's
//! central sentence as `instructions`; `tools/list` and `tools/call` are the five tools.
//!
//! A refusal is a tool result with `isError` and oq's `{code, message}` (the text reads
//! `CODE: message`), so the agent reads why; an unknown tool is the protocol's
//! invalid-params error, as MCP says.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};

use super::calls::{Calls, parse};
use super::tools;
use super::wait::{Progress, Waited, wait};
use super::{Door, INSTRUCTIONS, Wake};
use crate::domain::{ErrorCode, OqError};
use crate::engine::{Engine, Store};

/// The MCP server of one door. `door` is fixed for `oq mcp`; on `oq serve` it is `None`
/// and each request carries its own (the token's agent, put in the request by the
/// server's authentication as a [`Door`] extension).
pub struct OqMcp<S> {
    calls: Calls<S>,
    door: Option<Door>,
    wake: Wake,
}

impl<S> Clone for OqMcp<S> {
    fn clone(&self) -> Self {
        OqMcp {
            calls: self.calls.clone(),
            door: self.door.clone(),
            wake: self.wake.clone(),
        }
    }
}

impl<S: Store + 'static> OqMcp<S> {
    pub fn new(engine: std::sync::Arc<Engine<S>>, door: Option<Door>, wake: Wake) -> Self {
        OqMcp {
            calls: Calls {
                engine,
                notify: None,
            },
            door,
            wake,
        }
    }

    /// Tells `notify` after each write (the server wakes its event streams with it).
    pub fn with_notify(mut self, notify: super::calls::Notify) -> Self {
        self.calls.notify = Some(notify);
        self
    }

    fn door(&self, context: &RequestContext<RoleServer>) -> Result<Door, OqError> {
        if let Some(d) = &self.door {
            return Ok(d.clone());
        }
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|p| p.extensions.get::<Door>())
            .cloned()
            .ok_or_else(|| OqError::Internal("an MCP request without its door".into()))
    }

    async fn run(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<Option<Value>, OqError> {
        let door = self.door(&context)?;
        let (name, args) = (request.name.as_ref(), request.arguments);
        let calls = &self.calls;
        let value = match name {
            tools::DECLARE => calls.declare(&door, parse(name, args)?).await?,
            tools::GET => calls.get(&door, parse(name, args)?).await?,
            tools::LIST => calls.list(&door, parse(name, args)?).await?,
            tools::WITHDRAW => calls.withdraw(&door, parse(name, args)?).await?,
            tools::WAIT => {
                let progress = Progress {
                    peer: context.peer.clone(),
                    token: context.meta.get_progress_token(),
                };
                let args = parse(name, args)?;
                match wait(calls, &door, args, self.wake.clone(), progress, context.ct).await? {
                    Waited::Done(v) => v,
                    Waited::Cancelled => return Ok(None),
                }
            }
            _ => return Err(OqError::invalid(ErrorCode::InvalidBody, "unknown tool")),
        };
        Ok(Some(value))
    }
}

fn text_of(value: &Value) -> ContentBlock {
    ContentBlock::text(serde_json::to_string(value).unwrap_or_default())
}

impl<S: Store + 'static> ServerHandler for OqMcp<S> {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_instructions(INSTRUCTIONS)
            .with_server_info(Implementation::new("oq", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::all()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !tools::all().iter().any(|t| t.name == request.name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?}: oq has {}", request.name, names()),
                None,
            ));
        }
        let tool = request.name.to_string();
        match self.run(request, context).await {
            Ok(Some(value)) => {
                let mut result = CallToolResult::success(vec![text_of(&value)]);
                result.structured_content = Some(value);
                Ok(result.into())
            }
            // Cancelled: the client no longer reads a reply; rmcp sends none.
            Ok(None) => Err(ErrorData::internal_error("cancelled", None)),
            Err(e) => {
                tracing::info!(tool, code = %e.code(), "mcp tool refused");
                let body = json!({"code": e.code(), "message": e.to_string()});
                let mut result =
                    CallToolResult::error(vec![ContentBlock::text(format!("{}: {e}", e.code()))]);
                result.structured_content = Some(body);
                Ok(result.into())
            }
        }
    }
}

fn names() -> String {
    tools::all()
        .iter()
        .map(|t| t.name.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
