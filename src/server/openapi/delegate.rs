//! The auto-delegate routes' operations (seed 002's HTTP API), with who may call each.

use serde_json::{Value, json};

use super::parts::*;
use crate::domain::ErrorCode as C;

/// The operations, by route.
pub(super) struct DelegateOps {
    pub snapshot: Value,
    pub pause: Value,
    pub resume: Value,
    pub delegate: Value,
    pub settings: Value,
}

/// The OpenCode bridges' auto-delegate routes (seed 002): not under a project; the caller
/// sees the upstreams of the projects they belong to.
pub(super) fn delegate_ops() -> DelegateOps {
    let base = |summary: &str, who: &str, params: &[&str], extra: &[Refusal]| -> Value {
        let mut responses = serde_json::Map::new();
        responses.insert(
            "200".into(),
            ok(
                "the upstreams' snapshots, or the request's state after the command",
                json!({ "type": "object" }),
            ),
        );
        responses.insert("401".into(), unauthorized());
        responses.insert(
            "429".into(),
            err("too many failed authentications from this address this minute (`too_many_auth_failures`)", &[C::TooManyAuthFailures]),
        );
        responses.insert(
            "404".into(),
            err("no bridge of the caller's projects, or the request is no bridged question of theirs", &[C::NotFound]),
        );
        for (s, what, codes) in extra {
            responses.insert((*s).into(), err(what, codes));
        }
        json!({
            "summary": summary,
            "description": who,
            "security": [{ "bearer": [] }],
            "parameters": params.iter().map(|p| param(p)).collect::<Vec<_>>(),
            "responses": responses,
        })
    };
    let reader = "Who: a member or an agent of the upstream's project; anyone else gets 404.";
    let author = "Who: the question's session author (the upstream's `answerer`) alone, like \
                  answering: another member or an agent gets 403 `so_o_autor_da_sessao`; \
                  anyone outside the project 404. The act is recorded in the log with its actor.";
    let commands = body_errors(
        &[
            (
                "403",
                "not the question's session author (`so_o_autor_da_sessao`)",
                &[C::SoOAutorDaSessao],
            ),
            (
                "409",
                "`question_submission_claimed` (another submission holds it, or an uncertain tombstone), `question_identity_conflict` (sessionID/directory contradict the bound identity), `question_already_settled`, `question_closed`, `question_not_ready` (delegate: its directory is still being looked up)",
                &[
                    C::QuestionSubmissionClaimed,
                    C::QuestionIdentityConflict,
                    C::QuestionAlreadySettled,
                    C::QuestionClosed,
                    C::QuestionNotReady,
                    C::PerguntaJaRespondida,
                ],
            ),
            (
                "502",
                "delegate while the upstream cannot be reached (`upstream_unreachable`), or, on a server that does not drive the upstream, a command no server driving it took in time (`upstream_driven_elsewhere`: withdrawn untouched; any other outcome is the driving server's own); nothing sent",
                &[
                    C::UpstreamUnreachable,
                    C::UpstreamRefused,
                    C::UpstreamUncertain,
                    C::UpstreamError,
                    C::UpstreamDrivenElsewhere,
                ],
            ),
        ],
        "a malformed body (`invalid_body`)",
        &[C::InvalidBody],
    );
    let hints = json!({ "type": "object", "additionalProperties": false, "properties": {
        "sessionID": { "type": "string" }, "directory": { "type": "string" }, "upstream": { "type": "string" } } });
    let optional = |mut op: Value| -> Value {
        if let Some(o) = op.as_object_mut() {
            o.insert(
                "requestBody".into(),
                json!({ "required": false, "content": { "application/json": { "schema": hints } } }),
            );
        }
        op
    };
    let snapshot = base(
        "The auto-delegate snapshot of each OpenCode upstream: its connection (connected, sinceUnixMs; drivenElsewhere when another `oq serve` on the database drives it), settings, coverage, and per request its state (waiting, counting with deadline and deadlineUnixMs, paused with pauseReason interaction|user|goal|refused|unreachable and pausedBy, disabled, submitting, uncertain, settled)",
        reader,
        &[],
        &[],
    );
    let mut pause_body = hints.clone();
    pause_body["required"] = json!(["reason"]);
    pause_body["properties"]["reason"] =
        json!({ "type": "string", "enum": ["interaction", "user"] });
    let pause = with_body(
        base(
            "Pause a request's auto-delegate timer (`interaction`: the author has the question open in a form; `user`: they take it over)",
            author,
            &["requestId"],
            &commands,
        ),
        pause_body,
    );
    let resume = optional(base(
        "Lift a person's pause: the timer counts again from a fresh window",
        author,
        &["requestId"],
        &commands,
    ));
    let delegate = optional(base(
        "Answer a request now with the fixed continuation text, recorded as this person's delegation (works with the feature off)",
        author,
        &["requestId"],
        &commands,
    ));
    let settings = with_body(
        base(
            "Turn auto-delegate on or off (persisted, and recorded in the log with its actor); `enabled` must be a JSON boolean",
            "Who: the upstream's admins (`admins` in its `[[opencode]]` table; its answerer by default): anyone else of the project gets 403 `not_an_admin`, anyone outside it 404.",
            &[],
            &body_errors(
                &[(
                    "403",
                    "not one of the upstream's admins (`not_an_admin`)",
                    &[C::NotAnAdmin],
                )],
                "`enabled` is not a boolean (`invalid_setting`), or a malformed body (`invalid_body`); nothing changed",
                &[C::InvalidSetting, C::InvalidBody],
            ),
        ),
        json!({ "type": "object", "required": ["enabled"], "properties": {
            "enabled": { "type": "boolean" }, "upstream": { "type": "string" } } }),
    );
    DelegateOps {
        snapshot,
        pause,
        resume,
        delegate,
        settings,
    }
}
