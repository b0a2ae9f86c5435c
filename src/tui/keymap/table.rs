//! The one table of keys: for every action, where it acts, its default keys, what it
//! does (the help overlay's words) and its hint (the bottom line's short label, and when
//! it applies). The keymap's defaults, the help overlay and the hint bar are all read
//! from [`TABLE`], so none of them can drift from the others; the keys they show are the
//! live ones (the defaults with `[keys]` laid over them).

use super::Action;

/// Where a key acts. A key's meaning is looked up in its place's map only: inside the
/// answer field only `Field` keys act and everything else is text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Place {
    /// The panes: queue, "Waiting for you", the question.
    Normal,
    /// Typing in the answer field.
    Field,
    /// Choosing in an options form (which also takes the moves of `Normal`).
    Options,
}

/// When a hint is worth its room on the bottom line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// In the panes, whatever is selected.
    Panes,
    /// In the panes, on a question this person can answer now.
    Answerable,
    /// … that also has a suggestion to accept (and no options).
    Acceptable,
    /// Typing in the answer field.
    Field,
    /// In an options form.
    Options,
    /// In the Decisions view.
    Decisions,
    /// In the panes, with questions marked for a bulk action.
    Marked,
    /// In the panes, listing the snoozed questions.
    Snoozed,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub action: Action,
    pub place: Place,
    pub keys: &'static [&'static str],
    pub describe: &'static str,
    /// The hint bar's labels: in which situation, what word. Consecutive rows with the
    /// same word share it ("j/k move").
    pub hints: &'static [(When, &'static str)],
}

const fn row(
    action: Action,
    place: Place,
    keys: &'static [&'static str],
    describe: &'static str,
    hints: &'static [(When, &'static str)],
) -> Row {
    Row {
        action,
        place,
        keys,
        describe,
        hints,
    }
}

use Action as A;
use Place::{Field, Normal, Options};
use When as W;

/// Every binding, in the order the help overlay and the hint bar show them.
pub const TABLE: &[Row] = &[
    row(
        A::Help,
        Normal,
        &["?", "f1"],
        "this help",
        &[(W::Panes, "help"), (W::Decisions, "help")],
    ),
    row(
        A::Down,
        Normal,
        &["j", "down"],
        "move down",
        &[(W::Panes, "move"), (W::Decisions, "move")],
    ),
    row(
        A::Up,
        Normal,
        &["k", "up"],
        "move up",
        &[(W::Panes, "move"), (W::Decisions, "move")],
    ),
    row(
        A::PageDown,
        Normal,
        &["ctrl-d", "pagedown"],
        "page down",
        &[],
    ),
    row(A::PageUp, Normal, &["ctrl-u", "pageup"], "page up", &[]),
    row(A::Top, Normal, &["g", "home"], "first row", &[]),
    row(A::Bottom, Normal, &["G", "end"], "last row", &[]),
    row(
        A::Accept,
        Normal,
        &["a"],
        "accept the suggestion, or the marked ones' (asks first)",
        &[(W::Acceptable, "accept"), (W::Marked, "accept marked")],
    ),
    row(
        A::Answer,
        Normal,
        &["i", "enter"],
        "type an answer / choose options",
        &[(W::Answerable, "answer")],
    ),
    row(A::Editor, Normal, &["e"], "answer in $EDITOR", &[]),
    row(
        A::CopySimilar,
        Normal,
        &["c"],
        "copy the similar past answer into the field, to edit",
        &[],
    ),
    row(
        A::Filter,
        Normal,
        &["f"],
        "filter: open / answered / closed / all / how settled",
        &[(W::Panes, "filter")],
    ),
    row(
        A::FilterBack,
        Normal,
        &["F"],
        "filter, the other way round",
        &[],
    ),
    row(
        A::Search,
        Normal,
        &["/"],
        "search (in Decisions: the filter line)",
        &[(W::Panes, "search"), (W::Decisions, "filter")],
    ),
    row(A::Sort, Normal, &["s"], "sort", &[]),
    row(
        A::NextPane,
        Normal,
        &["tab", "l", "right"],
        "next pane (in an options form: next question)",
        &[(W::Options, "next question")],
    ),
    row(
        A::PrevPane,
        Normal,
        &["shift-tab", "h", "left"],
        "previous pane",
        &[],
    ),
    row(
        A::JumpToQueue,
        Normal,
        &["o"],
        "jump to the open questions",
        &[],
    ),
    row(
        A::ScrollDown,
        Normal,
        &["J"],
        "scroll the question down",
        &[(W::Decisions, "scroll")],
    ),
    row(
        A::ScrollUp,
        Normal,
        &["K"],
        "scroll the question up",
        &[(W::Decisions, "scroll")],
    ),
    row(
        A::ImReady,
        Normal,
        &["r"],
        "record \"I'm ready\" (asks first)",
        &[],
    ),
    row(
        A::ArchitectureReady,
        Normal,
        &["R"],
        "record \"Confirm architecture ready\" (asks first)",
        &[],
    ),
    row(
        A::PauseAuto,
        Normal,
        &["p"],
        "pause auto-answer (asks first)",
        &[],
    ),
    row(
        A::DelegateNow,
        Normal,
        &["d"],
        "delegate now (asks first)",
        &[],
    ),
    row(
        A::Dismiss,
        Normal,
        &["x"],
        "dismiss without an answer, or the marked (asks first)",
        &[(W::Marked, "dismiss marked")],
    ),
    row(
        A::Snooze,
        Normal,
        &["z"],
        "snooze: not now, back at 2h, tomorrow 9:00… (asks first)",
        &[],
    ),
    row(
        A::ShowSnoozed,
        Normal,
        &["Z"],
        "show the snoozed and when each is back, or hide them",
        &[(W::Snoozed, "open view")],
    ),
    row(
        A::Unsnooze,
        Normal,
        &["u"],
        "unsnooze: back in the open view now (asks first)",
        &[(W::Snoozed, "unsnooze")],
    ),
    row(
        A::Mark,
        Normal,
        &["space"],
        "mark / unmark the question for a bulk accept/dismiss",
        &[(W::Marked, "mark")],
    ),
    row(
        A::Visual,
        Normal,
        &["V"],
        "mark a range: V, move, V or space (esc drops it)",
        &[],
    ),
    row(
        A::Decisions,
        Normal,
        &["D"],
        "Decisions: every answered or closed question",
        &[],
    ),
    row(
        A::Outbox,
        Normal,
        &["O"],
        "the outbox: answers kept for the source",
        &[],
    ),
    row(
        A::Back,
        Normal,
        &["esc"],
        "back / close",
        &[(W::Options, "leave"), (W::Decisions, "back")],
    ),
    row(
        A::Quit,
        Normal,
        &["q", "ctrl-c"],
        "quit",
        &[(W::Panes, "quit")],
    ),
    row(
        A::Submit,
        Field,
        &["enter"],
        "send the answer",
        &[(W::Field, "send")],
    ),
    row(
        A::Newline,
        Field,
        &["alt-enter", "ctrl-j"],
        "new line",
        &[(W::Field, "new line")],
    ),
    row(A::Undo, Field, &["ctrl-u"], "undo", &[]),
    row(A::Redo, Field, &["ctrl-r"], "redo", &[]),
    row(
        A::Editor,
        Field,
        &["ctrl-e"],
        "answer in $EDITOR",
        &[(W::Field, "$EDITOR")],
    ),
    row(
        A::Back,
        Field,
        &["esc"],
        "leave the field (the text stays a draft)",
        &[(W::Field, "leave")],
    ),
    row(
        A::Pick,
        Options,
        &["space"],
        "pick / unpick the option",
        &[(W::Options, "pick")],
    ),
    row(
        A::Next,
        Options,
        &["enter"],
        "next step: pick and go on, review, send",
        &[(W::Options, "next / send")],
    ),
];

/// The places an action acts in, in table order.
pub fn places(action: Action) -> impl Iterator<Item = Place> {
    TABLE
        .iter()
        .filter(move |r| r.action == action)
        .map(|r| r.place)
}
