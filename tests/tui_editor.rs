//! `$EDITOR` opens at once and gets every key (issue 11, item 5): the built `oq` in a
//! real pseudo-terminal with a scripted editor that says it is ready, reads one line
//! from the terminal and saves it. No key is sent between `e` and the editor's
//! readiness, so an editor that waits for one more key never shows; the line typed in
//! the editor must come back whole, with nothing lost to the TUI or added by it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common_pty;

use std::path::Path;
use std::process::Command;

use common_pty::{Tui, demo_store};

/// An editor that announces itself, then saves the one line typed into it.
fn scripted_editor(dir: &Path) -> String {
    let path = dir.join("editor.sh");
    std::fs::write(
        &path,
        "#!/bin/sh\nprintf 'EDITOR-READY\\r\\n'\nIFS= read -r line\nprintf '%s' \"$line\" > \"$1\"\n",
    )
    .unwrap();
    let made = Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    assert!(made.success());
    path.to_str().unwrap().to_string()
}

#[test]
fn the_editor_opens_on_the_first_key_and_gets_every_key_after_it() {
    let data = demo_store();
    let scripts = tempfile::tempdir().unwrap();
    let editor = scripted_editor(scripts.path());
    let mut tui = Tui::spawn_with(
        data.path(),
        "dev-a",
        &[("EDITOR", editor.as_str()), ("VISUAL", editor.as_str())],
    );
    tui.wait_text("Open questions (6)");
    tui.send(b"j");
    tui.wait_text("Should guest checkout be supported");
    tui.send(b"e");
    // Nothing more is sent until the editor runs.
    tui.wait_text("EDITOR-READY");
    tui.typed("from the editor");
    tui.send(b"\r");
    // The TUI is back (its fresh screen cleared the editor's) with the text in its field.
    tui.wait_for("the TUI back with the editor's text", |s| {
        s.contains("from the editor") && !s.contains("EDITOR-READY")
    });
    // The field has the text and the focus: end without another key.
    tui.signal("TERM");
    tui.wait_exit();
    tui.assert_restored();
    let drafts: Vec<String> = std::fs::read_dir(data.path().join("drafts"))
        .expect("drafts dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".txt"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    // Exactly the editor's line: its first key not taken by the TUI, no key added.
    assert_eq!(drafts, vec!["from the editor".to_string()]);
}
