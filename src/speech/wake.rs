//! Who an utterance is for (voice.md "Wake").
