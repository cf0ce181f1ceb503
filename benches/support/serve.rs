//! A `kotoba serve` process for a benchmark: a free loopback port, and the command with
//! what every bench process shares (its data folder and page address, the scripted
//! model, the shared store, quiet output, killed with its handle). Each bench adds its
//! own settings before it spawns.

use std::process::Stdio;

use tokio::process::Command;

/// A loopback port nobody listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `kotoba serve` in `home` on `port`, asking the model at `model_url` and keeping its
/// store at `database_url`.
pub fn command(home: &std::path::Path, port: u16, model_url: &str, database_url: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kotoba"));
    cmd.arg("serve")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("KOTOBA_HOME", home)
        .env("KOTOBA_WEB_ADDR", format!("127.0.0.1:{port}"))
        .env("KOTOBA_LLM_BASE_URL", model_url)
        .env("KOTOBA_LLM_API", "chat")
        .env("KOTOBA_REASONING_EFFORT", "off")
        .env("OPENAI_API_KEY", "bench-key")
        .env("KOTOBA_MODEL", "scripted")
        .env("KOTOBA_DATABASE_URL", database_url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    cmd
}
