//! Streamed recognition, provider-neutral: a [`RecognitionStream`] hears one utterance
//! as it is spoken (16 kHz mono pushed in as it arrives), gives the words heard so far
//! when asked at a pause, and the words of the whole utterance at its commit. The
//! provider's protocol runs in its own task behind a command channel, so pushing never
//! waits; a stream that fails answers every later question with the failure, and the
//! caller falls back to the batch [`super::Recognizer::transcribe`].

use std::future::Future;

use tokio::sync::{mpsc, oneshot};

use crate::speech::SpeechError;

/// What the stream's owner asks of the provider's task.
#[derive(Debug)]
pub(crate) enum Command {
    /// More of the utterance (16 kHz mono).
    Audio(Vec<i16>),
    /// The words of everything pushed so far (the utterance stays open).
    Words(oneshot::Sender<Result<String, SpeechError>>),
    /// The words of the whole utterance; the stream ends.
    Finish(oneshot::Sender<Result<String, SpeechError>>),
}

/// The commands a provider's task reads.
pub(crate) type Commands = mpsc::UnboundedReceiver<Command>;

/// One utterance being recognised as it is heard. Dropping it ends the provider's
/// session (the task sees the channel close).
#[derive(Debug)]
pub struct RecognitionStream {
    provider: &'static str,
    tx: mpsc::UnboundedSender<Command>,
}

impl RecognitionStream {
    /// A stream whose commands `run` (the provider's session, spawned now) reads.
    pub(crate) fn spawn<F, Fut>(provider: &'static str, run: F) -> RecognitionStream
    where
        F: FnOnce(Commands) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(rx));
        RecognitionStream { provider, tx }
    }

    /// The provider's name.
    pub fn provider(&self) -> &'static str {
        self.provider
    }

    /// Hear more of the utterance (16 kHz mono); never waits.
    pub fn push(&self, pcm: &[i16]) {
        if !pcm.is_empty() {
            let _ = self.tx.send(Command::Audio(pcm.to_vec()));
        }
    }

    /// The words of everything pushed so far, trimmed; the utterance stays open. The
    /// future owns what it needs, so it may be spawned.
    pub fn words(&self) -> impl Future<Output = Result<String, SpeechError>> + Send + 'static {
        let (reply, answer) = oneshot::channel();
        let sent = self.tx.send(Command::Words(reply)).is_ok();
        let provider = self.provider;
        async move { receive(provider, sent, answer).await }
    }

    /// The words of the whole utterance, trimmed; the provider's session ends.
    pub fn finish(self) -> impl Future<Output = Result<String, SpeechError>> + Send + 'static {
        let (reply, answer) = oneshot::channel();
        let sent = self.tx.send(Command::Finish(reply)).is_ok();
        let provider = self.provider;
        async move { receive(provider, sent, answer).await }
    }
}

async fn receive(
    provider: &'static str,
    sent: bool,
    answer: oneshot::Receiver<Result<String, SpeechError>>,
) -> Result<String, SpeechError> {
    let gone = || {
        SpeechError::new(format!(
            "Speech recognition ({provider}) failed: the stream ended."
        ))
    };
    if !sent {
        return Err(gone());
    }
    answer.await.unwrap_or_else(|_| Err(gone()))
}

/// After a session failed with `error`: answer every later question with it until
/// the stream is dropped.
pub(crate) async fn refuse(mut commands: Commands, error: SpeechError) {
    while let Some(c) = commands.recv().await {
        match c {
            Command::Audio(_) => {}
            Command::Words(reply) | Command::Finish(reply) => {
                let _ = reply.send(Err(error.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stream_whose_session_failed_answers_every_question_with_the_failure() {
        let stream = RecognitionStream::spawn("test", |rx| {
            refuse(
                rx,
                SpeechError::new("Speech recognition (test) failed: no."),
            )
        });
        stream.push(&[1, 2, 3]);
        assert_eq!(
            stream.words().await.unwrap_err().0,
            "Speech recognition (test) failed: no."
        );
        assert!(stream.finish().await.is_err());
    }

    #[tokio::test]
    async fn a_session_that_ends_without_answering_is_a_failure_not_a_hang() {
        let stream = RecognitionStream::spawn("test", |rx| async move { drop(rx) });
        let e = stream.words().await.unwrap_err();
        assert_eq!(e.0, "Speech recognition (test) failed: the stream ended.");
    }
}
