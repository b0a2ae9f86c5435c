//! The auto-delegate countdown of bridged OpenCode questions (seed 002), in the TUI: its
//! state, its pure handling, and the words the question pane shows.
//!
//! - The view ([`AutoView::view`]) arrives with every reload of the queue: the driver
//!   answers [`Effect::Load`] with [`Msg::AutoDelegate`] under the same id as the list, so
//!   a reply older than the last reload is dropped. `None`: the source has no bridge.
//! - A question is bridged when the view knows it, or when it is an imported OpenCode
//!   question (`source: opencode` with an `upstream`) while the view exists.
//! - `pause_auto` and `delegate_now` act for the session's author only (like answering)
//!   and are keys of the normal map, so they never fire from inside a text field. Each
//!   sends one [`Effect`]; its reply goes to the notice line, then the queue reloads.
//! - The author's interaction: the moment the author's answer field or options form is
//!   open on a bridged question that counts (or waits to), `interaction.rs` asks
//!   the source to pause it with reason `interaction` — no confirmation: it records no
//!   decision, only the pause and its actor. Closing the field without an answer resumes
//!   it (a fresh window); sending the answer settles it, so nothing is resumed.
//! - The bridge's health: a request paused `unreachable` (or still counting past its
//!   deadline while its upstream is disconnected) reads "paused: OpenCode unreachable".
//! - The countdown: `now` arrives in [`Msg::Tick`] (the driver ticks every second only
//!   while [`Model::countdown_on_screen`]) and [`Msg::Revision`]; the screen is marked
//!   dirty only when the shown text changes.

pub use super::effect::AutoAction;
use super::effect::{Effect, Msg};
use super::keymap::Action;
pub use super::model::AutoView;
use super::model::Model;
use super::notice::{error, info};
use super::reload::reload;
use crate::domain::delegation::PauseReason;
use crate::wire::{AutoCommand, AutoRequest, AutoState, QuestionItem};

/// What the question pane shows for a bridged question: the state in words, and the
/// keys that apply now (drawn inert for anyone but the session's author).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoLine {
    pub text: String,
    /// (keys, label) pairs, from the live keymap.
    pub keys: Vec<(String, &'static str)>,
    pub counting: bool,
}

impl AutoLine {
    /// The line as one string: "auto-answers in 23 s — p pause · d delegate now".
    pub fn full(&self) -> String {
        let keys: Vec<String> = self
            .keys
            .iter()
            .map(|(k, label)| format!("{k} {label}"))
            .collect();
        if keys.is_empty() {
            self.text.clone()
        } else {
            format!("{} — {}", self.text, keys.join(" · "))
        }
    }
}

/// The auto-delegate entry of a question, if it is bridged. An imported question the
/// snapshot does not list (yet) reads as waiting, or off when the feature is off.
pub(super) fn request(model: &Model, q: &QuestionItem) -> Option<AutoRequest> {
    let view = model.auto.view.as_ref()?;
    if let Some(r) = view.requests.get(&q.question_id) {
        return Some(r.clone());
    }
    let imported = q.source == "opencode" && q.upstream.is_some();
    imported.then_some(AutoRequest {
        state: if view.enabled {
            AutoState::Waiting
        } else {
            AutoState::Disabled
        },
        deadline_unix_ms: None,
        pause_reason: None,
        paused_by: None,
        enabled: view.enabled,
    })
}

pub(super) fn may_pause(s: AutoState) -> bool {
    matches!(s, AutoState::Counting | AutoState::Waiting)
}

/// An explicit delegate works with the feature off too; never once a post is out.
fn may_delegate(s: AutoState) -> bool {
    matches!(
        s,
        AutoState::Counting | AutoState::Waiting | AutoState::Paused | AutoState::Disabled
    )
}

/// Whole seconds left at `now`, rounded up (0 once due).
pub fn seconds_left(deadline: i64, now: i64) -> i64 {
    ((deadline - now).max(0) + 999) / 1000
}

/// The line for `q` at `model.now`; `None` for a question that is not bridged, is no
/// longer open, or is settled.
pub fn line(model: &Model, q: &QuestionItem) -> Option<AutoLine> {
    if q.status != "open" {
        return None;
    }
    let r = request(model, q)?;
    let km = &model.keymap;
    let first = |a: Action| {
        km.keys_for(a)
            .split('/')
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let mut keys = Vec::new();
    if may_pause(r.state) {
        keys.push((first(Action::PauseAuto), "pause"));
    }
    if may_delegate(r.state) {
        keys.push((first(Action::DelegateNow), "delegate now"));
    }
    keys.retain(|(k, _)| !k.is_empty());
    let ours = model
        .auto
        .interaction
        .as_ref()
        .is_some_and(|(id, paused)| *paused && *id == q.question_id);
    let text = match r.state {
        AutoState::Counting if ours => "auto-answer pausing while you answer…".into(),
        AutoState::Counting
            if r.deadline_unix_ms
                .is_none_or(|d| seconds_left(d, model.now) == 0)
                && unreachable(model).is_some() =>
        {
            paused_unreachable(model)
        }
        AutoState::Counting => match r.deadline_unix_ms {
            Some(d) if seconds_left(d, model.now) > 0 => {
                format!("auto-answers in {} s", seconds_left(d, model.now))
            }
            Some(_) => "auto-answering now".into(),
            None => "auto-answer counting".into(),
        },
        AutoState::Paused => match r.pause_reason.as_deref() {
            Some("interaction") if ours => format!(
                "auto-answer paused while you answer ({} resumes it, sending settles it)",
                model
                    .keymap
                    .field_keys_for(Action::Back)
                    .split('/')
                    .next()
                    .unwrap_or("Esc")
            ),
            Some("interaction") => "auto-answer paused while its author answers".into(),
            Some("unreachable") => paused_unreachable(model),
            Some(why) => format!("auto-answer paused ({why})"),
            None => "auto-answer paused".into(),
        },
        AutoState::Disabled => "auto-answer off".into(),
        AutoState::Waiting => "auto-answer not armed yet".into(),
        AutoState::Submitting => "submitting…".into(),
        AutoState::Uncertain => {
            "uncertain: upstream may already have an answer — it will not be sent again".into()
        }
        AutoState::Settled | AutoState::Unknown => return None,
    };
    Some(AutoLine {
        text,
        keys,
        counting: r.state == AutoState::Counting,
    })
}

/// The disconnected upstreams (not those another server drives): their names and since
/// when (the server's Unix ms); `None` when every one is connected.
pub fn unreachable(model: &Model) -> Option<Vec<(&str, i64)>> {
    let view = model.auto.view.as_ref()?;
    let down: Vec<(&str, i64)> = view
        .bridges
        .iter()
        .filter(|b| !b.connected && !b.driven_elsewhere)
        .map(|b| (b.name.as_str(), b.since_unix_ms))
        .collect();
    (!down.is_empty()).then_some(down)
}

/// "paused: OpenCode laptop unreachable" when one upstream is down, else without a name
/// (a request does not say which upstream it came from).
fn paused_unreachable(model: &Model) -> String {
    match unreachable(model).as_deref() {
        Some([(name, _)]) => format!("paused: OpenCode {name} unreachable"),
        _ => "paused: OpenCode unreachable".into(),
    }
}

impl Model {
    /// The selected question is counting down: the driver ticks every second meanwhile.
    pub fn countdown_on_screen(&self) -> bool {
        self.help.is_none()
            && self
                .current()
                .and_then(|q| line(self, q))
                .is_some_and(|l| l.counting)
    }
}

/// The clock moved on: mark the screen dirty only if what it shows changed (the
/// countdown, or an age in minutes).
pub fn set_now(model: &mut Model, now: i64) {
    let shown = |m: &Model| m.current().and_then(|q| line(m, q)).map(|l| l.text);
    let before = shown(model);
    let minute = now / 60_000 != model.now / 60_000;
    model.now = now;
    if minute || shown(model) != before {
        model.dirty = true;
    }
}

/// `pause_auto` / `delegate_now` on the selected question.
pub(super) fn key(model: &mut Model, action: Action, fx: &mut Vec<Effect>) {
    let which = if action == Action::PauseAuto {
        AutoAction::Pause
    } else {
        AutoAction::Delegate
    };
    let Some(q) = model.current() else {
        return error(model, "no question is selected".into());
    };
    let question_id = q.question_id.clone();
    let Some(r) = request(model, q).filter(|_| q.status == "open") else {
        return error(
            model,
            "this question has no auto-answer (only open questions of an OpenCode bridge do)"
                .into(),
        );
    };
    if !q.can_answer {
        let why = q
            .reason
            .clone()
            .unwrap_or_else(|| "you cannot answer this question".into());
        return error(model, why);
    }
    if model.auto.pending.is_some()
        || model
            .in_flight
            .as_ref()
            .is_some_and(|f| f.question_id == question_id)
    {
        return error(model, "a pause, delegate or answer is being sent".into());
    }
    let allowed = match which {
        AutoAction::Pause => may_pause(r.state),
        _ => may_delegate(r.state),
    };
    if !allowed {
        let verb = if which == AutoAction::Pause {
            "pause"
        } else {
            "delegate"
        };
        return error(
            model,
            format!("cannot {verb}: the auto-answer is {}", r.state.as_str()),
        );
    }
    model.auto.pending = Some((question_id.clone(), which));
    match which {
        AutoAction::Pause => {
            info(model, "pausing the auto-answer…".into());
            fx.push(Effect::PauseAuto {
                question_id,
                reason: PauseReason::User,
            });
        }
        _ => {
            info(model, "delegating: sending the auto-answer now…".into());
            fx.push(Effect::DelegateNow { question_id });
        }
    }
}

/// [`Msg::AutoDelegate`], [`Msg::AutoCommanded`] and [`Msg::Tick`].
pub(super) fn on_msg(model: &mut Model, msg: Msg, fx: &mut Vec<Effect>) {
    match msg {
        Msg::Tick { now } => set_now(model, now),
        Msg::AutoDelegate { id, view } => {
            if id != model.queue.generation {
                return;
            }
            // A failed read keeps the last view: the list's own error says the rest.
            if let Ok(view) = view
                && model.auto.view != view
            {
                model.auto.view = view;
                model.dirty = true;
            }
        }
        Msg::AutoCommanded {
            question_id,
            action,
            result,
        } => {
            if model
                .auto
                .pending
                .as_ref()
                .is_some_and(|(q, _)| *q == question_id)
            {
                model.auto.pending = None;
            }
            model.dirty = true;
            let quiet = matches!(action, AutoAction::Interaction | AutoAction::Resume);
            match result {
                // The author is typing: the pane's line says it, the notice stays theirs.
                Ok(_) if quiet => fx.extend(reload(model)),
                Ok(reply) => {
                    info(model, done(action, &question_id, &reply));
                    fx.extend(reload(model));
                }
                Err(e) => {
                    if action == AutoAction::Interaction
                        && let Some((id, paused)) = &mut model.auto.interaction
                        && *id == question_id
                    {
                        // Nothing was paused: closing the form has nothing to resume.
                        *paused = false;
                    }
                    let what = match action {
                        AutoAction::Pause => "pause refused",
                        AutoAction::Delegate => "delegate refused",
                        AutoAction::Interaction => "the countdown was not paused while you answer",
                        AutoAction::Resume => "the countdown was not resumed",
                    };
                    error(model, format!("{what}: {e}"));
                }
            }
        }
        _ => {}
    }
}

fn done(action: AutoAction, question_id: &str, reply: &AutoCommand) -> String {
    if reply.recovering {
        return format!("{question_id}: the bridge is looking it up upstream; try again shortly");
    }
    let state = reply.state.map_or("", AutoState::as_str);
    match action {
        AutoAction::Pause => format!("auto-answer paused for {question_id}"),
        AutoAction::Delegate if state.is_empty() => format!("delegated {question_id}"),
        AutoAction::Delegate => format!("delegated {question_id} ({state})"),
        AutoAction::Interaction => format!("auto-answer paused while you answer {question_id}"),
        AutoAction::Resume => format!("auto-answer resumed for {question_id}"),
    }
}
