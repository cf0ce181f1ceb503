//! `kotoba doctor`: the configuration she would run with, in plain words — the model
//! and whether its server answers, the page, voice, the tools, Discord (token, intents,
//! the invite URL) and the room the model's window leaves — each missing thing named
//! with its fix. Nothing secret is printed.

use std::fmt::Write;
use std::sync::Arc;

use crate::app::App;
use crate::config::{ApiStyle, Config};
use crate::llm::{OpenAiClient, Reach};

/// The report, and whether everything she needs is there (the model key, a model
/// server that answers, and — when a Discord token is set — a token Discord accepts
/// with the intents she needs).
pub async fn report(config: Arc<Config>) -> anyhow::Result<(String, bool)> {
    let s = config.settings();
    let mut out = String::new();
    let mut healthy = true;
    let api = match s.api {
        ApiStyle::Responses => "responses",
        ApiStyle::Chat => "chat completions",
    };
    line(
        &mut out,
        "data folder",
        &config.paths.home.display().to_string(),
    );
    line(
        &mut out,
        "settings file",
        &config.paths.settings.display().to_string(),
    );
    line(
        &mut out,
        "model",
        &match &s.base_url_refused {
            // Name no host she will not call.
            Some(_) => format!(
                "{} via no server: its address is not usable ({api} API)",
                s.model
            ),
            None => format!("{} via {} ({api} API)", s.model, s.base_url),
        },
    );
    let reasoning = if s.is_reasoning_model() {
        format!("{} (a reasoning model)", s.reasoning_effort)
    } else {
        "off".to_string()
    };
    line(&mut out, "reasoning", &reasoning);
    let key = if config.api_key().is_some() {
        "set"
    } else {
        "NOT set"
    };
    line(&mut out, "api key", &format!("{} is {key}", s.api_key_env));
    // A server that needs a key is not asked without one: the missing line says what
    // to set.
    let reach = match crate::app::missing_setup(&config) {
        Some(_) => None,
        None => Some(OpenAiClient::new(config.clone()).reach().await),
    };
    let server = match reach {
        None => {
            healthy = false;
            "not asked until the key below is set".to_string()
        }
        Some(reach) => match reach {
        Ok(Reach::Listed { has_model: true, count }) => {
            format!("answers ({count} models, {} among them)", s.model)
        }
        Ok(Reach::Listed { has_model: false, count }) => format!(
            "answers, but {} is not among its {count} models: check the `model` setting (KOTOBA_MODEL)",
            s.model
        ),
        Ok(Reach::Answered(status)) => format!("answers (HTTP {status} for its model list)"),
        Err(e) => {
            healthy = false;
            format!("NOT reached — {}", e.user_sentence())
        }
        },
    };
    line(&mut out, "model server", &server);
    let set = |b: bool| if b { "set" } else { "NOT set" };
    let api_key = config
        .env("KOTOBA_API_KEY")
        .is_some_and(|k| !k.trim().is_empty());
    line(
        &mut out,
        "web and /v1",
        &format!(
            "http://{}/ (/v1 key KOTOBA_API_KEY {})",
            s.web_addr,
            set(api_key)
        ),
    );
    for (what, said) in crate::trust::report(&config) {
        line(&mut out, what, &said);
    }
    let c = &config.caps;
    line(
        &mut out,
        "companion caps",
        &format!(
            "{} tool calls, {} failures, {} calls of one tool, {} helpers, {} web searches per turn",
            c.max_tool_calls, c.fail_limit, c.per_tool_limit, c.delegate_limit, c.web_search_limit
        ),
    );
    let (hearing, speaking) = voice_lines(&config).await;
    line(&mut out, "voice hearing", &hearing);
    line(&mut out, "voice speaking", &speaking);
    if let Some(realtime) = realtime_line(&config).await {
        line(&mut out, "realtime voice", &realtime);
    }
    let latency = crate::voice::latency::read(&config.paths.home);
    if latency.is_empty() {
        line(&mut out, "voice latency", "no spoken reply yet");
    }
    for b in latency {
        line(&mut out, "voice latency", &b.line());
    }
    for w in config.settings_warnings() {
        line(&mut out, "warning", &w);
    }
    if let Some(url) = config.database_url() {
        let label = crate::store::database_label(url);
        let options = crate::app::store_options(&config);
        let reached = async {
            let store = crate::store::Store::connect_with(url, &options).await?;
            Ok::<_, crate::store::StoreError>((store.pool_size(), store.ping(5).await?))
        }
        .await;
        match reached {
            Ok((pool, trip)) => line(
                &mut out,
                "store",
                &format!(
                    "PostgreSQL at {label} (reached; pool of {pool}; round trip {:.1} ms)",
                    trip.as_secs_f64() * 1000.0
                ),
            ),
            Err(e) => {
                line(
                    &mut out,
                    "store",
                    &format!("PostgreSQL at {label} — NOT reached: {e}; check KOTOBA_DATABASE_URL"),
                );
                return Ok((out, false));
            }
        }
    } else {
        line(
            &mut out,
            "store",
            &format!("SQLite at {}", config.paths.db.display()),
        );
    }
    let app = App::build(config).await?;
    let names: Vec<String> = app
        .engine
        .tools()
        .all()
        .iter()
        .map(|t| t.spec().name.clone())
        .collect();
    line(&mut out, "tools", &names.join(", "));
    match crate::surfaces::discord::DiscordSettings::resolve(&app.engine).await {
        Some(discord) => {
            match &discord.shards {
                Ok(plan) => line(&mut out, "shards", &plan.describe()),
                Err(e) => {
                    healthy = false;
                    line(&mut out, "shards", &e.to_string());
                }
            }
            for l in crate::surfaces::discord::check::check(&discord).await {
                healthy &= l.ok;
                line(&mut out, l.label, &l.text);
            }
        }
        None => line(
            &mut out,
            "discord",
            "not set up (no DISCORD_TOKEN): she serves the page, /v1 and the terminal",
        ),
    }
    let room = app.engine.context_room().await;
    line(
        &mut out,
        "context",
        &format!(
            "window {} tokens; instructions and {} tools take {}; {} left for the conversation before it is summarised at {}%",
            room.window,
            room.tools,
            room.fixed,
            room.left,
            (s.context_compact_at * 100.0).round()
        ),
    );
    if room.left < room.window as usize / 10 {
        line(
            &mut out,
            "warning",
            "little room is left for the conversation: only the newest exchange and the summary will fit; raise context.window or switch tool families off (disabled_toolsets)",
        );
    }
    if let Some(m) = app.missing_setup() {
        healthy = false;
        line(&mut out, "missing", &m);
    }
    Ok((out, healthy))
}

/// How she will hear and speak: each provider, whether it is set up, and — for one
/// with a server — whether that server answers and takes the key (both asked at once).
/// Voice is not needed for text, so these lines never fail the doctor.
async fn voice_lines(config: &Config) -> (String, String) {
    use crate::speech::stt::Probe;
    async fn reached(name: &str, probe: Option<&Probe>) -> String {
        let Some(p) = probe else {
            return format!("{name} (ready, on this machine)");
        };
        match p.reach().await {
            Ok(()) => format!("{name} (ready) — its server answers at {}", p.url()),
            Err(e) => format!("{name} — NOT reached: {e}"),
        }
    }
    let s = config.settings();
    let hearing = async {
        match crate::speech::stt::recognizer(config) {
            Ok(r) => reached(r.name(), r.probe()).await,
            Err(e) => format!(
                "{} — {e}",
                crate::speech::stt::provider_name(s.voice.stt_provider)
            ),
        }
    };
    let speaking = async {
        match crate::speech::tts::synthesizer_or_floor(config) {
            (v, None) => reached(v.name(), v.probe()).await,
            (v, Some(e)) => format!("{} stands in — {e}", v.name()),
        }
    };
    tokio::join!(hearing, speaking)
}

/// With `voice_mode: realtime`, whether a realtime session opens and is set up at
/// `realtime.base_url` with its key (never printed). Not needed for text either.
async fn realtime_line(config: &Config) -> Option<String> {
    use crate::speech::realtime_voice::{probe, RealtimeConfig};
    let s = config.settings();
    if s.voice_mode != crate::config::VoiceMode::Realtime {
        return None;
    }
    Some(match RealtimeConfig::from_settings(config, &s.voice) {
        Err(e) => format!("NOT ready — {e}"),
        Ok(c) => match probe(&c).await {
            Ok(()) => format!("{} (ready) — a session opens at {}", c.model(), c.url()),
            Err(e) => format!("{} — NOT reached: {e}", c.model()),
        },
    })
}

/// One `label: text` line, the texts aligned.
fn line(out: &mut String, label: &str, text: &str) {
    let _ = writeln!(out, "{:<16}{text}", format!("{label}:"));
}
