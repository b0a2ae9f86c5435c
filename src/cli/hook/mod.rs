//! `oq hook claude-code`: Claude Code's own questions (`AskUserQuestion`) in oq's queue.
//!
//! - PreToolUse: the hook JSON on stdin is declared as one oq question (its parts and
//!   options, source `claude-code`, in the oq session of Claude's `session_id`, started
//!   by the acting person; the tool call and `cwd` kept as its upstream), the author's
//!   answer awaited up to `--wait`, and printed as the hook output that answers the
//!   dialog. Unanswered, dismissed, or oq unreachable: nothing printed, and Claude shows
//!   its own dialog; unanswered, the question is first marked as handed to that dialog
//!   (`open_question.handed_off`), so oq refuses an answer that would reach nobody.
//! - PostToolUse: what that dialog answered settles the oq question (`upstream`), so
//!   nothing stays open in oq that was answered in Claude Code.
//! - Esc while the PreToolUse hook still waits: Claude Code ends the hook with a signal
//!   and records the call as rejected; the hook closes its question as declined there
//!   (`upstream`, not answered) before it goes, as the look-back below would.
//! - UserPromptSubmit / Stop / SessionEnd: a dialog the person declined with Esc runs no
//!   tool hook; the next prompt, the end of its turn (or the session's end) finds it in Claude's transcript and
//!   closes its oq question as declined there (`upstream`, not answered): nobody waits
//!   for it any more, and the model was told the person did not want to answer.
//! - `--install` / `--uninstall`: our two hooks merged into (or taken out of) Claude's
//!   settings file (`settings.rs`).
//!
//! Invariant: a hook never stops Claude Code. Every refusal is one line on stderr and
//! exit 1, which Claude documents as a non-blocking error (exit 2 would block the tool);
//! a bad input declares nothing.

mod claude;
mod install;
mod remote;
mod settings;

use std::io::Read;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand, ValueEnum};

use super::args::GlobalArgs;
use super::context::{Context, agent, report_error};
use crate::domain::claude_code::{ClaudeCall, ClaudeSettlement};
use crate::domain::{Actor, OqError, Question};
use crate::engine::{LocalEngine, ids};
use crate::wire::QuestionItem;
use claude::{HookEvent, HookInput};

/// How often the waiting hook reads the store (another process writes the answer).
const POLL: Duration = Duration::from_millis(20);
/// Claude's own `timeout` is this much longer than our wait, so we end first.
const TIMEOUT_MARGIN: u64 = 10;
/// Exit code of a refused hook: Claude Code's "non-blocking error".
const HOOK_REFUSED: i32 = 1;

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Claude Code's AskUserQuestion, answered in oq (a PreToolUse and a PostToolUse hook).
    ClaudeCode(ClaudeArgs),
}

#[derive(Debug, Args)]
pub struct ClaudeArgs {
    /// The agent role Claude Code's questions are declared as.
    #[arg(long, env = "OQ_AGENT", default_value = "dev-lead")]
    pub agent: String,
    /// How long the PreToolUse hook waits for an answer in oq before Claude Code shows
    /// its own dialog, in seconds.
    #[arg(long, default_value_t = 590, value_name = "SECS")]
    pub wait: u64,
    /// The oq session the questions are declared in. Locally the default is one session
    /// per Claude Code session (`<project>.cc-<session_id>`, started by you); with a
    /// server source it is required: a session a person started there (its author
    /// answers).
    #[arg(long, env = "OQ_SESSION")]
    pub session: Option<String>,
    /// Write the hooks into Claude Code's settings (merged beside yours).
    #[arg(long, conflicts_with = "uninstall")]
    pub install: bool,
    /// Remove the hooks `--install` wrote, and nothing else.
    #[arg(long)]
    pub uninstall: bool,
    /// Which settings file: `project` (.claude/settings.json here), `local`
    /// (.claude/settings.local.json here) or `user` (~/.claude/settings.json).
    #[arg(long, value_enum, default_value_t = Scope::Project)]
    pub scope: Scope,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    Project,
    Local,
    User,
}

pub fn run(global: GlobalArgs, command: HookCommand) -> i32 {
    let HookCommand::ClaudeCode(args) = command;
    if args.install || args.uninstall {
        let json = global.json;
        return install::run(&global, &args).unwrap_or_else(|e| {
            report_error(json, &e);
            e.exit_code()
        });
    }
    match hook(global, &args) {
        Ok(Some(output)) => {
            println!("{output}");
            0
        }
        Ok(None) => 0,
        Err(e) => {
            report_error(false, &e);
            HOOK_REFUSED
        }
    }
}

/// One hook call: the output to print, if any.
fn hook(global: GlobalArgs, args: &ClaudeArgs) -> Result<Option<serde_json::Value>, OqError> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| OqError::Internal(format!("cannot read the hook input: {e}")))?;
    let (event, input) = claude::read_input(&text)?;
    let actor = agent(&args.agent)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| OqError::Internal(format!("cannot start the runtime: {e}")))?;
    // A server: the token is the agent, the session one a person started there.
    if let Some(server) = super::context::remote(&global)? {
        return runtime.block_on(remote::hook(server, args, event, &input));
    }
    let ctx = Context::open(global)?;
    let engine = ctx.local("oq hook claude-code")?.clone();
    let project = runtime.block_on(ctx.project())?;
    let question_id = ids::keyed_question_id(&project, actor.id(), &claude::call(&input).key());
    match event {
        HookEvent::PreToolUse => {
            let prompts = claude::prompts(&input)?;
            let session = match &args.session {
                Some(s) => s.clone(),
                None => {
                    let named = format!("{project}.cc-{}", input.session_id);
                    engine.session_of(&project, &ctx.user, &named)?.session_id
                }
            };
            let declared = claude::declaration(&input, session, prompts);
            let mut stop = {
                let _in_runtime = runtime.enter();
                Interrupt::new()?
            };
            let q = engine.declare_claude_code(&actor, &project, &declared)?;
            let bound = Duration::from_secs(args.wait);
            let settled = match runtime.block_on(wait(&engine, &project, &q, bound, &mut stop))? {
                Waited::Settled(q) => q,
                // Claude Code shows its own dialog now: oq says so, and refuses an
                // answer that would reach nobody (one that came first is handed over).
                Waited::Passed => engine.hand_off_claude_code(&actor, &project, &q.question_id)?,
                // Esc on the waiting tool call: Claude ended it, nobody waits any more.
                Waited::Interrupted => {
                    let how = ClaudeSettlement::Declined {};
                    engine.settle_claude_code(&actor, &project, &q.question_id, how)?;
                    return Ok(None);
                }
            };
            let item = QuestionItem::from_question(&settled, &actor);
            Ok(claude::answered_output(&input, &item))
        }
        HookEvent::PostToolUse => {
            settle_open(&engine, &actor, &project, &question_id, |q| {
                claude::dialog_settlement(&input, &q.prompts)
            })?;
            Ok(None)
        }
        HookEvent::UserPromptSubmit | HookEvent::Stop | HookEvent::SessionEnd => {
            for call in declined(&input)? {
                let id = ids::keyed_question_id(&project, actor.id(), &call.key());
                settle_open(&engine, &actor, &project, &id, |_| {
                    ClaudeSettlement::Declined {}
                })?;
            }
            Ok(None)
        }
    }
}

/// Settles the Claude Code question `id` with `how` when it is still open; one our
/// PreToolUse never declared (oq was unreachable then) is nothing to settle.
fn settle_open(
    engine: &LocalEngine,
    actor: &Actor,
    project: &str,
    id: &str,
    how: impl FnOnce(&Question) -> ClaudeSettlement,
) -> Result<(), OqError> {
    let q = match engine.question(Some(project), id) {
        Ok(q) => q,
        Err(e) if e.code() == "not_found" => return Ok(()),
        Err(e) => return Err(e),
    };
    if q.is_open() {
        engine.settle_claude_code(actor, project, id, how(&q))?;
    }
    Ok(())
}

/// The calls of this Claude session whose dialog was declined (Esc), from its
/// transcript; none when Claude named no transcript or it is not there yet.
pub(super) fn declined(input: &HookInput) -> Result<Vec<ClaudeCall>, OqError> {
    if input.transcript_path.is_empty() {
        return Ok(Vec::new());
    }
    let text = match std::fs::read_to_string(&input.transcript_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(OqError::Internal(format!(
                "cannot read Claude's transcript {}: {e}",
                input.transcript_path
            )));
        }
    };
    Ok(claude::declined_calls(&text)
        .iter()
        .map(|id| claude::call_of(input, id))
        .collect())
}

/// How a PreToolUse hook's wait for an answer in oq ended.
pub(super) enum Waited<T> {
    /// Answered or closed (in oq, or by an earlier hook).
    Settled(T),
    /// `--wait` passed with the question still open.
    Passed,
    /// Claude Code ended the hook: Esc on the waiting tool call (checked with the real
    /// Claude Code 2.1.328: it signals the hook and records the call as rejected), or
    /// its own exit. Its timeout is `--wait` plus a margin, so it is never that.
    Interrupted,
}

/// The signals Claude Code ends a running hook with (SIGTERM, and SIGINT or SIGHUP
/// from the terminal), caught while the hook waits so it can say so before it goes.
pub(super) struct Interrupt {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Interrupt {
    /// Installed before the question is declared; needs the runtime's context.
    pub(super) fn new() -> Result<Interrupt, OqError> {
        use tokio::signal::unix::{SignalKind, signal};
        let on = |kind: SignalKind| {
            signal(kind).map_err(|e| OqError::Internal(format!("cannot catch signals: {e}")))
        };
        Ok(Interrupt {
            term: on(SignalKind::terminate())?,
            int: on(SignalKind::interrupt())?,
            hup: on(SignalKind::hangup())?,
        })
    }

    pub(super) async fn recv(&mut self) {
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.int.recv() => {}
            _ = self.hup.recv() => {}
        }
    }
}

/// The question once settled, `Passed` when `bound` passes with it still open, or
/// `Interrupted` when Claude Code ends the hook first.
async fn wait(
    engine: &LocalEngine,
    project: &str,
    q: &Question,
    bound: Duration,
    stop: &mut Interrupt,
) -> Result<Waited<Question>, OqError> {
    let deadline = Instant::now() + bound;
    loop {
        let now = engine.question(Some(project), &q.question_id)?;
        if !now.is_open() {
            return Ok(Waited::Settled(now));
        }
        if Instant::now() >= deadline {
            return Ok(Waited::Passed);
        }
        tokio::select! {
            _ = tokio::time::sleep(POLL) => {}
            _ = stop.recv() => return Ok(Waited::Interrupted),
        }
    }
}
