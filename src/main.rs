//! The `kotoba` binary: parse the command line (serve | chat | doctor | gate), load the
//! configuration once, build the App, run the chosen surface.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use kotoba::app::App;
use kotoba::config::Config;
use kotoba::gate::{self, Action};

/// Kotoba: an AI companion that lives in Discord and runs real tools behind an approval gate.
#[derive(Parser)]
#[command(name = "kotoba", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the bot: every surface configured (Discord if a token is set, web and /v1).
    Serve,
    /// Chat in this terminal (register text, cards answered at the keyboard).
    Chat {
        /// Session name (the conversation to continue).
        #[arg(long, default_value = "local")]
        session: String,
        /// Print the live settings (the page's Settings panel listing) and exit.
        #[arg(long)]
        settings: bool,
    },
    /// Show the configuration she would run with, and what is missing.
    Doctor,
    /// The approval gate's policy, from the command line.
    Gate {
        #[command(subcommand)]
        command: GateCommand,
    },
    /// Her memory.
    Memory {
        #[command(subcommand)]
        command: MemoryCommand,
    },
}

#[derive(Subcommand)]
enum MemoryCommand {
    /// Write her memory as Markdown (MEMORY.md and topics/<topic>.md): with a shared
    /// store (KOTOBA_DATABASE_URL) its facts, into the data folder's memory/ or --to.
    Export {
        /// The folder to write into (default: `$KOTOBA_HOME/memory`).
        #[arg(long)]
        to: Option<std::path::PathBuf>,
    },
}

#[derive(Subcommand)]
enum GateCommand {
    /// Say how the gate would treat a shell line (or, with --code, a Python snippet):
    /// auto-safe, asks or dangerous, why, and which "always" grants a card could offer.
    /// Runs nothing.
    Explain {
        /// The shell line (or Python code with --code), as one argument.
        #[arg(allow_hyphen_values = true)]
        text: String,
        /// Read the text as Python for execute_code instead of a shell line.
        #[arg(long)]
        code: bool,
        /// Print one JSON object instead of lines.
        #[arg(long)]
        json: bool,
        /// The workspace paths are checked against (default: the configured one).
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
}

fn init_logging(to_stderr: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env(kotoba::config::env::LOG_ENV)
        .unwrap_or_else(|_| {
            tracing_subscriber::EnvFilter::new(if to_stderr { "info" } else { "warn" })
        });
    let json = std::env::var_os(kotoba::config::env::LOG_FORMAT_ENV)
        .is_some_and(|v| v.eq_ignore_ascii_case("json"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if json {
        logs.json().init();
    } else {
        // Colour only on a terminal: a log file or journal gets plain text.
        let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
        logs.with_ansi(ansi).init();
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Everything she makes is hers alone (docs/surfaces.md, "Who may use the page").
    kotoba::trust::modes::private_umask();
    let cli = Cli::parse();
    init_logging(matches!(cli.command, Command::Serve));
    if !has_data_folder() {
        // Never guess a data folder in whatever directory she was started from.
        eprintln!("No data folder: set KOTOBA_HOME to the folder Kotoba keeps her data in (or HOME, for ~/.kotoba).");
        std::process::exit(1);
    }
    let config = Config::from_process_env();
    match cli.command {
        Command::Chat { settings: true, .. } => {
            let lines = kotoba::config::listing::lines(&config.listing());
            for w in config.settings_warnings() {
                eprintln!("warning: {w}");
            }
            let mut out = std::io::stdout().lock();
            for line in lines {
                writeln!(out, "{line}")?;
            }
            Ok(())
        }
        Command::Chat { session, .. } => {
            let app = App::build(config).await?;
            let notice = app.missing_setup();
            // With a shared store the terminal's turns are alive too: no serving process
            // closes them as a dead run's.
            let _alive = app
                .keep_alive(tokio_util::sync::CancellationToken::new())
                .await;
            kotoba::surfaces::terminal::run(app.engine.clone(), &session, notice).await?;
            // Exit now: a read of the terminal still pending (after Ctrl-C) would hold
            // the runtime's shutdown until the next key. Everything is stored already.
            std::io::stdout().flush()?;
            std::process::exit(0)
        }
        Command::Doctor => {
            let (report, healthy) = kotoba::doctor::report(config).await?;
            std::io::stdout().lock().write_all(report.as_bytes())?;
            // Scripts and service checks read the status: non-zero when something
            // she needs is missing.
            std::process::exit(if healthy { 0 } else { 1 })
        }
        Command::Gate {
            command:
                GateCommand::Explain {
                    text,
                    code,
                    json,
                    workspace,
                },
        } => {
            // Scripts read the verdict from the exit status: 0 auto-safe, 1 asks,
            // 2 dangerous; 3 when the line could not be judged.
            let status = gate_explain(config, text, code, json, workspace).unwrap_or_else(|e| {
                eprintln!("kotoba gate explain: {e:#}");
                3
            });
            std::process::exit(status)
        }
        Command::Memory {
            command: MemoryCommand::Export { to },
        } => {
            let store = kotoba::app::open_store(&config).await?;
            let memory = kotoba::tools::memory::MemoryStore::with_store(
                &config.paths.home,
                Some(Arc::new(store)),
            );
            let dir = to.unwrap_or_else(|| memory.dir().to_path_buf());
            if !memory.is_shared() && dir == memory.dir() {
                println!(
                    "Her memory already is Markdown in {} (no shared store is set).",
                    dir.display()
                );
                return Ok(());
            }
            let (facts, topics) = memory.export(&dir).await?;
            println!(
                "Wrote {facts} fact(s) in {topics} topic(s) to {}.",
                dir.display()
            );
            Ok(())
        }
        Command::Serve => serve(config).await,
    }
}

/// Whether a data folder is named: `KOTOBA_HOME`, else `HOME` (for `~/.kotoba`).
fn has_data_folder() -> bool {
    ["KOTOBA_HOME", "HOME"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
}

/// Claim the data folder and build the app, or stop start-up with the one sentence that
/// names the folder and why it cannot be used (read-only, full, in use by another Kotoba).
async fn claim_and_build(config: Arc<Config>) -> anyhow::Result<App> {
    let home = config.paths.home.clone();
    let refuse = |sentence: String| -> ! {
        eprintln!("{sentence}");
        std::process::exit(1)
    };
    if let Err(e) = kotoba::datadir::claim(&home) {
        refuse(e.to_string());
    }
    match App::build(config).await {
        Ok(app) => Ok(app),
        Err(e) => match e.downcast_ref::<kotoba::store::StoreError>() {
            Some(store) => {
                refuse(kotoba::datadir::DataFolderError::from_store(&home, store).to_string())
            }
            None => Err(e),
        },
    }
}

async fn serve(config: Arc<Config>) -> anyhow::Result<()> {
    let app = claim_and_build(config).await?;
    app.recover().await;
    if let Some(missing) = app.missing_setup() {
        tracing::warn!("{missing}");
    }
    let stop = stop_signal()?;
    let shutdown = tokio_util::sync::CancellationToken::new();
    // Alive in the shared store before anything is served (App::keep_alive).
    let alive = app.keep_alive(shutdown.clone()).await;
    let web = kotoba::surfaces::http::start(&app, shutdown.clone()).await?;
    let discord = kotoba::surfaces::discord::start(&app, shutdown.clone()).await;
    tracing::info!(
        "engine ready ({} tools). Ctrl-C stops.",
        app.engine.tools().all().len()
    );
    stop.await;
    tracing::info!("stopping");
    shutdown.cancel();
    app.engine.shutdown();
    if let Some(d) = discord {
        let _ = d.await;
    }
    if let Some(a) = alive {
        let _ = a.await;
    }
    web.await??;
    // The rows the stopped turns' drops handed over are written before she exits.
    app.engine.store().finish_later().await;
    Ok(())
}

/// Ctrl-C or SIGTERM. The handlers are installed now, before anything is served, so a
/// signal that arrives while starting still stops gracefully.
fn stop_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
}

fn gate_explain(
    config: Arc<Config>,
    text: String,
    code: bool,
    json: bool,
    workspace: Option<PathBuf>,
) -> anyhow::Result<i32> {
    // Judged as `serve` would: the configured workspace exists there (it is created at
    // start-up), so it is created here too when missing. A given --workspace is used as is.
    let workspace = match workspace {
        Some(dir) => dir,
        None => config.ensure_workspace().with_context(|| {
            format!(
                "creating the workspace {}",
                config.workspace(&config.settings()).display()
            )
        })?,
    };
    let action = if code {
        Action::Code {
            code: text,
            // Judged as the code tool's call would be: its grants are saved under its name.
            family: "execute_code".into(),
        }
    } else {
        Action::Shell { command: text }
    };
    let decision = gate::classify(&action, &workspace, true);
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", decision.to_json())?;
    } else {
        for line in decision.explain_lines() {
            writeln!(out, "{line}")?;
        }
    }
    out.flush()?;
    Ok(match decision.verdict {
        gate::Verdict::AutoSafe => 0,
        gate::Verdict::Ask => 1,
        gate::Verdict::Dangerous { .. } => 2,
    })
}
