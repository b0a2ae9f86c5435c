//! Keys, by focus: the keymap's actions outside a text field; inside the answer field
//! only the field keys (send, new line, `$EDITOR`, leave) and everything else is text;
//! the search line; the options form. Part of the pure `update`: no IO, no clock.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::choices::{ChoiceForm, Outcome};
use super::cleanup::{ExitReason, Teardown, abort_open_work};
use super::effect::Effect;
use super::help::{Help, Outcome as HelpOutcome};
use super::keymap::Action;
use super::modal::Modal;
use super::model::{Focus, Model};
use super::notice::error;
use super::reload::{draft_changed, reload, sync_form};
use super::submit::submit;
use super::writes::{refusal, refuse};
use crate::domain::AnswerInput;
use crate::domain::question::RESPOSTA_MAX_CHARS;
use crate::domain::text::text_len;
use crate::engine::StatusFilter;

pub(super) fn key(model: &mut Model, k: &KeyEvent, fx: &mut Vec<Effect>) {
    if model.modal.is_some() {
        if super::interrupt::is_hard_quit(model, k) {
            fx.extend(quit(model));
        } else if matches!(model.modal, Some(Modal::Confirm(_))) {
            super::confirm::key(model, k, fx);
        } else {
            super::interrupt::key(model, k);
        }
        return;
    }
    if let Some(help) = &mut model.help {
        match help.key(k, &model.keymap) {
            HelpOutcome::Stay => {}
            HelpOutcome::Close => model.help = None,
            HelpOutcome::Quit => fx.extend(quit(model)),
        }
        return;
    }
    // The outbox overlay: any key closes it, Ctrl-C still quits.
    if model.show_outbox {
        if model.keymap.normal(k) == Some(Action::Quit)
            && k.modifiers.contains(KeyModifiers::CONTROL)
        {
            fx.extend(quit(model));
        }
        model.show_outbox = false;
        return;
    }
    if super::decisions::screen_key(model, k, fx) {
        return;
    }
    if model.snooze.prompt.is_some() {
        if super::interrupt::is_hard_quit(model, k) {
            return fx.extend(quit(model));
        }
        return super::snooze::prompt_key(model, k, fx);
    }
    match model.focus {
        Focus::Search => search_key(model, k, fx),
        Focus::Answer => field_key(model, k, fx),
        Focus::Choices => choices_key(model, k, fx),
        Focus::Queue | Focus::Waiting | Focus::Question => {
            if let Some(action) = model.keymap.normal(k)
                && !super::triage::action(model, action, fx)
            {
                act(model, action, fx);
            }
        }
    }
}

fn search_key(model: &mut Model, k: &KeyEvent, fx: &mut Vec<Effect>) {
    match k.code {
        KeyCode::Esc => {
            model.focus = Focus::Queue;
            if model.search.is_empty() {
                return;
            }
            model.search.clear();
        }
        KeyCode::Enter | KeyCode::Down | KeyCode::Up | KeyCode::Tab => {
            model.focus = Focus::Queue;
            return;
        }
        KeyCode::Backspace => {
            if model.search.pop().is_none() {
                return;
            }
        }
        KeyCode::Char(c)
            if !k
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            if !search_takes(model, &c.to_string()) {
                return;
            }
        }
        _ => return,
    }
    super::paging::query_changed(model, fx);
}

fn search_paste(model: &mut Model, line: &str, fx: &mut Vec<Effect>) {
    if search_takes(model, line) {
        super::paging::query_changed(model, fx);
    }
}

/// Appends `text` to the search box if the result is still a search the source takes
/// (`domain::search`); otherwise says why and leaves the box as it was.
fn search_takes(model: &mut Model, text: &str) -> bool {
    let wanted = format!("{}{text}", model.search);
    match crate::domain::search::Search::parse(&wanted) {
        Ok(_) => {
            model.search = wanted;
            true
        }
        Err(e) => {
            error(model, e.to_string());
            false
        }
    }
}

fn field_key(model: &mut Model, k: &KeyEvent, fx: &mut Vec<Effect>) {
    if model.form.is_none() {
        model.focus = Focus::Queue;
        return;
    }
    match model.keymap.field(k) {
        Some(Action::Submit) => submit_text(model, fx),
        Some(Action::Newline) => {
            if let Some(f) = &mut model.form {
                f.text.insert_newline();
            }
            draft_changed(model, fx);
        }
        Some(Action::Editor) => open_editor(model, fx),
        Some(Action::Back) => model.focus = Focus::Queue,
        Some(a @ (Action::Undo | Action::Redo)) => {
            if let Some(f) = &mut model.form
                && (if a == Action::Undo {
                    f.text.undo()
                } else {
                    f.text.redo()
                })
            {
                draft_changed(model, fx);
            }
        }
        _ => {
            if let Some(f) = &mut model.form
                && f.text.input(*k)
            {
                draft_changed(model, fx);
            }
        }
    }
}

/// The options form's draft follows every change, like the answer field's.
fn choices_draft_changed(model: &mut Model, fx: &mut Vec<Effect>) {
    let Some(c) = &model.choices else { return };
    let (id, draft) = (c.question_id.clone(), c.draft());
    match draft {
        None => {
            if model.drafts.remove(&id).is_some() {
                fx.push(Effect::RemoveDraft { question_id: id });
            }
        }
        Some(text) if model.drafts.get(&id) != Some(&text) => {
            model.drafts.insert(id.clone(), text.clone());
            fx.push(Effect::SaveDraft {
                question_id: id,
                text,
            });
        }
        Some(_) => {}
    }
}

fn choices_key(model: &mut Model, k: &KeyEvent, fx: &mut Vec<Effect>) {
    let Some(form) = &mut model.choices else {
        model.focus = Focus::Queue;
        return;
    };
    let outcome = form.key(k, &model.keymap);
    choices_draft_changed(model, fx);
    match outcome {
        Outcome::Nothing => {}
        Outcome::Leave => model.focus = Focus::Queue,
        Outcome::Invalid(e) => error(model, e),
        Outcome::Dismiss => super::confirm::gate(model, Action::Dismiss, fx),
        Outcome::Submit(answers) => match refusal(model) {
            Some(why) => refuse(model, why),
            None => {
                let input = AnswerInput {
                    answers: Some(answers),
                    ..AnswerInput::default()
                };
                submit(model, input, fx);
            }
        },
    }
}

/// The quit key is a teardown like any other: through the one cleanup.
fn quit(model: &mut Model) -> Vec<Effect> {
    abort_open_work(model, &ExitReason::Teardown(Teardown::Quit))
}

fn submit_text(model: &mut Model, fx: &mut Vec<Effect>) {
    if let Some(why) = refusal(model) {
        return refuse(model, why);
    }
    let Some(form) = &model.form else { return };
    let text = form.value();
    if text.trim().is_empty() {
        return error(model, "type an answer first (Esc leaves the field)".into());
    }
    let (n, limit) = (text_len(&text), RESPOSTA_MAX_CHARS);
    if n > limit {
        return error(
            model,
            format!(
                "the answer is {n} characters, {} over the limit of {limit}; nothing was sent",
                n - limit
            ),
        );
    }
    submit(model, AnswerInput::text(text.trim_end()), fx);
}

fn open_editor(model: &mut Model, fx: &mut Vec<Effect>) {
    if let Some(why) = refusal(model) {
        return refuse(model, why);
    }
    if model.current().is_some_and(|q| !q.prompts.is_empty()) {
        return error(
            model,
            "this question is answered by choosing options (i)".into(),
        );
    }
    sync_form(model, fx);
    if let Some(f) = &model.form {
        fx.push(Effect::OpenEditor {
            question_id: f.question_id.clone(),
            text: f.value(),
        });
    }
}

fn move_by(model: &mut Model, delta: isize, fx: &mut Vec<Effect>) {
    match model.focus {
        Focus::Waiting => {
            let last = model.waiting.len().saturating_sub(1) as isize;
            model.waiting_selected =
                (model.waiting_selected as isize + delta).clamp(0, last) as usize;
        }
        Focus::Question => {
            model.detail_scroll =
                (model.detail_scroll as isize + delta).clamp(0, u16::MAX as isize) as u16;
        }
        _ => {
            let last = model.rows().saturating_sub(1) as isize;
            model.selected = (model.selected as isize + delta).clamp(0, last) as usize;
            model.selected_id = model.current().map(|q| q.question_id.clone());
            model.detail_scroll = 0;
            sync_form(model, fx);
        }
    }
}

fn act(model: &mut Model, action: Action, fx: &mut Vec<Effect>) {
    match action {
        Action::Down => move_by(model, 1, fx),
        Action::Up => move_by(model, -1, fx),
        Action::PageDown => move_by(model, super::paging::screenful(model), fx),
        Action::PageUp => move_by(model, -super::paging::screenful(model), fx),
        Action::Top => move_by(model, -(isize::MAX / 2), fx),
        Action::Bottom if model.focus == Focus::Queue => super::paging::to_end(model, fx),
        Action::Bottom => move_by(model, isize::MAX / 2, fx),
        Action::NextPane | Action::PrevPane => {
            let order = [Focus::Queue, Focus::Waiting, Focus::Question];
            let at = order.iter().position(|f| *f == model.focus).unwrap_or(0);
            let step = if action == Action::NextPane {
                1
            } else {
                order.len() - 1
            };
            model.focus = order[(at + step) % order.len()];
        }
        Action::JumpToQueue => {
            model.focus = Focus::Queue;
            if model.filter != StatusFilter::Open || model.snooze.show {
                model.filter = StatusFilter::Open;
                model.snooze.show = false;
                model.queue.items.clear();
                model.queue.to_end = false;
                model.reselect();
                fx.extend(reload(model));
            }
        }
        Action::ScrollDown => model.detail_scroll = model.detail_scroll.saturating_add(1),
        Action::ScrollUp => model.detail_scroll = model.detail_scroll.saturating_sub(1),
        Action::Accept
        | Action::ImReady
        | Action::ArchitectureReady
        | Action::PauseAuto
        | Action::DelegateNow
        | Action::Dismiss
        | Action::Unsnooze => super::confirm::gate(model, action, fx),
        Action::Snooze => super::snooze::open(model),
        Action::ShowSnoozed => super::snooze::toggle(model, fx),
        Action::Answer => {
            if model.focus == Focus::Waiting {
                return jump_to_waiting(model, fx);
            }
            if let Some(why) = refusal(model) {
                return refuse(model, why);
            }
            let Some(q) = model.current() else { return };
            if q.prompts.is_empty() {
                sync_form(model, fx);
                model.focus = Focus::Answer;
            } else {
                if model
                    .choices
                    .as_ref()
                    .is_none_or(|c| c.question_id != q.question_id)
                {
                    let mut form = ChoiceForm::new(&q.question_id, &q.prompts);
                    if let Some(draft) = model.drafts.get(&q.question_id) {
                        form.restore(draft);
                    }
                    model.choices = Some(form);
                }
                model.focus = Focus::Choices;
            }
        }
        Action::Editor => open_editor(model, fx),
        Action::CopySimilar => super::memory::copy(model, fx),
        Action::Filter | Action::FilterBack => {
            let every = StatusFilter::every();
            let at = every.iter().position(|f| *f == model.filter).unwrap_or(0);
            let step = if action == Action::Filter {
                1
            } else {
                every.len() - 1
            };
            model.filter = every[(at + step) % every.len()];
            model.snooze.show = false;
            super::reload::new_list(model, fx);
        }
        Action::Sort => {
            model.sort = super::model::next_sort(model.sort);
            super::paging::query_changed(model, fx);
        }
        Action::Search => model.focus = Focus::Search,
        Action::Help => model.help = Some(Help::default()),
        Action::Outbox => model.show_outbox = true,
        Action::Back => {
            if model.notice.take().is_none() && !model.search.is_empty() {
                model.search.clear();
                super::paging::query_changed(model, fx);
            }
            model.focus = Focus::Queue;
        }
        Action::Quit => fx.extend(quit(model)),
        // The field's and the options form's: never looked up in the panes' map.
        Action::Submit | Action::Newline | Action::Undo | Action::Redo => {}
        Action::Pick | Action::Next => {}
        Action::Decisions => super::decisions::open(model, fx),
        // Triage's (`triage::action`), outside the queue pane they do nothing.
        Action::Mark | Action::Visual => {}
    }
    if matches!(action, Action::Down | Action::PageDown) && model.focus == Focus::Queue {
        super::paging::maybe_load_more(model, fx);
    }
}

fn jump_to_waiting(model: &mut Model, fx: &mut Vec<Effect>) {
    let Some(w) = model.waiting.get(model.waiting_selected) else {
        return;
    };
    let id = w.question_id.clone();
    match model.queue.items.iter().position(|q| q.question_id == id) {
        Some(p) => {
            model.selected = p;
            model.selected_id = Some(id);
            model.focus = Focus::Queue;
            model.detail_scroll = 0;
            sync_form(model, fx);
        }
        None => error(
            model,
            format!("question {id} is not in the list; clear the search, or G to load every row"),
        ),
    }
}

/// Pasted text goes to whatever is being typed in; elsewhere it is ignored.
pub(super) fn paste(model: &mut Model, text: &str, fx: &mut Vec<Effect>) {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    if model.decisions.open && model.decisions.editing.is_some() {
        return super::decisions::paste(model, &text);
    }
    if model.snooze.prompt.is_some() {
        return super::snooze::push(model, &text);
    }
    match model.focus {
        Focus::Answer => {
            if let Some(form) = &mut model.form {
                form.text.insert_str(&text);
                model.dirty = true;
                draft_changed(model, fx);
            }
        }
        Focus::Search => search_paste(model, text.lines().next().unwrap_or_default(), fx),
        Focus::Choices => {
            if let Some(c) = model.choices.as_mut().filter(|c| c.typing) {
                c.custom[c.current].push_str(&text.replace('\n', " "));
                model.dirty = true;
                choices_draft_changed(model, fx);
            }
        }
        _ => {}
    }
}
