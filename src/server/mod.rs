//! `oq serve`: ADR 0214's HTTP API over the same engine the local doors use.
//!
//! - [`config`]: the TOML file, checked whole before anything starts.
//! - [`audit`]: one line per request in `logs/audit.log`, never a secret or a text.
//! - [`auth`]: bearer token → user → project membership.
//! - [`routes`]: one file per area, every route of SPEC §3.
//! - [`events`]: the Server-Sent Events stream, fed by one change notifier; `feed`: the
//!   log's tail, read once per change for every stream.
//! - [`openapi`]: the document served at `GET /openapi.json`.
//! - [`listen`]: the accept loop, each connection under `[limits]`' clocks and cap.
//! - [`throttle`]: failed authentications per address, event streams per token.
//! - [`mcp`]: the MCP tools over Streamable HTTP at `/mcp`, for agent tokens.
//! - [`notify`]: `[[notify]]` webhooks and ntfy topics, each following the log after commit.
//!
//! The engine is synchronous (SQLite): handlers run it on the blocking pool. Every
//! successful write bumps one `watch` channel; a poller bumps it too when another process
//! (the local CLI on the same store) writes, so event subscribers wake on either.

pub mod audit;
pub mod auth;
mod banner;
pub mod config;
pub mod error;
pub mod events;
pub mod extract;
mod feed;
pub mod listen;
pub mod mcp;
mod mcp_sessions;
pub mod notify;
pub mod openapi;
pub mod routes;
pub mod throttle;

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::domain::OqError;
use crate::domain::error::exit;
use crate::engine::{AnyStore, EngineConfig, PgStore, ServerEngine, SqliteStore};
use auth::Directory;
use config::Config;
use error::{ApiError, ApiResult};

/// Timing knobs; tests shorten them.
#[derive(Debug, Clone, Copy)]
pub struct ServerOptions {
    /// How often an idle event stream sends a heartbeat comment (SPEC: at most 15 s).
    pub heartbeat: Duration,
    /// How often the store is polled for writes made by other processes.
    pub poll: Duration,
    /// Events of the log's tail the server keeps for its event streams (`feed.rs`); a
    /// stream further behind reads the log itself. Tests make it small to drive streams
    /// behind it.
    pub window: usize,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            heartbeat: Duration::from_secs(15),
            poll: Duration::from_millis(500),
            window: feed::WINDOW,
        }
    }
}

/// What every handler shares.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

struct Shared {
    engine: Arc<ServerEngine>,
    /// What the store is, for `/healthz`.
    store_kind: crate::engine::StoreKind,
    directory: Directory,
    /// A generation counter: its value means nothing, its change means "look again".
    changes: watch::Sender<u64>,
    /// The log's tail, read once per change for every event stream (`feed.rs`).
    feed: feed::Feed,
    /// Turns true when the server stops, so endless event streams end and let it.
    stopping: watch::Receiver<bool>,
    options: ServerOptions,
    /// The `[[opencode]]` upstreams (empty without any).
    bridges: crate::bridge::Bridges,
    auth_failures: throttle::AuthFailures,
    streams: throttle::StreamSlots,
    audit: Arc<audit::AuditLog>,
    /// Which token opened each MCP session (`/mcp`).
    mcp_owners: mcp::Owners,
    /// Cancelled when the server stops: MCP streams end with it.
    mcp_stop: tokio_util::sync::CancellationToken,
}

impl AppState {
    pub fn directory(&self) -> &Directory {
        &self.0.directory
    }

    pub fn options(&self) -> ServerOptions {
        self.0.options
    }

    pub fn engine(&self) -> Arc<ServerEngine> {
        self.0.engine.clone()
    }

    pub fn store_kind(&self) -> crate::engine::StoreKind {
        self.0.store_kind
    }

    pub fn changes(&self) -> watch::Receiver<u64> {
        self.0.changes.subscribe()
    }

    pub fn feed(&self) -> &feed::Feed {
        &self.0.feed
    }

    pub fn stopping(&self) -> watch::Receiver<bool> {
        self.0.stopping.clone()
    }

    pub fn bridges(&self) -> &crate::bridge::Bridges {
        &self.0.bridges
    }

    pub fn auth_failures(&self) -> &throttle::AuthFailures {
        &self.0.auth_failures
    }

    pub fn streams(&self) -> &throttle::StreamSlots {
        &self.0.streams
    }

    pub fn audit(&self) -> &Arc<audit::AuditLog> {
        &self.0.audit
    }

    pub fn mcp_owners(&self) -> &mcp::Owners {
        &self.0.mcp_owners
    }

    /// Runs a read on the blocking pool.
    pub async fn read<T, F>(&self, f: F) -> ApiResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&ServerEngine) -> Result<T, OqError> + Send + 'static,
    {
        let engine = self.0.engine.clone();
        tokio::task::spawn_blocking(move || f(&engine))
            .await
            .map_err(|e| ApiError::from(OqError::Internal(format!("engine task: {e}"))))?
            .map_err(ApiError::from)
    }

    /// Runs a write on the blocking pool and wakes the event streams when it landed.
    pub async fn write<T, F>(&self, f: F) -> ApiResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&ServerEngine) -> Result<T, OqError> + Send + 'static,
    {
        let out = self.read(f).await?;
        self.changed();
        Ok(out)
    }

    /// Wakes the event streams: something was written.
    pub fn changed(&self) {
        self.0.changes.send_modify(|g| *g = g.wrapping_add(1));
    }
}

/// The whole API as a router over `state`.
pub fn router(state: AppState) -> Router {
    let mut router = Router::new();
    for route in routes::table() {
        router = router.route(route.path, route.handler);
    }
    router
        .merge(mcp::routes(&state, state.0.mcp_stop.clone()))
        .fallback(routes::meta::no_route)
        .method_not_allowed_fallback(routes::meta::method_not_allowed)
        .layer(DefaultBodyLimit::max(extract::BODY_LIMIT))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            audit::audit,
        ))
        .with_state(state)
}

/// Every `(METHOD, path)` the router serves, paths as in the OpenAPI document.
pub fn served_routes() -> Vec<(&'static str, &'static str)> {
    routes::table()
        .into_iter()
        .map(|r| (r.method, r.path))
        .chain(mcp::METHODS.map(|m| (m, mcp::PATH)))
        .collect()
}

/// Serves `config` on `listener` until `shutdown` resolves, then lets in-flight requests
/// finish, ends the event streams, and closes the store.
pub async fn run(
    listener: TcpListener,
    config: &Config,
    options: ServerOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    run_observed(listener, config, options, shutdown, None).await
}

/// [`run`], handing the server's state to `observe` once it is built (tests reach the
/// bridges through it).
pub async fn run_observed(
    listener: TcpListener,
    config: &Config,
    options: ServerOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
    observe: Option<tokio::sync::oneshot::Sender<AppState>>,
) -> anyhow::Result<()> {
    let store = open_store(config).await?;
    let store_kind = store.kind();
    let engine = Arc::new(ServerEngine::new(store, EngineConfig::default()));
    let (changes, _) = watch::channel(0u64);
    let (stop_tx, stopping) = watch::channel(false);
    let state = AppState(Arc::new(Shared {
        engine: engine.clone(),
        store_kind,
        directory: Directory::new(config),
        changes,
        feed: feed::Feed::new(options.window),
        stopping,
        options,
        bridges: crate::bridge::Bridges::default(),
        auth_failures: throttle::AuthFailures::new(config.limits.auth_failures_per_minute),
        streams: throttle::StreamSlots::new(config.limits.max_streams_per_token),
        audit: Arc::new(audit::AuditLog::open(&config.data_dir).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "no audit log");
            eprintln!("oq serve: WARNING: no audit log ({e}); going on without one");
            audit::AuditLog::default()
        })),
        mcp_owners: mcp::Owners::new(
            config.limits.mcp_session_idle,
            config.limits.max_mcp_sessions_per_token,
        ),
        mcp_stop: tokio_util::sync::CancellationToken::new(),
    }));
    // On PostgreSQL every server hears every other's commits within milliseconds; the
    // poller stays as the backstop (and SQLite's only source for other processes).
    let _listener = match engine.store() {
        AnyStore::Postgres(pg) => {
            let notifier = state.clone();
            Some(pg.listen(move |heads| {
                if let Some(heads) = heads
                    && notifier.feed().offer(heads)
                {
                    notifier.feed().took_notified();
                }
                notifier.changed();
            })?)
        }
        AnyStore::Sqlite(_) => None,
    };
    let mut upstreams = Vec::new();
    for oc in &config.opencode {
        let up = crate::bridge::Upstream::new(
            oc.clone(),
            engine.clone(),
            crate::bridge::Notifier::new(state.0.changes.clone()),
            &config.data_dir,
            state.bridges().tip_sender(),
        )?;
        state.bridges().add(up.clone());
        upstreams.push(tokio::spawn(up.run(state.stopping())));
    }
    if let Some(tx) = observe {
        let _ = tx.send(state.clone());
    }
    let poller = tokio::spawn(events::poll_store(state.clone()));
    let follower = tokio::spawn(feed::follow(state.clone()));
    let notifiers = notify::spawn(&state, &config.notify);
    let audit = state.audit().clone();
    let tls = match &config.tls {
        None => None,
        Some(files) => Some(Arc::new(
            listen::tls::Tls::load(files).map_err(|e| anyhow::anyhow!("{e}"))?,
        )),
    };
    #[cfg(unix)]
    if let Some(tls) = &tls {
        tokio::spawn(listen::tls::reload_on_hangup(tls.clone(), state.stopping()));
    }
    let mcp_stop = state.0.mcp_stop.clone();
    let app = router(state);
    let stop = stop_tx.clone();
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop.send(true);
        mcp_stop.cancel();
    });
    listen::accept_loop(
        listener,
        app,
        config.limits,
        audit,
        tls,
        stop_tx.subscribe(),
    )
    .await;
    let _ = stop_tx.send(true);
    poller.await?;
    follower.await?;
    for task in notifiers {
        let _ = task.await;
    }
    // Each upstream task ends through its one cleanup (End::Shutdown).
    for task in upstreams {
        let _ = task.await;
    }
    Ok(())
}

/// Opens the configured store: the SQLite file in `data_dir` (commits flushed while the
/// next batch is decided: a server takes concurrent writes), or the PostgreSQL database.
async fn open_store(config: &Config) -> Result<AnyStore, OqError> {
    let (data_dir, choice) = (config.data_dir.clone(), config.store.clone());
    tokio::task::spawn_blocking(move || match choice {
        config::StoreChoice::Sqlite => {
            let store =
                SqliteStore::open_in_with(&data_dir, crate::engine::sqlite::Flush::Pipelined)?;
            // The quick check: damage found stops writes (reads go on, /healthz says why).
            let report = store.check(crate::engine::sqlite::Depth::Quick)?;
            if !report.is_clean() {
                eprintln!(
                    "oq serve: the store is damaged; serving reads only: {}",
                    report.findings().join("; ")
                );
            }
            Ok(AnyStore::Sqlite(store))
        }
        config::StoreChoice::Postgres(target) => PgStore::open(&target).map(AnyStore::Postgres),
    })
    .await
    .map_err(|e| OqError::Internal(format!("opening the store: {e}")))?
}

/// `oq serve --config FILE`: loads the file (refusing with file and line), binds, and
/// serves until SIGTERM or SIGINT. Returns the exit code.
pub fn main(config_path: &Path) -> i32 {
    let config = match Config::load(config_path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("oq serve: configuration error: {e}");
            return exit::USAGE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("oq serve: cannot start the runtime: {e}");
            return exit::INTERNAL;
        }
    };
    match runtime.block_on(serve(config)) {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("oq serve: {e:#}");
            match e.downcast_ref::<OqError>() {
                Some(oq) => oq.exit_code(),
                None => exit::INTERNAL,
            }
        }
    }
}

/// Binds `config.listen` and serves until a termination signal.
pub async fn serve(config: Config) -> anyhow::Result<()> {
    // Before anything is created in it: a data dir made here is 0700, one that exists
    // keeps the mode its owner gave it, which may let others read the answers.
    let exposed = crate::private_fs::exposed(&config.data_dir);
    let log = crate::logging::init(&config.data_dir, "serve");
    if let Some(mode) = exposed {
        eprintln!(
            "oq serve: WARNING: the data dir {} is readable by others (mode {mode:o}); the store holds every question and answer: chmod 700 it",
            config.data_dir.display()
        );
        tracing::warn!(data_dir = %config.data_dir.display(), mode = format!("{mode:o}"), "data dir readable by others");
    }
    // Handlers first: a signal that arrives right after "listening" must stop us cleanly.
    let signals = signals::Signals::install()?;
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.listen))?;
    let addr: SocketAddr = listener.local_addr()?;
    let scheme = if config.tls.is_some() {
        "https"
    } else {
        "http"
    };
    println!("oq serve: listening on {scheme}://{addr}");
    if let Some(warning) = listen::tls::plain_beyond_loopback(addr, config.tls.is_some()) {
        eprintln!("oq serve: WARNING: {warning}");
        tracing::warn!(%addr, "listening beyond loopback without TLS");
    }
    match &log {
        Ok(path) => eprintln!("oq serve: log in {}", path.display()),
        Err(e) => eprintln!("oq serve: no log file ({e}); going on without one"),
    }
    tracing::info!(%addr, users = config.users.len(), projects = config.projects.len(), "listening");
    banner::announce(&config);
    run(listener, &config, ServerOptions::default(), signals.wait()).await?;
    tracing::info!("stopped");
    eprintln!("oq serve: stopped");
    Ok(())
}

/// `oq token`: a new bearer token and the hash to put in the configuration.
pub fn token_main(json: bool) -> i32 {
    let token = crate::engine::ids::token();
    let hash = hex::encode(config::token_hash(&token));
    if json {
        println!(
            "{}",
            serde_json::json!({ "token": token, "tokenSha256": hash })
        );
    } else {
        println!("token         {token}");
        println!("token_sha256  {hash}");
        eprintln!("give the token to its user; put only token_sha256 in the server's config");
    }
    exit::OK
}

mod signals;
