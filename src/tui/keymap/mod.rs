//! Keys → actions, and back.
//!
//! [`Action`] is what a key means; [`table::TABLE`] gives each action its place (the
//! panes, the answer field, an options form), default keys, words and hint. The
//! config's `[keys]` table binds action names (snake_case) to key names (`"j"`,
//! `"down"`, `"ctrl-d"`, `"alt-enter"`…), as a patch over the defaults, in the place
//! where the action acts: `submit = "ctrl-s"` under `[keys]` rebinds the field's send
//! key. `[keys.field]` rebinds, inside the field only, an action that acts in both
//! (`editor`, `back`); naming there an action that does not act in the field is an
//! error, never a key that silently does nothing. The reverse map (action → keys) fills
//! the help overlay and the hint bar, so they always show the user's real keys. Inside
//! the field only field keys act; every other key there is text.

mod key;
pub mod table;

use std::collections::{BTreeMap, HashMap};

use crossterm::event::KeyEvent;
use serde::Deserialize;

pub use key::Key;
use table::{Place, TABLE};

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
    /// The memory of answers: the similar earlier answer into the field, to edit.
    CopySimilar,
    Filter,
    FilterBack,
    Sort,
    Search,
    ImReady,
    ArchitectureReady,
    PauseAuto,
    DelegateNow,
    Dismiss,
    /// "Not now": hide the question from the open view until a time (asks first).
    Snooze,
    /// The open view lists the snoozed questions instead, and back.
    ShowSnoozed,
    /// End a snooze before its time (asks first).
    Unsnooze,
    Outbox,
    /// The Decisions view.
    Decisions,
    /// Triage: mark the selected question, or a visual range.
    Mark,
    Visual,
    Help,
    Back,
    Quit,
    // The answer field's.
    Submit,
    Newline,
    Undo,
    Redo,
    // An options form's.
    Pick,
    Next,
}

impl Action {
    /// The name the config uses: `page_down`.
    pub fn name(self) -> String {
        let mut out = String::new();
        for (i, c) in format!("{self:?}").chars().enumerate() {
            if c.is_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    }
}

/// One line of the help overlay: where, the live keys, what the action does.
pub type HelpRow = (Place, String, &'static str);

/// The live bindings, one map per place.
#[derive(Debug, Clone)]
pub struct Keymap {
    maps: HashMap<Place, HashMap<Key, Action>>,
}

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

impl Default for Keymap {
    fn default() -> Self {
        let mut maps: HashMap<Place, HashMap<Key, Action>> = HashMap::new();
        for row in TABLE {
            let map = maps.entry(row.place).or_default();
            for k in row.keys {
                if let Ok(key) = Key::parse(k) {
                    map.insert(key, row.action);
                }
            }
        }
        Keymap { maps }
    }
}

impl Keymap {
    /// The defaults with the user's `[keys]` laid over them.
    pub fn with_config(config: &KeysConfig) -> Result<Keymap, String> {
        let mut km = Keymap::default();
        for (action, keys) in &config.normal {
            // Where the action acts: the panes if it acts there, else its one place.
            let place = if table::places(*action).any(|p| p == Place::Normal) {
                Place::Normal
            } else {
                table::places(*action).next().unwrap_or(Place::Normal)
            };
            km.bind(place, *action, keys)?;
        }
        for (action, keys) in &config.field {
            if !table::places(*action).any(|p| p == Place::Field) {
                return Err(format!(
                    "[keys.field] {} does not act in the answer field (every other key there \
                     is text); bind it under [keys]",
                    action.name()
                ));
            }
            km.bind(Place::Field, *action, keys)?;
        }
        Ok(km)
    }

    fn bind(&mut self, place: Place, action: Action, keys: &OneOrMany) -> Result<(), String> {
        let parsed = keys
            .keys()
            .into_iter()
            .map(Key::parse)
            .collect::<Result<Vec<_>, _>>()?;
        let map = self.maps.entry(place).or_default();
        map.retain(|_, a| *a != action);
        for key in parsed {
            map.insert(key, action);
        }
        Ok(())
    }

    /// What `e` means in `place`.
    pub fn action(&self, place: Place, e: &KeyEvent) -> Option<Action> {
        self.maps.get(&place)?.get(&Key::from_event(e)).copied()
    }

    pub fn normal(&self, e: &KeyEvent) -> Option<Action> {
        self.action(Place::Normal, e)
    }

    pub fn field(&self, e: &KeyEvent) -> Option<Action> {
        self.action(Place::Field, e)
    }

    pub fn options(&self, e: &KeyEvent) -> Option<Action> {
        self.action(Place::Options, e)
    }

    /// The keys bound to `action` in `place`: single characters first, then named keys
    /// ("j/↓" rather than "↓/j").
    pub fn keys_in(&self, place: Place, action: Action) -> Vec<String> {
        let mut keys: Vec<String> = self
            .maps
            .get(&place)
            .into_iter()
            .flatten()
            .filter(|(_, a)| **a == action)
            .map(|(k, _)| k.to_string())
            .collect();
        keys.sort_by_key(|k| (k.chars().count() > 1, k.clone()));
        keys
    }

    /// Reverse map: the keys bound to `action` in the panes, "j/↓".
    pub fn keys_for(&self, action: Action) -> String {
        self.keys_in(Place::Normal, action).join("/")
    }

    pub fn field_keys_for(&self, action: Action) -> String {
        self.keys_in(Place::Field, action).join("/")
    }

    /// Every row of the table with its live keys, in the table's order; an action the
    /// user left without keys is not listed.
    pub fn help_rows(&self) -> Vec<HelpRow> {
        TABLE
            .iter()
            .map(|r| {
                (
                    r.place,
                    self.keys_in(r.place, r.action).join("/"),
                    r.describe,
                )
            })
            .filter(|(_, keys, _)| !keys.is_empty())
            .collect()
    }
}
