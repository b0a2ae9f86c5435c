//! `oq hook claude-code --install/--uninstall`: which settings file, the command line the
//! hooks run (this binary with the flags given now, never a token), and the write.
//!
//! Invariant: the file is written only when its content changes, as a whole (a reader
//! sees the old or the new), and a refused file is left byte for byte as it was.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::{ClaudeArgs, Scope, TIMEOUT_MARGIN, settings};
use crate::cli::args::GlobalArgs;
use crate::domain::{ErrorCode, OqError};

pub fn run(global: &GlobalArgs, args: &ClaudeArgs) -> Result<i32, OqError> {
    // The role is checked now, not at the first question.
    super::agent(&args.agent)?;
    let path = settings_path(args.scope)?;
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(OqError::invalid(
                ErrorCode::InvalidHookSettings,
                format!("cannot read {shown}: {e}"),
            ));
        }
    };
    let current = settings::parse(&shown, text.as_deref())?;
    let changed = if args.install {
        let command = command_line(global, args)?;
        settings::install(&current, &command, args.wait + TIMEOUT_MARGIN)?
    } else {
        settings::uninstall(&current)?
    };
    if let Some(new) = &changed {
        write(&path, &serde_json::Value::Object(new.clone()))?;
    }
    let what = if args.install { "installed" } else { "removed" };
    if global.json {
        println!(
            "{}",
            json!({"settings": shown, "changed": changed.is_some(), "action": what})
        );
    } else if changed.is_some() {
        println!("oq hook claude-code: {what} in {shown}");
    } else {
        println!("oq hook claude-code: already {what} in {shown}; nothing changed");
    }
    Ok(0)
}

fn settings_path(scope: Scope) -> Result<PathBuf, OqError> {
    let base = match scope {
        Scope::Project | Scope::Local => std::env::current_dir()
            .map_err(|e| OqError::Internal(format!("no current directory: {e}")))?,
        Scope::User => std::env::var_os("HOME").map(PathBuf::from).ok_or_else(|| {
            OqError::invalid(
                ErrorCode::InvalidHookSettings,
                "--scope user needs HOME to find ~/.claude/settings.json",
            )
        })?,
    };
    let file = match scope {
        Scope::Local => "settings.local.json",
        Scope::Project | Scope::User => "settings.json",
    };
    Ok(base.join(".claude").join(file))
}

/// This binary and the flags that chose the store, person, project and source now, then
/// `hook claude-code` with the agent and the wait. A token is never written: a team
/// setup names a `--profile`, whose file holds it.
fn command_line(global: &GlobalArgs, args: &ClaudeArgs) -> Result<String, OqError> {
    let exe = std::env::current_exe()
        .map_err(|e| OqError::Internal(format!("cannot find this oq binary: {e}")))?;
    let mut words = vec![quote(&exe.display().to_string())];
    let mut flag = |name: &str, value: Option<String>| {
        if let Some(v) = value {
            words.push(name.to_string());
            words.push(quote(&v));
        }
    };
    let data_dir = match &global.data_dir {
        Some(d) => Some(absolute(d)?),
        None => None,
    };
    flag("--data-dir", data_dir);
    flag("--as", global.as_user.clone());
    flag("--project", global.project.clone());
    flag("--profile", global.profile.clone());
    flag("--source", global.source.clone());
    words.push(settings::MARKER.trim().to_string());
    words.push("--agent".into());
    words.push(quote(&args.agent));
    words.push("--wait".into());
    words.push(args.wait.to_string());
    if let Some(session) = &args.session {
        words.push("--session".into());
        words.push(quote(session));
    }
    Ok(words.join(" "))
}

fn absolute(p: &Path) -> Result<String, OqError> {
    std::path::absolute(p)
        .map(|p| p.display().to_string())
        .map_err(|e| OqError::Internal(format!("{}: {e}", p.display())))
}

/// A word for `sh`: single-quoted, a quote inside closed, escaped and reopened.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn write(path: &Path, value: &serde_json::Value) -> Result<(), OqError> {
    let io = |e: std::io::Error| OqError::Internal(format!("cannot write {}: {e}", path.display()));
    if let Some(dir) = path.parent() {
        crate::private_fs::create_dir(dir).map_err(io)?;
    }
    let mut text =
        serde_json::to_string_pretty(value).map_err(|e| OqError::Internal(e.to_string()))?;
    text.push('\n');
    crate::private_fs::write_atomically(path, text.as_bytes()).map_err(io)
}
