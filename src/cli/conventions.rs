//! The conventions of a command-line tool: `oq completions SHELL`, `oq man` and
//! `oq init serve`. Completions and the man page are generated from the one clap
//! definition (`args.rs`), so they cannot drift from it. `oq init serve` writes a starter
//! `oq serve` configuration whose tokens exist only on the screen once: the file holds
//! their sha256, is created 0600, and is never written over.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory, Subcommand};

use crate::domain::error::exit;
use crate::domain::text::check_id;
use crate::domain::{ErrorCode, OqError, Role};
use crate::server::config::{Config, DEFAULT_LISTEN, token_hash};

#[derive(Debug, Subcommand)]
pub enum InitCommand {
    /// Write a starter `oq serve` configuration: a person, an agent, a project and fresh
    /// tokens (their sha256 in the file, the tokens printed once). Never overwrites.
    Serve(InitServeArgs),
}

#[derive(Debug, Args)]
pub struct InitServeArgs {
    /// Where to write the configuration (refused if it exists).
    #[arg(long, default_value = "oq-serve.toml", value_name = "FILE")]
    pub config: PathBuf,
    /// The person (default: the OS user).
    #[arg(long)]
    pub person: Option<String>,
    /// The agent's id.
    #[arg(long, default_value = "agent")]
    pub agent: String,
    /// The agent's role: criativo, po, arquiteto, dev-lead or qa-agent.
    #[arg(long, default_value = "dev-lead")]
    pub role: String,
    /// The project both belong to.
    #[arg(long = "name", default_value = "default", value_name = "PROJECT")]
    pub project_id: String,
    /// The address to listen on (loopback by default).
    #[arg(long, default_value = DEFAULT_LISTEN)]
    pub listen: String,
}

/// `oq completions SHELL`: the completion script on stdout.
pub fn completions(shell: clap_complete::Shell) -> i32 {
    let mut cmd = super::Cli::command();
    // Into memory first: clap_complete panics on a write error (a closed pipe).
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "oq", &mut out);
    let _ = std::io::stdout().write_all(&out);
    exit::OK
}

/// `oq man`: the man page (roff) on stdout.
pub fn man() -> i32 {
    let page = clap_mangen::Man::new(super::Cli::command());
    let mut out = Vec::new();
    match page.render(&mut out) {
        Ok(()) => {
            let _ = std::io::stdout().write_all(&out);
            exit::OK
        }
        Err(e) => {
            eprintln!("oq: cannot render the man page: {e}");
            exit::INTERNAL
        }
    }
}

/// `oq init serve`.
pub fn init(command: InitCommand, json: bool) -> Result<i32, OqError> {
    let InitCommand::Serve(a) = command;
    let person = match a.person.clone() {
        Some(p) => p,
        None => std::env::var("USER").unwrap_or_else(|_| "me".into()),
    };
    check_id("person", &person)?;
    check_id("agent", &a.agent)?;
    check_id("project", &a.project_id)?;
    let role: Role = a.role.parse()?;
    if person == a.agent {
        return Err(OqError::invalid(
            ErrorCode::InvalidId,
            "the person and the agent need different ids",
        ));
    }
    let person_token = crate::engine::ids::token();
    let agent_token = crate::engine::ids::token();
    let text = starter(&a, &person, role, &person_token, &agent_token);
    // What we write must be what `oq serve` accepts: check it before it reaches the disk.
    Config::parse(&a.config, &text)
        .map_err(|e| OqError::invalid(ErrorCode::InvalidConfig, e.to_string()))?;
    write_new(&a.config, &text)?;
    if json {
        println!(
            "{}",
            serde_json::json!({
                "config": a.config,
                "project": a.project_id,
                "person": { "id": person, "token": person_token },
                "agent": { "id": a.agent, "role": role.as_str(), "token": agent_token },
            })
        );
    } else {
        println!("wrote {} (0600)", a.config.display());
        println!("person {person}  token {person_token}");
        println!("agent  {}  token {agent_token}", a.agent);
        eprintln!(
            "the tokens are shown only now (the file keeps their sha256); start it with: oq serve --config {}",
            a.config.display()
        );
    }
    Ok(exit::OK)
}

fn starter(a: &InitServeArgs, person: &str, role: Role, pt: &str, at: &str) -> String {
    let hash = |t: &str| hex::encode(token_hash(t));
    format!(
        "# oq serve configuration (written by `oq init serve`). Tokens are stored as sha256;\n\
         # add people with `oq token`. A relative data_dir is relative to this file.\n\
         listen = {listen:?}\n\
         data_dir = \"oq-data\"\n\n\
         [[users]]\nid = {person:?}\nkind = \"person\"\ntoken_sha256 = \"{ph}\"\n\n\
         [[users]]\nid = {agent:?}\nkind = \"agent\"\nrole = \"{role}\"\ntoken_sha256 = \"{ah}\"\n\n\
         [[projects]]\nid = {project:?}\nmembers = [{person:?}]\nagents = [{agent:?}]\n",
        listen = a.listen,
        agent = a.agent,
        project = a.project_id,
        ph = hash(pt),
        ah = hash(at),
    )
}

/// Creates `path` 0600; an existing file is refused untouched.
fn write_new(path: &Path, text: &str) -> Result<(), OqError> {
    if path.exists() {
        return Err(OqError::conflict(
            ErrorCode::ConfigExists,
            format!(
                "{} exists; oq init serve never overwrites a configuration",
                path.display()
            ),
        ));
    }
    let io = |e: std::io::Error| OqError::Internal(format!("cannot write {}: {e}", path.display()));
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        crate::private_fs::create_dir(dir).map_err(io)?;
    }
    let mut f = crate::private_fs::create_new(path).map_err(io)?;
    f.write_all(text.as_bytes()).map_err(io)?;
    f.sync_all().map_err(io)
}
