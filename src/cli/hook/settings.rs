//! `oq hook claude-code --install/--uninstall` as a pure change of Claude Code's settings
//! JSON: our hooks (`PreToolUse` and `PostToolUse` on `AskUserQuestion`; `UserPromptSubmit`,
//! `Stop` and `SessionEnd`, which find the dialogs declined with Esc) merged in beside the
//! user's own, or taken out again.
//!
//! Invariant: only entries this installer wrote are touched — a `command` hook whose
//! command runs `oq … hook claude-code` inside a group of the matcher we write
//! (`AskUserQuestion`, or none) — and a settings value not of the shape Claude Code reads
//! is refused whole, never repaired.

use serde_json::{Map, Value, json};

use super::claude::TOOL;
use crate::domain::{ErrorCode, OqError};

/// The events our command handles, each with the matcher of its group: the tool events
/// on `AskUserQuestion`; the others, which Claude runs for every prompt and session end,
/// with none.
const EVENTS: [(&str, Option<&str>); 5] = [
    ("PreToolUse", Some(TOOL)),
    ("PostToolUse", Some(TOOL)),
    ("UserPromptSubmit", None),
    ("Stop", None),
    ("SessionEnd", None),
];
/// The `timeout` of the hooks that only look back (no wait for a person): seconds.
const LOOK_BACK_TIMEOUT: u64 = 30;

fn matcher(m: Option<&str>) -> Value {
    m.map_or(Value::Null, |m| json!(m))
}
/// What marks a command hook as ours.
pub const MARKER: &str = " hook claude-code";

/// The settings text as a JSON object (an empty or absent file is `{}`).
pub fn parse(path: &str, text: Option<&str>) -> Result<Map<String, Value>, OqError> {
    let bad = |m: String| OqError::invalid(ErrorCode::InvalidHookSettings, m);
    let text = text.unwrap_or("").trim();
    if text.is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(bad(format!(
            "{path} is JSON but not an object; left unchanged"
        ))),
        Err(e) => Err(bad(format!("{path} is not JSON ({e}); left unchanged"))),
    }
}

fn is_ours(hook: &Value) -> bool {
    hook["type"] == "command" && hook["command"].as_str().is_some_and(|c| c.contains(MARKER))
}

/// `settings` with our hooks removed; `Ok(None)` when there were none (nothing to write).
pub fn uninstall(settings: &Map<String, Value>) -> Result<Option<Map<String, Value>>, OqError> {
    let mut out = settings.clone();
    let Some(hooks) = out.get_mut("hooks") else {
        return Ok(None);
    };
    let hooks = object(hooks, "hooks")?;
    let mut removed = false;
    for (event, m) in EVENTS {
        let Some(groups) = hooks.get_mut(event) else {
            continue;
        };
        let groups = array(groups, &format!("hooks.{event}"))?;
        let before = groups.len();
        let m = matcher(m);
        for group in groups.iter_mut() {
            if group["matcher"] != m {
                continue;
            }
            if let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                let n = list.len();
                list.retain(|h| !is_ours(h));
                removed |= list.len() != n;
            }
        }
        // A group left empty was ours alone.
        groups.retain(|g| g["matcher"] != m || g["hooks"].as_array().is_none_or(|l| !l.is_empty()));
        removed |= groups.len() != before;
        if groups.is_empty() {
            hooks.remove(event);
        }
    }
    if hooks.is_empty() {
        out.remove("hooks");
    }
    Ok(removed.then_some(out))
}

/// `settings` with our hooks running `command` (waiting at most `timeout` seconds);
/// `Ok(None)` when exactly these are installed already.
pub fn install(
    settings: &Map<String, Value>,
    command: &str,
    timeout: u64,
) -> Result<Option<Map<String, Value>>, OqError> {
    let mut out = uninstall(settings)?.unwrap_or_else(|| settings.clone());
    let hooks = out.entry("hooks").or_insert_with(|| json!({}));
    let hooks = object(hooks, "hooks")?;
    for (event, m) in EVENTS {
        let timeout = if m.is_some() {
            timeout
        } else {
            LOOK_BACK_TIMEOUT
        };
        let ours = json!({"type": "command", "command": command, "timeout": timeout});
        let group = match m {
            Some(m) => json!({"matcher": m, "hooks": [ours]}),
            None => json!({"hooks": [ours]}),
        };
        let groups = hooks.entry(event).or_insert_with(|| json!([]));
        array(groups, &format!("hooks.{event}"))?.push(group);
    }
    // Installed already when taking ours out and putting them back changes nothing.
    Ok((out != *settings).then_some(out))
}

fn object<'a>(v: &'a mut Value, at: &str) -> Result<&'a mut Map<String, Value>, OqError> {
    v.as_object_mut().ok_or_else(|| {
        OqError::invalid(
            ErrorCode::InvalidHookSettings,
            format!("settings: {at} is not an object; left unchanged"),
        )
    })
}

fn array<'a>(v: &'a mut Value, at: &str) -> Result<&'a mut Vec<Value>, OqError> {
    v.as_array_mut().ok_or_else(|| {
        OqError::invalid(
            ErrorCode::InvalidHookSettings,
            format!("settings: {at} is not an array; left unchanged"),
        )
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn theirs() -> Map<String, Value> {
        parse(
            "s",
            Some(
                r#"{"model": "x", "hooks": {"PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]},
                {"matcher": "AskUserQuestion", "hooks": [{"type": "command", "command": "log.sh"}]}]}}"#,
            ),
        )
        .unwrap()
    }

    #[test]
    fn install_merges_is_idempotent_and_uninstall_restores_exactly() {
        let cmd = "'/bin/oq' hook claude-code --wait 590";
        let once = install(&theirs(), cmd, 600).unwrap().unwrap();
        assert_eq!(once["hooks"]["PreToolUse"].as_array().unwrap().len(), 3);
        assert_eq!(once["hooks"]["PostToolUse"].as_array().unwrap().len(), 1);
        assert_eq!(
            once["hooks"]["UserPromptSubmit"][0]["hooks"][0]["timeout"],
            30
        );
        assert!(once["hooks"]["SessionEnd"][0].get("matcher").is_none());
        assert_eq!(install(&once, cmd, 600).unwrap(), None);
        // Another command (a moved binary, other flags) replaces ours, not adds to it.
        let moved = install(&once, "'/usr/bin/oq' hook claude-code", 600)
            .unwrap()
            .unwrap();
        assert_eq!(moved["hooks"]["PreToolUse"].as_array().unwrap().len(), 3);
        assert_eq!(uninstall(&moved).unwrap().unwrap(), theirs());
        assert_eq!(uninstall(&theirs()).unwrap(), None);
    }

    #[test]
    fn a_settings_file_of_another_shape_is_refused() {
        assert!(parse("s", Some("{not json")).is_err());
        assert!(parse("s", Some("[1]")).is_err());
        let odd = parse("s", Some(r#"{"hooks": {"PreToolUse": {}}}"#)).unwrap();
        let e = install(&odd, "oq hook claude-code", 1).unwrap_err();
        assert_eq!(e.code(), "invalid_hook_settings");
    }
}
