//! App::build(config): the engine with its model client, tools, soul and store — the
//! one object every surface is started from.

use std::sync::Arc;

mod shared_settings;

use anyhow::Context;

use crate::config::Config;
use crate::engine::Engine;
use crate::llm::OpenAiClient;
use crate::soul::Soul;
use crate::store::Store;
use crate::tools::builtin::builtin_registry;
use crate::tools::discord::PortSlot;
use crate::tools::Registry;

/// The running process's shared parts.
pub struct App {
    /// The engine every surface drives.
    pub engine: Arc<Engine>,
    /// Where the Discord surface registers its port while connected (the discord_*
    /// read tools are offered only then).
    pub discord_port: PortSlot,
}

/// Every tool the process offers: the built-ins, the MCP controls (and, as servers
/// connect, their tools) and the Discord tools behind `discord_port`.
pub fn registry(config: &Arc<Config>, discord_port: &PortSlot) -> Registry {
    let mut tools = builtin_registry();
    crate::mcp::register(&mut tools, crate::mcp::McpManager::new(config.clone()));
    crate::tools::discord::register(&mut tools, discord_port);
    tools
}

/// The store she runs on: PostgreSQL when `KOTOBA_DATABASE_URL` is set, else SQLite in
/// the data folder.
pub async fn open_store(config: &Config) -> anyhow::Result<Store> {
    match config.database_url() {
        Some(url) => Store::connect_with(url, &store_options(config))
            .await
            .with_context(|| {
                format!(
                    "connecting to the store at {} (KOTOBA_DATABASE_URL)",
                    crate::store::database_label(url)
                )
            }),
        None => Store::open(&config.paths.db)
            .with_context(|| format!("opening the store {}", config.paths.db.display())),
    }
}

/// The `store.*` settings, as the store takes them.
pub(crate) fn store_options(config: &Config) -> crate::store::StoreOptions {
    let s = config.settings();
    crate::store::StoreOptions {
        pool_size: usize::try_from(s.store_pool_size).unwrap_or(usize::MAX),
        connect_timeout: std::time::Duration::from_secs(s.store_connect_timeout),
        statement_timeout: (s.store_statement_timeout > 0)
            .then(|| std::time::Duration::from_secs(s.store_statement_timeout)),
    }
}

impl App {
    /// Open the store in the data folder and build the engine.
    pub async fn build(config: Arc<Config>) -> anyhow::Result<App> {
        std::fs::create_dir_all(&config.paths.home)
            .with_context(|| format!("creating the data folder {}", config.paths.home.display()))?;
        // The gate checks paths against the workspace, so it exists from the start
        // (`gate explain` judges the same way).
        if let Err(e) = config.ensure_workspace() {
            tracing::warn!("creating the workspace: {e}");
        }
        let store = Arc::new(open_store(&config).await?);
        if store.is_shared() {
            shared_settings::share(&config, &store).await;
        }
        crate::children::set_home(&config.paths.home);
        crate::trust::child_env::follow(&config);
        let soul = Soul::load(&config.paths.home);
        let model = Arc::new(OpenAiClient::new(config.clone()));
        let discord_port = PortSlot::default();
        let tools = registry(&config, &discord_port);
        let engine = Engine::new(config, model, tools, soul, store);
        Ok(App {
            engine,
            discord_port,
        })
    }

    /// After a crash, on start-up (the data folder claimed, so no other Kotoba serves
    /// it): end the processes the dead one left running, close its running turns as cut
    /// by the restart, its waiting cards as expired and its running executed rows as cut.
    /// Each is named in the log.
    pub async fn recover(&self) {
        let config = self.engine.config();
        let home = &config.paths.home;
        // Her files are hers: whatever an older Kotoba (or a person) left looser is
        // made private, in one log line.
        crate::trust::modes::tighten(home, &crate::trust::private_skip(config));
        let ended = crate::children::end_leftovers(home);
        if !ended.is_empty() {
            tracing::warn!(
                "ended {} process(es) an earlier Kotoba left running",
                ended.len()
            );
        }
        close_what_dead_runs_left(&self.engine).await;
    }

    /// With a shared store (PostgreSQL): say that this process is alive — once now,
    /// before it serves anything, then every 3 s — and every 15 s close what processes
    /// that stopped saying so left open (their turns cut, cards expired, runs cut, jobs
    /// announced): a dead process on another machine may never restart to close them
    /// itself. Said first, because a process starting beside this one judges this one's
    /// rows by it: a turn begun before the first word would look like a dead run's.
    /// `None` on SQLite.
    pub async fn keep_alive(
        &self,
        shutdown: tokio_util::sync::CancellationToken,
    ) -> Option<tokio::task::JoinHandle<()>> {
        if !self.engine.store().is_shared() {
            return None;
        }
        let engine = self.engine.clone();
        say_alive(&engine).await;
        Some(tokio::spawn(async move {
            let every = std::time::Duration::from_secs(3);
            let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            for n in 0u64.. {
                tokio::select! {
                    _ = tick.tick() => {}
                    () = shutdown.cancelled() => break,
                }
                say_alive(&engine).await;
                // The beats fall at 3, 6, 9, 12 s…: the sweep at 12 s, then every 15 s.
                if n % 5 == 3 {
                    close_what_dead_runs_left(&engine).await;
                }
            }
            let me = engine.store().owner().to_string();
            let _ = engine.store().farewell(&me).await;
        }))
    }

    /// One line saying what is missing before she can think, if anything.
    pub fn missing_setup(&self) -> Option<String> {
        missing_setup(self.engine.config())
    }
}

/// [`App::missing_setup`] for a configuration alone (the web page asks it live).
pub fn missing_setup(config: &Config) -> Option<String> {
    let s = config.settings();
    if let Some(why) = s.base_url_refused {
        return Some(format!("The model is not called: {why}."));
    }
    let needs_key = s.base_url.contains("api.openai.com");
    if needs_key && config.api_key().is_none() {
        return Some(format!(
            "No model key is configured: set {} (or point KOTOBA_LLM_BASE_URL at a local server such as Ollama).",
            s.api_key_env
        ));
    }
    None
}

/// Say in the shared store that this process is alive (a failure is logged: the next
/// beat tries again).
async fn say_alive(engine: &Engine) {
    let me = engine.store().owner().to_string();
    if let Err(e) = engine
        .store()
        .heartbeat(&me, crate::store::ALIVE_TTL_MS)
        .await
    {
        tracing::warn!("saying this process is alive in the shared store: {e}");
    }
}

/// Close what runs that are no longer alive left open: their running turns as cut by
/// the restart, waiting cards as expired, running executed rows as cut, jobs announced
/// as not done; and keep a notice for each Discord channel concerned. Each is named in
/// the log.
async fn close_what_dead_runs_left(engine: &Engine) {
    let live = engine
        .store()
        .liveness(crate::children::is_live_kotoba)
        .await;
    let cut_turns = match engine.store().recover(|o| live.is_live(o)).await {
        Ok(done) if done.is_empty() => Vec::new(),
        Ok(done) => {
            tracing::warn!(
                "closed what an earlier Kotoba left open when it stopped: {} turn(s) cut by \
                 the restart ({}), {} waiting card(s) expired, {} running command(s) cut",
                done.turns.len(),
                done.turns.join(", "),
                done.cards,
                done.runs
            );
            done.turns
        }
        Err(e) => {
            tracing::error!("closing what an earlier Kotoba left open: {e}");
            Vec::new()
        }
    };
    match engine
        .store()
        .forget_cards_of_the_dead(|o| live.is_live(o))
        .await
    {
        Ok(0) => {}
        Ok(n) => tracing::info!("forgot {n} card(s) a stopped Kotoba left waiting in the store"),
        Err(e) => tracing::warn!("forgetting the cards a stopped Kotoba left: {e}"),
    }
    let jobs = match engine.store().recover_jobs(|o| live.is_live(o)).await {
        Ok(jobs) => jobs,
        Err(e) => {
            tracing::error!("announcing the jobs an earlier Kotoba left running: {e}");
            Vec::new()
        }
    };
    if !jobs.is_empty() {
        tracing::warn!("{} background job(s) were cut by the restart", jobs.len());
    }
    // A Discord channel does not read the transcript back: the cut turns and jobs
    // are told there too, once, when Discord connects.
    let cut_turns = cut_turns
        .into_iter()
        .map(|s| (s, crate::store::CUT_TURN_LINE.to_string()));
    for (session, line) in cut_turns.chain(jobs) {
        if crate::session::SessionId::parse(&session).is_discord() {
            if let Err(e) = engine.store().add_restart_notice(&session, &line).await {
                tracing::warn!("keeping a restart notice for {session}: {e}");
            }
        }
    }
}
