//! OpenCode's question API (SPEC §5): a real agent's questions, listed, followed, answered
//! and rejected over HTTP.
//!
//! - [`client`]: the HTTP routes (`GET /question`, reply, reject, sessions, health), with
//!   optional basic auth; a 404 on reply/reject is "settled elsewhere", not an error.
//! - [`events`]: the event stream (`/event?directory=` or `/global/event`) as typed events.
//! - [`types`]: the request/question/option shapes, and their mapping to oq's
//!   [`crate::wire::QuestionItem`].
//!
//! The direct source built on these is [`crate::source::OpencodeSource`].

pub mod client;
pub mod events;
pub mod types;

pub use client::{Auth, Client, Settled};
pub use events::{Envelope, Event, Scope};
pub use types::{Placement, Request, ToolPart, ToolRef};
