//! "Not now" (issue 17 part 4) in the TUI: the snooze key's prompt, the snoozed list's
//! switch, the replies, and the ring when a snooze ends on its own. Part of the pure
//! `update`: no IO, no clock (the time typed is read against `model.now`).
//!
//! - The snooze key, on a question this person can answer, opens a prompt for a time
//!   ("2h", "tomorrow 9:00", read by `domain::snooze::parse_when`, the domain's one
//!   reader). Enter reads it: a refusal (past, past 90 days, not a time) is named in the
//!   prompt and nothing is recorded; a time goes through the usual confirmation
//!   (`confirm.rs`), which shows the exact time to be recorded. Esc closes the prompt.
//! - On a question this person cannot answer the key says why (the same inert notice as
//!   an answering key). While the source is out of reach the key is refused and says
//!   so: a snooze is never queued offline (`writes::snooze_offline`).
//! - The switch lists only the snoozed questions in the open view, each with its return
//!   time; there the unsnooze key (asks first) brings the selected one back now.
//! - When a snooze ends on its own, the tick reloads the view (`update`); the questions
//!   that came back and that this person can answer ring as new ones do (`notify.rs`).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::effect::{Effect, SnoozeChange};
use super::keymap::Action;
use super::model::Model;
use super::notice::{error, info};
use super::screens::snooze::SnoozePrompt;
use super::writes::{refusal, refuse, snooze_offline};
use crate::domain::date::format_day_time;
use crate::domain::snooze::parse_when;
use crate::engine::StatusFilter;
use crate::wire::QuestionItem;

/// The prompt's ceiling: far above any time a person types.
const PROMPT_MAX_CHARS: usize = 100;

/// The snooze key in the panes: the prompt for the selected question, or why not.
pub(super) fn open(model: &mut Model) {
    if let Some(why) = refusal(model) {
        return refuse(model, why);
    }
    if let Some(why) = snooze_offline(model) {
        return error(model, why);
    }
    let Some(q) = model.current() else { return };
    model.snooze.prompt = Some(SnoozePrompt::new(&q.question_id));
    model.notice = None;
}

/// A key while the prompt is up (a confirmation over it takes the keys first).
pub(super) fn prompt_key(model: &mut Model, k: &KeyEvent, fx: &mut Vec<Effect>) {
    let Some(p) = &mut model.snooze.prompt else {
        return;
    };
    match k.code {
        KeyCode::Esc => {
            model.snooze.prompt = None;
            info(model, "snooze cancelled: nothing was recorded".into());
        }
        KeyCode::Enter => match parse_when(&p.text, model.now, 0) {
            Err(e) => {
                p.refused = Some(e.to_string());
                p.until = None;
            }
            Ok(until) => {
                p.refused = None;
                p.until = Some(until);
                super::confirm::gate(model, Action::Snooze, fx);
            }
        },
        KeyCode::Backspace => {
            p.text.pop();
            // The refusal was of the text as it was.
            p.refused = None;
        }
        KeyCode::Char(c)
            if !k
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            push(model, &c.to_string());
        }
        _ => {}
    }
}

/// Appends typed or pasted text to the prompt, on one line and within its ceiling.
pub(super) fn push(model: &mut Model, s: &str) {
    let Some(p) = &mut model.snooze.prompt else {
        return;
    };
    let s = s.lines().next().unwrap_or_default();
    p.refused = None;
    if p.text.chars().count() + s.chars().count() > PROMPT_MAX_CHARS {
        p.refused = Some(format!("at most {PROMPT_MAX_CHARS} characters"));
        return;
    }
    p.text.push_str(s);
    model.dirty = true;
}

/// The switch: the open view lists the snoozed questions instead, or the open ones
/// again. Either way it is the open view, loaded afresh.
pub(super) fn toggle(model: &mut Model, fx: &mut Vec<Effect>) {
    model.snooze.show = !(model.snooze.show && model.filter == StatusFilter::Open);
    model.filter = StatusFilter::Open;
    super::reload::new_list(model, fx);
}

/// [`Msg::Snoozed`](super::effect::Msg::Snoozed): said, and the view reloaded (the
/// question leaves the open view, or comes back to it).
pub(super) fn recorded(
    model: &mut Model,
    question_id: &str,
    change: SnoozeChange,
    result: Result<QuestionItem, String>,
    fx: &mut Vec<Effect>,
) {
    model.dirty = true;
    match (result, change) {
        (Ok(q), SnoozeChange::Until(asked)) => {
            // The source's clock decides; what it recorded is what is said.
            let until = q.snooze.map_or(asked, |s| s.until);
            let list = model.keymap.keys_for(Action::ShowSnoozed);
            let list = list.split('/').next().unwrap_or_default();
            info(
                model,
                format!(
                    "snoozed {question_id} until {} UTC — {list} lists the snoozed",
                    format_day_time(until)
                ),
            );
            fx.extend(super::reload::reload(model));
        }
        (Ok(_), SnoozeChange::Wake) => {
            info(
                model,
                format!("unsnoozed {question_id}: back in the open view"),
            );
            fx.extend(super::reload::reload(model));
        }
        (Err(e), SnoozeChange::Until(_)) => error(model, format!("snooze refused: {e}")),
        (Err(e), SnoozeChange::Wake) => error(model, format!("unsnooze refused: {e}")),
    }
}

/// The tick at `now` found the first snooze (at `from`) ended. The snoozed list holds
/// the questions that came back: they ring now. The open view gets them from the
/// reload: they ring when it arrives ([`loaded`]).
pub(super) fn woke(model: &mut Model, from: i64, now: i64, fx: &mut Vec<Effect>) {
    if model.snooze.show && model.filter == StatusFilter::Open {
        let items = model.queue.items.clone();
        super::notify::returned(model, &items, from, now, fx);
    } else {
        model.snooze.waking = Some((from, now));
    }
}

/// The open view's page after a snooze ended: what came back rings.
pub(super) fn loaded(model: &mut Model, fx: &mut Vec<Effect>) {
    let Some((from, to)) = model.snooze.waking.take() else {
        return;
    };
    if model.filter == StatusFilter::Open && !model.snooze.show {
        let items = model.queue.items.clone();
        super::notify::returned(model, &items, from, to, fx);
    }
}
