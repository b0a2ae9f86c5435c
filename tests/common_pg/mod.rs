//! A real PostgreSQL for the tests: Debian's server binaries, a cluster made by `initdb` in
//! a temporary directory, on a loopback port the test picks, stopped at the end.
//!
//! - [`shared`]: one cluster per test binary (started on first use), one fresh database
//!   per test ([`PgDb`]: an owner role that migrates, an app role that serves). The cluster
//!   runs under a small `sh` supervisor reading our pipe: when this process ends, however
//!   it ends, the pipe closes and the supervisor stops PostgreSQL (fast shutdown) — so
//!   nothing is left running even when a test binary is killed. A second `sh` (the
//!   reaper) removes the cluster's temporary directory once PostgreSQL is gone.
//! - [`PgCluster::start`]: a cluster of a test's own, for tests that stop and restart it.
//!
//! Without PostgreSQL installed, [`available`] says why; a test then skips outside CI and
//! fails inside it (`CI=true`: `.ci/postgres.sh` installs `postgresql` with apt-get).
#![allow(dead_code, clippy::unwrap_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The superuser's password in every test cluster (loopback only, a temporary cluster).
const ADMIN_PASSWORD: &str = "oq-test-admin";
const ADMIN: &str = "oq_admin";

/// The directory holding `initdb`, `postgres`, `pgbench`, or why there is none.
pub fn bin_dir() -> Result<PathBuf, String> {
    if let Ok(dir) = std::env::var("OQ_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output()
        && out.status.success()
    {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if dir.join("initdb").exists() && dir.join("postgres").exists() {
            return Ok(dir);
        }
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    found.sort();
    found
        .into_iter()
        .rev()
        .find(|b| b.join("initdb").exists() && b.join("postgres").exists())
        .ok_or_else(|| {
            "PostgreSQL's server is not installed (no initdb under /usr/lib/postgresql/*/bin); \
             `.ci/postgres.sh` installs Debian's postgresql"
                .to_string()
        })
}

/// Whether PostgreSQL tests can run here; `Err` says why not.
pub fn available() -> Result<(), String> {
    bin_dir().map(|_| ())
}

/// For a test that needs PostgreSQL: `true` to go on; `false` (after printing why) to
/// skip — outside CI only. In CI a missing PostgreSQL fails the test.
pub fn or_skip(test: &str) -> bool {
    match available() {
        Ok(()) => true,
        Err(why) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{test}: CI=true and PostgreSQL is missing: {why}")
        }
        Err(why) => {
            eprintln!("{test}: skipped: {why}");
            false
        }
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A PostgreSQL binary, run as the `postgres` user when we are root (PostgreSQL refuses
/// to run as root).
fn pg_command(bin: &Path, name: &str) -> Command {
    if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=postgres", "--regid=postgres", "--init-groups"])
            .arg(bin.join(name));
        c
    } else {
        Command::new(bin.join(name))
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// How the cluster is tuned: the tests' runs skip fsync (the machine never loses power
/// mid-test; restarts are clean shutdowns or kill -9 of a server, not of the OS), the
/// benchmarks keep it, as production does.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    Test,
    Production,
}

/// A running cluster.
pub struct PgCluster {
    pub port: u16,
    pub dir: PathBuf,
    bin: PathBuf,
    durability: Durability,
    supervisor: Option<(Child, ChildStdin)>,
    /// Removes the temporary directory once this process ended and PostgreSQL stopped
    /// (the shared cluster lives in a static, which is never dropped).
    _reaper: Option<(Child, ChildStdin)>,
    _tmp: tempfile::TempDir,
}

impl PgCluster {
    /// `initdb` in a new temporary directory and start.
    pub fn start(durability: Durability) -> PgCluster {
        let bin = bin_dir().unwrap_or_else(|e| panic!("{e}"));
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("cluster");
        std::fs::create_dir(&dir).unwrap();
        let pwfile = tmp.path().join("pw");
        std::fs::write(&pwfile, ADMIN_PASSWORD).unwrap();
        if is_root() {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(tmp.path())
                .status()
                .unwrap()
                .success();
            assert!(ok, "chown the cluster directory to postgres");
            // The temporary directory itself is 0700 root's.
            let ok = Command::new("chmod")
                .arg("0755")
                .arg(tmp.path())
                .status()
                .unwrap()
                .success();
            assert!(ok);
        }
        let out = pg_command(&bin, "initdb")
            .arg("-D")
            .arg(&dir)
            .args([
                "-U",
                ADMIN,
                "--auth=scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C",
                "-N",
            ])
            .arg(format!("--pwfile={}", pwfile.display()))
            .output()
            .expect("initdb runs");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let reaper = reaper(tmp.path(), &dir);
        let mut cluster = PgCluster {
            port: free_port(),
            dir,
            bin,
            durability,
            supervisor: None,
            _reaper: Some(reaper),
            _tmp: tmp,
        };
        cluster.resume();
        cluster
    }

    /// Starts PostgreSQL on the cluster (again) and waits until it takes connections.
    pub fn resume(&mut self) {
        assert!(self.supervisor.is_none(), "already running");
        let mut postgres = pg_command(&self.bin, "postgres");
        postgres
            .arg("-D")
            .arg(&self.dir)
            .arg("-p")
            .arg(self.port.to_string())
            .arg("-k")
            .arg(&self.dir)
            .args([
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "max_connections=300",
            ])
            .args([
                "-c",
                "shared_buffers=64MB",
                "-c",
                "log_min_messages=warning",
            ]);
        if self.durability == Durability::Test {
            postgres.args(["-c", "fsync=off", "-c", "full_page_writes=off"]);
        }
        let program = format!("{:?}", postgres.get_program());
        let args: Vec<String> = postgres
            .get_args()
            .map(|a| shell_quote(&a.to_string_lossy()))
            .collect();
        let log = self.dir.join("postgres.log");
        // The supervisor: PostgreSQL in the background; when our pipe closes (this
        // process ended, or `stop`), a fast shutdown, waited for.
        let script = format!(
            "{} {} >>{} 2>&1 </dev/null & pid=$!; read _ignored; kill -INT $pid; wait $pid",
            shell_quote(program.trim_matches('"')),
            args.join(" "),
            shell_quote(&log.to_string_lossy())
        );
        self.supervisor = Some(sh_on_our_pipe(&script));
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if self.admin().is_ok() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "PostgreSQL did not start: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops PostgreSQL (fast shutdown: sessions cut, nothing committed lost) and waits.
    pub fn stop(&mut self) {
        if let Some((mut child, stdin)) = self.supervisor.take() {
            drop(stdin);
            let _ = child.wait();
        }
    }

    /// Crashes PostgreSQL (an immediate shutdown: every process quits at once, nothing
    /// written that was not yet; the next start recovers from the WAL, as after a power
    /// cut of the database alone) and waits.
    pub fn crash(&mut self) {
        let pid = std::fs::read_to_string(self.dir.join("postmaster.pid"))
            .ok()
            .and_then(|s| s.lines().next().map(str::to_string))
            .expect("postmaster.pid names the running postmaster");
        let ok = Command::new("kill")
            .args(["-QUIT", pid.trim()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -QUIT {pid}");
        self.stop();
    }

    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// A superuser connection.
    pub fn admin(&self) -> Result<postgres::Client, postgres::Error> {
        postgres::Config::new()
            .host("127.0.0.1")
            .port(self.port)
            .user(ADMIN)
            .password(ADMIN_PASSWORD)
            .dbname("postgres")
            .connect_timeout(Duration::from_secs(5))
            .connect(postgres::NoTls)
    }

    /// A new database with its owner (who migrates) and its app role (who serves).
    pub fn database(&self) -> PgDb {
        off_runtime(|| self.database_here())
    }

    fn database_here(&self) -> PgDb {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let name = format!("t{}_{n}", std::process::id());
        let (owner, app) = (format!("{name}_owner"), format!("{name}_app"));
        let password = format!("pw-{}", oq::engine::ids::token());
        let mut admin = self.admin().expect("admin connection");
        admin
            .batch_execute(&format!(
                "CREATE ROLE {owner} LOGIN PASSWORD '{password}';
                 CREATE ROLE {app} LOGIN PASSWORD '{password}';"
            ))
            .expect("create roles");
        admin
            .batch_execute(&format!("CREATE DATABASE {name} OWNER {owner}"))
            .expect("create database");
        let db = PgDb {
            port: self.port,
            name,
            owner,
            app,
            password,
            admin: (self.port, ADMIN, ADMIN_PASSWORD),
        };
        let target = db.owner_target();
        oq::engine::postgres::migrate(&target, Some(&db.app)).expect("migrate");
        db
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A `sh` that waits for our pipe to close (this process ended, however), then for the
/// cluster's postmaster to be gone (its supervisor stops it; at most ~60 s), and removes
/// `tmp` — so no cluster directory outlives its test binary, killed or not.
fn reaper(tmp: &Path, cluster: &Path) -> (Child, ChildStdin) {
    let pid_file = cluster.join("postmaster.pid");
    let script = format!(
        "read _ignored; n=0; while [ -e {pid} ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done; rm -rf {tmp}",
        pid = shell_quote(&pid_file.to_string_lossy()),
        tmp = shell_quote(&tmp.to_string_lossy()),
    );
    sh_on_our_pipe(&script)
}

/// `sh -c script` with its stdin on a pipe of ours: its `read` returns when we close the
/// pipe or this process ends, however it ends.
fn sh_on_our_pipe(script: &str) -> (Child, ChildStdin) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start sh");
    let stdin = child.stdin.take().unwrap();
    (child, stdin)
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The cluster this test binary shares (started on first use; stopped when the process
/// ends, through the supervisor's pipe).
pub fn shared() -> &'static PgCluster {
    static CLUSTER: OnceLock<PgCluster> = OnceLock::new();
    CLUSTER.get_or_init(|| PgCluster::start(Durability::Test))
}

/// One test's database; dropped (with its roles) at the end of the test.
pub struct PgDb {
    pub port: u16,
    pub name: String,
    pub owner: String,
    pub app: String,
    pub password: String,
    admin: (u16, &'static str, &'static str),
}

impl PgDb {
    /// `postgres://ROLE@127.0.0.1:PORT/DB` (no password: it goes apart).
    pub fn url(&self, role: &str) -> String {
        format!("postgres://{role}@127.0.0.1:{}/{}", self.port, self.name)
    }

    /// The URL the servers use (the app role).
    pub fn app_url(&self) -> String {
        self.url(&self.app)
    }

    pub fn app_target(&self) -> oq::engine::postgres::PgTarget {
        oq::engine::postgres::PgTarget::parse(&self.app_url(), Some(self.password.clone())).unwrap()
    }

    pub fn owner_target(&self) -> oq::engine::postgres::PgTarget {
        oq::engine::postgres::PgTarget::parse(&self.url(&self.owner), Some(self.password.clone()))
            .unwrap()
    }

    /// A plain connection as `role` (the owner or the app role), for tests that try what
    /// the database allows.
    pub fn client(&self, role: &str) -> postgres::Client {
        off_runtime(|| self.client_here(role))
    }

    fn client_here(&self, role: &str) -> postgres::Client {
        postgres::Config::new()
            .host("127.0.0.1")
            .port(self.port)
            .user(role)
            .password(&self.password)
            .dbname(&self.name)
            .connect(postgres::NoTls)
            .expect("connect")
    }

    /// A superuser connection to this database (what no role of oq's is: for tests that
    /// alter history by hand).
    pub fn superuser(&self) -> postgres::Client {
        let (port, user, password) = self.admin;
        off_runtime(|| {
            postgres::Config::new()
                .host("127.0.0.1")
                .port(port)
                .user(user)
                .password(password)
                .dbname(&self.name)
                .connect(postgres::NoTls)
                .expect("superuser connection")
        })
    }

    /// Writes the password to `path` (0600), for `store_password_file`.
    pub fn write_password_file(&self, path: &Path) {
        let mut f = std::fs::File::create(path).unwrap();
        f.write_all(self.password.as_bytes()).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
    }
}

/// `postgres` blocks on a runtime of its own, which tokio forbids on an async worker:
/// step out of the runtime's way first when there is one.
pub fn off_runtime<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        off_runtime(|| self.drop_here());
    }
}

impl PgDb {
    fn drop_here(&mut self) {
        let (port, user, password) = self.admin;
        let admin = postgres::Config::new()
            .host("127.0.0.1")
            .port(port)
            .user(user)
            .password(password)
            .dbname("postgres")
            .connect_timeout(Duration::from_secs(5))
            .connect(postgres::NoTls);
        if let Ok(mut admin) = admin {
            let _ = admin.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE); DROP ROLE IF EXISTS {}; DROP ROLE IF EXISTS {};",
                self.name, self.app, self.owner
            ));
        }
    }
}
