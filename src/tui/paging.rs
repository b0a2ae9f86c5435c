//! The queue as pages of the source's list: the next page is asked for as the selection
//! nears the end of the loaded rows, `G`/End goes to the filter's last question (pages
//! load until the last, then it is selected), PgDn/PgUp move a screenful, and a change of
//! search or sort asks the source again from the first page. Part of the pure `update`.
//!
//! Invariant: the search, the sort, `G` and the counts act on every question of the
//! filter, never on the loaded page only; a reply of an older list is dropped by its
//! generation (see `update.rs`).

use super::effect::Effect;
use super::model::{Model, PAGE};
use super::notice::info;
use super::reload::{reload_pages, sync_form};

/// What the status line says while `G` loads pages; it goes when they have arrived.
const LOADING_TO_END: &str = "loading every question to the last…";

/// Asks for the next page once the selection is within half a page of the loaded end.
pub(super) fn maybe_load_more(model: &mut Model, fx: &mut Vec<Effect>) {
    if model.queue.loading_more || model.queue.reloading || model.selected + PAGE / 2 < model.rows()
    {
        return;
    }
    load_next(model, fx);
}

/// Asks for the page after the loaded rows; true while one is coming (asked now, asked
/// already, or after the reload in flight, when `G` goes on).
fn load_next(model: &mut Model, fx: &mut Vec<Effect>) -> bool {
    if model.queue.loading_more || model.queue.reloading {
        return true;
    }
    let Some(cursor) = model.queue.cursor.clone() else {
        return false;
    };
    model.queue.loading_more = true;
    fx.push(Effect::LoadMore {
        id: model.queue.generation,
        query: model.list_query().after(Some(&cursor)),
    });
    true
}

/// `G`/End: the last question of the filter. With pages left, they load first (the
/// status line counts them) and the selection lands when the last has arrived.
pub(super) fn to_end(model: &mut Model, fx: &mut Vec<Effect>) {
    if model.queue.cursor.is_some() {
        model.queue.to_end = true;
        info(model, LOADING_TO_END.into());
        load_next(model, fx);
    } else {
        select_last(model, fx);
    }
}

/// After a page arrived under `to_end`: the next one, or the last row.
pub(super) fn continue_to_end(model: &mut Model, fx: &mut Vec<Effect>) {
    if !load_next(model, fx) {
        model.queue.to_end = false;
        if model
            .notice
            .as_ref()
            .is_some_and(|n| n.text == LOADING_TO_END)
        {
            model.notice = None;
        }
        select_last(model, fx);
    }
}

fn select_last(model: &mut Model, fx: &mut Vec<Effect>) {
    model.selected = model.rows().saturating_sub(1);
    model.selected_id = model.current().map(|q| q.question_id.clone());
    model.detail_scroll = 0;
    sync_form(model, fx);
}

/// PgDn/PgUp's step: the queue pane's rows at the last frame's size.
pub(super) fn screenful(model: &Model) -> isize {
    super::view::queue_rows(model).max(1) as isize
}

/// The search text or the sort changed: the list again from its first page (the
/// selection is kept if the question is still in it).
pub(super) fn query_changed(model: &mut Model, fx: &mut Vec<Effect>) {
    model.queue.to_end = false;
    model.dirty = true;
    fx.extend(reload_pages(model, 1));
}
