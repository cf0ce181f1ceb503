//! The Discord surface's rig: the bot built as `kotoba serve` builds it (`App::build`)
//! running the real Discord surface against the loopback Discord and the scripted
//! model, in this process; and the waits its tests share (barriers, predicates on the
//! calls the bot made).

use std::time::Duration;

use kotoba::app::App;
use kotoba::surfaces::discord::{self, DiscordError};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Call, FakeDiscord, GUEST, OWNER};
use crate::model_server::{Reply, ScriptedModel};

/// The bot ready on a fresh data folder, against its loopback Discord and scripted
/// model; dropping it stops the surface and the engine.
pub struct Rig {
    /// The loopback Discord it is connected to.
    pub discord: FakeDiscord,
    /// The model it asks.
    pub model: ScriptedModel,
    /// The app, as `kotoba serve` builds it.
    pub app: App,
    /// Cancelled to stop the surface.
    pub shutdown: CancellationToken,
    /// The Discord surface's task.
    pub task: tokio::task::JoinHandle<Result<(), DiscordError>>,
    /// The data folder, removed when the rig is dropped.
    pub _home: tempfile::TempDir,
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.shutdown.cancel();
        self.app.engine.shutdown();
        self.task.abort();
    }
}

/// The bot running on one data folder: its app and the Discord surface's task.
pub struct Started {
    /// The app, as `kotoba serve` builds it.
    pub app: App,
    /// Cancelled to stop the surface.
    pub shutdown: CancellationToken,
    /// The Discord surface's task.
    pub task: tokio::task::JoinHandle<Result<(), DiscordError>>,
}

impl Started {
    /// Stop the surface and the engine, and wait (≤ 10 s) for the surface to end.
    pub async fn stop(self) {
        self.shutdown.cancel();
        self.app.engine.shutdown();
        let _ = tokio::time::timeout(Duration::from_secs(10), self.task).await;
    }
}

/// Build the app on data folder `home` against `discord` and `model` and start the
/// Discord surface (without waiting for it to be ready).
pub async fn start_bot(
    discord: &FakeDiscord,
    model: &ScriptedModel,
    home: &std::path::Path,
    extra: &[(&str, &str)],
) -> Started {
    let config = discord.config(home, model, extra);
    let app = App::build(config).await.unwrap();
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(discord::run(
        app.engine.clone(),
        app.discord_port.clone(),
        shutdown.clone(),
    ));
    Started {
        app,
        shutdown,
        task,
    }
}

/// The bot ready against a fresh loopback Discord with `extra` in its environment.
pub async fn rig_with(extra: &[(&str, &str)]) -> Rig {
    rig_on(FakeDiscord::start().await, extra).await
}

/// The bot ready against `discord` (a guild of its own) with a fresh data folder.
pub async fn rig_on(discord: FakeDiscord, extra: &[(&str, &str)]) -> Rig {
    let model = ScriptedModel::start().await;
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("workspace")).unwrap();
    rig_in(discord, model, home, extra).await
}

/// The bot ready against `discord` and `model` on data folder `home`, which the caller
/// may have filled first (a store with rows, settings).
pub async fn rig_in(
    discord: FakeDiscord,
    model: ScriptedModel,
    home: tempfile::TempDir,
    extra: &[(&str, &str)],
) -> Rig {
    let Started {
        app,
        shutdown,
        task,
    } = start_bot(&discord, &model, home.path(), extra).await;
    discord.wait_ready().await;
    Rig {
        discord,
        model,
        app,
        shutdown,
        task,
        _home: home,
    }
}

/// The owner's turn in `session` (olive, on Discord): what starts a job in these tests.
pub fn owner_turn(session: &str) -> kotoba::turn::TurnContext {
    use kotoba::protocol::{Channel, Origin, Person, Register};
    kotoba::turn::TurnContext::companion(
        session,
        Person {
            origin: Origin::Discord {
                user: OWNER,
                owner: true,
            },
            author: format!("olive ({OWNER})"),
            granted: Vec::new(),
        },
        (Register::Text, Channel::Text, Some(false)),
        None,
    )
}

/// The bot ready against a fresh loopback Discord.
pub async fn rig() -> Rig {
    rig_with(&[]).await
}

/// Whether call `c` posts a message in `channel`.
pub fn posts_in(c: &Call, channel: u64) -> bool {
    c.is("POST", &format!("/channels/{channel}/messages"))
}

/// Give the bot a moment to act (only where there is nothing to wait on, such as a
/// voice state it must know before a command; a "nothing happened" check uses a
/// barrier instead).
pub async fn settle() {
    tokio::time::sleep(Duration::from_millis(400)).await;
}

/// What she says to a barrier.
pub const BARRIER: &str = "barrier reached";

/// A barrier before asserting that nothing happened: an owner's mention in `channel`,
/// waited on until its reply is posted. The gateway delivers in order, so the bot has
/// read everything sent before it; and one session runs one turn at a time, so a turn
/// wrongly started before it has finished and posted by then. Costs one model request
/// and one reply (`BARRIER`) in `channel`.
pub async fn barrier(r: &Rig, channel: u64) {
    let from = r.discord.calls().len();
    r.model.push(Reply::text(BARRIER));
    r.discord.mention(channel, OWNER, "barrier");
    r.discord
        .wait_for_from(from, 10, |c| posts_in(c, channel) && c.content() == BARRIER)
        .await;
}

/// A barrier that neither reaches the model nor changes the channel's follow-up state:
/// `/status` in `channel`, waited on until answered (privately). The gateway delivers
/// in order, so the bot has read everything sent before it. Returns the status text.
pub async fn status_barrier(r: &Rig, channel: u64) -> String {
    let s = r.discord.slash(channel, GUEST, "status", json!([]), 0);
    r.discord.wait_callback(s).await.content()
}

/// Whether call `c` posts or edits the Steps embed in `channel`.
pub fn is_steps(c: &Call, channel: u64) -> bool {
    (posts_in(c, channel) || c.method == "PATCH") && c.body["embeds"][0]["title"] == json!("Steps")
}

/// Whether call `c` posts an approval card in `channel`.
pub fn is_card_post(c: &Call, channel: u64) -> bool {
    posts_in(c, channel)
        && c.body["embeds"][0]["title"]
            .as_str()
            .is_some_and(|t| t.starts_with("May I run this?"))
}
