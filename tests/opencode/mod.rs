//! The project's own harness for tests against a real OpenCode server.
//!
//! - Installs `opencode-linux-x64@1.18.34` from npm into
//!   `$CARGO_TARGET_DIR/opencode-peer/npm` (else `target/opencode-peer/npm`), once; later
//!   runs reuse it (the version is checked).
//! - Writes an isolated config (HOME, XDG dirs, config file in a temp dir) whose only
//!   provider is `fake_model.py` beside this file: our scripted OpenAI-compatible model.
//! - Starts the model (it picks its own port) and `opencode serve` on a 127.0.0.1 port
//!   the harness picks, waits for health, and stops both by pid when the [`Peer`] is
//!   dropped — also when a test fails. Each child also dies when this test process's
//!   pipe to it closes, so a killed test run leaks nothing.
//! - `npm` missing: [`shared`] prints why and returns `None`; the caller returns early.
//!   Nothing else skips.
//!
//! One server is shared by all the tests of a binary ([`shared`]); a test that needs
//! other settings (basic auth) starts its own with [`Peer::start`].
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use oq::opencode::{Auth, Client, Request};

pub const OPENCODE_VERSION: &str = "1.18.34";
const NPM_PACKAGE: &str = "opencode-linux-x64";

/// A generous bound for slow machines; the loops below return as soon as the thing happens.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// A running OpenCode server with our scripted model.
pub struct Peer {
    // Dropped in this order: the server, the servers a restart replaced, then the model,
    // then the state directory.
    server: Proc,
    retired: Vec<Proc>,
    model: Proc,
    bin: PathBuf,
    config: PathBuf,
    port: u16,
    pub base: String,
    pub password: Option<String>,
    pub model_log: PathBuf,
    server_log: PathBuf,
    pub state: tempfile::TempDir,
}

/// A child stopped by pid on drop; its stdin pipe is its lifeline.
struct Proc {
    name: &'static str,
    child: Child,
    lifeline: Option<ChildStdin>,
    /// The real process when `child` is a watchdog shell around it.
    inner_pid: Option<u32>,
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(pid) = self.inner_pid {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            let until = Instant::now() + Duration::from_secs(5);
            while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(50));
            }
            if Path::new(&format!("/proc/{pid}")).exists() {
                let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            }
        }
        drop(self.lifeline.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
        eprintln!(
            "[opencode harness] stopped {} ({})",
            self.name,
            self.child.id()
        );
    }
}

static SHARED: OnceLock<Option<Arc<Peer>>> = OnceLock::new();

/// The one server shared by every test of this binary (started by the first that asks);
/// `None` (with the reason printed) when npm is not installed.
///
/// A static is never dropped, so this server is stopped by its lifelines instead: when
/// the test process exits (passing, failing, or killed), the kernel closes our pipes,
/// the model exits on end of input, and the watchdog shell kills `opencode serve` by pid
/// and removes the state directory. A [`Peer::start`] of a test's own is stopped by
/// `Drop` as well.
pub fn shared() -> Option<Arc<Peer>> {
    SHARED
        .get_or_init(|| Peer::start(None).map(Arc::new))
        .clone()
}

/// `npm --version` works.
pub fn npm_available() -> bool {
    Command::new("npm")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn skip_reason() -> Option<String> {
    if npm_available() {
        None
    } else {
        Some(format!(
            "SKIPPED: the real-OpenCode tests need `npm` on PATH to install \
             {NPM_PACKAGE}@{OPENCODE_VERSION}; it was not found"
        ))
    }
}

/// Where the npm install lives, reused between runs.
fn npm_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let target = if target.is_absolute() {
        target
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(target)
    };
    target.join("opencode-peer").join("npm")
}

fn bin_in(dir: &Path) -> PathBuf {
    dir.join("node_modules")
        .join(NPM_PACKAGE)
        .join("bin")
        .join("opencode")
}

fn version_of(bin: &Path) -> Option<String> {
    let out = Command::new(bin).arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The opencode binary, installed from npm if it is not there at the pinned version.
/// Installs into a fresh directory and renames it into place, so two test binaries
/// installing at once cannot see half an install.
pub fn install() -> PathBuf {
    // One install at a time in this process (the shared server and a test's own start
    // together); other processes are kept apart by the temp dir and the rename.
    static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = INSTALLING.lock().unwrap_or_else(|p| p.into_inner());
    let dir = npm_dir();
    let bin = bin_in(&dir);
    if version_of(&bin).as_deref() == Some(OPENCODE_VERSION) {
        return bin;
    }
    let parent = dir.parent().unwrap().to_path_buf();
    std::fs::create_dir_all(&parent).unwrap();
    let tmp = parent.join(format!("npm-tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(tmp.join("package.json"), "{\"private\":true}\n").unwrap();
    eprintln!(
        "[opencode harness] installing {NPM_PACKAGE}@{OPENCODE_VERSION} into {}",
        dir.display()
    );
    let started = Instant::now();
    let out = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(&tmp)
        .arg(format!("{NPM_PACKAGE}@{OPENCODE_VERSION}"))
        .output()
        .expect("run npm");
    assert!(
        out.status.success(),
        "npm install {NPM_PACKAGE}@{OPENCODE_VERSION} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!(
        "[opencode harness] installed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if version_of(&bin).as_deref() != Some(OPENCODE_VERSION) {
        let _ = std::fs::remove_dir_all(&dir);
    }
    if std::fs::rename(&tmp, &dir).is_err() {
        // Someone else put an install in place first.
        let _ = std::fs::remove_dir_all(&tmp);
    }
    assert_eq!(
        version_of(&bin).as_deref(),
        Some(OPENCODE_VERSION),
        "no opencode {OPENCODE_VERSION} at {}",
        bin.display()
    );
    bin
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs one future to completion on a small runtime of its own.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

impl Peer {
    /// Starts a server of its own (basic auth on when `password` is given); `None` when
    /// npm is missing (reason printed).
    pub fn start(password: Option<&str>) -> Option<Peer> {
        if let Some(reason) = skip_reason() {
            // Straight to the stderr handle: the test harness captures `eprintln!` of a
            // passing test, and a skip must never be silent.
            let _ = writeln!(std::io::stderr(), "[opencode harness] {reason}");
            return None;
        }
        let bin = install();
        let state = tempfile::Builder::new()
            .prefix("oq-opencode-")
            .tempdir()
            .unwrap();
        let root = state.path().to_path_buf();
        let home = root.join("home");
        for d in [
            ".config/opencode/node_modules",
            ".local/share",
            ".local/state",
            ".cache",
        ] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        std::fs::create_dir_all(root.join("work")).unwrap();
        // OpenCode's Bun runtime unpacks a 5 MB library into TMPDIR per start: here, not
        // /tmp, so the wrapper's `rm -rf` of the state dir takes it too.
        std::fs::create_dir_all(root.join("tmp")).unwrap();
        let model_log = root.join("model-requests.jsonl");
        let server_log = root.join("server.log");

        // 1. our scripted model; it picks its port and writes it down.
        let port_file = root.join("model.port");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/opencode/fake_model.py");
        let mut child = Command::new("python3")
            .arg(&script)
            .arg(&port_file)
            .arg(&model_log)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(root.join("model.err")).unwrap(),
            ))
            .spawn()
            .expect("start python3 fake_model.py");
        let lifeline = child.stdin.take();
        let model = Proc {
            name: "scripted model",
            child,
            lifeline,
            inner_pid: None,
        };
        let model_port = wait_for(|| {
            std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|p| p.trim().parse::<u16>().ok())
        })
        .expect("the scripted model wrote its port");

        // 2. an isolated config whose only provider is our model.
        let config = root.join("opencode.json");
        std::fs::write(
            &config,
            serde_json::to_string_pretty(&serde_json::json!({
                "$schema": "https://opencode.ai/config.json",
                "autoupdate": false,
                "share": "disabled",
                "model": "scripted/scripted-model",
                "small_model": "scripted/scripted-model",
                "enabled_providers": ["scripted"],
                "lsp": false,
                "formatter": false,
                "provider": {
                    "scripted": {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "oq scripted model",
                        "options": {
                            "baseURL": format!("http://127.0.0.1:{model_port}/v1"),
                            "apiKey": "scripted-key"
                        },
                        "models": {
                            "scripted-model": {
                                "name": "Scripted Model",
                                "tool_call": true,
                                "limit": { "context": 100000, "output": 4096 }
                            }
                        }
                    }
                }
            }))
            .unwrap(),
        )
        .unwrap();
        // OpenCode installs @opencode-ai/plugin in each config dir that does not list it:
        // a stub makes it skip that (and the registry below is a dead port anyway).
        let cfg = home.join(".config/opencode");
        std::fs::write(
            cfg.join("package.json"),
            format!("{{\"dependencies\":{{\"@opencode-ai/plugin\":\"{OPENCODE_VERSION}\"}}}}"),
        )
        .unwrap();
        std::fs::write(
            cfg.join("package-lock.json"),
            format!(
                "{{\"packages\":{{\"\":{{\"dependencies\":{{\"@opencode-ai/plugin\":\"{OPENCODE_VERSION}\"}}}}}}}}"
            ),
        )
        .unwrap();

        // 3. opencode serve, under a watchdog shell that kills it when our pipe closes.
        let port = free_port();
        let server = spawn_server(&bin, &root, &config, &server_log, port, password);
        let peer = Peer {
            retired: Vec::new(),
            bin: bin.clone(),
            config: config.clone(),
            port,
            base: format!("http://127.0.0.1:{port}"),
            password: password.map(str::to_string),
            state,
            model_log,
            server_log,
            model,
            server,
        };

        // 4. health.
        let client = peer.client();
        let started = Instant::now();
        let healthy = wait_for(|| block_on(client.health()).ok());
        match healthy {
            Some(version) => {
                assert_eq!(version, OPENCODE_VERSION);
                eprintln!(
                    "[opencode harness] opencode {version} healthy at {} after {:.1} s",
                    peer.base,
                    started.elapsed().as_secs_f64()
                );
            }
            None => panic!(
                "opencode serve at {} never became healthy; log:\n{}",
                peer.base,
                peer.server_log_tail()
            ),
        }
        Some(peer)
    }

    /// A client with the server's credentials (if any).
    pub fn client(&self) -> Client {
        let auth = self.password.as_ref().map(|p| Auth {
            username: "opencode".into(),
            password: p.clone(),
        });
        Client::new(&self.base, auth).unwrap()
    }

    /// A fresh working directory for one test (OpenCode scopes everything by it).
    pub fn directory(&self, name: &str) -> String {
        let d = self.state.path().join("work").join(name);
        std::fs::create_dir_all(&d).unwrap();
        d.canonicalize().unwrap().to_string_lossy().into_owned()
    }

    /// Creates a session in `dir` and prompts it; returns the session id. The model asks
    /// the `questions` JSON after `ASK:` (or its default question when `ask` is `None`).
    pub fn prompt(&self, dir: &str, ask: Option<&serde_json::Value>) -> String {
        let client = self.client();
        block_on(async {
            let session = client.create_session(dir, "oq test").await.unwrap();
            let text = match ask {
                Some(q) => format!("Please ask me. ASK: {q}"),
                None => "Please ask me which database to use.".into(),
            };
            client.prompt_async(&session.id, dir, &text).await.unwrap();
            session.id
        })
    }

    /// Polls `GET /question` until the session's request is pending.
    pub fn wait_question(&self, dir: &str, session: &str) -> Request {
        let client = self.client();
        wait_for(|| {
            block_on(client.list(dir))
                .unwrap()
                .into_iter()
                .find(|r| r.session_id == session)
        })
        .unwrap_or_else(|| {
            panic!(
                "no question for session {session} in {dir}; log:\n{}",
                self.server_log_tail()
            )
        })
    }

    /// The model's request log, one JSON value per chat completion.
    pub fn model_requests(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(&self.model_log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    pub fn server_log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.server_log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "[opencode harness] server log tail:\n{}",
                self.server_log_tail()
            );
        }
        let _ = std::io::stderr().flush();
    }
}

impl Peer {
    /// The texts of the tool results (`tool` messages) the model received, in the model
    /// requests after the first `skip`.
    pub fn tool_results(&self, skip: usize) -> Vec<String> {
        self.model_requests()
            .iter()
            .skip(skip)
            .flat_map(|r| {
                let roles = r["roles"].as_array().cloned().unwrap_or_default();
                let texts = r["texts"].as_array().cloned().unwrap_or_default();
                roles
                    .into_iter()
                    .zip(texts)
                    .filter(|(role, _)| role == "tool")
                    .map(|(_, t)| t.as_str().unwrap_or("").to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The pid of the running `opencode serve` (not its watchdog shell), for a test that
    /// stops and continues it (SIGSTOP/SIGCONT) to play an upstream that hangs.
    pub fn server_pid(&self) -> u32 {
        self.server.inner_pid.expect("opencode serve is running")
    }

    /// Stops `opencode serve` (its pending questions die with it: OpenCode keeps them in
    /// memory) and starts it again on the same port, state and directories; waits for
    /// health.
    pub fn restart(&mut self) {
        if let Some(pid) = self.server.inner_pid.take() {
            let _ = Command::new("kill").arg(pid.to_string()).status();
            let until = Instant::now() + Duration::from_secs(10);
            while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(50));
            }
            if Path::new(&format!("/proc/{pid}")).exists() {
                let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            }
        }
        let root = self.state.path().to_path_buf();
        let fresh = spawn_server(
            &self.bin,
            &root,
            &self.config,
            &self.server_log,
            self.port,
            self.password.as_deref(),
        );
        // The old watchdog stays until the end: dropping it now would remove the state.
        let old = std::mem::replace(&mut self.server, fresh);
        self.retired.push(old);
        let client = self.client();
        wait_for(|| block_on(client.health()).ok()).expect("opencode healthy after restart");
    }
}

/// Polls `f` every 100 ms until it gives a value, or [`DEADLINE`] passes.
pub fn wait_for<T>(mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let until = Instant::now() + DEADLINE;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= until {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Starts `opencode serve` on `port` under a watchdog shell that kills it when our pipe
/// closes (and then removes the state directory `root`).
fn spawn_server(
    bin: &Path,
    root: &Path,
    config: &Path,
    server_log: &Path,
    port: u16,
    password: Option<&str>,
) -> Proc {
    let home = root.join("home");
    let pid_file = root.join("server.pid");
    // A restart reuses the directory: the pid read below must be the new server's.
    let _ = std::fs::remove_file(&pid_file);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(server_log)
        .unwrap();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(
            r#"exec 3<&0; "$@" </dev/null & pid=$!; echo $pid > "$OQ_PID_FILE"; cat <&3 >/dev/null
kill $pid 2>/dev/null; i=0; while kill -0 $pid 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
kill -9 $pid 2>/dev/null; rm -rf "$OQ_STATE_DIR""#,
        )
        .arg("sh")
        .arg(bin)
        .args(["serve", "--hostname", "127.0.0.1", "--port"])
        .arg(port.to_string())
        .args(["--print-logs", "--log-level", "INFO"])
        .current_dir(root.join("work"))
        .env("OQ_PID_FILE", &pid_file)
        .env("OQ_STATE_DIR", root)
        .env("HOME", &home)
        .env("TMPDIR", root.join("tmp"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("OPENCODE_CONFIG", config)
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .env("OPENCODE_DISABLE_SHARE", "1")
        .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
        .env("OPENCODE_DISABLE_CLAUDE_CODE", "1")
        .env("OPENCODE_DISABLE_EXTERNAL_SKILLS", "1")
        .env("OPENCODE_ENABLE_QUESTION_TOOL", "1")
        .env("npm_config_registry", "http://127.0.0.1:9/")
        .env_remove("OPENCODE_SERVER_PASSWORD")
        .env_remove("OPENCODE_SERVER_USERNAME")
        .env_remove("OC_PASSWORD")
        .stdin(Stdio::piped())
        .stdout(Stdio::from(log.try_clone().unwrap()))
        .stderr(Stdio::from(log));
    if let Some(p) = password {
        cmd.env("OPENCODE_SERVER_PASSWORD", p)
            .env("OPENCODE_SERVER_USERNAME", "opencode");
    }
    let mut child = cmd.spawn().expect("start opencode serve");
    let lifeline = child.stdin.take();
    let inner_pid = wait_for(|| {
        std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|p| p.trim().parse::<u32>().ok())
    });
    Proc {
        name: "opencode serve",
        child,
        lifeline,
        inner_pid,
    }
}
