//! Keys → actions, and back.
//!
//! [`Action`] is what a key means; the config's `[keys]` table binds action names
//! (snake_case) to key names (`"j"`, `"down"`, `"ctrl-d"`, `"alt-enter"`…), as a patch
//! over the defaults: vim-style and arrow keys both. The reverse map (action → keys)
//! fills the help overlay and the hint bar, so they always show the user's real keys.
//! Field keys (`[keys.field]`) act only while typing an answer; every other key there
//! is text, so no hotkey fires from inside the field.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Down,
    Up,
    PageDown,
    PageUp,
    Top,
    Bottom,
    NextPane,
    PrevPane,
    JumpToQueue,
    ScrollDown,
    ScrollUp,
    Accept,
    Answer,
    Editor,
    Filter,
    Sort,
    Search,
    ImReady,
    ArchitectureReady,
    PauseAuto,
    DelegateNow,
    Outbox,
    Dismiss,
    Help,
    Back,
    Quit,
    // Field actions.
    Submit,
    Newline,
}

impl Action {
    pub fn describe(self) -> &'static str {
        match self {
            Action::Down => "move down",
            Action::Up => "move up",
            Action::PageDown => "page down",
            Action::PageUp => "page up",
            Action::Top => "first row",
            Action::Bottom => "last row",
            Action::NextPane => "next pane",
            Action::PrevPane => "previous pane",
            Action::JumpToQueue => "jump to the open questions",
            Action::ScrollDown => "scroll the question down",
            Action::ScrollUp => "scroll the question up",
            Action::Accept => "accept the suggestion",
            Action::Answer => "type an answer / choose options",
            Action::Editor => "answer in $EDITOR",
            Action::Filter => "filter: open / answered / all",
            Action::Sort => "sort",
            Action::Search => "search",
            Action::ImReady => "record \"I'm ready\"",
            Action::ArchitectureReady => "record \"Confirm architecture ready\"",
            Action::PauseAuto => "pause auto-answer",
            Action::DelegateNow => "delegate now",
            Action::Outbox => "the outbox: answers kept for the source",
            Action::Dismiss => "dismiss the question without an answer (its author)",
            Action::Help => "this help",
            Action::Back => "back / close / leave the field",
            Action::Quit => "quit",
            Action::Submit => "send the answer",
            Action::Newline => "new line in the answer",
        }
    }
    /// Short label for the hint bar.
    pub fn hint(self) -> &'static str {
        match self {
            Action::Down | Action::Up => "move",
            Action::Accept => "accept",
            Action::Answer => "answer",
            Action::Filter => "filter",
            Action::Search => "search",
            Action::Help => "help",
            Action::Quit => "quit",
            Action::Submit => "send",
            Action::Newline => "new line",
            Action::Editor => "$EDITOR",
            Action::Back => "leave",
            _ => self.describe(),
        }
    }
}

/// A key with its modifiers, as written in the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl Key {
    pub fn from_event(e: &KeyEvent) -> Key {
        let mut mods =
            e.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        // Shift is part of the character itself ("G", "?").
        if let KeyCode::Char(_) = e.code {
            mods.remove(KeyModifiers::SHIFT);
        }
        let code = match e.code {
            KeyCode::BackTab => {
                return Key {
                    code: KeyCode::BackTab,
                    mods: KeyModifiers::NONE,
                };
            }
            c => c,
        };
        Key { code, mods }
    }

    pub fn parse(s: &str) -> Result<Key, String> {
        let mut mods = KeyModifiers::NONE;
        let mut rest = s;
        loop {
            let lower = rest.to_ascii_lowercase();
            if let Some(r) = lower
                .strip_prefix("ctrl-")
                .or_else(|| lower.strip_prefix("c-"))
            {
                mods |= KeyModifiers::CONTROL;
                rest = &rest[rest.len() - r.len()..];
            } else if let Some(r) = lower
                .strip_prefix("alt-")
                .or_else(|| lower.strip_prefix("m-"))
            {
                mods |= KeyModifiers::ALT;
                rest = &rest[rest.len() - r.len()..];
            } else if let Some(r) = lower.strip_prefix("shift-") {
                mods |= KeyModifiers::SHIFT;
                rest = &rest[rest.len() - r.len()..];
            } else {
                break;
            }
        }
        let code = match rest.to_ascii_lowercase().as_str() {
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "tab" if mods.contains(KeyModifiers::SHIFT) => {
                mods.remove(KeyModifiers::SHIFT);
                KeyCode::BackTab
            }
            "tab" => KeyCode::Tab,
            "backtab" => KeyCode::BackTab,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pageup" | "pgup" => KeyCode::PageUp,
            "pagedown" | "pgdn" => KeyCode::PageDown,
            "space" => KeyCode::Char(' '),
            "backspace" => KeyCode::Backspace,
            "delete" | "del" => KeyCode::Delete,
            f if f.len() > 1 && f.starts_with('f') && f[1..].parse::<u8>().is_ok() => {
                KeyCode::F(f[1..].parse::<u8>().map_err(|e| e.to_string())?)
            }
            _ => {
                let mut chars = rest.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => KeyCode::Char(c),
                    _ => return Err(format!("unknown key {s:?}")),
                }
            }
        };
        Ok(Key { code, mods })
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mods.contains(KeyModifiers::CONTROL) {
            f.write_str("Ctrl-")?;
        }
        if self.mods.contains(KeyModifiers::ALT) {
            f.write_str("Alt-")?;
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            f.write_str("Shift-")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::Enter => f.write_str("Enter"),
            KeyCode::Esc => f.write_str("Esc"),
            KeyCode::Tab => f.write_str("Tab"),
            KeyCode::BackTab => f.write_str("Shift-Tab"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::Home => f.write_str("Home"),
            KeyCode::End => f.write_str("End"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            KeyCode::F(n) => write!(f, "F{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// (keys, action) pairs for the help overlay.
pub type HelpRows = Vec<(String, Action)>;

/// The live bindings: outside the field, and inside it.
#[derive(Debug, Clone)]
pub struct Keymap {
    normal: HashMap<Key, Action>,
    field: HashMap<Key, Action>,
}

const NORMAL: &[(Action, &[&str])] = &[
    (Action::Down, &["j", "down"]),
    (Action::Up, &["k", "up"]),
    (Action::PageDown, &["ctrl-d", "pagedown"]),
    (Action::PageUp, &["ctrl-u", "pageup"]),
    (Action::Top, &["g", "home"]),
    (Action::Bottom, &["G", "end"]),
    (Action::NextPane, &["tab", "l", "right"]),
    (Action::PrevPane, &["shift-tab", "h", "left"]),
    (Action::JumpToQueue, &["o"]),
    (Action::ScrollDown, &["J"]),
    (Action::ScrollUp, &["K"]),
    (Action::Accept, &["a"]),
    (Action::Answer, &["i", "enter"]),
    (Action::Editor, &["e"]),
    (Action::Filter, &["f"]),
    (Action::Sort, &["s"]),
    (Action::Search, &["/"]),
    (Action::ImReady, &["r"]),
    (Action::ArchitectureReady, &["R"]),
    (Action::PauseAuto, &["p"]),
    (Action::DelegateNow, &["d"]),
    (Action::Outbox, &["O"]),
    (Action::Dismiss, &["x"]),
    (Action::Help, &["?", "f1"]),
    (Action::Back, &["esc"]),
    (Action::Quit, &["q", "ctrl-c"]),
];

const FIELD: &[(Action, &[&str])] = &[
    (Action::Submit, &["enter"]),
    (Action::Newline, &["alt-enter", "ctrl-j"]),
    (Action::Editor, &["ctrl-e"]),
    (Action::Back, &["esc"]),
];

/// The `[keys]` table: `action = "key"` or `action = ["key", …]`, and `[keys.field]`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct KeysConfig {
    #[serde(flatten)]
    pub normal: BTreeMap<Action, OneOrMany>,
    #[serde(default)]
    pub field: BTreeMap<Action, OneOrMany>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn keys(&self) -> Vec<&str> {
        match self {
            OneOrMany::One(s) => vec![s.as_str()],
            OneOrMany::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

fn table(defaults: &[(Action, &[&str])]) -> HashMap<Key, Action> {
    let mut map = HashMap::new();
    for (action, keys) in defaults {
        for k in *keys {
            if let Ok(key) = Key::parse(k) {
                map.insert(key, *action);
            }
        }
    }
    map
}

fn patch(
    map: &mut HashMap<Key, Action>,
    patch: &BTreeMap<Action, OneOrMany>,
) -> Result<(), String> {
    for (action, keys) in patch {
        let parsed = keys
            .keys()
            .into_iter()
            .map(Key::parse)
            .collect::<Result<Vec<_>, _>>()?;
        map.retain(|_, a| a != action);
        for key in parsed {
            map.insert(key, *action);
        }
    }
    Ok(())
}

impl Default for Keymap {
    fn default() -> Self {
        Keymap {
            normal: table(NORMAL),
            field: table(FIELD),
        }
    }
}

impl Keymap {
    /// The defaults with the user's `[keys]` laid over them.
    pub fn with_config(config: &KeysConfig) -> Result<Keymap, String> {
        let mut map = Keymap::default();
        patch(&mut map.normal, &config.normal)?;
        patch(&mut map.field, &config.field)?;
        Ok(map)
    }

    pub fn normal(&self, e: &KeyEvent) -> Option<Action> {
        self.normal.get(&Key::from_event(e)).copied()
    }

    pub fn field(&self, e: &KeyEvent) -> Option<Action> {
        self.field.get(&Key::from_event(e)).copied()
    }

    fn keys_in(map: &HashMap<Key, Action>, action: Action) -> Vec<String> {
        let mut keys: Vec<String> = map
            .iter()
            .filter(|(_, a)| **a == action)
            .map(|(k, _)| k.to_string())
            .collect();
        // Single characters first, then named keys: "j/↓" rather than "↓/j".
        keys.sort_by_key(|k| (k.chars().count() > 1, k.clone()));
        keys
    }

    /// Reverse map: the keys bound to `action` outside the field, "j/↓".
    pub fn keys_for(&self, action: Action) -> String {
        Self::keys_in(&self.normal, action).join("/")
    }

    pub fn field_keys_for(&self, action: Action) -> String {
        Self::keys_in(&self.field, action).join("/")
    }

    /// Every binding for the help overlay, in the order of [`Action`].
    pub fn help_rows(&self) -> (HelpRows, HelpRows) {
        let rows = |map: &HashMap<Key, Action>| {
            let mut actions: Vec<Action> = map.values().copied().collect();
            actions.sort();
            actions.dedup();
            actions
                .into_iter()
                .map(|a| (Self::keys_in(map, a).join("/"), a))
                .collect()
        };
        (rows(&self.normal), rows(&self.field))
    }
}
