//! The TUI's whole state: what is loaded, what is selected, what the user is typing.
//!
//! Plain data that `update` changes and the view reads. Nothing here does IO or reads
//! the clock: `now` arrives in messages. The selection is kept by question id, so it
//! survives reloads and live updates. The search and the sort are the source's
//! (`engine::ListQuery`, over the whole filter): the rows shown are `queue.items` in the
//! order the source gave them (no second copy to keep in step), and a change of search
//! or sort loads the list again.

use std::collections::{HashMap, HashSet};

use ratatui_textarea::TextArea;

use super::choices::ChoiceForm;
use super::effect::AutoAction;
use super::keymap::Keymap;
use super::modal::Modal;
pub use super::words::{age, ago};
use crate::engine::{ListQuery, StatusFilter};
use crate::source::outbox::Entry;
use crate::wire::{AutoDelegate, QuestionItem, WaitingItem};

/// Rows fetched per page: the API's ceiling.
pub const PAGE: usize = 50;

/// Which pane the keys act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Focus {
    #[default]
    Queue,
    Waiting,
    Question,
    /// Typing in the "Answer" field: every printable key is text.
    Answer,
    /// Choosing among a question's options.
    Choices,
    /// Typing the incremental search.
    Search,
}

pub use crate::engine::Sort;

/// The next sort of the `s` key's cycle.
pub fn next_sort(s: Sort) -> Sort {
    let all = Sort::ALL;
    let at = all.iter().position(|o| *o == s).unwrap_or(0);
    all[(at + 1) % all.len()]
}

/// How the queue's title names a sort.
pub fn sort_label(s: Sort) -> &'static str {
    match s {
        Sort::Oldest => "oldest first",
        Sort::Newest => "newest first",
        Sort::Project => "by project",
        Sort::Asker => "by asker",
    }
}

pub fn filter_label(f: StatusFilter) -> &'static str {
    f.as_str()
}

/// The link to the source, as the status line shows it. `since` is Unix ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connection {
    Connecting,
    Live { since: i64 },
    Reconnecting { since: i64 },
    Offline { since: i64 },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoticeKind {
    Info,
    Error,
}

/// One line of feedback above the hint bar; replaced by the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub kind: NoticeKind,
    pub text: String,
}

/// The question list as loaded so far: pages from the start, `cursor` for the next.
#[derive(Debug, Clone, Default)]
pub struct Queue {
    pub items: Vec<QuestionItem>,
    pub total: u64,
    /// `total` is where a search's count stopped: at least that many.
    pub total_is_lower_bound: bool,
    /// The open questions a snooze hides from this view now (issue 17 part 4), and when
    /// the first comes back: the view reloads then.
    pub snoozed: u64,
    pub snoozed_next_return: Option<i64>,
    pub cursor: Option<String>,
    pub loaded_once: bool,
    /// Generation of the list in flight or last applied; replies with another are stale.
    pub generation: u64,
    pub loading_more: bool,
    /// The list of this generation is being fetched again from its start: no page may be
    /// appended to the rows it will replace (an appended page could arrive first and be
    /// thrown away by the replacing reply); `G` waits for it.
    pub reloading: bool,
    /// `G`/End was pressed: pages keep loading until the last, then the last row is
    /// selected.
    pub to_end: bool,
}

/// The answer field of the question being answered.
#[derive(Debug, Clone)]
pub struct AnswerForm {
    pub question_id: String,
    pub text: TextArea<'static>,
}

impl AnswerForm {
    pub fn new(question_id: &str, draft: &str) -> Self {
        let lines: Vec<String> = if draft.is_empty() {
            vec![String::new()]
        } else {
            draft.split('\n').map(str::to_string).collect()
        };
        let mut text = TextArea::new(lines);
        // A long answer wraps at words (a word wider than the box at its letters).
        text.set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
        text.move_cursor(ratatui_textarea::CursorMove::Bottom);
        text.move_cursor(ratatui_textarea::CursorMove::End);
        AnswerForm {
            question_id: question_id.into(),
            text,
        }
    }
    pub fn value(&self) -> String {
        self.text.lines().join("\n")
    }
}

/// The one answer sent and not yet replied to, text or options alike (`submit.rs`):
/// while it is out no second answer is sent, and its reply must carry `id`.
#[derive(Debug, Clone, PartialEq)]
pub struct InFlight {
    /// The submission's id ([`Model::submit_seq`] then): a reply with another is stale.
    pub id: u64,
    pub key: String,
    pub question_id: String,
    pub project: String,
    pub input: crate::domain::AnswerInput,
}

/// Settings that come from the config file and change what `update` does.
#[derive(Debug, Clone)]
pub struct Behaviour {
    pub bell: bool,
    pub notify: bool,
    /// After this long reconnecting, the status says offline.
    pub offline_after_ms: i64,
    /// A key that writes in the person's name asks first (`confirm.rs`).
    pub confirm: bool,
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            bell: true,
            notify: true,
            offline_after_ms: 10_000,
            confirm: true,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Model {
    pub user: String,
    pub source: String,
    /// `--project`; `None` shows every visible project.
    pub project: Option<String>,
    pub now: i64,
    pub started_at: i64,
    pub filter: StatusFilter,
    pub sort: Sort,
    /// The search box's text; the source answers it (see [`Model::list_query`]).
    pub search: String,
    pub queue: Queue,
    /// The terminal's size at the last frame (columns, rows), for PgDn/PgUp's screenful.
    pub screen: (u16, u16),
    pub selected: usize,
    pub selected_id: Option<String>,
    pub waiting: Vec<WaitingItem>,
    pub waiting_selected: usize,
    /// Open questions in scope, whatever the filter: the banner's N.
    pub open_count: Option<u64>,
    pub counts_generation: u64,
    pub focus: Focus,
    pub detail_scroll: u16,
    pub form: Option<AnswerForm>,
    pub choices: Option<ChoiceForm>,
    /// Every draft by question id, as on disk.
    pub drafts: HashMap<String, String>,
    /// The answer in flight, with its idempotency key (the claim: no second send
    /// meanwhile); handed to the outbox if the connection ends before its reply (see
    /// `cleanup.rs`).
    pub in_flight: Option<InFlight>,
    /// This run's random prefix for idempotency keys (set by the driver).
    pub client_nonce: String,
    pub submit_seq: u64,
    /// The revision watcher is open on a live attach (see `cleanup.rs`).
    pub attached: bool,
    /// A `LoadCounts` is out; its reply may ring the bell (a pending notification).
    pub counts_in_flight: bool,
    pub connection: Connection,
    pub revision: Option<i64>,
    /// This source's outbox entries, oldest first, as last read from disk (`outbox.rs`).
    pub outbox: Vec<Entry>,
    pub notice: Option<Notice>,
    /// A modal notice over the screen; while up it takes every key (`modal.rs`).
    pub modal: Option<Modal>,
    /// The auto-delegate of bridged questions (`auto.rs`).
    pub auto: AutoView,
    /// Why the last poll failed (`link.rs`), while the link is down.
    pub link_fault: Option<super::link::LinkError>,
    /// The notice said about the link while it was down; cleared with it.
    pub link_notice: Option<String>,
    /// The help overlay, while it is up (`help.rs`).
    pub help: Option<super::help::Help>,
    /// For questions our outbox found settled elsewhere: who settled them and how, in
    /// words (`modal::settled`), shown beside the kept text.
    pub settled_elsewhere: HashMap<String, String>,
    /// The ids of open questions seen in counts replies (`notify.rs`); `None` before
    /// the first, which only remembers.
    pub seen_open: Option<HashSet<String>>,
    /// The outbox overlay (`view/outbox.rs`): any key closes it.
    pub show_outbox: bool,
    /// The marks, and a bulk action's review or report (`triage/`).
    pub triage: super::screens::triage::Triage,
    /// The Decisions view (`decisions/`), kept while closed with its filter.
    pub decisions: super::screens::decisions::DecisionsView,
    /// The snooze prompt, the snoozed list's switch, a snooze just ended (`snooze.rs`).
    pub snooze: super::screens::snooze::Snoozes,
    /// The earlier answer the selected question resembles (`memory.rs`).
    pub memory: super::screens::memory::Memory,
    pub keymap: Keymap,
    pub behaviour: Behaviour,
    pub quit: bool,
    /// Set when the screen must be drawn again.
    pub dirty: bool,
}

impl Model {
    pub fn new(
        user: &str,
        source: &str,
        project: Option<String>,
        now: i64,
        keymap: Keymap,
    ) -> Self {
        Model {
            user: user.into(),
            source: source.into(),
            project,
            now,
            started_at: now,
            filter: StatusFilter::Open,
            sort: Sort::default(),
            search: String::new(),
            queue: Queue::default(),
            screen: (80, 24),
            selected: 0,
            selected_id: None,
            waiting: Vec::new(),
            waiting_selected: 0,
            open_count: None,
            counts_generation: 0,
            focus: Focus::Queue,
            detail_scroll: 0,
            form: None,
            choices: None,
            drafts: HashMap::new(),
            in_flight: None,
            client_nonce: "tui".into(),
            submit_seq: 0,
            attached: false,
            counts_in_flight: false,
            connection: Connection::Connecting,
            revision: None,
            outbox: Vec::new(),
            notice: None,
            modal: None,
            auto: AutoView::default(),
            link_fault: None,
            link_notice: None,
            help: None,
            show_outbox: false,
            seen_open: None,
            settled_elsewhere: HashMap::new(),
            triage: Default::default(),
            decisions: Default::default(),
            snooze: Default::default(),
            memory: Default::default(),
            keymap,
            behaviour: Behaviour::default(),
            quit: false,
            dirty: true,
        }
    }

    /// The question under the selection, if any row is shown. The rows are
    /// `queue.items` in the source's order (search and sort are the source's), so a
    /// row's position is its index there.
    pub fn current(&self) -> Option<&QuestionItem> {
        self.queue.items.get(self.selected)
    }

    /// How many rows the queue shows: every loaded question.
    pub fn rows(&self) -> usize {
        self.queue.items.len()
    }

    /// The source cannot be reached right now: answers go to the outbox. A refused
    /// token or another refusal of a server that answered is no outage: nothing queues.
    pub fn offline(&self) -> bool {
        matches!(
            self.connection,
            Connection::Reconnecting { .. } | Connection::Offline { .. }
        ) && self.link_fault.as_ref().is_none_or(|l| l.fault.queues())
    }

    /// The link while it is down, in words: "offline", "bad gateway (502)"…
    pub fn down_words(&self) -> String {
        self.link_fault
            .as_ref()
            .map_or_else(|| "offline".into(), |l| l.fault.words())
    }

    pub fn is_typing(&self) -> bool {
        matches!(self.focus, Focus::Answer | Focus::Search)
            || self.snooze.prompt.is_some()
            || self.choices.as_ref().is_some_and(ChoiceForm::is_typing)
    }

    /// What the list asks the source for: the filter, the search box's words, the sort.
    /// The search keys only let through text that parses, so a refusal here cannot
    /// happen; were it to, the list is loaded unsearched rather than not at all.
    pub fn list_query(&self) -> ListQuery {
        // The person's queue hides what they snoozed (or, toggled, lists only that);
        // other views show everything.
        let snoozed = match (self.filter, self.snooze.show) {
            (StatusFilter::Open, false) => crate::engine::SnoozeFilter::Hide,
            (StatusFilter::Open, true) => crate::engine::SnoozeFilter::Only,
            _ => crate::engine::SnoozeFilter::Show,
        };
        let base = ListQuery::new(self.filter)
            .sorted(self.sort)
            .limit(PAGE)
            .snoozed(snoozed);
        base.clone().search(&self.search).unwrap_or(base)
    }

    /// After the loaded rows changed: finds the selected id again (or keeps the
    /// position, within the rows, when that row has left).
    pub fn reselect(&mut self) {
        let found = self
            .selected_id
            .as_ref()
            .and_then(|id| self.queue.items.iter().position(|q| &q.question_id == id));
        self.selected = match found {
            Some(p) => p,
            None => self.selected.min(self.rows().saturating_sub(1)),
        };
        self.selected_id = self.current().map(|q| q.question_id.clone());
    }
}

/// The auto-delegate part of the model.
#[derive(Debug, Clone, Default)]
pub struct AutoView {
    /// The last snapshot; `None` when the source has no bridge (or is offline).
    pub view: Option<AutoDelegate>,
    /// A pause or delegate sent and not yet replied to: (question id, which).
    pub pending: Option<(String, AutoAction)>,
    /// The question whose field or form the author has open, and whether that opening
    /// paused its countdown (so closing it without an answer resumes it).
    pub interaction: Option<(String, bool)>,
}
