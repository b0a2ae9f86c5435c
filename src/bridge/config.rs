//! An `[[opencode]]` upstream as the bridge runs it: where it is, which directories, who
//! answers and who administers it, and its timing. The server's configuration parses
//! the TOML into it (`server::config`); the bridge knows nothing of the file.

/// One `[[opencode]]` upstream: an OpenCode server whose pending questions this server
/// imports into `project`, answered by `answerer`.
#[derive(Clone, PartialEq, Eq)]
pub struct OpencodeUpstream {
    /// Names it in routes, snapshots, session ids and its settings file.
    pub name: String,
    /// `http://HOST:PORT`.
    pub url: String,
    /// Absolute paths; OpenCode scopes pending questions by exact directory.
    pub directories: Vec<String>,
    pub username: Option<String>,
    /// From `password` or the variable `password_env` names; never logged (`Debug` hides it).
    pub password: Option<String>,
    pub project: String,
    /// The person (a member of `project`) who answers its questions: the author of
    /// their sessions, the one who pauses, resumes and delegates them.
    pub answerer: String,
    /// The people (members of `project`) who may change its settings; the answerer
    /// unless `admins` says otherwise.
    pub admins: Vec<String>,
    /// The auto-delegate toggle when nothing was persisted yet.
    pub auto_delegate: bool,
    pub window_ms: u64,
    /// The term of the upstream's lease on a PostgreSQL store (`lease_seconds`): a server
    /// that dies holding it is replaced within 1.25 × this.
    pub lease_ms: u64,
    /// Timing knobs; only tests change them (not in the file).
    pub timing: UpstreamTiming,
}

impl std::fmt::Debug for OpencodeUpstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpencodeUpstream")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("directories", &self.directories)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "<hidden>"))
            .field("project", &self.project)
            .field("answerer", &self.answerer)
            .field("admins", &self.admins)
            .field("auto_delegate", &self.auto_delegate)
            .field("window_ms", &self.window_ms)
            .field("lease_ms", &self.lease_ms)
            .finish()
    }
}

/// How an upstream connection is watched and retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpstreamTiming {
    /// An event stream silent this long is dead (OpenCode sends heartbeats every ~10 s).
    pub stall: std::time::Duration,
    /// A reply/reject POST with no answer after this is `uncertain`.
    pub post_timeout: std::time::Duration,
    /// An event stream whose response head does not come within this is given up (a
    /// server still starting may accept the connection and never answer it).
    pub subscribe_timeout: std::time::Duration,
    /// The first reconnect delay, doubled per failure up to `backoff_max`, with jitter.
    pub backoff_min: std::time::Duration,
    pub backoff_max: std::time::Duration,
    /// A settled request stays in the snapshot this long.
    pub settled_retention: std::time::Duration,
}

impl Default for UpstreamTiming {
    fn default() -> Self {
        UpstreamTiming {
            stall: std::time::Duration::from_secs(45),
            post_timeout: std::time::Duration::from_secs(15),
            subscribe_timeout: std::time::Duration::from_secs(10),
            backoff_min: std::time::Duration::from_millis(250),
            backoff_max: std::time::Duration::from_secs(15),
            settled_retention: std::time::Duration::from_secs(300),
        }
    }
}
