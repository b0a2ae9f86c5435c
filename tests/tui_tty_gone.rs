//! A dead terminal ends oq (issue 11, item 4): the built binary on a pty that is not
//! its controlling terminal, so closing the pty hangs the tty up and no SIGHUP comes.
//! oq must see the end of its input (EOF/EIO), go through the one cleanup with the last
//! keystrokes in the draft, and exit — never spin. What it burns is measured in CPU
//! ticks from /proc, not in seconds; every wait is for an event with a generous deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common_pty;

use std::path::Path;
use std::process::Command;

use common_pty::{Detached, demo_store};

/// Opens the answer field on dev-a's guest-checkout question and types `text`,
/// without waiting for it to show: the last keys may still be in flight.
fn type_into_the_field(tui: &mut Detached, text: &str) {
    tui.wait_text("Open questions (6)");
    tui.send(b"j");
    tui.wait_text("Should guest checkout be supported");
    tui.send(b"i");
    tui.typed(text);
}

fn the_draft(data: &Path) -> String {
    let drafts: Vec<String> = std::fs::read_dir(data.join("drafts"))
        .expect("drafts dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".txt"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert_eq!(drafts.len(), 1, "{drafts:?}");
    drafts[0].clone()
}

/// A tenth of a CPU second at the usual 100 ticks a second: a process spinning on
/// `read(0) = 0` for the deadline burns hundreds of times more.
const CALM: u64 = 10;

#[test]
fn a_terminal_gone_without_a_signal_ends_oq_with_the_last_keys_in_the_draft() {
    let data = demo_store();
    let mut tui = Detached::spawn(data.path(), "dev-a", &[]);
    type_into_the_field(&mut tui, "half an answ");
    // Read by oq before the terminal dies (a hang-up discards what is still unread in
    // the kernel's buffer), as with a terminal closed a moment after typing.
    tui.wait_text("half an answ");
    let before = tui.cpu_ticks();
    tui.hang_up();
    let (at_exit, status) = tui.wait_exit();
    assert!(
        at_exit - before <= CALM,
        "oq burned {} CPU ticks on its way out",
        at_exit - before
    );
    // 0 when the end of the input came first, 1 when a frame failed first (EIO): both
    // the one cleanup's teardown; never a signal, never a panic (101).
    assert!(
        matches!(status.code(), Some(0 | 1)),
        "oq ended with {status}"
    );
    assert_eq!(the_draft(data.path()), "half an answ");
}

#[test]
fn sigterm_while_typing_on_a_tty_not_controlling_ends_oq_with_every_key_in_the_draft() {
    let data = demo_store();
    let mut tui = Detached::spawn(data.path(), "dev-a", &[]);
    type_into_the_field(&mut tui, "typed then killed");
    // Read by oq (keys still in the kernel's buffer when the signal lands are not
    // drained yet: see the notes).
    tui.wait_text("typed then killed");
    let kill = Command::new("kill")
        .args(["-TERM", &tui.child.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    let (_, status) = tui.wait_exit();
    assert!(
        matches!(status.code(), Some(0 | 1)),
        "oq ended with {status}"
    );
    assert_eq!(the_draft(data.path()), "typed then killed");
}
