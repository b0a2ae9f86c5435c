//! The help overlay's state and keys. It lists the one table of keys with the live
//! bindings, scrolls (↑/↓, PgUp/PgDn, Home), and filters as you type: a row stays when
//! its keys or its words contain the filter. Esc and the help key (`?`, F1) close it;
//! `q` closes it while the filter is empty (once you type, `q` is a letter of the
//! filter); Ctrl-C still quits through the one cleanup. No key reaches the keymap while
//! it is up. Pure: the view reads [`Help::lines`].

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::keymap::table::Place;
use super::keymap::{Action, HelpRow, Keymap};

/// The overlay while it is up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Help {
    pub filter: String,
    /// The first row shown; the view keeps it within the rows.
    pub scroll: u16,
}

/// What a key did to the overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Stay,
    Close,
    Quit,
}

/// One line of the overlay: a section title, or a row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HelpLine {
    Section(&'static str),
    Row(String, &'static str),
}

impl Help {
    pub fn key(&mut self, k: &KeyEvent, km: &Keymap) -> Outcome {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        let action = km.normal(k);
        if ctrl && action == Some(Action::Quit) {
            return Outcome::Quit;
        }
        match k.code {
            KeyCode::Esc => return Outcome::Close,
            _ if action == Some(Action::Quit) && self.filter.is_empty() => return Outcome::Close,
            _ if action == Some(Action::Help) => return Outcome::Close,
            KeyCode::Down => self.scroll = self.scroll.saturating_add(1),
            KeyCode::Up => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageDown => self.scroll = self.scroll.saturating_add(10),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::Home => self.scroll = 0,
            KeyCode::Backspace => {
                self.filter.pop();
                self.scroll = 0;
            }
            KeyCode::Char(c) if !ctrl && !k.modifiers.contains(KeyModifiers::ALT) => {
                self.filter.push(c);
                self.scroll = 0;
            }
            _ => {}
        }
        Outcome::Stay
    }

    /// The lines the filter keeps, with the title of each place that keeps a row.
    pub fn lines(&self, km: &Keymap) -> Vec<HelpLine> {
        let needle = self.filter.to_lowercase();
        let keep = |(_, keys, words): &HelpRow| {
            needle.is_empty()
                || keys.to_lowercase().contains(&needle)
                || words.to_lowercase().contains(&needle)
        };
        let mut out = Vec::new();
        let mut place = Place::Normal;
        for (p, keys, words) in km.help_rows().into_iter().filter(keep) {
            if p != place {
                place = p;
                out.push(HelpLine::Section(match p {
                    Place::Normal => "In the panes",
                    Place::Field => "In the answer field",
                    Place::Options => "In an options form",
                }));
            }
            out.push(HelpLine::Row(keys, words));
        }
        out
    }
}
