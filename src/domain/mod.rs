//! The domain of ADR 0214, as pure code: types, rules and decisions, no IO and no clock.
//!
//! The engine loads state from the log and asks these functions what may happen; they
//! answer with values or an [`OqError`]. Nothing here knows SQLite, HTTP or the terminal.

pub mod actor;
pub mod answering;
pub mod choices;
pub mod claude_code;
pub mod date;
pub mod declared;
pub mod delegation;
pub mod dev_context;
pub mod error;
pub mod error_code;
pub mod events;
pub mod gate;
pub mod question;
pub mod readiness;
pub mod search;
pub mod settlement;
pub mod similar;
pub mod snooze;
pub mod text;
pub mod work;

pub use actor::{Actor, Role};
pub use answering::AnswerInput;
pub use error::{ErrorCode, OqError};
pub use events::{Event, StoredEvent};
pub use gate::{Gate, GateState, Verdict};
pub use question::{Afeta, Answer, DeclareInput, Question};
pub use settlement::DecisionSource;
pub use work::{Session, SessionKind, Story, Task, WorkState};

/// ADR 0214 §2's one central instruction, as a literal so doors can `concat!` it into
/// their own help text; one source of truth for every declare door.
#[macro_export]
macro_rules! central_instruction {
    () => {
        "Every doubt you leave for the user becomes declare_open_question, with your suggestion and what it affects; do not end the turn with a question only in the text."
    };
}

/// ADR 0214 §2: the one central instruction, carried by every declare door.
pub const CENTRAL_INSTRUCTION: &str = central_instruction!();
