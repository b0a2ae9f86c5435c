//! The one vocabulary of refusals: every code oq puts in `{"code", "message"}` and prints
//! as `oq: CODE: message`, as a typed enum shared by the engine, the server, the HTTP
//! source (which rebuilds a refusal from its code) and the OpenAPI text.
//!
//! Invariant: a code is spelled once, here. The wire form is the snake_case name (the
//! ADR's Portuguese codes exactly); a code this binary does not know (a newer server)
//! reads as [`ErrorCode::RemoteError`].

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! error_codes {
    ($($(#[$doc:meta])* $variant:ident => $wire:literal,)*) => {
        /// A refusal's machine-readable code. Stable: scripts and clients match on it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ErrorCode {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code, in the order written here (the OpenAPI enum, the tests).
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The code as on the wire.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $wire,)*
                }
            }

            /// The code for its wire form; `None` for one this binary does not know.
            pub fn parse(s: &str) -> Option<ErrorCode> {
                match s {
                    $($wire => Some(ErrorCode::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

error_codes! {
    /// `oq ask`/`oq mcp` without `--agent`.
    AgentRequired => "agent_required",
    /// `--as` with a remote source, which acts as its token.
    AsIsLocal => "as_is_local",
    /// A peer answered something oq does not understand.
    BadResponse => "bad_response",
    /// Text with a bidirectional embedding, override or isolate (U+202A–U+202E,
    /// U+2066–U+2069), which can show a reader other words than the ones recorded.
    BidiControl => "bidi_control",
    BodyTooLarge => "body_too_large",
    /// The request body did not arrive within `[limits] body_read_seconds` (HTTP 408).
    BodyTimeout => "body_timeout",
    /// `oq init serve` onto a file that exists: a configuration is never overwritten.
    ConfigExists => "config_exists",
    DataDirNotWritable => "data_dir_not_writable",
    /// No space left on the store's file system (HTTP 507): nothing was written.
    DiskFull => "disk_full",
    DirectoryRequired => "directory_required",
    /// The schema refused an append: only a bug or tampering reaches it.
    DuplicateEvent => "duplicate_event",
    EmptyText => "empty_text",
    GateClosed => "gate_closed",
    GateParked => "gate_parked",
    /// An answer in oq to a Claude Code question its hook handed to Claude Code's own
    /// dialog: nobody would receive it (the agent waits on that dialog).
    HandedToClaudeCode => "handed_to_claude_code",
    HistoriaNaoCorrigivel => "historia_nao_corrigivel",
    HistoriaProntaSemResposta => "historia_pronta_sem_resposta",
    Internal => "internal",
    InvalidAffects => "invalid_affects",
    InvalidAnswers => "invalid_answers",
    InvalidBody => "invalid_body",
    InvalidConfig => "invalid_config",
    InvalidCursor => "invalid_cursor",
    /// A date oq cannot read (`oq decisions --since`: `YYYY-MM-DD` or
    /// `YYYY-MM-DDTHH:MM:SSZ`), or one outside the years it accepts.
    InvalidDate => "invalid_date",
    /// A `decisionSource` oq does not know (`oq decisions --source`).
    InvalidDecisionSource => "invalid_decision_source",
    InvalidDirectory => "invalid_directory",
    /// `oq status --format` with an unknown `{field}` or an unmatched brace.
    InvalidFormat => "invalid_format",
    InvalidGate => "invalid_gate",
    /// `oq hook claude-code` read something that is not Claude Code's hook JSON for
    /// `AskUserQuestion` (not JSON, another tool, another event).
    InvalidHookInput => "invalid_hook_input",
    /// `oq hook claude-code --install/--uninstall` on a settings file that is not a JSON
    /// object (or whose `hooks` is not the shape Claude Code reads): left unchanged.
    InvalidHookSettings => "invalid_hook_settings",
    InvalidId => "invalid_id",
    /// An `Idempotency-Key` the question's answer holds, sent with another body or by
    /// another person: not a retry of that answer.
    IdempotencyKeyReused => "idempotency_key_reused",
    InvalidKind => "invalid_kind",
    InvalidLastEventId => "invalid_last_event_id",
    InvalidLimit => "invalid_limit",
    /// An agent's question with options that are not a valid choice (none, too many, a
    /// label twice).
    InvalidOptions => "invalid_options",
    InvalidQuery => "invalid_query",
    /// `oq store migrate --grant ROLE` naming the owner itself.
    InvalidRole => "invalid_role",
    /// A list's search text too long, or of too many words.
    InvalidSearch => "invalid_search",
    /// A setting's value is not of its type (the auto-delegate toggle is a boolean).
    InvalidSetting => "invalid_setting",
    /// A list's sort order oq does not know.
    /// A snooze that names neither or both of `until` and `forSeconds`, or a duration
    /// that is none (`--for 2x`).
    InvalidSnooze => "invalid_snooze",
    InvalidSort => "invalid_sort",
    InvalidState => "invalid_state",
    InvalidStatus => "invalid_status",
    InvalidText => "invalid_text",
    InvalidTransition => "invalid_transition",
    InvalidVerdict => "invalid_verdict",
    /// A command that only the local engine can run.
    LocalOnly => "local_only",
    MethodNotAllowed => "method_not_allowed",
    NoDataDir => "no_data_dir",
    NotAMember => "not_a_member",
    /// Only an OpenCode upstream's admins change its settings.
    NotAnAdmin => "not_an_admin",
    NotAnExecutionSession => "not_an_execution_session",
    NotAnOqStore => "not_an_oq_store",
    /// A Claude Code settlement for a question the Claude Code hook did not declare.
    NotClaudeCode => "not_claude_code",
    /// Withdrawing a question neither declared by this agent nor of this person's session.
    NotDeclarer => "not_declarer",
    NotFound => "not_found",
    /// The source cannot do this (asking on an OpenCode source…).
    /// Waking a question that is not snoozed: nothing to end, nothing written.
    NotSnoozed => "not_snoozed",
    NotSupported => "not_supported",
    /// The outbox itself failed.
    Outbox => "outbox",
    /// ADR 0214: only the session's author answers.
    SoOAutorDaSessao => "so_o_autor_da_sessao",
    /// ADR 0214: a question is answered once.
    PerguntaJaRespondida => "pergunta_ja_respondida",
    PerguntaNaoRespondida => "pergunta_nao_respondida",
    ProjectRequired => "project_required",
    QuestionAlreadySettled => "question_already_settled",
    /// The question left the queue without an answer (dismissed, settled upstream).
    QuestionClosed => "question_closed",
    QuestionExists => "question_exists",
    QuestionIdentityConflict => "question_identity_conflict",
    /// A bridged question the bridge cannot act on yet (its directory is being looked up).
    QuestionNotReady => "question_not_ready",
    /// Seed 002: another path holds the single-flight claim on this request.
    QuestionSubmissionClaimed => "question_submission_claimed",
    /// An MCP door's question of another session than the one it works in.
    OtherSession => "other_session",
    /// Not a refusal: the answer waits in the outbox.
    Queued => "queued",
    /// A code a newer server sent that this binary does not know.
    RemoteError => "remote_error",
    RoleNotAllowed => "role_not_allowed",
    SessionExists => "session_exists",
    /// A client named a session outside its own project's namespace (`<projectId>.<name>`).
    SessionIdOutsideProject => "session_id_outside_project",
    /// A client named a session in a namespace only the server uses (the bridge's `oc-`).
    SessionIdReserved => "session_id_reserved",
    SessionRequired => "session_required",
    /// Another process held the store's write lock past the busy timeout (503, retry).
    StoreBusy => "store_busy",
    /// `oq store copy`: the copy did not compare equal to its source.
    StoreCopyMismatch => "store_copy_mismatch",
    /// `oq store check` found damage, or SQLite did: writes are refused, reads go on.
    StoreDamaged => "store_damaged",
    /// A write or flush failed with an I/O error: the process refuses the store until
    /// it is restarted (503).
    StoreFailed => "store_failed",
    /// The store's file is empty (0 bytes): a lost store, not a new one.
    StoreFileEmpty => "store_file_empty",
    /// The store's file is missing but its `-wal` or `-shm` is there.
    StoreFileMissing => "store_file_missing",
    /// `oq store copy` into a store that already holds events.
    StoreNotEmpty => "store_not_empty",
    /// A PostgreSQL database with no oq schema yet (`oq store migrate` makes it).
    StoreNotInitialised => "store_not_initialised",
    /// A PostgreSQL store older than this binary: `oq store migrate` brings it forward.
    StoreOutdated => "store_outdated",
    /// The role `oq serve` connects as could change or remove events: refused.
    StoreRoleCanAlterHistory => "store_role_can_alter_history",
    StoreTooNew => "store_too_new",
    /// The database cannot be reached right now: HTTP 503, retry (with the same key).
    StoreUnavailable => "store_unavailable",
    StoreUnusable => "store_unusable",
    /// A snooze whose end is not in the future.
    SnoozeInPast => "snooze_in_past",
    /// A snooze more than 90 days away (`domain::snooze::MAX_SNOOZE_MS`).
    SnoozeTooFar => "snooze_too_far",
    SugestaoInexistente => "sugestao_inexistente",
    TarefaEmAndamento => "tarefa_em_andamento",
    TextTooLong => "text_too_long",
    Timeout => "timeout",
    /// Too many failed authentications from one address this minute (429, `Retry-After`).
    TooManyAuthFailures => "too_many_auth_failures",
    /// The server holds `[limits] max_connections` already (503).
    TooManyConnections => "too_many_connections",
    TooManyIds => "too_many_ids",
    /// This token holds `[limits] max_streams_per_token` event streams already (429).
    TooManyStreams => "too_many_streams",
    Unauthorized => "unauthorized",
    Unhealthy => "unhealthy",
    UnknownDirectory => "unknown_directory",
    UnknownProfile => "unknown_profile",
    /// `afeta` names a story or task that is not in the question's project.
    UnknownReference => "unknown_reference",
    UnknownRole => "unknown_role",
    UnknownSource => "unknown_source",
    Unreachable => "unreachable",
    UnsupportedMediaType => "unsupported_media_type",
    UpstreamConflict => "upstream_conflict",
    /// A bridged upstream's command reached a server that does not hold its lease:
    /// another `oq serve` on the same database drives it (502, like every upstream
    /// refusal: the server is up).
    UpstreamDrivenElsewhere => "upstream_driven_elsewhere",
    UpstreamError => "upstream_error",
    UpstreamRefused => "upstream_refused",
    /// Seed 002: upstream may have the answer; never sent again.
    UpstreamUncertain => "upstream_uncertain",
    UpstreamUnreachable => "upstream_unreachable",
}

impl ErrorCode {
    /// An upstream's refusal (`upstream_*`): a bridged OpenCode's, not the server's own.
    pub fn is_upstream(self) -> bool {
        self.as_str().starts_with("upstream_")
    }

    /// The code for its wire form, [`ErrorCode::RemoteError`] for an unknown one.
    pub fn from_wire(s: &str) -> ErrorCode {
        ErrorCode::parse(s).unwrap_or(ErrorCode::RemoteError)
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Ok(ErrorCode::from_wire(&s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_and_is_spelled_once() {
        let mut seen = std::collections::BTreeSet::new();
        for code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), Some(*code));
            assert!(seen.insert(code.as_str()), "{code} twice");
            assert!(
                code.as_str()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{code} is not snake_case"
            );
        }
        assert_eq!(
            ErrorCode::from_wire("a_code_from_the_future"),
            ErrorCode::RemoteError
        );
    }
}
