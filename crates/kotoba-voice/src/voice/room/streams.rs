//! Recognition in the room, streamed where the recognizer can: each utterance opens a
//! [`RecognitionStream`] when its speech starts and hears its audio tick by tick, so
//! the words are ready at the pause and at the commit only what was said since the
//! last pause is left to recognise. Recognizers without a stream, and a stream that
//! fails (one log line, nothing in the chat), take the batch upload for that
//! utterance. A streamed utterance pauses sooner ([`STREAM_PAUSE`]): its words at a
//! pause cost one commit, not an upload, so they are asked for as soon as the person
//! stops, and a complete request's answer is asked for that much sooner too.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::{Room, RoomEvent};
use crate::speech::stt::RecognitionStream;
use crate::speech::SpeechError;

/// How much quiet makes a streamed utterance's short pause (when `voice.early_pause`
/// is longer): the quiet after a phrase, longer than the gaps between words.
pub(super) const STREAM_PAUSE: Duration = Duration::from_millis(100);

/// A stream's answer to come.
type Asked = Pin<Box<dyn Future<Output = Result<String, SpeechError>> + Send>>;

/// The open utterance's stream.
#[derive(Debug)]
pub(super) struct Streamed {
    stream: RecognitionStream,
    /// Samples of the open utterance pushed so far.
    sent: usize,
    /// It failed once: the rest of this utterance goes by upload.
    failed: Arc<AtomicBool>,
}

impl Room {
    /// `user`'s speech started: open a stream for the utterance, if the recognizer
    /// streams, and give it the audio so far (the pre-roll and the onset).
    pub(super) fn open_stream(&mut self, user: u64) {
        let Some(stream) = self.parts.recognizer.stream() else {
            return;
        };
        if let Some(ear) = self.ears.get_mut(&user) {
            ear.endpointer.pause_sooner(STREAM_PAUSE);
            ear.stream = Some(Streamed {
                stream,
                sent: 0,
                failed: Arc::new(AtomicBool::new(false)),
            });
        }
        self.feed_streams();
    }

    /// Give each open utterance's stream the audio heard since it was last fed.
    pub(super) fn feed_streams(&mut self) {
        for ear in self.ears.values_mut() {
            let Some(s) = ear.stream.as_mut() else {
                continue;
            };
            let heard = ear.endpointer.heard();
            if heard.len() > s.sent {
                s.stream.push(&heard[s.sent..]);
                s.sent = heard.len();
            }
        }
    }

    /// The utterance ended without a stream's words being needed (a cough, or the
    /// words recognised at the pause cover it): its session ends.
    pub(super) fn close_stream(&mut self, user: u64) {
        if let Some(ear) = self.ears.get_mut(&user) {
            ear.stream = None;
        }
    }

    /// Recognise `user`'s utterance off the room's task: `whole` at the commit (the
    /// stream, if any, finishes), else what was said up to a pause. `pcm` is its audio
    /// for the upload. `done(words, recognition time)` is the event sent back.
    pub(super) fn recognise(
        &mut self,
        user: u64,
        whole: bool,
        pcm: Vec<i16>,
        done: impl FnOnce(Result<String, SpeechError>, Duration) -> RoomEvent + Send + 'static,
    ) {
        let asked: Option<(Asked, Arc<AtomicBool>)> = match self.ears.get_mut(&user) {
            Some(ear) if whole => ear
                .stream
                .take()
                .map(|s| (Box::pin(s.stream.finish()) as Asked, s.failed)),
            Some(ear) => ear
                .stream
                .as_ref()
                .map(|s| (Box::pin(s.stream.words()) as Asked, s.failed.clone())),
            None => None,
        };
        let asked = asked.filter(|(_, failed)| !failed.load(Ordering::Relaxed));
        let recognizer = self.parts.recognizer.clone();
        let tx = self.events_tx.clone();
        tokio::spawn(async move {
            let t0 = Instant::now();
            let text = match asked {
                Some((words, failed)) => match words.await {
                    Ok(words) => Ok(words),
                    Err(e) => {
                        failed.store(true, Ordering::Relaxed);
                        tracing::info!("voice: {e} Uploading the utterance instead.");
                        recognizer.transcribe(&pcm).await
                    }
                },
                None => recognizer.transcribe(&pcm).await,
            };
            let _ = tx.send(done(text, t0.elapsed()));
        });
    }
}
