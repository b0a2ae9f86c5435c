//! The memory of answers (issue 17 part 2) in the TUI's `update`: when the selection
//! rests on an open question the person can answer with text, the lookup of the earlier
//! answer it resembles goes out as an effect ([`follow`], after every update, so every
//! way the selection moves asks); its reply arrives as [`Msg::Recalled`]
//! (super::effect::Msg::Recalled) and the question pane shows it. The copy key puts that
//! answer in the answer field to edit — it never answers: sending is still the field's
//! Enter. A field that already holds text is left as it is (the person's text is never
//! overwritten): the notice says so and nothing is copied. A failed lookup shows no hint:
//! it only ever helps, and the question reads the same without it.

use super::effect::Effect;
use super::model::{AnswerForm, Focus, Model};
use super::notice::{error, info};
use super::reload::{draft_changed, sync_form};
use super::writes::{refusal, refuse};
use crate::domain::text::one_line as clip;
use crate::wire::SimilarAnswer;

/// Asks for the selected question's earlier answer when the selection has moved to
/// another question that can take one; forgets the hint of the last.
pub(super) fn follow(model: &mut Model, fx: &mut Vec<Effect>) {
    if model.decisions.open {
        return;
    }
    let wanted = model
        .current()
        .filter(|q| q.status == "open" && q.can_answer && q.prompts.is_empty())
        .map(|q| (q.question_id.clone(), q.project_id.clone()));
    if model.memory.asked.as_ref() == wanted.as_ref().map(|(id, _)| id) {
        return;
    }
    model.memory.hint = None;
    model.memory.asked = wanted.as_ref().map(|(id, _)| id.clone());
    if let Some((question_id, project)) = wanted {
        fx.push(Effect::RecallSimilar {
            question_id,
            project,
        });
    }
}

/// The lookup's reply: kept if it is for the question last asked about.
pub(super) fn recalled(
    model: &mut Model,
    question_id: &str,
    result: Result<Option<SimilarAnswer>, String>,
) {
    if model.memory.asked.as_deref() != Some(question_id) {
        return;
    }
    model.memory.hint = result.ok().flatten();
    model.dirty = true;
}

/// The copy key: the earlier answer into the (empty) answer field, the field open on
/// it. Nothing is sent.
pub(super) fn copy(model: &mut Model, fx: &mut Vec<Effect>) {
    if let Some(why) = refusal(model) {
        return refuse(model, why);
    }
    let Some(id) = model.current().map(|q| q.question_id.clone()) else {
        return;
    };
    let Some(hint) = model.memory.for_question(&id).cloned() else {
        return error(model, "no earlier answer resembles this question".into());
    };
    // The field as it stands, with its draft (opened on the question if closed).
    sync_form(model, fx);
    let typed = model
        .form
        .as_ref()
        .filter(|f| f.question_id == id)
        .is_some_and(|f| !f.value().trim().is_empty());
    if typed {
        return error(
            model,
            "the answer field already holds your text: nothing copied (clear it to copy the earlier answer)"
                .into(),
        );
    }
    model.form = Some(AnswerForm::new(&id, &hint.resposta));
    model.focus = Focus::Answer;
    draft_changed(model, fx);
    info(
        model,
        format!(
            "copied {}'s answer «{}» — edit it; Enter sends, Esc keeps it as a draft",
            hint.respondida_por,
            clip(&hint.resposta, 40)
        ),
    );
}
