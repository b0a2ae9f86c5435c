//! The command line: one subcommand per door. Definitions only; `run` executes them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

const DECLARE_HELP: &str = concat!(
    "Declare an open question for the session's author (declare_open_question).\n\n",
    crate::central_instruction!()
);

#[derive(Debug, Parser)]
#[command(
    name = "oq",
    version,
    about = "The questions AI agents leave for you: a queue, an author-only answer, the answer back to the work."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Args, Clone)]
pub struct GlobalArgs {
    /// Where the local store lives (default: the platform's data dir for oq).
    #[arg(long, global = true, env = "OQ_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Where to work: `local` (the embedded engine, the default), `http://HOST:PORT`
    /// (an `oq serve` server) or `opencode+http://HOST:PORT` (an OpenCode server's
    /// pending questions; with `--directory`).
    #[arg(long, global = true, env = "OQ_SOURCE")]
    pub source: Option<String>,
    /// The bearer token for a server source.
    #[arg(long, global = true, env = "OQ_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// A named profile of the config file (`[profiles.NAME]`: source, token, project).
    #[arg(long, global = true, env = "OQ_PROFILE")]
    pub profile: Option<String>,
    /// Act as this person in local mode (default: the OS user); a server knows you by
    /// your token.
    #[arg(long = "as", global = true, env = "OQ_USER", value_name = "USER")]
    pub as_user: Option<String>,
    /// The project (default: the only one in the store, or `default` in an empty store).
    #[arg(long, short = 'p', global = true, env = "OQ_PROJECT")]
    pub project: Option<String>,
    /// Print stable JSON instead of text (documented in the README).
    #[arg(long, global = true)]
    pub json: bool,
    /// An OpenCode source's directory (absolute, or relative to here); repeat for several.
    /// Default: the profile's `directories`, else the current directory.
    #[arg(long = "directory", global = true, value_name = "DIR")]
    pub directories: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    #[command(about = "Declare an open question (declare_open_question)", long_about = DECLARE_HELP)]
    Ask(AskArgs),
    /// List questions, oldest first (or --sort); --search and the total act on all of them.
    List(ListArgs),
    /// The decision history: every answered or closed question, newest decision first,
    /// with who decided, when and how; searched over all of it; `--csv` for export.
    Decisions(super::decisions::DecisionsArgs),
    /// Show one question in full.
    Show { question_id: String },
    /// Answer a question of a session you started.
    Answer(AnswerArgs),
    /// Close a question without answering it (its session's author only); an OpenCode
    /// question is rejected upstream.
    Dismiss { question_id: String },
    /// "Not now": hide a question of a session you started from your queue until a time
    /// or for a duration (at most 90 days); it stays open for agents and readiness.
    Snooze(SnoozeArgs),
    /// End a question's snooze now.
    Unsnooze { question_id: String },
    /// How many questions are still open; `--record` says "I'm ready" / "Confirm architecture ready".
    Readiness(ReadinessArgs),
    /// Emit a QA verdict on a task (as `qa-agent`); several are consolidated.
    Verdict(VerdictArgs),
    /// The decisions a task's dev and QA see.
    DevContext { task_id: String },
    /// Sessions: start one, list them.
    #[command(subcommand)]
    Session(SessionCommand),
    /// Stories: add, move, correct (as `po`).
    #[command(subcommand)]
    Story(StoryCommand),
    /// Tasks: add, move, show, and what is waiting for you.
    #[command(subcommand)]
    Task(TaskCommand),
    /// Fill the local store with a realistic sample and open the terminal UI on it.
    Demo(DemoArgs),
    /// Serve the HTTP API (SPEC §3) with the users and projects of a TOML file.
    Serve(ServeArgs),
    /// Print a new bearer token and the sha256 to put in `oq serve`'s configuration.
    Token,
    /// The team store: set up a PostgreSQL database (`migrate`), copy a store between
    /// SQLite and PostgreSQL (`copy`).
    #[command(subcommand)]
    Store(super::store::StoreCommand),
    /// Answers waiting for a remote source (kept while it was unreachable), with their
    /// state; `--deliver` sends the pending ones now.
    Outbox(OutboxArgs),
    /// One line for a shell prompt or tmux's status-right: "oq 3 · 1 for you".
    Status {
        /// The line, with {open}, {mine} (you can answer) and {project}; `{{`/`}}` are braces.
        #[arg(long, value_name = "TEMPLATE")]
        format: Option<String>,
    },
    /// Follow the source: a line (and `--exec CMD`) per new question you can answer.
    Watch(super::watch::WatchArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell), generated
    /// from this command line: `oq completions bash > ~/.local/share/bash-completion/completions/oq`.
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff), generated from this command line: `oq man | man -l -`.
    Man,
    /// Write a starter configuration: `oq init serve`.
    #[command(subcommand)]
    Init(super::conventions::InitCommand),
    /// An MCP server over stdio for an agent (declare_open_question, wait_for_answer…).
    #[command(long_about = MCP_HELP)]
    Mcp(McpArgs),
    /// Hooks for agents' own question tools: `oq hook claude-code [--install]`.
    #[command(subcommand)]
    Hook(super::hook::HookCommand),
}

const MCP_HELP: &str = concat!(
    "An MCP server over stdio for one agent in one session: the tools declare_open_question, ",
    "wait_for_answer, get_question, list_my_questions and withdraw_question.\n\n",
    crate::central_instruction!()
);

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The agent's role: criativo, po, arquiteto or dev-lead.
    #[arg(long, env = "OQ_AGENT")]
    pub agent: Option<String>,
    /// The session its questions are born in (default, locally: your own session in the
    /// project).
    #[arg(long)]
    pub session: Option<String>,
}

#[derive(Debug, Args)]
pub struct OutboxArgs {
    /// Deliver the pending answers for the current source now (exit 12 if some stay queued).
    #[arg(long)]
    pub deliver: bool,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The server's configuration (TOML: listen, data_dir, [[users]], [[projects]]).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
}

#[derive(Debug, Args)]
pub struct AskArgs {
    /// The question (≤ 500 characters).
    pub pergunta: String,
    /// Your suggested answer (≤ 300 characters).
    #[arg(long, visible_alias = "sugestao")]
    pub suggest: Option<String>,
    /// What it affects, as `rule:ID`, `story:ID` or `task:ID`; repeat or separate with commas.
    #[arg(long, value_delimiter = ',')]
    pub affects: Vec<String>,
    /// The session the question is born in (default: the person's own session in the project).
    #[arg(long)]
    pub session: Option<String>,
    /// The declaring agent's role: criativo, po, arquiteto or dev-lead.
    #[arg(long, env = "OQ_AGENT")]
    pub agent: Option<String>,
    /// An idempotency key: running the same `oq ask` again with the same key (after a
    /// crash, a kill, a lost reply) returns the first question instead of a second one;
    /// the key with another question is refused (`idempotency_key_reused`).
    #[arg(long, value_name = "K")]
    pub key: Option<String>,
    /// Block until the question is answered, then print the answer.
    #[arg(long)]
    pub wait: bool,
    /// With --wait: give up after this many seconds (exit 11; the question stays open).
    #[arg(long, requires = "wait", value_name = "SECS")]
    pub timeout: Option<u64>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// open, answered, closed, all, or how the settled ones were settled: person,
    /// suggestion, auto_delegate, delegate, upstream, vanished, dismissed, withdrawn.
    #[arg(long, default_value = "open", value_parser = clap::builder::PossibleValuesParser::new(crate::engine::StatusFilter::names()))]
    pub status: String,
    /// At most this many (1–50).
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    /// The cursor a previous page printed (with the same --sort).
    #[arg(long)]
    pub cursor: Option<String>,
    /// Only questions with every word of TEXT in their text, suggestion or answer.
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
    /// The order: oldest, newest, project or asker.
    #[arg(long, default_value = "oldest")]
    pub sort: String,
    /// Only the open questions a snooze hides now (without it every open question is
    /// listed, snoozed or not: agents and scripts see them all).
    #[arg(long)]
    pub snoozed: bool,
}

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("when").required(true).args(["until", "for_"])))]
pub struct SnoozeArgs {
    pub question_id: String,
    /// Until this UTC time: YYYY-MM-DD (midnight) or YYYY-MM-DDTHH:MM:SS[.mmm]Z.
    #[arg(long, value_name = "DATE")]
    pub until: Option<String>,
    /// For this long: 90s, 45m, 2h, 3d or 1w.
    #[arg(long = "for", id = "for_", value_name = "DURATION")]
    pub for_: Option<String>,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("how").required(true).args(["text", "accept", "answers_json"])))]
pub struct AnswerArgs {
    /// The question; with `--accept`, several (each answered on its own, each reported).
    #[arg(required = true, num_args = 1.., value_name = "ID")]
    pub question_ids: Vec<String>,
    /// The answer; `-` reads it from standard input.
    #[arg(long)]
    pub text: Option<String>,
    /// Accept the question's suggestion (of each question named).
    #[arg(long)]
    pub accept: bool,
    /// For a question with options: the choices as JSON, one array of labels (or typed
    /// text) per part, e.g. `[["SQLite"],["Red","Blue"]]`; `-` reads it from standard input.
    #[arg(long, value_name = "JSON")]
    pub answers_json: Option<String>,
}

#[derive(Debug, Args)]
pub struct ReadinessArgs {
    /// Record a readiness gesture: im-ready or architecture-ready. Never blocks.
    #[arg(long, value_name = "GATE")]
    pub record: Option<String>,
}

#[derive(Debug, Args)]
pub struct VerdictArgs {
    pub task_id: String,
    /// `approved`, `changes_requested` or `needs_user_decision`; `SUB=VERDICT` for a
    /// subspecialty. Several are consolidated (changes_requested > needs_user_decision > approved).
    #[arg(required = true)]
    pub verdicts: Vec<String>,
    /// needs_user_decision: the question for the user (≤ 500 characters).
    #[arg(long, visible_alias = "pergunta")]
    pub question: Option<String>,
    /// needs_user_decision: a suggested answer (≤ 300 characters).
    #[arg(long, visible_alias = "sugestao")]
    pub suggest: Option<String>,
    /// needs_user_decision: park on an existing open question instead.
    #[arg(long)]
    pub open_question: Option<String>,
    /// The acting agent (must be qa-agent).
    #[arg(long, env = "OQ_AGENT", default_value = "qa-agent")]
    pub agent: String,
}

#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// Start a session; you are its author.
    Start {
        #[arg(long, default_value = "conversation", value_parser = ["conversation", "execution"])]
        kind: String,
        /// A readable id (default: generated).
        #[arg(long)]
        id: Option<String>,
    },
    List,
}

#[derive(Debug, Subcommand)]
pub enum StoryCommand {
    Add {
        title: String,
        #[arg(long, env = "OQ_AGENT", default_value = "po")]
        agent: String,
    },
    List,
    /// Move a story: draft, ready, in_progress, in_review, done, archived.
    State {
        story_id: String,
        state: String,
        #[arg(long, env = "OQ_AGENT", default_value = "po")]
        agent: String,
    },
    /// Correct a story (ADR 0212/0214 §8); a ready story needs an answered question.
    Correct {
        story_id: String,
        #[arg(long)]
        question: Option<String>,
        #[arg(long, env = "OQ_AGENT", default_value = "po")]
        agent: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum TaskCommand {
    Add {
        title: String,
        #[arg(long)]
        story: String,
        /// The execution session the task belongs to.
        #[arg(long)]
        session: String,
        #[arg(long, env = "OQ_AGENT", default_value = "dev-lead")]
        agent: String,
    },
    State {
        task_id: String,
        state: String,
        #[arg(long, env = "OQ_AGENT", default_value = "dev-lead")]
        agent: String,
    },
    Show {
        task_id: String,
    },
    /// Tasks parked on a question you must answer ("Waiting for you").
    Waiting,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Print nothing but the data dir.
    #[arg(long)]
    pub quiet: bool,
    /// Print the sample and its open queue instead of opening the terminal UI on it
    /// (what happens anyway when not on a terminal, or with --json).
    #[arg(long)]
    pub print: bool,
}

impl DemoArgs {
    /// On a terminal, `oq demo` fills the store and opens the TUI on it.
    pub fn opens_tui(&self, json: bool) -> bool {
        use std::io::IsTerminal;
        !(self.quiet || self.print || json)
            && std::io::stdout().is_terminal()
            && std::io::stdin().is_terminal()
    }
}
