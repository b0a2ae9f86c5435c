//! The driver's hands: runs each [`Effect`] `update` returns — on the source (spawned,
//! the reply sent back as a [`Msg`] with the effect's id), on the drafts and the outbox
//! (synchronously, so they are on disk before the process may end), on the terminal
//! (bell, notifications). No decisions here: those are `update`'s.

use tokio::sync::mpsc::UnboundedSender;

use super::app_io::load_pages;
use super::drafts::Drafts;
use super::effect::AutoAction;
use super::effect::{Effect, Msg, SnoozeChange};
use super::model::{Model, PAGE};
use super::tty::Tty;
use super::watch::Watcher;
use crate::domain::OqError;
use crate::domain::snooze::SnoozeInput;
use crate::engine::{ListQuery, Sort, StatusFilter};
use crate::source::Source;
use crate::source::outbox::Outbox;

pub(super) struct Runner<S> {
    pub(super) source: S,
    /// `source.describe()`: the outbox's name for it.
    pub(super) name: String,
    pub(super) tx: UnboundedSender<Msg>,
    pub(super) project: Option<String>,
    pub(super) drafts: Drafts,
    pub(super) outbox: Outbox,
    pub(super) watcher: Watcher,
}

fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A refusal with its code, so `question_submission_claimed` reaches the notice line.
fn refusal(e: OqError) -> String {
    format!("{}: {e}", e.code())
}

/// How long the way out waits to lift an interaction pause.
const FINAL_RESUME: std::time::Duration = std::time::Duration::from_secs(3);

impl<S: Source + Clone + 'static> Runner<S> {
    /// The effects of the last cleanup, after the loop: only what must reach the disk
    /// (drafts, the outbox) and the watcher; nothing is spawned on the way out. A lifted
    /// interaction pause is awaited, bounded: the process ends right after.
    pub(super) async fn run_final(&self, fx: Vec<Effect>) {
        for effect in fx {
            match effect {
                Effect::SaveDraft { .. }
                | Effect::RemoveDraft { .. }
                | Effect::Reconcile { .. }
                | Effect::StopWatcher => self.run(effect),
                Effect::ResumeAuto { question_id } => {
                    let resumed = self.source.resume_auto(&question_id);
                    if tokio::time::timeout(FINAL_RESUME, resumed).await.is_err() {
                        tracing::warn!(question = %question_id, "the interaction pause was not lifted on the way out (no reply)");
                    }
                }
                _ => {}
            }
        }
    }

    fn send_outbox(&self) {
        send_outbox(&self.outbox, &self.name, &self.tx);
    }

    /// Runs `fx` in order; the terminal's effects (the editor, the bell, notifications)
    /// on `tty`, the rest through [`Runner::run`].
    pub(super) fn run_all<T: Tty>(&self, fx: Vec<Effect>, model: &mut Model, tty: &mut T) {
        for effect in fx {
            match effect {
                Effect::OpenEditor { question_id, text } => {
                    let result = tty.edit(self.drafts.dir(), &question_id, &text);
                    model.dirty = true;
                    let _ = self.tx.send(Msg::EditorDone {
                        question_id,
                        result,
                    });
                }
                Effect::Bell => tty.raw(b"\x07"),
                Effect::Notify { title, body } => tty.raw(&osc_notification(&title, &body)),
                other => self.run(other),
            }
        }
    }

    fn run(&self, effect: Effect) {
        let (source, tx, project) = (self.source.clone(), self.tx.clone(), self.project.clone());
        match effect {
            Effect::Load { id, query, pages } => {
                let (auto_source, auto_tx) = (source.clone(), tx.clone());
                tokio::spawn(async move {
                    let view = auto_source.auto_delegate().await.map_err(text);
                    let _ = auto_tx.send(Msg::AutoDelegate { id, view });
                });
                tokio::spawn(async move {
                    let page = load_pages(&source, project.as_deref(), query, pages).await;
                    let _ = tx.send(Msg::Loaded {
                        id,
                        append: false,
                        page,
                    });
                });
            }
            Effect::LoadMore { id, query } => {
                tokio::spawn(async move {
                    let page = source.list(project.as_deref(), &query).await.map_err(text);
                    let _ = tx.send(Msg::Loaded {
                        id,
                        append: true,
                        page,
                    });
                });
            }
            Effect::LoadCounts { id } => {
                tokio::spawn(async move {
                    // The newest page: the total, and who may be notified.
                    let query = ListQuery::new(StatusFilter::Open)
                        .sorted(Sort::Newest)
                        .limit(PAGE);
                    let (open, newest) = match source.list(project.as_deref(), &query).await {
                        Ok(l) => (Ok(l.total), l.items),
                        Err(e) => (Err(text(e)), Vec::new()),
                    };
                    let waiting = source.waiting(project.as_deref()).await.map_err(text);
                    let _ = tx.send(Msg::Counts {
                        id,
                        open,
                        waiting,
                        newest,
                    });
                });
            }
            Effect::Submit {
                id,
                key,
                question_id,
                project,
                input,
            } => {
                let (outbox, name) = (self.outbox.clone(), self.name.clone());
                tokio::spawn(async move {
                    let sent = source
                        .answer_once(Some(&project), &question_id, &input, &key)
                        .await;
                    let msg = match sent {
                        Err(OqError::Queued { .. }) => Msg::Queued { id, question_id },
                        other => Msg::Answered {
                            id,
                            question_id,
                            result: other.map(Box::new).map_err(text),
                        },
                    };
                    let _ = tx.send(msg);
                    send_outbox(&outbox, &name, &tx);
                });
            }
            Effect::StopWatcher => self.watcher.stop(),
            Effect::Reconcile {
                key,
                question_id,
                project,
                input,
            } => {
                // Synchronous on purpose: on disk before the process may end.
                let _ = self
                    .outbox
                    .enqueue(&key, &self.name, Some(&project), &question_id, &input);
                self.send_outbox();
            }
            Effect::ReadOutbox => self.send_outbox(),
            Effect::FlushOutbox => {
                let (outbox, name) = (self.outbox.clone(), self.name.clone());
                tokio::spawn(async move {
                    // What it settled is read back from disk: the snapshot says it all.
                    let _ = outbox.deliver_all(&source, &name).await;
                    send_outbox(&outbox, &name, &tx);
                });
            }
            Effect::PauseAuto {
                question_id,
                reason,
            } => {
                tokio::spawn(async move {
                    let result = source
                        .pause_auto(&question_id, reason)
                        .await
                        .map_err(refusal);
                    let action = if reason == crate::domain::delegation::PauseReason::Interaction {
                        AutoAction::Interaction
                    } else {
                        AutoAction::Pause
                    };
                    let _ = tx.send(Msg::AutoCommanded {
                        question_id,
                        action,
                        result,
                    });
                });
            }
            Effect::ResumeAuto { question_id } => {
                tokio::spawn(async move {
                    let result = source.resume_auto(&question_id).await.map_err(refusal);
                    let _ = tx.send(Msg::AutoCommanded {
                        question_id,
                        action: AutoAction::Resume,
                        result,
                    });
                });
            }
            Effect::DelegateNow { question_id } => {
                tokio::spawn(async move {
                    let result = source.delegate_now(&question_id).await.map_err(refusal);
                    let _ = tx.send(Msg::AutoCommanded {
                        question_id,
                        action: AutoAction::Delegate,
                        result,
                    });
                });
            }
            Effect::Dismiss {
                question_id,
                project,
            } => {
                tokio::spawn(async move {
                    let result = source
                        .dismiss(Some(&project), &question_id)
                        .await
                        .map(drop)
                        .map_err(refusal);
                    let _ = tx.send(Msg::Dismissed {
                        question_id,
                        result,
                    });
                });
            }
            Effect::Snooze {
                question_id,
                project,
                change,
            } => {
                tokio::spawn(async move {
                    let project = Some(project.as_str());
                    let result = match change {
                        SnoozeChange::Until(ms) => {
                            let input = SnoozeInput::until(ms);
                            source.snooze(project, &question_id, &input).await
                        }
                        SnoozeChange::Wake => source.unsnooze(project, &question_id).await,
                    };
                    let result = result.map(Box::new).map_err(refusal);
                    let _ = tx.send(Msg::Snoozed {
                        question_id,
                        change,
                        result,
                    });
                });
            }
            Effect::LookUp { question_id } => {
                tokio::spawn(async move {
                    let result = source
                        .question(project.as_deref(), &question_id)
                        .await
                        .map(Box::new)
                        .map_err(text);
                    let _ = tx.send(Msg::LookedUp {
                        question_id,
                        result,
                    });
                });
            }
            Effect::RecallSimilar {
                question_id,
                project,
            } => {
                tokio::spawn(async move {
                    let result = source
                        .question(Some(&project), &question_id)
                        .await
                        .map(|q| q.similar_answer)
                        .map_err(text);
                    let _ = tx.send(Msg::Recalled {
                        question_id,
                        result,
                    });
                });
            }
            Effect::Readiness { project, gate } => {
                tokio::spawn(async move {
                    let result = source.readiness(&project, Some(gate)).await.map_err(text);
                    let _ = tx.send(Msg::ReadinessRecorded { gate, result });
                });
            }
            Effect::SaveDraft { question_id, text } => {
                // Synchronous on purpose: a draft typed before a SIGTERM is on disk.
                let _ = self.drafts.save(&question_id, &text);
            }
            Effect::RemoveDraft { question_id } => {
                let _ = self.drafts.remove(&question_id);
            }
            // The terminal's, run by `run_all`; none is run on the way out.
            Effect::Bell | Effect::Notify { .. } | Effect::OpenEditor { .. } => {}
            Effect::Quit => {}
            Effect::LoadDecisions {
                id,
                project: asked,
                query,
                append,
            } => {
                tokio::spawn(async move {
                    let project = asked.or(project);
                    let page = source
                        .decisions(project.as_deref(), &query)
                        .await
                        .map_err(text);
                    let _ = tx.send(Msg::Decisions { id, append, page });
                });
            }
        }
    }
}

/// This source's outbox entries, oldest first, to `update`.
fn send_outbox(outbox: &Outbox, name: &str, tx: &UnboundedSender<Msg>) {
    if let Ok(all) = outbox.list() {
        let entries = all.into_iter().filter(|e| e.source == name).collect();
        let _ = tx.send(Msg::Outbox { entries });
    }
}

/// OSC 9 and OSC 777 for one notification, stripped of what could end the sequence.
fn osc_notification(title: &str, body: &str) -> Vec<u8> {
    let clean = |s: &str| {
        s.chars()
            .filter(|c| !c.is_control() && *c != ';')
            .collect::<String>()
    };
    let (title, body) = (clean(title), clean(body));
    format!("\x1b]9;{title}: {body}\x1b\\\x1b]777;notify;{title};{body}\x1b\\").into_bytes()
}
