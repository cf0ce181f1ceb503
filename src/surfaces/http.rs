//! The one HTTP server of the process: the page's router (`surfaces::web`) and the
//! OpenAI-compatible `/v1` (`surfaces::v1`) on one address. `kotoba serve` calls
//! [`start`] (address and password from the configuration); tests call [`serve`] with a
//! listener bound to 127.0.0.1:0 and a shutdown token.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::app::App;
use crate::engine::Engine;

use super::web::WebOptions;

/// The whole router: page, API, health and /v1, over one engine.
pub fn router(engine: Arc<Engine>, options: WebOptions, shutdown: CancellationToken) -> Router {
    super::web::router(engine.clone(), options.clone(), shutdown.clone())
        .merge(super::v1::router(engine, options, shutdown))
}

/// A bind refused: the address is not loopback and no password is set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "refusing to serve the web page and /v1 on {0}: it is not a loopback address and no \
     password is set. Set KOTOBA_WEB_PASSWORD (or web_password in settings.yaml), or use \
     KOTOBA_WEB_ADDR=127.0.0.1:8000."
)]
pub struct BindRefused(pub SocketAddr);

/// Whether `addr` may be served: a loopback address, or any with a password.
pub fn check_bind(addr: &SocketAddr, password_set: bool) -> Result<(), BindRefused> {
    if password_set || addr.ip().is_loopback() {
        Ok(())
    } else {
        Err(BindRefused(*addr))
    }
}

/// Serve on `listener` until `shutdown` fires: streams end, in-flight requests finish
/// (at most 5 s more), then it returns. Refuses a non-loopback listener without a
/// password, whoever bound it.
pub async fn serve(
    engine: Arc<Engine>,
    options: WebOptions,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let addr = listener.local_addr()?;
    check_bind(&addr, options.password.is_some())?;
    let app = router(engine, options, shutdown.clone());
    // Streams are many small writes: without TCP_NODELAY the last chunks of a /v1 reply
    // wait on Nagle + the client's delayed ACK (about 40 ms a turn).
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY: {e}");
        }
    });
    // The client's address goes with each request: wrong passwords slow down per
    // address (web/throttle.rs).
    let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
        .context("serving the web page")
}

/// Bind the configured address (`KOTOBA_WEB_ADDR` / `web_addr`, default
/// 127.0.0.1:8000) and serve in a task; refuses a non-loopback address without a
/// password. Logs the page's URL and, when no model key is set, what to set.
pub async fn start(
    app: &App,
    shutdown: CancellationToken,
) -> anyhow::Result<tokio::task::JoinHandle<anyhow::Result<()>>> {
    let config = &app.engine.config();
    let addr_text = config.settings().web_addr;
    let mut options = WebOptions::from_config(config);
    if crate::surfaces::discord::DiscordSettings::resolve(&app.engine)
        .await
        .is_some()
    {
        options.discord = Some(app.discord_port.clone());
    }
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host(addr_text.as_str())
        .await
        .with_context(|| format!("resolving the web address {addr_text}"))?
        .collect();
    let addr = addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .with_context(|| format!("the web address {addr_text} resolves to nothing"))?;
    check_bind(&addr, options.password.is_some())?;
    let listener = TcpListener::bind(addr).await.map_err(|e| {
        let fix = if e.kind() == std::io::ErrorKind::AddrInUse {
            "another program (or another Kotoba) listens there: stop it, or set KOTOBA_WEB_ADDR (the `web_addr` setting) to a free address such as 127.0.0.1:8001"
        } else {
            "set KOTOBA_WEB_ADDR (the `web_addr` setting) to an address this machine can listen on"
        };
        anyhow::anyhow!("cannot listen on {addr} for the web page and /v1 ({e}): {fix}")
    })?;
    // The page's address with its token, as Jupyter prints its own: the one way in
    // for the person who started her (docs/surfaces.md, "Who may use the page").
    let page = match (&options.password, &options.token) {
        (None, Some(token)) => format!("http://{addr}/?token={token}"),
        _ => format!("http://{addr}/"),
    };
    tracing::info!(
        "web page on {page}  ·  /v1 (OpenAI-compatible) on http://{addr}/v1{}{}",
        match (&options.password, &options.token) {
            (Some(_), _) => "  ·  password set",
            (None, Some(_)) => "  ·  loopback only, token required",
            (None, None) => {
                "  ·  loopback only, NO login (web_auth: none): anyone on this machine is the owner"
            }
        },
        if options.api_key.is_some() {
            ""
        } else {
            "  ·  /v1 refuses every call until KOTOBA_API_KEY is set"
        }
    );
    let engine = app.engine.clone();
    // Cut running turns once the server stops taking requests, so streams close.
    let cut = shutdown.clone();
    let engine_for_cut = engine.clone();
    tokio::spawn(async move {
        cut.cancelled().await;
        engine_for_cut.shutdown();
    });
    Ok(tokio::spawn(async move {
        let served = serve(engine, options, listener, shutdown.clone());
        tokio::pin!(served);
        tokio::select! {
            r = &mut served => r,
            _ = async { shutdown.cancelled().await; tokio::time::sleep(Duration::from_secs(5)).await } => {
                tracing::warn!("the web server did not stop within 5 s; leaving anyway");
                Ok(())
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_loopback_address_is_refused_without_a_password() {
        let lan: SocketAddr = "0.0.0.0:8000".parse().unwrap();
        let v6: SocketAddr = "[::]:8000".parse().unwrap();
        let lo: SocketAddr = "127.0.0.1:8000".parse().unwrap();
        let lo6: SocketAddr = "[::1]:8000".parse().unwrap();
        assert!(check_bind(&lan, false)
            .unwrap_err()
            .to_string()
            .contains("KOTOBA_WEB_PASSWORD"));
        assert!(check_bind(&v6, false).is_err());
        assert!(check_bind(&lan, true).is_ok());
        assert!(check_bind(&lo, false).is_ok());
        assert!(check_bind(&lo6, false).is_ok());
    }
}
