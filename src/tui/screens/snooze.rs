//! "Not now" in the TUI (issue 17 part 4), as data the model holds: the prompt the
//! snooze key opens (the text typed, the refusal of the last Enter, the time it was
//! read as), whether the open view lists the snoozed instead of hiding them, and the
//! window of a snooze that just ended, whose questions ring once the reload brings them
//! back. The keys that drive it are `tui::snooze`, above the model.

/// The snooze key's prompt over the screen, for one question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnoozePrompt {
    pub question_id: String,
    /// What the person typed ("2h", "tomorrow 9:00"); kept through a refusal or a
    /// cancelled confirmation, so it can be fixed rather than typed again.
    pub text: String,
    /// Why the last Enter was refused, in the domain's words (past, too far, not a time).
    pub refused: Option<String>,
    /// The time the last Enter read (Unix ms), while its confirmation stands: the write
    /// records exactly this, however the clock moves meanwhile.
    pub until: Option<i64>,
}

impl SnoozePrompt {
    pub fn new(question_id: &str) -> SnoozePrompt {
        SnoozePrompt {
            question_id: question_id.into(),
            text: String::new(),
            refused: None,
            until: None,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snoozes {
    pub prompt: Option<SnoozePrompt>,
    /// The open view lists only the snoozed questions, each with its return time.
    pub show: bool,
    /// A snooze ended on its own between these times (Unix ms, both included): the
    /// reload's questions whose snooze ended then are back, and ring.
    pub waking: Option<(i64, i64)>,
}
