//! The refusals several operations share, each with the typed codes it may carry.

use super::parts::Refusal;
use crate::domain::ErrorCode as C;

/// Only the session's author decides.
pub(super) const AUTHOR_ONLY: Refusal = (
    "403",
    "the caller is not the session's author (`so_o_autor_da_sessao`)",
    &[C::SoOAutorDaSessao],
);
/// People's routes refuse agents.
pub(super) const PEOPLE_ONLY: Refusal =
    ("403", "an agent (`role_not_allowed`)", &[C::RoleNotAllowed]);
/// A question that is no longer open, or a bridged one another path holds.
pub(super) const SETTLED_409: [C; 5] = [
    C::PerguntaJaRespondida,
    C::QuestionClosed,
    C::QuestionSubmissionClaimed,
    C::QuestionAlreadySettled,
    C::QuestionNotReady,
];
/// An answer's: [`SETTLED_409`], or a Claude Code question its hook handed to Claude's
/// own dialog (answered there).
pub(super) const ANSWER_409: [C; 6] = [
    C::PerguntaJaRespondida,
    C::QuestionClosed,
    C::QuestionSubmissionClaimed,
    C::QuestionAlreadySettled,
    C::QuestionNotReady,
    C::HandedToClaudeCode,
];
/// A bridged question's upstream did not take it (the server itself is up).
pub(super) const UPSTREAM_502: Refusal = (
    "502",
    "a bridged question's OpenCode did not take it: unreachable (nothing sent), refused, uncertain (it may have it), failed, or driven by another `oq serve`",
    &[
        C::UpstreamUnreachable,
        C::UpstreamRefused,
        C::UpstreamUncertain,
        C::UpstreamError,
        C::UpstreamDrivenElsewhere,
    ],
);
pub(super) const DECLARE_422: [C; 10] = [
    C::InvalidBody,
    C::InvalidText,
    C::EmptyText,
    C::TextTooLong,
    C::BidiControl,
    C::InvalidId,
    C::InvalidAffects,
    C::UnknownReference,
    C::IdempotencyKeyReused,
    C::SessionRequired,
];
pub(super) const ANSWER_422: [C; 9] = [
    C::InvalidBody,
    C::InvalidText,
    C::InvalidId,
    C::EmptyText,
    C::TextTooLong,
    C::BidiControl,
    C::InvalidAnswers,
    C::SugestaoInexistente,
    C::IdempotencyKeyReused,
];
pub(super) const TITLE_422: &str = "malformed JSON, a wrong type, an unknown field, a title empty, too long or with a bidirectional override, a bad id";
/// A new task's refusals: its title's, and a session that is not an execution session.
pub(super) const TASK_CODES: [C; 7] = [
    C::InvalidBody,
    C::EmptyText,
    C::TextTooLong,
    C::BidiControl,
    C::InvalidText,
    C::InvalidId,
    C::NotAnExecutionSession,
];
/// A new story's: a task's but the session.
pub(super) const TITLE_CODES: &[C] = match TASK_CODES.as_slice().split_last() {
    Some((_, title)) => title,
    None => &[],
};
pub(super) const STATE_422: &str = "malformed JSON, an unknown field, a state that is not one";
pub(super) const STATE_CODES: [C; 2] = [C::InvalidBody, C::InvalidState];
pub(super) const TRANSITION_409: Refusal = (
    "409",
    "a refused transition (`invalid_transition`)",
    &[C::InvalidTransition],
);
pub(super) const VERDICT_422: [C; 7] = [
    C::InvalidBody,
    C::InvalidVerdict,
    C::EmptyText,
    C::TextTooLong,
    C::BidiControl,
    C::InvalidId,
    C::InvalidText,
];
