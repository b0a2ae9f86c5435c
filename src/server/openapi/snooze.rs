//! The snooze routes' operations (issue 17 part 4): the author's "not now" and its end.

use serde_json::Value;

use super::parts::*;
use super::refusals::AUTHOR_ONLY;
use crate::domain::ErrorCode as C;

pub(super) fn snooze_op() -> Value {
    with_body(
        op(
            "Snooze a question: hidden from its author's queue until a time or for a duration, by the server's clock (an event; the question stays open: an agent's wait and readiness still count it); a newer snooze replaces it",
            "the author of the question's session",
            &["questionId"],
            with(
                project_errors(&body_errors(
                    &[
                        AUTHOR_ONLY,
                        (
                            "409",
                            "already answered (`pergunta_ja_respondida`) or closed (`question_closed`)",
                            &[C::PerguntaJaRespondida, C::QuestionClosed],
                        ),
                    ],
                    "neither or both of until and forSeconds (`invalid_snooze`), an end not ahead of now (`snooze_in_past`) or more than 90 days away (`snooze_too_far`)",
                    &[
                        C::InvalidBody,
                        C::InvalidSnooze,
                        C::SnoozeInPast,
                        C::SnoozeTooFar,
                    ],
                )),
                "200",
                ok("the question with its snooze", schema("Question")),
            ),
        ),
        schema("SnoozeInput"),
    )
}

pub(super) fn unsnooze_op() -> Value {
    op(
        "End a question's snooze now: back in its author's queue",
        "the author of the question's session",
        &["questionId"],
        with(
            project_errors(&[
                AUTHOR_ONLY,
                (
                    "409",
                    "no snooze holds it (`not_snoozed`), or it is already answered (`pergunta_ja_respondida`) or closed (`question_closed`)",
                    &[C::NotSnoozed, C::PerguntaJaRespondida, C::QuestionClosed],
                ),
            ]),
            "200",
            ok("the question, its snooze ended", schema("Question")),
        ),
    )
}
