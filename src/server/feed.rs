//! The log's tail, read once per server per change and shared by every event stream.
//!
//! Each change (a write here, another server's NOTIFY, the poller) wakes [`follow`], the
//! server's one reader of what is new in the whole log; it keeps the newest events
//! (position, project, revision, type — no payload) in a bounded window in memory and
//! wakes the streams, which take their own project's tips from it. A change thus costs one
//! read per server, not one per subscriber (1,000 subscribers over PostgreSQL were ~1,000
//! round trips per change: issue 16's fan-out). On PostgreSQL, a NOTIFY that carries its
//! batch's heads is taken into the window as it is ([`Feed::offer`]) when it follows on
//! from the window's newest position: no read at all (with several servers, every server
//! read every other's every batch).
//!
//! Why the window can be trusted: positions are handed out in commit order (SQLite's one
//! writer, PostgreSQL's write lock), so a read of "everything after position n" that
//! returns fewer rows than asked has seen every event up to its newest — no later commit
//! lands below it. The window says exactly which positions it holds (`from`, `to`]; a
//! stream that has fallen behind it (a resume, a slow client, a server just started)
//! reads the log itself, as before, until it is back inside.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::watch;

use super::AppState;
use crate::engine::LogHead;

/// Events the window keeps by default (`ServerOptions::window`): a stream further behind
/// than this reads the log itself.
pub const WINDOW: usize = 8_192;
/// Events per read of the tail; a longer burst is read in turns.
const TAIL_BATCH: usize = 1_024;
/// After a failed read (the database away), the next try comes this soon even without
/// another change, so what was committed meanwhile is not left unseen.
const RETRY: Duration = Duration::from_millis(250);

/// One event of the window: what a stream's tip needs, and where it is in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The log position.
    pub seq: i64,
    pub project_id: String,
    /// The project's own sequence: the stream's `id:`.
    pub revision: i64,
    pub kind: String,
}

impl Entry {
    fn of(e: LogHead) -> Entry {
        Entry {
            seq: e.seq,
            kind: e.kind,
            project_id: e.project_id,
            revision: e.project_seq,
        }
    }
}

/// What a stream gets from the window.
#[derive(Debug, PartialEq, Eq)]
pub enum Taken {
    /// The window no longer holds (or does not yet hold) every position after the
    /// stream's: it must read the log itself.
    Behind,
    /// The project's events after the stream's position, and the position the stream
    /// has now seen (every event up to it, of its project, is in the list or before it).
    Events(Vec<Entry>, i64),
}

/// The window: every event with a position in (`from`, `to`] is in `entries`, in order.
struct Window {
    /// `None` until the first read of the log's revision.
    from: Option<i64>,
    to: i64,
    entries: VecDeque<Entry>,
    /// The most `entries` holds (at least 1).
    capacity: usize,
}

impl Window {
    /// Appends `events` after `to` (those it holds already skipped), forgetting the
    /// oldest beyond the capacity.
    fn push(&mut self, events: Vec<LogHead>) {
        for e in events {
            if e.seq <= self.to {
                continue;
            }
            self.to = e.seq;
            self.entries.push_back(Entry::of(e));
        }
        while self.entries.len() > self.capacity {
            if let Some(gone) = self.entries.pop_front() {
                self.from = Some(gone.seq);
            }
        }
    }
}

pub struct Feed {
    window: Mutex<Window>,
    /// How many wake-ups of the server's changes need no read: a NOTIFY whose heads the
    /// window took ([`Feed::took_notified`], counted before that wake-up is sent).
    explained: AtomicU64,
    /// Its change means "the window moved"; subscribers wait on it.
    generation: watch::Sender<u64>,
}

impl Feed {
    /// A window of at most `capacity` events, not started.
    pub fn new(capacity: usize) -> Feed {
        Feed {
            window: Mutex::new(Window {
                from: None,
                to: 0,
                entries: VecDeque::new(),
                capacity: capacity.max(1),
            }),
            explained: AtomicU64::new(0),
            generation: watch::channel(0).0,
        }
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }

    fn window(&self) -> std::sync::MutexGuard<'_, Window> {
        self.window.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Where the window starts (the log's revision when the server began following).
    pub fn start_at(&self, revision: i64) {
        let mut w = self.window();
        w.from = Some(revision);
        w.to = revision;
        w.entries.clear();
    }

    /// The window's newest position (`None` before it started).
    fn to(&self) -> Option<i64> {
        let w = self.window();
        w.from.map(|_| w.to)
    }

    /// The next wake-up of the server's changes is for heads [`Feed::offer`] took: it
    /// needs no read. Call before sending it.
    pub fn took_notified(&self) {
        self.explained.fetch_add(1, Ordering::AcqRel);
    }

    /// Takes `heads` — one batch's, as its commit's notification carried them, in log
    /// order — when they follow on from the window's newest position (those it already
    /// holds are skipped), and wakes the streams; `false`, taking nothing, when there is a
    /// gap before them (a notification not heard) or the window has not started: read the
    /// log instead.
    pub fn offer(&self, heads: Vec<LogHead>) -> bool {
        {
            let mut w = self.window();
            let mut next = w.to + 1;
            let to = w.to;
            let follows = w.from.is_some()
                && heads.iter().filter(|h| h.seq > to).all(|h| {
                    let ok = h.seq == next;
                    next += 1;
                    ok
                });
            if !follows {
                return false;
            }
            w.push(heads);
        }
        self.wake();
        true
    }

    /// Adds `events`, read (in log order) after the window's newest position, and wakes
    /// the streams.
    pub fn extend(&self, events: Vec<LogHead>) {
        if events.is_empty() {
            return;
        }
        self.window().push(events);
        self.wake();
    }

    fn wake(&self) {
        self.generation.send_modify(|g| *g = g.wrapping_add(1));
    }

    /// `project`'s events after position `seen` (the stream's), or [`Taken::Behind`].
    pub fn take(&self, project: &str, seen: i64) -> Taken {
        let w = self.window();
        match w.from {
            Some(from) if seen >= from => {
                let start = w.entries.partition_point(|e| e.seq <= seen);
                let events = w
                    .entries
                    .range(start..)
                    .filter(|e| e.project_id == project)
                    .cloned()
                    .collect();
                Taken::Events(events, seen.max(w.to))
            }
            _ => Taken::Behind,
        }
    }
}

/// Follows the log for the server's streams until it stops: one read of the tail after
/// each change.
pub async fn follow(state: AppState) {
    let mut changes = state.changes();
    let mut stopping = state.stopping();
    let feed = state.feed();
    // The changes' generation and the explained count at the last look; the first look
    // reads (the log's revision, where the window starts).
    let mut looked = (0u64, 0u64);
    let mut must_read = true;
    loop {
        if *stopping.borrow() {
            return;
        }
        // Seen before reading: a change during the read wakes us again.
        let generation = *changes.borrow_and_update();
        let explained = feed.explained.load(Ordering::Acquire);
        // Every wake-up since the last look not explained by heads the window took
        // (a write here, the poller, a NOTIFY without heads or after a gap) is a read.
        // A wake-up counted as explained before it was sent only delays a read to the
        // next look, when it arrives unexplained.
        let unexplained = generation.wrapping_sub(looked.0) > explained.wrapping_sub(looked.1);
        looked = (generation, explained);
        let failed = (must_read || unexplained) && !read_tail(&state, feed).await;
        must_read = failed;
        let retry = async {
            if failed {
                tokio::time::sleep(RETRY).await
            } else {
                std::future::pending().await
            }
        };
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
            _ = stopping.changed() => {}
            _ = retry => {}
        }
    }
}

/// Reads what is new into the window (the log's revision first, once); `false` when the
/// store could not be read.
async fn read_tail(state: &AppState, feed: &Feed) -> bool {
    let Some(mut to) = feed.to() else {
        return match state.read(|e| e.revision()).await {
            Ok(rev) => {
                feed.start_at(rev);
                true
            }
            Err(_) => false,
        };
    };
    loop {
        let batch = state.read(move |e| e.heads_after(to, TAIL_BATCH)).await;
        let Ok(batch) = batch else {
            return false;
        };
        let full = batch.len() == TAIL_BATCH;
        if let Some(last) = batch.last() {
            to = last.seq;
        }
        feed.extend(batch);
        if !full {
            return true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(seq: i64, project: &str, revision: i64) -> LogHead {
        LogHead {
            seq,
            project_id: project.into(),
            project_seq: revision,
            kind: "readiness.recorded".into(),
        }
    }

    fn revisions(t: Taken) -> (Vec<i64>, i64) {
        match t {
            Taken::Events(e, seen) => (e.iter().map(|e| e.revision).collect(), seen),
            Taken::Behind => panic!("behind"),
        }
    }

    #[test]
    fn a_stream_takes_its_projects_events_after_its_position() {
        let feed = Feed::new(WINDOW);
        assert_eq!(feed.take("a", 0), Taken::Behind, "not started");
        feed.start_at(10);
        feed.extend(vec![
            event(11, "a", 5),
            event(12, "b", 1),
            event(13, "a", 6),
        ]);
        assert_eq!(revisions(feed.take("a", 10)), (vec![5, 6], 13));
        assert_eq!(revisions(feed.take("a", 11)), (vec![6], 13));
        assert_eq!(revisions(feed.take("b", 13)), (vec![], 13));
        // A stream whose own read saw further than the window keeps its position.
        assert_eq!(revisions(feed.take("b", 20)), (vec![], 20));
        assert_eq!(feed.take("a", 9), Taken::Behind, "before the window");
    }

    #[test]
    fn notified_heads_are_taken_only_when_they_follow_on_from_the_window() {
        let feed = Feed::new(WINDOW);
        assert!(
            !feed.offer(vec![event(1, "a", 1)]),
            "not started: read first"
        );
        feed.start_at(10);
        let woken = feed.subscribe();
        assert!(feed.offer(vec![event(11, "a", 5), event(12, "b", 1)]));
        assert_eq!(
            woken.has_changed().ok(),
            Some(true),
            "the streams are woken"
        );
        // Already held (a read took them first): nothing added, nothing missing.
        assert!(feed.offer(vec![event(12, "b", 1)]));
        // A gap (a notification not heard, or a batch too large to carry): refused, the
        // window unchanged, so the log is read instead.
        assert!(!feed.offer(vec![event(14, "a", 7)]));
        assert!(!feed.offer(vec![event(13, "a", 6), event(15, "a", 7)]));
        assert_eq!(revisions(feed.take("a", 10)), (vec![5], 12));
        // Partly held: the rest is added.
        assert!(feed.offer(vec![event(12, "b", 1), event(13, "a", 6)]));
        assert_eq!(revisions(feed.take("a", 10)), (vec![5, 6], 13));
    }

    #[test]
    fn the_window_forgets_its_oldest_and_says_so() {
        let feed = Feed::new(WINDOW);
        feed.start_at(0);
        let n = WINDOW as i64 + 10;
        feed.extend((1..=n).map(|s| event(s, "a", s)).collect());
        assert_eq!(feed.take("a", 9), Taken::Behind);
        let (got, seen) = revisions(feed.take("a", 10));
        assert_eq!((got.len(), got[0], seen), (WINDOW, 11, n));
        // Events already held are not added twice.
        feed.extend(vec![event(n, "a", n)]);
        assert_eq!(revisions(feed.take("a", n - 1)).0, vec![n]);
    }
}
