//! One vocabulary of refusals: every `ErrorCode` is walked. The codes a script door can
//! provoke are provoked on the local engine and on a real `oq serve` (the built binary),
//! and must print the same `oq: CODE` and exit the same (the message may name the
//! source); every code also crosses the wire for real — the server's renderer on a
//! loopback port, the HTTP source's request and reading — keeping its code and exit
//! code. A code only one side can produce, or that no door reaches, is listed below with
//! why: a new code must be provoked or placed in one of these lists, or this test fails.
#![allow(clippy::unwrap_used)]

mod common_doors;

use std::collections::{BTreeMap, BTreeSet};

use common_doors::*;
use oq::domain::{ErrorCode, OqError};
use oq::server::error::ApiError;
use oq::source::{HttpSource, Source};

/// Codes that only one of the two sources can produce, with why.
const ONE_SIDED: &[(ErrorCode, &str)] = &[
    (
        ErrorCode::AgentRequired,
        "local: `oq ask` names its role with --agent; a server takes it from the token",
    ),
    (
        ErrorCode::AsIsLocal,
        "remote: --as names a person of the local store; a server acts as the token",
    ),
    (
        ErrorCode::LocalOnly,
        "remote: a command only the local engine runs",
    ),
    (
        ErrorCode::Unauthorized,
        "remote: a refused token (cli_http: exit 10)",
    ),
    (
        ErrorCode::Unreachable,
        "remote: no server answers (cli_http: exit 10)",
    ),
    (
        ErrorCode::BadResponse,
        "remote: a peer answering something oq does not understand",
    ),
    (
        ErrorCode::Queued,
        "remote: an answer kept in the outbox while the server is away (outbox_offline)",
    ),
    (
        ErrorCode::Outbox,
        "remote: the outbox itself failed; local answers use none",
    ),
    (
        ErrorCode::RemoteError,
        "remote: a code a newer server sent that this binary does not know",
    ),
    (
        ErrorCode::DataDirNotWritable,
        "local: the data dir of the embedded store",
    ),
    (
        ErrorCode::NoDataDir,
        "local: no data dir for the embedded store",
    ),
    (
        ErrorCode::UnknownProfile,
        "client: a [profiles.NAME] the config file lacks, before any source",
    ),
    (
        ErrorCode::UnknownSource,
        "client: a --source oq cannot read, before any source",
    ),
    (
        ErrorCode::InvalidConfig,
        "client or `oq serve`: a configuration file, before any source",
    ),
    (
        ErrorCode::DirectoryRequired,
        "OpenCode direct: the directory its requests live in",
    ),
    (
        ErrorCode::UnknownDirectory,
        "OpenCode direct: a directory it does not serve",
    ),
    (
        ErrorCode::InvalidDirectory,
        "OpenCode direct: a directory that is not one",
    ),
    (
        ErrorCode::NotSupported,
        "OpenCode direct (asking) and every source without a bridge (auto-delegate)",
    ),
    (
        ErrorCode::ConfigExists,
        "local: `oq init serve` writes a file here, before any source",
    ),
    (
        ErrorCode::ProjectRequired,
        "remote: a server needs the project named; locally every project is visible",
    ),
];

/// Codes no script door provokes on either source here, with where they are tested.
const NOT_BY_A_DOOR: &[(ErrorCode, &str)] = &[
    (
        ErrorCode::BodyTooLarge,
        "HTTP only: a body past the limit (server_bodies)",
    ),
    (
        ErrorCode::InvalidBody,
        "HTTP only: a body that is not the route's JSON (server_bodies)",
    ),
    (
        ErrorCode::InvalidQuery,
        "HTTP only: a query string of unknown fields (server_api)",
    ),
    (
        ErrorCode::MethodNotAllowed,
        "HTTP only: a method the route lacks",
    ),
    (
        ErrorCode::UnsupportedMediaType,
        "HTTP only: a body that is not JSON",
    ),
    (
        ErrorCode::NotDeclarer,
        "the MCP door's withdraw_question, on the engine (mcp_stdio)",
    ),
    (
        ErrorCode::NotClaudeCode,
        "the Claude Code hook's settlement route, on a question another door declared (claude_code_routes)",
    ),
    (
        ErrorCode::HandedToClaudeCode,
        "an answer to a question the Claude Code hook handed to Claude's dialog (claude_code_routes, claude_code)",
    ),
    (
        ErrorCode::InvalidOptions,
        "the MCP door, on the engine: `oq ask` declares no options (mcp_stdio)",
    ),
    (
        ErrorCode::OtherSession,
        "the MCP door, on the engine: a question of another session (mcp_stdio)",
    ),
    (
        ErrorCode::InvalidHookInput,
        "Claude Code's hook on stdin, local engine only (claude_hook)",
    ),
    (
        ErrorCode::InvalidHookSettings,
        "oq hook claude-code --install on Claude's settings file, no source (claude_hook)",
    ),
    (
        ErrorCode::BodyTimeout,
        "HTTP only: a body that does not arrive in time (serve_limits)",
    ),
    (
        ErrorCode::TooManyAuthFailures,
        "HTTP only: wrong tokens from one address (serve_limits)",
    ),
    (
        ErrorCode::TooManyConnections,
        "HTTP only: past [limits] max_connections (serve_limits)",
    ),
    (
        ErrorCode::TooManyStreams,
        "HTTP only: past [limits] max_streams_per_token (serve_limits)",
    ),
    (
        ErrorCode::UpstreamDrivenElsewhere,
        "a bridged upstream another oq serve drives (bridge_failover)",
    ),
    (
        ErrorCode::InvalidStatus,
        "a list status: clap checks the door's, the server its query (server_api)",
    ),
    (
        ErrorCode::InvalidLastEventId,
        "the event stream's Last-Event-ID (server_events)",
    ),
    (
        ErrorCode::NotAMember,
        "server auth: a caller outside the project (server_authz)",
    ),
    (
        ErrorCode::NotAnAdmin,
        "the bridge's settings route (bridge_authz)",
    ),
    (
        ErrorCode::InvalidSetting,
        "the bridge's settings route (bridge_authz)",
    ),
    (
        ErrorCode::Unhealthy,
        "GET /healthz of a server whose store is unwell",
    ),
    (
        ErrorCode::QuestionNotReady,
        "a bridged question whose directory is being looked up (bridge tests)",
    ),
    (
        ErrorCode::QuestionSubmissionClaimed,
        "seed 002's single-flight claim of a bridged request (bridge tests)",
    ),
    (
        ErrorCode::QuestionAlreadySettled,
        "a bridged request settled upstream (bridge tests)",
    ),
    (
        ErrorCode::QuestionIdentityConflict,
        "an imported request whose identity changed (imported_questions)",
    ),
    (
        ErrorCode::QuestionExists,
        "an import of a question already in the log (imported_questions)",
    ),
    (
        ErrorCode::UpstreamConflict,
        "a bridged OpenCode refusing (bridge tests)",
    ),
    (
        ErrorCode::UpstreamError,
        "a bridged OpenCode failing (bridge tests)",
    ),
    (
        ErrorCode::UpstreamRefused,
        "a bridged OpenCode refusing (bridge tests)",
    ),
    (
        ErrorCode::UpstreamUncertain,
        "a bridged OpenCode that may have the answer (bridge tests)",
    ),
    (
        ErrorCode::UpstreamUnreachable,
        "a bridged OpenCode away (bridge tests)",
    ),
    (
        ErrorCode::IdempotencyKeyReused,
        "an Idempotency-Key reused with another body (idempotency)",
    ),
    (
        ErrorCode::DuplicateEvent,
        "the schema refusing an append: only a bug or tampering (engine_store)",
    ),
    (ErrorCode::Internal, "a bug; its wire form is walked below"),
    (ErrorCode::DiskFull, "a full disk (store_disk_full)"),
    (
        ErrorCode::StoreBusy,
        "another writer holding the lock (store_busy)",
    ),
    (
        ErrorCode::StoreFailed,
        "a failed flush (store_flush_failure)",
    ),
    (ErrorCode::StoreDamaged, "a damaged store (store_tamper)"),
    (
        ErrorCode::StoreFileEmpty,
        "an emptied store file (engine_store)",
    ),
    (
        ErrorCode::StoreFileMissing,
        "a store file gone beside its WAL (engine_store)",
    ),
    (
        ErrorCode::StoreTooNew,
        "a store of a newer oq (engine_store)",
    ),
    (
        ErrorCode::StoreUnusable,
        "a store oq cannot open (engine_store)",
    ),
    (
        ErrorCode::NotAnOqStore,
        "a SQLite file that is not oq's (engine_store)",
    ),
    (ErrorCode::StoreCopyMismatch, "`oq store copy` (store_copy)"),
    (ErrorCode::StoreNotEmpty, "`oq store copy` (store_copy)"),
    (
        ErrorCode::StoreNotInitialised,
        "PostgreSQL before `oq store migrate` (pg_store)",
    ),
    (
        ErrorCode::StoreOutdated,
        "PostgreSQL behind this binary (pg_store)",
    ),
    (
        ErrorCode::StoreRoleCanAlterHistory,
        "PostgreSQL's serving role (pg_store)",
    ),
    (ErrorCode::StoreUnavailable, "PostgreSQL away (team_store)"),
    (
        ErrorCode::InvalidRole,
        "`oq store migrate --grant` (pg_store)",
    ),
    (
        ErrorCode::Timeout,
        "`oq ask --wait --timeout`: exit 11 both ways, by time",
    ),
    (
        ErrorCode::TooManyIds,
        "a batch route's id list (server_api)",
    ),
    (
        ErrorCode::SessionIdReserved,
        "a session id in the bridge's namespace (server_api)",
    ),
    (
        ErrorCode::SessionIdOutsideProject,
        "a session id of another project (server_api)",
    ),
    (
        ErrorCode::SessionExists,
        "a session id taken (engine_store)",
    ),
    (
        ErrorCode::SessionRequired,
        "a declaration with no session (engine_store)",
    ),
    (ErrorCode::GateClosed, "QA's gate rules (domain_rules)"),
    (ErrorCode::GateParked, "QA's gate rules (domain_rules)"),
    (
        ErrorCode::InvalidVerdict,
        "QA's verdict rules (domain_rules)",
    ),
    (
        ErrorCode::InvalidKind,
        "a session kind (domain_rules; clap checks the door's)",
    ),
    (
        ErrorCode::InvalidState,
        "a story or task state (domain_rules)",
    ),
    (
        ErrorCode::InvalidTransition,
        "story and task moves (domain_rules)",
    ),
    (ErrorCode::InvalidText, "a title's rules (domain_rules)"),
    (ErrorCode::InvalidId, "an id's shape (domain_rules)"),
    (
        ErrorCode::UnknownReference,
        "afeta naming work of another project (engine_store)",
    ),
    (ErrorCode::UnknownRole, "a role name (domain_rules)"),
    (
        ErrorCode::NotAnExecutionSession,
        "a task in a conversation session (domain_rules)",
    ),
    (
        ErrorCode::HistoriaNaoCorrigivel,
        "ADR 0212 story corrections (domain_rules)",
    ),
    (
        ErrorCode::HistoriaProntaSemResposta,
        "ADR 0212 stories with open questions (domain_rules)",
    ),
    (
        ErrorCode::TarefaEmAndamento,
        "ADR 0212 tasks in progress (domain_rules)",
    ),
    (
        ErrorCode::PerguntaNaoRespondida,
        "dev context of an open question (domain_rules)",
    ),
];

/// Runs the refusals on one source; each line is `label: exit N oq: CODE`.
fn refusals(door: &dyn Door) -> Vec<String> {
    let mut seen = Vec::new();
    let mut note = |label: &str, r: &Run| {
        let last = r.stderr.lines().last().unwrap_or("");
        // The code, not the message: a message may name the source.
        let code = last.split(':').take(2).collect::<Vec<_>>().join(":");
        seen.push(format!("{label}: exit {} {code}", r.code));
    };
    let session = door.run("dev-a", &["session", "start", "--kind", "conversation"]);
    assert_eq!(session.code, 0, "{}", session.stderr);
    let sid = session.stdout.trim().to_string();
    let ask = |text: &str, suggest: Option<&str>| {
        let mut args = vec!["ask", text, "--session", &sid, "--json"];
        if let Some(s) = suggest {
            args.extend(["--suggest", s]);
        }
        let r = door.run("po-bot", &args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.json()["questionId"].as_str().unwrap().to_string()
    };
    let closed = ask("Which carrier?", Some("Correios"));
    let bare = ask("Which warehouse?", None);
    let r = door.run("dev-a", &["dismiss", &closed]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    note(
        "answer a closed question",
        &door.run("dev-a", &["answer", &closed, "--text", "x"]),
    );
    note(
        "accept a closed question",
        &door.run("dev-a", &["answer", &closed, "--accept"]),
    );
    note(
        "dismiss as another",
        &door.run("dev-b", &["dismiss", &bare]),
    );
    note(
        "accept no suggestion",
        &door.run("dev-a", &["answer", &bare, "--accept"]),
    );
    note(
        "options on a text question",
        &door.run("dev-a", &["answer", &bare, "--answers-json", "[[\"x\"]]"]),
    );
    note(
        "options that are not JSON",
        &door.run("dev-a", &["answer", &bare, "--answers-json", "nope"]),
    );
    note(
        "blank answer",
        &door.run("dev-a", &["answer", &bare, "--text", " "]),
    );
    let long = "é".repeat(2_001);
    note(
        "answer too long",
        &door.run("dev-a", &["answer", &bare, "--text", &long]),
    );
    note(
        "bidi answer",
        &door.run("dev-a", &["answer", &bare, "--text", "ok \u{202e}evil"]),
    );
    note(
        "non-author answer",
        &door.run("dev-b", &["answer", &bare, "--text", "x"]),
    );
    let r = door.run("dev-a", &["answer", &bare, "--text", "Campinas"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    note(
        "second answer",
        &door.run("dev-a", &["answer", &bare, "--text", "x"]),
    );
    note(
        "dismiss an answered one",
        &door.run("dev-a", &["dismiss", &bare]),
    );
    let later = ask("Which courier?", None);
    note(
        "snooze in the past",
        &door.run("dev-a", &["snooze", &later, "--until", "2001-01-01"]),
    );
    note(
        "snooze too far",
        &door.run("dev-a", &["snooze", &later, "--for", "91d"]),
    );
    note(
        "snooze for no duration",
        &door.run("dev-a", &["snooze", &later, "--for", "2x"]),
    );
    note(
        "unsnooze what is not snoozed",
        &door.run("dev-a", &["unsnooze", &later]),
    );
    note(
        "unknown question",
        &door.run("dev-a", &["show", "q-doesnotexist"]),
    );
    note("limit 0", &door.run("dev-a", &["list", "--limit", "0"]));
    note("limit 51", &door.run("dev-a", &["list", "--limit", "51"]));
    note(
        "foreign cursor",
        &door.run("dev-a", &["list", "--cursor", "zz"]),
    );
    let long_search = "w".repeat(201);
    note(
        "search too long",
        &door.run("dev-a", &["list", "--search", &long_search]),
    );
    note(
        "unknown sort",
        &door.run("dev-a", &["list", "--sort", "random"]),
    );
    let huge = "x".repeat(10_000);
    note(
        "search of 10000",
        &door.run("dev-a", &["list", "--search", &huge]),
    );
    note(
        "unknown sort",
        &door.run("dev-a", &["list", "--sort", "shuffled"]),
    );
    note(
        "decisions since a date that is none",
        &door.run("dev-a", &["decisions", "--since", "2025-02-29"]),
    );
    note(
        "decisions by an unknown source",
        &door.run("dev-a", &["decisions", "--decision-source", "robot"]),
    );
    note(
        "decisions searching 10000",
        &door.run("dev-a", &["decisions", "--search", &huge]),
    );
    note(
        "cursor of another sort",
        &door.run("dev-a", &["list", "--sort", "asker", "--cursor", "3"]),
    );
    note(
        "empty question",
        &door.run("po-bot", &["ask", " ", "--session", &sid]),
    );
    let oversize = "é".repeat(501);
    note(
        "question too long",
        &door.run("po-bot", &["ask", &oversize, "--session", &sid]),
    );
    note(
        "bidi question",
        &door.run("po-bot", &["ask", "a \u{202e}b", "--session", &sid]),
    );
    note(
        "unknown session",
        &door.run("po-bot", &["ask", "Why?", "--session", "loja.nope"]),
    );
    note(
        "qa asks",
        &door.run("qa-bot", &["ask", "Why?", "--session", &sid]),
    );
    note(
        "suggestion of a missing rule",
        &door.run(
            "po-bot",
            &["ask", "Why?", "--session", &sid, "--affects", "nonsense"],
        ),
    );
    note(
        "verdict on an unknown task",
        &door.run("qa-bot", &["verdict", "t-nope", "approved"]),
    );
    note(
        "unknown format field",
        &door.run("dev-a", &["status", "--format", "{nope}"]),
    );
    note(
        "unknown gate",
        &door.run("dev-a", &["readiness", "--record", "bogus"]),
    );
    seen
}

/// The code of each `oq: CODE` in the observations.
fn codes(lines: &[String]) -> BTreeSet<ErrorCode> {
    lines
        .iter()
        .filter_map(|l| l.split(" oq: ").nth(1))
        .map(|c| ErrorCode::parse(c.trim()).unwrap_or_else(|| panic!("not a code: {c}")))
        .collect()
}

#[test]
fn every_refusal_a_door_provokes_is_the_same_locally_and_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let (server, tokens) = start_server(dir.path());
    let local_dir = dir.path().join("local");
    let local = refusals(&Local {
        data_dir: &local_dir,
    });
    let remote = refusals(&Http {
        base: &server.base,
        tokens: &tokens,
    });
    assert_eq!(local, remote, "local and http refusals differ");
    // The issue's own cases, by name.
    for expected in [
        "answer a closed question: exit 8 oq: question_closed",
        "limit 0: exit 6 oq: invalid_limit",
        "options on a text question: exit 6 oq: invalid_answers",
        "search of 10000: exit 6 oq: invalid_search",
        "unknown sort: exit 6 oq: invalid_sort",
    ] {
        assert!(
            local.iter().any(|l| l == expected),
            "{expected} not in {local:#?}"
        );
    }

    // Every code is provoked here, or placed in one of the lists with why.
    let provoked = codes(&local);
    let mut placed: BTreeMap<ErrorCode, &str> = BTreeMap::new();
    let mut walked_after_all = Vec::new();
    for (code, why) in ONE_SIDED.iter().chain(NOT_BY_A_DOOR) {
        assert!(
            placed.insert(*code, why).is_none(),
            "{code} is listed twice"
        );
        if provoked.contains(code) {
            walked_after_all.push(format!("{code} ({why})"));
        }
    }
    assert!(
        walked_after_all.is_empty(),
        "listed as not walked here, but a door provoked them: {walked_after_all:#?}"
    );
    let missing: Vec<&str> = ErrorCode::ALL
        .iter()
        .filter(|c| !provoked.contains(c) && !placed.contains_key(c))
        .map(|c| c.as_str())
        .collect();
    assert!(
        missing.is_empty(),
        "codes neither walked nor listed: {missing:?}"
    );
}

/// What the server's renderer answers for the next request: the refusal under test.
type Next = std::sync::Arc<std::sync::Mutex<Option<ApiError>>>;

/// Every code, as each kind of refusal that carries one, through the wire for real: the
/// server's own renderer (`ApiError`'s `IntoResponse`, served by axum on a loopback port)
/// answers the HTTP source's real request (`HttpSource::question`), and the source's
/// reading of it must keep the code and the exit code the refusal has in the engine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_code_keeps_its_code_and_exit_across_the_wire() {
    use axum::response::IntoResponse;
    let next: Next = Default::default();
    let serve = next.clone();
    let app = axum::Router::new().fallback(move || {
        let next = serve.clone();
        async move { next.lock().unwrap().take().unwrap().into_response() }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let source = HttpSource::new(&base, "t").unwrap();
    let across = |sent: ApiError| {
        let (next, source) = (next.clone(), source.clone());
        async move {
            *next.lock().unwrap() = Some(sent);
            source.question(Some("loja"), "q-1").await.unwrap_err()
        }
    };

    type Make = fn(ErrorCode) -> OqError;
    let kinds: [(&str, Make); 3] = [
        ("invalid", |c| OqError::invalid(c, "m")),
        ("forbidden", |c| OqError::forbidden(c, "m")),
        ("conflict", |c| OqError::conflict(c, "m")),
    ];
    // These codes belong to one kind each (walked below), whatever the status.
    let own_kind = [
        ErrorCode::SoOAutorDaSessao,
        ErrorCode::PerguntaJaRespondida,
        ErrorCode::NotFound,
        ErrorCode::Internal,
    ];
    let upstream = |c: &ErrorCode| c.is_upstream();
    let mut walked = BTreeSet::new();
    for code in ErrorCode::ALL
        .iter()
        .filter(|c| !own_kind.contains(c) && !upstream(c))
    {
        for (kind, make) in &kinds {
            let sent = make(*code);
            let read = across(sent.clone().into()).await;
            assert_eq!(read.code(), *code, "{kind} {code}");
            assert_eq!(
                read.exit_code(),
                sent.exit_code(),
                "{kind} {code}: {read:?}"
            );
            walked.insert(*code);
        }
    }
    // A bridged upstream's refusals, every `upstream_*` code: the server answered, so they
    // stay the upstream's (exit 13, never queued as an outage), as in the engine.
    for code in ErrorCode::ALL.iter().copied().filter(upstream) {
        let sent = OqError::upstream(code, "m");
        let read = across(sent.clone().into()).await;
        assert_eq!(
            (read.code(), read.exit_code()),
            (code, sent.exit_code()),
            "{code}"
        );
        assert!(!oq::source::resilient::is_unreachable(&read), "{code}");
        walked.insert(code);
    }
    // The one chosen difference: a server whose store cannot serve is, to its client, a
    // source that cannot serve now — the code is kept, the exit is the source's (10) and
    // the outbox keeps an answer for later — where locally it is the store's (9).
    for code in [
        ErrorCode::StoreBusy,
        ErrorCode::StoreFailed,
        ErrorCode::StoreDamaged,
        ErrorCode::StoreUnavailable,
        ErrorCode::DiskFull,
    ] {
        let sent = OqError::store(code, "m");
        let read = across(sent.clone().into()).await;
        assert_eq!(read.code(), code);
        assert_eq!((sent.exit_code(), read.exit_code()), (9, 10), "{code}");
        assert!(oq::source::resilient::is_unreachable(&read), "{code}");
    }
    // The refusals with a fixed code come back whole.
    for sent in [
        OqError::NotSessionAuthor {
            author: "ana".into(),
        },
        OqError::AlreadyAnswered {
            question_id: "q-1".into(),
        },
        OqError::not_found("question", "q-1"),
        OqError::Internal("boom".into()),
    ] {
        walked.insert(sent.code());
        assert_eq!(across(sent.clone().into()).await, sent);
    }
    // What only HTTP refuses, with the status the server sends it with: the code is
    // kept (a refused token reads as the source's `unauthorized`, whatever its code).
    for (status, code, exit) in [
        (405, ErrorCode::MethodNotAllowed, 10),
        (408, ErrorCode::BodyTimeout, 10),
        (413, ErrorCode::BodyTooLarge, 6),
        (415, ErrorCode::UnsupportedMediaType, 6),
        (422, ErrorCode::InvalidBody, 6),
        (429, ErrorCode::TooManyAuthFailures, 10),
        (429, ErrorCode::TooManyStreams, 10),
        (503, ErrorCode::TooManyConnections, 10),
        (401, ErrorCode::Unauthorized, 10),
    ] {
        let status = axum::http::StatusCode::from_u16(status).unwrap();
        let read = across(ApiError::new(status, code, "m")).await;
        assert_eq!((read.code(), read.exit_code()), (code, exit), "{status}");
    }
    let unwalked: Vec<_> = ErrorCode::ALL
        .iter()
        .filter(|c| !walked.contains(c))
        .collect();
    assert!(unwalked.is_empty(), "{unwalked:?}");
    server.abort();
}
