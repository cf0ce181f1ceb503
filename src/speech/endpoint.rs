//! End of utterance, per speaker, counted in audio time.
