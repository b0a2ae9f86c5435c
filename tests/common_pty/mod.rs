//! A real pseudo-terminal for end-to-end tests of the TUI: the built `oq` spawned in a
//! pty, its output rebuilt into a screen by a small VT interpreter, keys written to it.
//! Every wait is for screen content with a generous deadline; no durations asserted.
//! The child is killed on drop.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, SlavePty, native_pty_system};

pub const BIN: &str = env!("CARGO_BIN_EXE_oq");
pub const DEADLINE: Duration = Duration::from_secs(30);
pub const ROWS: u16 = 30;
pub const COLS: u16 = 100;

/// A fresh data dir holding the demo store (`oq demo`, as dev-a).
pub fn demo_store() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(BIN)
        .arg("--data-dir")
        .arg(dir.path())
        .args(["--as", "dev-a", "demo", "--quiet"])
        .output()
        .expect("oq demo");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

pub struct Tui {
    child: Box<dyn Child + Send + Sync>,
    master: Box<dyn MasterPty + Send>,
    _slave: Box<dyn SlavePty + Send>,
    writer: Box<dyn Write + Send>,
    output: Arc<Mutex<Vec<u8>>>,
    _config: tempfile::TempDir,
}

impl Tui {
    pub fn spawn(dir: &Path, user: &str) -> Tui {
        Tui::spawn_with(dir, user, &[])
    }

    pub fn spawn_with(dir: &Path, user: &str, env: &[(&str, &str)]) -> Tui {
        Tui::spawn_args(&["--data-dir", dir.to_str().unwrap(), "--as", user], env)
    }

    pub fn spawn_args(args: &[&str], env: &[(&str, &str)]) -> Tui {
        let mut cmd = CommandBuilder::new(BIN);
        cmd.args(args);
        cmd.env("NO_COLOR", "1");
        cmd.env("EDITOR", "true");
        cmd.env("VISUAL", "true");
        for (k, v) in env {
            cmd.env(k, v);
        }
        Tui::spawn_cmd(cmd)
    }

    /// Any program in the pty (another agent's own TUI: Claude Code), as its session
    /// leader, so [`Tui::kill_group`] stops what it started too.
    pub fn spawn_program(program: &Path, cwd: &Path, env: &[(String, String)]) -> Tui {
        let mut cmd = CommandBuilder::new(program);
        cmd.cwd(cwd);
        for (k, v) in env {
            cmd.env(k, v);
        }
        Tui::spawn_cmd(cmd)
    }

    fn spawn_cmd(mut cmd: CommandBuilder) -> Tui {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("pty");
        let config = tempfile::tempdir().expect("config dir");
        for (k, v) in [
            ("TERM", "xterm-256color".as_ref()),
            ("OQ_CONFIG_DIR", config.path().as_os_str()),
        ] {
            if cmd.get_env(k).is_none() {
                cmd.env(k, v);
            }
        }
        let child = pair.slave.spawn_command(cmd).expect("spawn oq");
        let mut reader = pair.master.try_clone_reader().expect("reader");
        let output = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&output);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let writer = pair.master.take_writer().expect("writer");
        Tui {
            child,
            master: pair.master,
            _slave: pair.slave,
            writer,
            output,
            _config: config,
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write to pty");
        self.writer.flush().expect("flush pty");
        // Let the TUI read each key as its own event (bracketed paste aside).
        std::thread::sleep(Duration::from_millis(30));
    }

    pub fn typed(&mut self, s: &str) {
        for c in s.chars() {
            let mut b = [0u8; 4];
            self.send(c.encode_utf8(&mut b).as_bytes());
        }
    }

    pub fn raw(&self) -> Vec<u8> {
        self.output.lock().unwrap().clone()
    }

    pub fn screen(&self) -> String {
        Screen::render(&self.raw(), ROWS as usize, COLS as usize)
    }

    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if pred(&s) {
                return s;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "timed out waiting for {what}; screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn wait_text(&self, text: &str) -> String {
        self.wait_for(text, |s| s.contains(text))
    }

    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("pid")
    }

    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(self.pid().to_string())
            .status()
            .expect("kill");
        assert!(ok.success());
    }

    /// Stops the child's whole process group (it leads its session): TERM, then KILL.
    pub fn kill_group(&mut self) {
        let group = format!("-{}", self.pid());
        let _ = Command::new("kill")
            .args(["-TERM", "--", &group])
            .stderr(std::process::Stdio::null())
            .status();
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until && self.child.try_wait().ok().flatten().is_none() {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(std::process::Stdio::null())
            .status();
        let _ = self.child.wait();
    }

    pub fn wait_exit(&mut self) {
        let start = Instant::now();
        loop {
            if self.child.try_wait().expect("try_wait").is_some() {
                // Give the reader thread a moment to drain the last bytes.
                std::thread::sleep(Duration::from_millis(200));
                return;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "oq did not exit; screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The terminal is given back: the stream ends leaving the alternate screen and
    /// showing the cursor, and the tty is out of raw mode.
    pub fn assert_restored(&self) {
        let raw = self.raw();
        let tail = String::from_utf8_lossy(&raw[raw.len().saturating_sub(64)..]).to_string();
        assert!(
            tail.ends_with("\x1b[?1049l\x1b[?25h"),
            "stream ends with {tail:?}"
        );
        self.assert_tty_sane();
    }

    /// After a panic the message follows the restore: the alternate screen is left and
    /// the cursor shown after the last time it was entered, and the tty is sane.
    pub fn assert_restored_then_text(&self) {
        let raw = String::from_utf8_lossy(&self.raw()).to_string();
        let entered = raw
            .rfind("\x1b[?1049h")
            .expect("entered the alternate screen");
        let rest = &raw[entered..];
        let left = rest.find("\x1b[?1049l").expect("left the alternate screen");
        assert!(rest[left..].contains("\x1b[?25h"), "cursor shown again");
        self.assert_tty_sane();
    }

    pub fn assert_tty_sane(&self) {
        let tty: PathBuf = self.master.tty_name().expect("tty name");
        let out = Command::new("stty")
            .arg("-a")
            .arg("-F")
            .arg(&tty)
            .output()
            .expect("stty");
        let modes = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "stty: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for word in modes.split_whitespace() {
            assert!(
                word != "-icanon" && word != "-echo",
                "raw mode left on: {modes}"
            );
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Just enough of a VT100 to read ratatui's output: cursor positioning, clears, text.
pub struct Screen {
    cells: Vec<Vec<char>>,
    row: usize,
    col: usize,
}

impl Screen {
    pub fn render(bytes: &[u8], rows: usize, cols: usize) -> String {
        let mut s = Screen {
            cells: vec![vec![' '; cols]; rows],
            row: 0,
            col: 0,
        };
        let text = String::from_utf8_lossy(bytes);
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            i += 1;
            match c {
                '\x1b' => i = s.escape(&chars, i),
                '\r' => s.col = 0,
                '\n' => s.row = (s.row + 1).min(rows - 1),
                '\x08' => s.col = s.col.saturating_sub(1),
                c if (c as u32) < 0x20 => {}
                c => {
                    if s.row < rows && s.col < cols {
                        s.cells[s.row][s.col] = c;
                    }
                    s.col += 1;
                }
            }
        }
        s.cells
            .iter()
            .map(|r| r.iter().collect::<String>().trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }

    pub fn escape(&mut self, c: &[char], mut i: usize) -> usize {
        let (rows, cols) = (self.cells.len(), self.cells[0].len());
        match c.get(i) {
            Some('[') => {
                i += 1;
                let start = i;
                while i < c.len() && !(('@'..='~').contains(&c[i])) {
                    i += 1;
                }
                let params: String = c[start..i.min(c.len())].iter().collect();
                let fin = c.get(i).copied().unwrap_or('m');
                let nums: Vec<usize> = params
                    .trim_start_matches('?')
                    .split(';')
                    .map(|p| p.parse().unwrap_or(0))
                    .collect();
                let n = |k: usize, d: usize| nums.get(k).copied().filter(|v| *v > 0).unwrap_or(d);
                if !params.starts_with('?') {
                    match fin {
                        'H' | 'f' => {
                            self.row = (n(0, 1) - 1).min(rows - 1);
                            self.col = (n(1, 1) - 1).min(cols);
                        }
                        'J' if nums.first() == Some(&2) || nums.first() == Some(&3) => {
                            self.cells
                                .iter_mut()
                                .for_each(|r| r.iter_mut().for_each(|x| *x = ' '));
                        }
                        'K' => {
                            for x in self.col..cols {
                                self.cells[self.row][x] = ' ';
                            }
                        }
                        'A' => self.row = self.row.saturating_sub(n(0, 1)),
                        'B' => self.row = (self.row + n(0, 1)).min(rows - 1),
                        'C' => self.col = (self.col + n(0, 1)).min(cols),
                        'D' => self.col = self.col.saturating_sub(n(0, 1)),
                        'G' => self.col = (n(0, 1) - 1).min(cols),
                        _ => {}
                    }
                }
                i + 1
            }
            Some(']') => {
                while i < c.len()
                    && c[i] != '\x07'
                    && !(c[i] == '\x1b' && c.get(i + 1) == Some(&'\\'))
                {
                    i += 1;
                }
                if c.get(i) == Some(&'\x07') {
                    i + 1
                } else {
                    i + 2
                }
            }
            Some(_) => i + 1,
            None => i,
        }
    }
}

/// `oq` on a pty that is NOT its controlling terminal (no `setsid`, the slave opened
/// with `O_NOCTTY`), so closing the master hangs the tty up without any SIGHUP — the
/// "terminal gone without a signal" of issue 11. The child runs in its own process
/// group and is killed on drop.
pub struct Detached {
    pub child: std::process::Child,
    master: Option<std::os::fd::OwnedFd>,
    output: Vec<u8>,
    _config: tempfile::TempDir,
}

impl Detached {
    pub fn spawn(dir: &Path, user: &str, env: &[(&str, &str)]) -> Detached {
        use rustix::fs::{Mode, OFlags};
        use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
        use std::os::unix::process::CommandExt;
        let master =
            openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).expect("openpt");
        grantpt(&master).expect("grantpt");
        unlockpt(&master).expect("unlockpt");
        let name = ptsname(&master, Vec::new()).expect("ptsname");
        let slave = rustix::fs::open(
            name.as_c_str(),
            OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .expect("open the pty's slave");
        rustix::termios::tcsetwinsize(
            &slave,
            rustix::termios::Winsize {
                ws_row: ROWS,
                ws_col: COLS,
                ws_xpixel: 0,
                ws_ypixel: 0,
            },
        )
        .expect("window size");
        let config = tempfile::tempdir().expect("config dir");
        let stdio = |fd: &std::os::fd::OwnedFd| std::process::Stdio::from(fd.try_clone().unwrap());
        let mut cmd = Command::new(BIN);
        cmd.args(["--data-dir", dir.to_str().unwrap(), "--as", user])
            .env("TERM", "xterm-256color")
            .env("NO_COLOR", "1")
            .env("OQ_CONFIG_DIR", config.path())
            .env("EDITOR", "true")
            .env("VISUAL", "true")
            .stdin(stdio(&slave))
            .stdout(stdio(&slave))
            .stderr(stdio(&slave))
            .process_group(0);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("spawn oq");
        drop(slave);
        Detached {
            child,
            master: Some(master),
            output: Vec::new(),
            _config: config,
        }
    }

    /// Reads what the child wrote, waiting at most `ms` for the first byte.
    fn pump(&mut self, ms: i32) {
        use rustix::event::{PollFd, PollFlags, poll};
        let Some(master) = self.master.as_ref() else {
            return;
        };
        let timeout = rustix::event::Timespec {
            tv_sec: 0,
            tv_nsec: i64::from(ms) * 1_000_000,
        };
        let mut fds = [PollFd::new(master, PollFlags::IN)];
        if poll(&mut fds, Some(&timeout)).unwrap_or(0) == 0 {
            return;
        }
        let mut buf = [0u8; 8192];
        if let Ok(n) = rustix::io::read(master, &mut buf) {
            self.output.extend_from_slice(&buf[..n]);
        }
    }

    pub fn screen(&self) -> String {
        Screen::render(&self.output, ROWS as usize, COLS as usize)
    }

    pub fn wait_text(&mut self, text: &str) -> String {
        let start = Instant::now();
        loop {
            self.pump(50);
            let s = self.screen();
            if s.contains(text) {
                return s;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "timed out waiting for {text}; screen:\n{s}"
            );
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        let master = self.master.as_ref().expect("the terminal is open");
        rustix::io::write(master, bytes).expect("write to the pty");
        // Let oq read each key as its own event, and keep draining its output.
        self.pump(30);
    }

    pub fn typed(&mut self, s: &str) {
        for c in s.chars() {
            let mut b = [0u8; 4];
            self.send(c.encode_utf8(&mut b).as_bytes());
        }
    }

    /// The terminal goes away: the master is closed, the tty hung up, no signal sent.
    pub fn hang_up(&mut self) {
        self.master = None;
    }

    /// The child's CPU time so far (user + system), in clock ticks, from /proc; it can
    /// still be read while the child is a zombie, so it is final once the child exited.
    pub fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()))
            .expect("/proc/PID/stat");
        let after = &stat[stat.rfind(')').expect("comm") + 2..];
        let fields: Vec<&str> = after.split_whitespace().collect();
        // After the comm: state is field 3; utime and stime are fields 14 and 15.
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    }

    /// Whether the child has exited (a zombie not yet reaped, or gone).
    pub fn exited(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/stat", self.child.id()))
            .map_or(true, |s| s[s.rfind(')').unwrap() + 2..].starts_with('Z'))
    }

    /// Waits (a generous deadline, nothing timed) for the child to exit; its CPU ticks
    /// at exit, then reaps it.
    pub fn wait_exit(&mut self) -> (u64, std::process::ExitStatus) {
        let start = Instant::now();
        while !self.exited() {
            assert!(
                start.elapsed() < DEADLINE,
                "oq is still running after its terminal went away ({} CPU ticks)",
                self.cpu_ticks()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let ticks = self.cpu_ticks();
        (ticks, self.child.wait().expect("reap oq"))
    }
}

impl Drop for Detached {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
