//! The review of a bulk action over the marked questions, its one confirmation, the run
//! and the per-question report.
//!
//! - The review lists every marked question with exactly what will be recorded in the
//!   person's name, or why it is skipped: no suggestion, options to choose, not theirs
//!   (each question is judged on its own session's author, so marks across several
//!   sessions are fine: the others' are skipped with the reason), already settled, an
//!   answer already queued. A draft that accepting or dismissing discards is named.
//! - The confirmation is `confirm.rs`'s: the action's own key or Enter as the very next
//!   key records; any other key disarms it (only Esc closes it then); the arrows and
//!   PgUp/PgDn scroll without disarming (no letter does). The confirming key plans
//!   again on the model as it is then: a question that changed meanwhile records
//!   nothing and is reported so; the others go on.
//! - The run: one question at a time through the one submission path (`submit.rs`: its
//!   idempotency key, the outbox when the source cannot be reached) or the dismiss
//!   effect (`run.rs`); each reply settles its own question's line and sends the next,
//!   so a failure of one never stops or undoes the others.

use crossterm::event::{KeyCode, KeyEvent};

use super::super::effect::Effect;
use super::super::model::Model;
use super::super::notice::{error, info};
pub use super::super::screens::triage::{Item, Kind, Outcome, Plan, Screen, Stage, Waiting};
use crate::wire::QuestionItem;

/// With marks, the accept or dismiss key: the review of every marked question.
pub(crate) fn open(model: &mut Model, kind: Kind) {
    if model.in_flight.is_some() {
        return error(
            model,
            "an answer is being sent: wait for its reply, then try again".into(),
        );
    }
    let mut ids = super::marked(model);
    let mut rest: Vec<String> = model
        .triage
        .marks
        .iter()
        .filter(|id| !ids.contains(id))
        .cloned()
        .collect();
    rest.sort();
    ids.extend(rest);
    model.triage.settled.clear();
    let items = ids.iter().map(|id| plan(model, kind, id)).collect();
    model.triage.screen = Some(Screen {
        kind,
        items,
        stage: Stage::Review { disarmed: false },
        scroll: 0,
        waiting: None,
    });
}

/// What `kind` would do to question `id` now.
fn plan(model: &Model, kind: Kind, id: &str) -> Item {
    let q = model.queue.items.iter().find(|q| q.question_id == id);
    let (project, pergunta) = q.map_or_else(Default::default, |q| {
        (q.project_id.clone(), q.pergunta.clone())
    });
    let plan = match q {
        None if model.triage.settled.contains(id) => {
            Plan::Skip("settled elsewhere meanwhile".into())
        }
        None => Plan::Skip("not in the list now (the search or the filter hides it)".into()),
        Some(q) => match skip_reason(model, kind, q) {
            Some(why) => Plan::Skip(why),
            None => Plan::Record {
                what: record_words(model, kind, q),
                draft: draft(model, q),
            },
        },
    };
    Item {
        question_id: id.to_string(),
        project,
        pergunta,
        plan,
        outcome: None,
    }
}

fn skip_reason(model: &Model, kind: Kind, q: &QuestionItem) -> Option<String> {
    if q.status != "open" {
        return Some(format!("already {}", q.status));
    }
    if !q.can_answer {
        let why = q
            .reason
            .clone()
            .unwrap_or_else(|| "you cannot answer it".into());
        return Some(format!("not yours: {why}"));
    }
    if let Some(why) = super::super::outbox::already_queued(model, &q.question_id) {
        return Some(why);
    }
    match kind {
        Kind::Accept if !q.prompts.is_empty() => {
            Some("it is answered by choosing options (i)".into())
        }
        Kind::Accept if q.sugestao.is_none() => Some("no suggestion to accept".into()),
        _ => None,
    }
}

fn record_words(model: &Model, kind: Kind, q: &QuestionItem) -> String {
    let who = &model.user;
    match kind {
        Kind::Accept => format!(
            "its suggestion as the answer, in {who}'s name (decisionSource: suggestion): «{}»",
            q.sugestao.clone().unwrap_or_default()
        ),
        Kind::Dismiss => {
            format!("closed without an answer, in {who}'s name (decisionSource: dismissed)")
        }
    }
}

/// The draft of `q` the action would discard, in words.
fn draft(model: &Model, q: &QuestionItem) -> Option<String> {
    let d = model
        .drafts
        .get(&q.question_id)
        .filter(|d| !d.trim().is_empty())?;
    Some(if q.prompts.is_empty() {
        super::super::words::clip(d, 60)
    } else {
        super::super::choices::draft_summary(d)
    })
}

fn is_scroll(k: &KeyEvent) -> Option<i32> {
    match k.code {
        KeyCode::Down => Some(1),
        KeyCode::Up => Some(-1),
        KeyCode::PageDown => Some(10),
        KeyCode::PageUp => Some(-10),
        KeyCode::Home => Some(-10_000),
        _ => None,
    }
}

/// A key while the review, the run or the report is up: it never reaches the keymap.
pub(crate) fn key(model: &mut Model, k: &KeyEvent, fx: &mut Vec<Effect>) {
    model.dirty = true;
    let Some(s) = &mut model.triage.screen else {
        return;
    };
    if let Some(by) = is_scroll(k) {
        s.scroll = (i32::from(s.scroll) + by).clamp(0, i32::from(u16::MAX)) as u16;
        return;
    }
    match s.stage {
        Stage::Review { .. } if k.code == KeyCode::Esc => {
            model.triage.screen = None;
            info(
                model,
                "cancelled: nothing was recorded (the marks stay)".into(),
            );
        }
        Stage::Review { disarmed: true } | Stage::Running => {}
        Stage::Review { disarmed: false } => {
            let again = model.keymap.normal(k) == Some(s.kind.action());
            if again || k.code == KeyCode::Enter {
                confirm(model, fx);
            } else {
                s.stage = Stage::Review { disarmed: true };
            }
        }
        Stage::Report => {
            if matches!(k.code, KeyCode::Esc | KeyCode::Enter) {
                model.triage.screen = None;
            }
        }
    }
}

/// The confirming key: plan again on the model as it is now; what changed since the
/// review records nothing, the rest runs.
fn confirm(model: &mut Model, fx: &mut Vec<Effect>) {
    let Some(s) = &model.triage.screen else {
        return;
    };
    let kind = s.kind;
    let fresh: Vec<Item> = s
        .items
        .iter()
        .map(|i| plan(model, kind, &i.question_id))
        .collect();
    let Some(s) = &mut model.triage.screen else {
        return;
    };
    for (item, now) in s.items.iter_mut().zip(fresh) {
        if matches!(item.plan, Plan::Record { .. }) && item.plan != now.plan {
            let why = match now.plan {
                Plan::Skip(why) => why,
                Plan::Record { .. } => "what it would record changed".into(),
            };
            item.outcome = Some(Outcome::Failed(format!(
                "changed since the review ({why}): nothing was recorded"
            )));
        }
    }
    s.stage = Stage::Running;
    model.triage.marks.clear();
    model.triage.anchor = None;
    super::run::next(model, fx);
}
