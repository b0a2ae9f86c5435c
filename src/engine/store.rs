//! The narrow interface between the engine's rules and where the log lives.
//!
//! The engine never writes SQL: it reads through [`StoreView`] and appends [`NewEvent`]s
//! inside [`Store::transact`], which runs the read-decide-append as one serialised write
//! transaction. The embedded SQLite store implements it today; a PostgreSQL store for
//! teams implements the same two traits (`SELECT … FOR UPDATE`-free: one advisory lock per
//! project around the same read-decide-append).

use super::decisions::{DecisionPage, DecisionQuery};
use super::list::{Cursor, Sort};
use crate::domain::dev_context::Decisao;
use crate::domain::search::Search;
use crate::domain::{
    DecisionSource, ErrorCode, Event, OqError, Question, Session, StoredEvent, Story, Task,
};

/// An event to append, before the log gives it a position.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    pub project_id: String,
    pub actor: String,
    pub event: Event,
}

/// Which questions to list: by state, or the settled ones by how they were settled
/// (`decisionSource`, SPEC §2), so `--status auto_delegate` finds what a timer sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatusFilter {
    #[default]
    Open,
    /// Settled by an answer (a person's, a suggestion, a timer's, a delegation, upstream).
    Answered,
    /// Settled without an answer (dismissed, vanished, withdrawn, closed upstream).
    Closed,
    All,
    /// Settled, and settled this way.
    Decided(DecisionSource),
}

impl std::str::FromStr for StatusFilter {
    type Err = OqError;
    fn from_str(s: &str) -> Result<Self, OqError> {
        match s {
            "open" => Ok(StatusFilter::Open),
            "answered" => Ok(StatusFilter::Answered),
            "closed" => Ok(StatusFilter::Closed),
            "all" => Ok(StatusFilter::All),
            _ => s.parse().map(StatusFilter::Decided).map_err(|()| {
                OqError::invalid(
                    ErrorCode::InvalidStatus,
                    format!(
                        "status {s:?}: expected {}",
                        StatusFilter::names().join(", ")
                    ),
                )
            }),
        }
    }
}

impl StatusFilter {
    pub fn as_str(self) -> &'static str {
        match self {
            StatusFilter::Open => "open",
            StatusFilter::Answered => "answered",
            StatusFilter::Closed => "closed",
            StatusFilter::All => "all",
            StatusFilter::Decided(source) => source.as_str(),
        }
    }

    /// Every filter, in the order a person cycles through them (the TUI's `f`).
    pub fn every() -> Vec<StatusFilter> {
        let mut all = vec![
            StatusFilter::Open,
            StatusFilter::Answered,
            StatusFilter::Closed,
            StatusFilter::All,
        ];
        all.extend(DecisionSource::ALL.map(StatusFilter::Decided));
        all
    }

    /// Every name `--status` and the list route's `status` take.
    pub fn names() -> Vec<&'static str> {
        StatusFilter::every()
            .into_iter()
            .map(StatusFilter::as_str)
            .collect()
    }

    /// Whether a question of this state, settled this way (`None`: still open; `Some((source,
    /// answered))`), is in the filter. The in-hand lists (OpenCode direct, the mirror) and
    /// the stores' SQL hold the same rule.
    pub fn admits(self, settled: Option<(DecisionSource, bool)>) -> bool {
        match (self, settled) {
            (StatusFilter::All, _) => true,
            (StatusFilter::Open, open) => open.is_none(),
            (StatusFilter::Answered, Some((_, answered))) => answered,
            (StatusFilter::Closed, Some((_, answered))) => !answered,
            (StatusFilter::Decided(want), Some((source, _))) => want == source,
            (_, None) => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuestionQuery<'a> {
    /// `None`: every project (the local doors' default).
    pub project_id: Option<&'a str>,
    pub status: StatusFilter,
    /// Only questions with every word (see `domain::search`).
    pub search: Option<&'a Search>,
    pub sort: Sort,
    /// Only questions after this one in the sort's order (the page cursor).
    pub after: Option<&'a Cursor>,
    pub limit: usize,
    /// Which snoozed questions to keep, judged at `now` (Unix ms, the engine's clock).
    pub snoozed: super::SnoozeFilter,
    pub now: i64,
}

/// A page of questions in the query's order, with the total matching the filter (the
/// search included, the cursor not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuestionPage {
    pub items: Vec<Question>,
    pub total: u64,
    /// The total stopped at [`crate::engine::list::SEARCH_TOTAL_CAP`]: there are more.
    pub total_is_lower_bound: bool,
    /// The filter's questions a snooze hides at `now`, whatever `snoozed` kept.
    pub snoozed: super::SnoozedCount,
}

/// A task parked on a question, as "Waiting for you" shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParkedTask {
    pub task: Task,
    pub question_id: String,
    pub parked_at: i64,
}

/// Which walks of the memory of answers' lookup a store makes (`similar_candidates`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// The newest questions holding every word: one query, where a text that is the same
    /// once normalised is found.
    AllWords,
    /// For each word, the newest holding it (one query a word).
    EachWord,
}

/// Reads, all consistent with one snapshot of the log.
pub trait StoreView {
    /// The log position of the newest event (0 for an empty log). Internal: it counts
    /// every project's changes, so no client of one project is ever shown it.
    fn revision(&self) -> Result<i64, OqError>;
    /// The `project_seq` of the project's newest event (0 when it has none): how many
    /// changes the project has had, what its clients see as its revision.
    fn project_revision(&self, project_id: &str) -> Result<i64, OqError>;
    fn projects(&self) -> Result<Vec<String>, OqError>;
    fn session(&self, session_id: &str) -> Result<Option<Session>, OqError>;
    fn sessions(&self, project_id: Option<&str>) -> Result<Vec<Session>, OqError>;
    fn question(&self, question_id: &str) -> Result<Option<Question>, OqError>;
    fn questions(&self, query: &QuestionQuery<'_>) -> Result<QuestionPage, OqError>;
    fn open_count(&self, project_id: &str) -> Result<u64, OqError>;
    /// `oq status`'s numbers: the open questions of `project_id` (every project for
    /// `None`) no snooze hides at `now`, and how many of them `viewer` may answer. The
    /// default walks the list's pages ([`super::counts::by_pages`], its definition).
    fn open_counts(
        &self,
        project_id: Option<&str>,
        viewer: &crate::domain::Actor,
        now: i64,
    ) -> Result<super::counts::OpenCounts, OqError> {
        super::counts::by_pages(self, project_id, viewer, now)
    }
    /// The decision history: answered and closed questions matching `query`'s filter,
    /// newest settlement first, after the settlement at log position `after`; `total`
    /// counts the filter (not the cursor).
    fn decisions(
        &self,
        project_id: Option<&str>,
        query: &DecisionQuery,
        after: Option<i64>,
        limit: usize,
    ) -> Result<DecisionPage, OqError>;
    /// The memory of answers (`domain::similar`): answered questions of `project_id`
    /// holding `words` — all of them together, or each word alone ([`Lookup`]), the
    /// newest `per_word` whose question, suggestion or answer holds it. The caller decides which
    /// resemble; a store only finds, at a bounded cost whatever the words.
    /// With [`Lookup::AllWords`], only the questions holding every word (one query).
    fn similar_candidates(
        &self,
        project_id: &str,
        words: &[String],
        per_word: usize,
        lookup: Lookup,
    ) -> Result<Vec<Question>, OqError>;
    fn story(&self, story_id: &str) -> Result<Option<Story>, OqError>;
    fn stories(&self, project_id: Option<&str>) -> Result<Vec<Story>, OqError>;
    /// A task with its gate folded from the log.
    fn task(&self, task_id: &str) -> Result<Option<Task>, OqError>;
    fn tasks_of_story(&self, story_id: &str) -> Result<Vec<Task>, OqError>;
    /// Tasks whose gate is parked on an open question of a session authored by `person`.
    fn waiting_for(
        &self,
        project_id: Option<&str>,
        person: &str,
    ) -> Result<Vec<ParkedTask>, OqError>;
    /// Tasks parked on `question_id` right now.
    fn parked_on(&self, question_id: &str) -> Result<Vec<String>, OqError>;
    /// Answered questions of `project_id` whose `afeta` names the task or the story: a
    /// question of another project never feeds this project's work.
    fn decisions_linked(
        &self,
        project_id: &str,
        task_id: &str,
        story_id: &str,
    ) -> Result<Vec<Decisao>, OqError>;
    /// Every event about one question, oldest first (the bridge's restore reads its
    /// countdowns, pauses and submissions from them).
    fn question_events(&self, question_id: &str) -> Result<Vec<Event>, OqError>;
    /// Events after `after`, oldest first, at most `limit`. For one project `after` is a
    /// `project_seq` (its own numbering, what its event stream sends); for the whole log
    /// (`None`) it is a `seq`.
    fn events_after(
        &self,
        project_id: Option<&str>,
        after: i64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, OqError>;
    /// [`StoreView::events_after`] for the whole log without the payloads: what a
    /// server's event feed keeps (`server/feed.rs`), read after every change by every
    /// server, so the stores read only these columns (tests/log_heads.rs holds the two
    /// reads equal).
    fn heads_after(&self, after: i64, limit: usize) -> Result<Vec<LogHead>, OqError>;
}

/// An event without its payload: its position, project, place in the project, kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogHead {
    pub seq: i64,
    pub project_id: String,
    pub project_seq: i64,
    pub kind: String,
}

/// What the log can do: read a snapshot, or read-decide-append atomically.
pub trait Store: Send + Sync {
    fn read<T>(&self, f: impl FnOnce(&dyn StoreView) -> Result<T, OqError>) -> Result<T, OqError>;

    /// Runs `decide` in one write transaction, serialised against every other writer of the
    /// store (other processes included), and appends what it returns. Either every event is
    /// appended or none is.
    ///
    /// `decide` owns what it needs (`Send + 'static`): a store may run it on a thread of its
    /// own, as the SQLite store's writer does, batching the decisions of many callers.
    fn transact<T: Send + 'static>(
        &self,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
    ) -> Result<(Vec<StoredEvent>, T), OqError>;

    /// [`Store::transact`] for async callers: no thread of theirs waits while the
    /// decision is queued, decided and flushed.
    fn transact_async<T: Send + 'static>(
        &self,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
    ) -> impl Future<Output = Result<(Vec<StoredEvent>, T), OqError>> + Send;

    /// [`Store::transact_async`] for a decision that reads the question `question_id`
    /// (an answer): a store may read it ahead with the other decisions of its batch
    /// (PostgreSQL's writer does, `postgres/ahead.rs`). The decision is the same.
    fn transact_async_on<T: Send + 'static>(
        &self,
        question_id: &str,
        decide: impl FnOnce(&dyn StoreView) -> Result<(Vec<NewEvent>, T), OqError> + Send + 'static,
    ) -> impl Future<Output = Result<(Vec<StoredEvent>, T), OqError>> + Send {
        let _ = question_id;
        self.transact_async(decide)
    }
}
