//! The form for a question that carries options (an OpenCode request): one step per
//! prompt — pick one, pick several, or type free text — then a review step before
//! sending. Pure state and key handling; `update` turns the outcome into effects.
//!
//! Its draft is what was chosen and typed, per prompt, as JSON (`[{"picked": ["linux"],
//! "typed": "…"}]`, labels rather than positions, so a draft never picks another option
//! than the one chosen); `update` saves it at every change, and a form opened again on
//! the question starts from it. A label the question no longer offers is dropped.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use serde::{Deserialize, Serialize};

use super::keymap::{Action, Keymap};
use crate::wire::PromptItem;

/// One prompt of a draft.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct PromptDraft {
    #[serde(default)]
    picked: Vec<String>,
    #[serde(default)]
    typed: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChoiceForm {
    pub question_id: String,
    pub prompts: Vec<PromptItem>,
    /// The prompt on screen.
    pub current: usize,
    /// The highlighted row of each prompt (options, then "type your own" when allowed).
    pub cursor: Vec<usize>,
    pub picked: Vec<Vec<bool>>,
    pub custom: Vec<String>,
    /// Typing the free text of the current prompt.
    pub typing: bool,
    /// The review step: every answer shown, Enter sends.
    pub review: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Nothing,
    Leave,
    Submit(Vec<Vec<String>>),
    Invalid(String),
    /// The dismiss key: `keys.rs` asks first (`confirm.rs`).
    Dismiss,
}

impl ChoiceForm {
    pub fn new(question_id: &str, prompts: &[PromptItem]) -> Self {
        ChoiceForm {
            question_id: question_id.into(),
            prompts: prompts.to_vec(),
            current: 0,
            cursor: vec![0; prompts.len()],
            picked: prompts
                .iter()
                .map(|p| vec![false; p.options.len()])
                .collect(),
            custom: vec![String::new(); prompts.len()],
            typing: false,
            review: false,
        }
    }

    /// The form as a draft; `None` when nothing is chosen or typed.
    pub fn draft(&self) -> Option<String> {
        let prompts: Vec<PromptDraft> = self
            .prompts
            .iter()
            .enumerate()
            .map(|(i, p)| PromptDraft {
                picked: p
                    .options
                    .iter()
                    .zip(&self.picked[i])
                    .filter(|(_, on)| **on)
                    .map(|(o, _)| o.label.clone())
                    .collect(),
                typed: self.custom[i].clone(),
            })
            .collect();
        if prompts
            .iter()
            .all(|p| p.picked.is_empty() && p.typed.is_empty())
        {
            return None;
        }
        serde_json::to_string(&prompts).ok()
    }

    /// Starts from a draft of [`ChoiceForm::draft`]; anything else changes nothing.
    pub fn restore(&mut self, draft: &str) {
        let Ok(prompts) = serde_json::from_str::<Vec<PromptDraft>>(draft) else {
            return;
        };
        for (i, d) in prompts.into_iter().enumerate().take(self.prompts.len()) {
            for (j, o) in self.prompts[i].options.iter().enumerate() {
                self.picked[i][j] = d.picked.contains(&o.label);
            }
            if self.prompts[i].custom {
                self.custom[i] = d.typed;
            }
        }
    }

    pub fn is_typing(&self) -> bool {
        self.typing
    }

    /// Rows of prompt `i`: its options, plus one for free text.
    pub fn rows(&self, i: usize) -> usize {
        self.prompts
            .get(i)
            .map_or(0, |p| p.options.len() + usize::from(p.custom))
    }

    /// The answers as sent: chosen labels, then the typed text, per prompt.
    pub fn answers(&self) -> Vec<Vec<String>> {
        self.prompts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut a: Vec<String> = p
                    .options
                    .iter()
                    .zip(&self.picked[i])
                    .filter(|(_, on)| **on)
                    .map(|(o, _)| o.label.clone())
                    .collect();
                let typed = self.custom[i].trim();
                if p.custom && !typed.is_empty() {
                    a.push(typed.to_string());
                }
                a
            })
            .collect()
    }

    fn pick(&mut self) {
        let (i, row) = (self.current, self.cursor[self.current]);
        let Some(p) = self.prompts.get(i) else { return };
        if row >= p.options.len() {
            self.typing = true;
            return;
        }
        if p.multiple {
            self.picked[i][row] = !self.picked[i][row];
        } else {
            self.picked[i].iter_mut().for_each(|b| *b = false);
            self.picked[i][row] = true;
            self.custom[i].clear();
        }
    }

    fn advance(&mut self) {
        if self.current + 1 < self.prompts.len() {
            self.current += 1;
        } else {
            self.review = true;
        }
    }

    pub fn key(&mut self, key: &KeyEvent, keymap: &Keymap) -> Outcome {
        if self.prompts.is_empty() {
            return Outcome::Leave;
        }
        if self.typing {
            let text = &mut self.custom[self.current];
            match key.code {
                KeyCode::Enter | KeyCode::Esc => {
                    self.typing = false;
                    // Enter after typing is "done with this prompt"; a single choice
                    // is the typed text alone.
                    if key.code == KeyCode::Enter && !text.trim().is_empty() {
                        if !self.prompts[self.current].multiple {
                            self.picked[self.current]
                                .iter_mut()
                                .for_each(|b| *b = false);
                        }
                        self.advance();
                    }
                }
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char(c)
                    if !key
                        .modifiers
                        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
                {
                    text.push(c);
                }
                _ => {}
            }
            return Outcome::Nothing;
        }
        // An options form's own keys first (pick, next), then the panes' moves.
        let action = keymap.options(key).or_else(|| keymap.normal(key));
        if self.review {
            return match action {
                Some(Action::Next | Action::Answer) => {
                    let answers = self.answers();
                    match answers.iter().position(Vec::is_empty) {
                        Some(i) => {
                            self.review = false;
                            self.current = i;
                            Outcome::Invalid(format!(
                                "question {} of {} needs an answer",
                                i + 1,
                                self.prompts.len()
                            ))
                        }
                        None => Outcome::Submit(answers),
                    }
                }
                Some(Action::Back | Action::Up | Action::PrevPane) => {
                    self.review = false;
                    Outcome::Nothing
                }
                Some(Action::Quit) => Outcome::Leave,
                Some(Action::Dismiss) => Outcome::Dismiss,
                _ => Outcome::Nothing,
            };
        }
        let rows = self.rows(self.current);
        let cur = &mut self.cursor[self.current];
        match action {
            Some(Action::Pick) => self.pick(),
            Some(Action::Next) => {
                let multiple = self.prompts[self.current].multiple;
                let on_custom = *cur >= self.prompts[self.current].options.len();
                if on_custom || !multiple {
                    self.pick();
                }
                if !self.typing {
                    self.advance();
                }
            }
            Some(Action::Down) => *cur = (*cur + 1).min(rows.saturating_sub(1)),
            Some(Action::Up) => *cur = cur.saturating_sub(1),
            Some(Action::Top) => *cur = 0,
            Some(Action::Bottom) => *cur = rows.saturating_sub(1),
            Some(Action::NextPane) => self.advance(),
            Some(Action::PrevPane) => self.current = self.current.saturating_sub(1),
            Some(Action::Back | Action::Quit) => return Outcome::Leave,
            Some(Action::Dismiss) => return Outcome::Dismiss,
            _ => {}
        }
        Outcome::Nothing
    }
}

/// A draft in words, for the confirmation that would discard it: "linux, macos; beta".
pub fn draft_summary(draft: &str) -> String {
    match serde_json::from_str::<Vec<PromptDraft>>(draft) {
        Ok(prompts) => prompts
            .into_iter()
            .map(|p| {
                let mut parts = p.picked;
                if !p.typed.trim().is_empty() {
                    parts.push(p.typed);
                }
                parts.join(", ")
            })
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("; "),
        Err(_) => draft.to_string(),
    }
}
