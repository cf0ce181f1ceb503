//! Joining and leaving voice channels: the only code that calls songbird's join, leave
//! and remove (clippy.toml bans them everywhere else). A join that fails, or does not
//! finish within [`CONNECT_TIMEOUT`], is removed at once, so no half-open call is ever
//! left behind; every failure is one sentence for the person who asked.

use std::future::Future;
use std::num::NonZeroU8;
use std::sync::Arc;
use std::time::Duration;

use serenity::all::{ChannelId, GuildId};
use songbird::driver::{Channels, DecodeConfig, DecodeMode, SampleRate};
use songbird::error::JoinError;
use songbird::{Call, Songbird};
use tokio::sync::Mutex;

/// How long a join may take, from the request to a working voice connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How many 20 ms packets songbird holds per speaker before it plays them out (its
/// default is 5, 100 ms). Every packet held is that much later heard, and so that much
/// later a barge-in stops her; 2 (40 ms) still rides out ordinary jitter, and a packet
/// later than that is concealed rather than waited for.
pub const PLAYOUT_PACKETS: NonZeroU8 = NonZeroU8::MIN.saturating_add(1);

/// songbird's settings: every speaker's audio decoded to what recognition hears (16 kHz
/// mono, [`crate::speech::audio::HEAR_RATE`]) after a [`PLAYOUT_PACKETS`] buffer;
/// Discord's answer to a join may take the whole [`CONNECT_TIMEOUT`] (ours is the only
/// limit that counts).
pub fn config() -> songbird::Config {
    songbird::Config::default()
        .decode_mode(DecodeMode::Decode(DecodeConfig::new(
            Channels::Mono,
            SampleRate::Hz16000,
        )))
        .playout_buffer_length(PLAYOUT_PACKETS)
        .gateway_timeout(Some(CONNECT_TIMEOUT))
}

/// A voice manager with [`config`], to register on the serenity client. It gets a mixer
/// scheduler of its own, started on the runtime that runs this surface: songbird's
/// process-wide default scheduler lives on whichever runtime first used it, and calls
/// made after that runtime ended would find no mixer (must be called inside a runtime).
pub fn manager() -> Arc<Songbird> {
    let scheduler = songbird::driver::Scheduler::new(songbird::driver::SchedulerConfig::default());
    Songbird::serenity_from_config(config().scheduler(scheduler))
}

/// Join `channel` of `guild` (where she already is in this guild, this moves her). On
/// any failure, or when the connection is not up within [`CONNECT_TIMEOUT`], the call
/// is removed and the error is one sentence for the person.
pub async fn join(
    manager: &Songbird,
    guild: GuildId,
    channel: ChannelId,
) -> Result<Arc<Mutex<Call>>, CallError> {
    join_with(&Manager(manager), guild, channel).await
}

/// Leave the voice channel of `guild` and forget the call. The error is one sentence.
pub async fn leave(manager: &Songbird, guild: GuildId) -> Result<(), CallError> {
    leave_with(&Manager(manager), guild).await
}

/// What joining and leaving need from songbird (a fake stands in, in the tests).
trait Rooms {
    type Call;
    /// Connect (or move) to `channel`; resolves when the voice connection is up.
    fn connect(
        &self,
        guild: GuildId,
        channel: ChannelId,
    ) -> impl Future<Output = Result<Self::Call, JoinError>> + Send;
    /// Leave and forget the call of `guild`.
    fn discard(&self, guild: GuildId) -> impl Future<Output = Result<(), JoinError>> + Send;
}

struct Manager<'a>(&'a Songbird);

impl Rooms for Manager<'_> {
    type Call = Arc<Mutex<Call>>;

    fn connect(
        &self,
        guild: GuildId,
        channel: ChannelId,
    ) -> impl Future<Output = Result<Self::Call, JoinError>> + Send {
        // The one raw join: `join_with` wraps it with the timeout and the cleanup.
        #[allow(clippy::disallowed_methods)]
        self.0.join(guild, channel)
    }

    fn discard(&self, guild: GuildId) -> impl Future<Output = Result<(), JoinError>> + Send {
        // The one raw removal: every leave and every failed join ends here.
        #[allow(clippy::disallowed_methods)]
        self.0.remove(guild)
    }
}

async fn join_with<R: Rooms>(
    rooms: &R,
    guild: GuildId,
    channel: ChannelId,
) -> Result<R::Call, CallError> {
    let failure = match tokio::time::timeout(CONNECT_TIMEOUT, rooms.connect(guild, channel)).await {
        Ok(Ok(call)) => return Ok(call),
        Ok(Err(e)) => {
            tracing::warn!("voice: joining channel {channel} of guild {guild} failed: {e}");
            CallError::from(&e)
        }
        Err(_) => {
            tracing::warn!(
                "voice: joining channel {channel} of guild {guild} took longer than {} s",
                CONNECT_TIMEOUT.as_secs()
            );
            CallError::GaveUp(CONNECT_TIMEOUT.as_secs())
        }
    };
    if let Err(e) = rooms.discard(guild).await {
        tracing::warn!("voice: could not remove the failed call of guild {guild}: {e}");
    }
    Err(failure)
}

async fn leave_with<R: Rooms>(rooms: &R, guild: GuildId) -> Result<(), CallError> {
    rooms.discard(guild).await.map_err(|e| {
        if !matches!(e, JoinError::NoCall) {
            tracing::warn!("voice: leaving guild {guild} failed: {e}");
        }
        CallError::from(&e)
    })
}

/// Why joining or leaving a voice channel failed: one sentence for the person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// She is in no voice channel of this server.
    #[error("I'm not in a voice channel in this server.")]
    NoCall,
    /// Discord did not answer the join.
    #[error("Discord did not answer my request to join the voice channel; please try again.")]
    TimedOut,
    /// The connection was cancelled before it was up.
    #[error("My voice connection was cancelled before it was up; please try again.")]
    Dropped,
    /// The gateway is not connected.
    #[error(
        "I'm not connected to Discord right now, so I can't use voice; please try again in a moment."
    )]
    NoGateway,
    /// The voice server's connection could not be opened.
    #[error(
        "I couldn't open the connection to Discord's voice server; please try again in a moment."
    )]
    Driver,
    /// Anything else songbird reports.
    #[error("Something went wrong with the voice connection; please try again.")]
    Other,
    /// The connection was not up within the connect timeout (seconds), so the call
    /// was removed.
    #[error(
        "I couldn't connect to the voice channel within {0} seconds, so I gave up; please try again."
    )]
    GaveUp(u64),
}

impl From<&JoinError> for CallError {
    fn from(e: &JoinError) -> CallError {
        match e {
            JoinError::NoCall => CallError::NoCall,
            JoinError::TimedOut => CallError::TimedOut,
            JoinError::Dropped => CallError::Dropped,
            JoinError::NoSender | JoinError::Serenity(_) => CallError::NoGateway,
            JoinError::Driver(_) => CallError::Driver,
            _ => CallError::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex as StdMutex;

    use tokio::time::Instant;

    use super::*;

    /// How the fake's connect ends.
    #[derive(Clone, Copy)]
    enum Outcome {
        Up,
        Never,
        Fails,
    }

    struct Fake {
        outcome: Outcome,
        started: Instant,
        discarded: StdMutex<Vec<(GuildId, Duration)>>,
        has_call: bool,
    }

    impl Fake {
        fn new(outcome: Outcome) -> Fake {
            Fake {
                outcome,
                started: Instant::now(),
                discarded: StdMutex::new(Vec::new()),
                has_call: true,
            }
        }

        fn discarded(&self) -> Vec<(GuildId, Duration)> {
            self.discarded.lock().unwrap().clone()
        }
    }

    impl Rooms for Fake {
        type Call = ChannelId;

        fn connect(
            &self,
            _guild: GuildId,
            channel: ChannelId,
        ) -> impl Future<Output = Result<ChannelId, JoinError>> + Send {
            let outcome = self.outcome;
            async move {
                match outcome {
                    Outcome::Up => Ok(channel),
                    Outcome::Never => std::future::pending().await,
                    Outcome::Fails => Err(JoinError::Dropped),
                }
            }
        }

        fn discard(&self, guild: GuildId) -> impl Future<Output = Result<(), JoinError>> + Send {
            self.discarded
                .lock()
                .unwrap()
                .push((guild, self.started.elapsed()));
            let has_call = self.has_call;
            async move {
                if has_call {
                    Ok(())
                } else {
                    Err(JoinError::NoCall)
                }
            }
        }
    }

    const G: GuildId = GuildId::new(100);
    const C: ChannelId = ChannelId::new(210);

    #[tokio::test(start_paused = true)]
    async fn a_join_that_never_completes_is_removed_at_thirty_seconds() {
        let fake = Arc::new(Fake::new(Outcome::Never));
        let f = fake.clone();
        let task = tokio::spawn(async move { join_with(&*f, G, C).await });
        tokio::time::sleep(CONNECT_TIMEOUT - Duration::from_millis(1)).await;
        assert!(fake.discarded().is_empty(), "still waiting before 30 s");
        let err = task.await.unwrap().unwrap_err().to_string();
        assert_eq!(fake.discarded(), vec![(G, CONNECT_TIMEOUT)]);
        assert!(err.contains("30 seconds"), "{err}");
        assert_eq!(err.matches(". ").count(), 0, "one sentence: {err}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_join_is_removed_at_once() {
        let fake = Fake::new(Outcome::Fails);
        let err = join_with(&fake, G, C).await.unwrap_err().to_string();
        assert_eq!(fake.discarded(), vec![(G, Duration::ZERO)]);
        assert!(err.ends_with("please try again."), "{err}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_join_that_comes_up_keeps_its_call() {
        let fake = Fake::new(Outcome::Up);
        assert_eq!(join_with(&fake, G, C).await, Ok(C));
        assert!(fake.discarded().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn leaving_removes_the_call() {
        let fake = Fake::new(Outcome::Up);
        assert_eq!(leave_with(&fake, G).await, Ok(()));
        assert_eq!(fake.discarded(), vec![(G, Duration::ZERO)]);
    }

    #[tokio::test(start_paused = true)]
    async fn leaving_where_she_is_not_says_so_in_one_sentence() {
        let mut fake = Fake::new(Outcome::Up);
        fake.has_call = false;
        assert_eq!(leave_with(&fake, G).await, Err(CallError::NoCall));
        assert_eq!(
            CallError::NoCall.to_string(),
            "I'm not in a voice channel in this server."
        );
    }

    #[test]
    fn every_failure_is_one_sentence_for_the_person() {
        for e in [
            JoinError::NoCall,
            JoinError::TimedOut,
            JoinError::Dropped,
            JoinError::NoSender,
        ] {
            let s = CallError::from(&e).to_string();
            assert!(s.ends_with('.'), "{s}");
            assert_eq!(s.matches(". ").count(), 0, "{s}");
            assert!(!s.contains("Join"), "no internal names: {s}");
        }
    }

    #[test]
    fn songbird_decodes_to_what_recognition_hears() {
        let c = config();
        assert_eq!(
            c.decode_mode,
            DecodeMode::Decode(DecodeConfig::new(Channels::Mono, SampleRate::Hz16000))
        );
        assert_eq!(
            u32::from(SampleRate::Hz16000),
            crate::speech::audio::HEAR_RATE
        );
    }

    #[test]
    fn songbird_holds_two_packets_per_speaker_before_playout_not_its_default_five() {
        let c = config();
        assert_eq!(c.playout_buffer_length.get(), 2);
        assert!(c.playout_buffer_length < songbird::Config::default().playout_buffer_length);
    }
}
